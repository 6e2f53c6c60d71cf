import t from 'tap'
import { build, buildWithSql, METRICS_TOKEN, OTHER_REPO, P, REPO, testFixture, WS_NEW, WS_OLD } from './helper.js'
import { encodeId } from '../plugins/graphql/ids.js'
import { gql } from './gql.js'
import { deliver, SECRET } from './deliveries.js'

// Fields the hosted service's clients (zenhub-mcp, zh) select, answered from what this server keeps.
const { app, sql } = await buildWithSql(t)
const issueId = async (repo: number, number: number) => Number((await sql('SELECT id FROM issues WHERE repo_id = ? AND number = ?', [repo, number]))[0].id)
const code = (answer: { errors?: Array<{ extensions: { code: string } }> }) => answer.errors?.[0]?.extensions.code

t.test('estimateSet offers no fixed list: any estimate of 0 or more is taken (zh checks nothing against an empty one)', async (t) => {
  const doc = `query GetIssueForEstimate($repositoryGhId: Int!, $issueNumber: Int!) {
    issueByInfo(repositoryGhId: $repositoryGhId, issueNumber: $issueNumber) { id number title estimate { value } repository { name ownerName estimateSet { values } } } }`
  const answer = await gql(app, 'carol', doc, { repositoryGhId: REPO, issueNumber: 1 })
  t.notOk(answer.errors)
  t.same(answer.data.issueByInfo.repository, { name: 'api', ownerName: 'acme', estimateSet: { values: [] } })
  const byNode = await gql(app, 'carol', `{ node(id: "${encodeId('Issue', await issueId(REPO, 1))}") { ... on Issue { repository { estimateSet { values } } } } }`)
  t.same(byNode.data.node.repository.estimateSet.values, [])
})

t.test('zenhubUrl is this server\'s board filtered to the issue; a workspace not seen is NOT_FOUND, one not holding it BAD_USER_INPUT', async (t) => {
  const id = encodeId('Issue', await issueId(REPO, 3))
  const doc = 'query($id: ID!, $ws: ID!) { node(id: $id) { ... on Issue { number zenhubUrl(workspaceId: $ws) } } }'
  const answer = await gql(app, 'carol', doc, { id, ws: WS_NEW })
  t.notOk(answer.errors)
  t.equal(answer.data.node.zenhubUrl, `http://localhost:80/board?board=${WS_NEW}&repo=${REPO}&q=%233`)
  const other = await gql(app, 'alice', doc, { id: encodeId('Issue', await issueId(OTHER_REPO, 1)), ws: WS_NEW })
  t.equal(code(other), 'BAD_USER_INPUT', 'WS_NEW does not hold OTHER_REPO')
  t.equal(code(await gql(app, 'carol', doc, { id, ws: 'bbbbbbbbbbbbbbbbbbbbbbbb' })), 'NOT_FOUND')

  const hosted = await build(t, { basePath: '/planning', signIn: { publicUrl: 'https://plan.example.com' } })
  const there = await hosted.as('carol', { method: 'POST', url: '/public/graphql', payload: { query: doc, variables: { id, ws: WS_OLD } } })
  t.equal(there.json().data.node.zenhubUrl, `https://plan.example.com/planning/board?board=${WS_OLD}&repo=${REPO}&q=%233`, 'PUBLIC_URL and BASE_PATH')
  const page = await hosted.as('carol', { url: `/board?board=${WS_OLD}&repo=${REPO}&q=%233` })
  t.equal(page.statusCode, 200, 'the board page answers there')
})

t.test('a repository with no issue host links to no github.com: htmlUrl and epics\' issue_url are this server\'s board, REST html_url null; a host\'s page stays', async (t) => {
  const fixture = testFixture()
  const hosted = await build(t, {
    basePath: '/planning',
    signIn: { publicUrl: 'https://plan.example.com' },
    fixture: { ...fixture, repositories: fixture.repositories.map((r) => r.id === OTHER_REPO ? { ...r, html_url: 'https://git.example.org/acme/web' } : r) }
  })
  // Typed in by hand with an id, in no workspace: still held here only.
  t.equal((await hosted.admin({ method: 'POST', url: '/admin/repositories', payload: { id: 4242, owner: 'team', name: 'loose' } })).statusCode, 201)
  t.equal((await hosted.admin({ method: 'POST', url: '/admin/repositories/4242/issues', payload: { number: 1, title: 'Loose' } })).statusCode, 201)
  await hosted.admin({ method: 'PUT', url: '/admin/repositories/4242/permissions/alice', payload: { permission: 'read' } })
  const doc = `{ here: issueByInfo(repositoryGhId: ${REPO}, issueNumber: 3) { htmlUrl } host: issueByInfo(repositoryGhId: ${OTHER_REPO}, issueNumber: 1) { htmlUrl }
    loose: issueByInfo(repositoryGhId: 4242, issueNumber: 1) { htmlUrl } }`
  const answer = await hosted.as('alice', { method: 'POST', url: '/public/graphql', payload: { query: doc } })
  t.same(answer.json().data, {
    here: { htmlUrl: `https://plan.example.com/planning/board?board=${WS_OLD}&repo=${REPO}&q=%233` },
    host: { htmlUrl: 'https://git.example.org/acme/web/issues/1' },
    loose: { htmlUrl: 'https://plan.example.com/planning/board?repo=4242&q=%231' }
  }, 'the board (in the oldest workspace holding it, else none named); the host\'s page where there is one')
  const rest = async (repo: number, n: number) => (await hosted.as('alice', { url: `/p1/repositories/${repo}/issues?issue_numbers=${n}` })).json()[0].html_url
  t.equal(await rest(REPO, 3), null, 'REST: null, no page on an issue host')
  t.equal(await rest(4242, 1), null)
  t.equal(await rest(OTHER_REPO, 1), 'https://git.example.org/acme/web/issues/1')
  t.equal((await hosted.as('bob', { method: 'POST', url: `/p1/repositories/${REPO}/issues/1/convert_to_epic`, payload: { issues: [{ repo_id: REPO, issue_number: 2 }] } })).statusCode, 200)
  const epics = (await hosted.as('alice', { url: `/p1/repositories/${REPO}/epics` })).json()
  t.same(epics.epic_issues.map((e: any) => e.issue_url), [`https://plan.example.com/planning/board?board=${WS_OLD}&repo=${REPO}&q=%231`], 'the hosted API\'s issue_url (a string): the board')
  t.notMatch(answer.body + JSON.stringify(epics), /github\.com/, 'no github.com anywhere')
})

t.test('without PUBLIC_URL an answer with links on the request\'s own address is kept for that address: the next read is a hit, another host gets its own', async (t) => {
  const app = await build(t, { metricsToken: METRICS_TOKEN })
  const hits = async () => {
    const res = await app.inject({ url: '/metrics', headers: { authorization: `Bearer ${METRICS_TOKEN}` } })
    return Number(/^planning_graphql_cache_hits_total (\d+)/m.exec(res.body)?.[1])
  }
  const doc = `{ issueByInfo(repositoryGhId: ${REPO}, issueNumber: 3) { htmlUrl zenhubUrl(workspaceId: "${WS_NEW}") } }`
  const ask = async (host: string) => (await app.as('carol', { method: 'POST', url: '/public/graphql', payload: { query: doc }, headers: { host } })).json().data.issueByInfo
  const first = await ask('plan.example.net')
  t.equal(first.zenhubUrl, `http://plan.example.net/board?board=${WS_NEW}&repo=${REPO}&q=%233`)
  const at = await hits()
  t.same(await ask('plan.example.net'), first)
  t.equal(await hits(), at + 1, 'the same address: the kept answer')
  const other = await ask('elsewhere.example.org')
  t.equal(other.zenhubUrl, `http://elsewhere.example.org/board?board=${WS_NEW}&repo=${REPO}&q=%233`, 'another address: its own links, never the first one\'s')
  t.match(other.htmlUrl, /^http:\/\/elsewhere\.example\.org\/board\?/)
  t.equal(await hits(), at + 1, 'made for it, not sent from the other\'s')
})

t.test('User.zenhubUser: the user a host identity of the login is linked to, else the user of that login, else null', async (t) => {
  await sql("INSERT INTO connections (id, kind, web_url, api_url, secret, token, created_at) VALUES ('cccccccccccccccccccccccc', 'github', 'https://github.com', 'https://api.github.com', 'x', NULL, '2026-01-01T00:00:00Z')")
  await sql("INSERT INTO host_identities (connection_id, platform_user_id, login, user_id, created_at) VALUES ('cccccccccccccccccccccccc', 77, 'octo-bob', 2, '2026-01-01T00:00:00Z')")
  const issue = await issueId(REPO, 2)
  for (const login of ['octo-bob', 'carol', 'stranger']) await sql('INSERT INTO issue_assignees (issue_id, login, avatar_url) VALUES (?, ?, NULL)', [issue, login])
  const doc = 'query getWorkspaceUsers($workspaceId: ID!) { workspace(id: $workspaceId) { assignees { totalCount nodes { login zenhubUser { id name email } } } } }'
  const answer = await gql(app, 'bob', doc, { workspaceId: WS_NEW })
  t.notOk(answer.errors)
  const byLogin = Object.fromEntries(answer.data.workspace.assignees.nodes.map((n: { login: string, zenhubUser: unknown }) => [n.login, n.zenhubUser]))
  t.same(byLogin['octo-bob'], { id: encodeId('ZenhubUser', 2), name: 'bob', email: null }, 'linked identity (an email shows to its owner only… and bob reads his own)')
  t.same(byLogin.carol, { id: encodeId('ZenhubUser', 3), name: 'carol', email: null }, 'the same login')
  t.equal(byLogin.stranger, null, 'nobody here')
  const assignable = await gql(app, 'alice', `{ node(id: "${encodeId('Repository', REPO)}") { ... on Repository { assignableUsers(first: 20) { nodes { login zenhubUser { name githubUser { login } } } } } } }`)
  t.same(assignable.data.node.assignableUsers.nodes.find((n: { login: string }) => n.login === 'alice').zenhubUser, { name: 'alice', githubUser: { login: 'alice' } })
})

t.test('workspace estimates and privacy: fixed answers say so; hasEstimatedIssues reads the repositories the viewer can', async (t) => {
  const doc = 'query($ws: ID!) { workspace(id: $ws) { private assumeEstimates assumedEstimateValue hasEstimatedIssues } }'
  t.same((await gql(app, 'carol', doc, { ws: WS_OLD })).data.workspace, { private: false, assumeEstimates: false, assumedEstimateValue: null, hasEstimatedIssues: false })
  t.equal((await app.as('alice', { method: 'PUT', url: `/p1/repositories/${OTHER_REPO}/issues/1/estimate`, payload: { estimate: 3 } })).statusCode, 200)
  t.equal((await gql(app, 'bob', doc, { ws: WS_OLD })).data.workspace.hasEstimatedIssues, true, 'bob reads OTHER_REPO')
  t.equal((await gql(app, 'carol', doc, { ws: WS_OLD })).data.workspace.hasEstimatedIssues, false, 'carol does not')
  t.equal((await gql(app, 'dave', doc, { ws: WS_OLD })).data.workspace, null, 'no trace for nobody')
})

t.test('issueLabelOptions: the labels in use on the readable repositories, by name, filtered; githubIssueTypes is empty', async (t) => {
  await sql('INSERT INTO issue_labels (issue_id, name, color) VALUES (?, ?, ?)', [await issueId(REPO, 1), 'bug', 'ff0000'])
  await sql('INSERT INTO issue_labels (issue_id, name, color) VALUES (?, ?, ?)', [await issueId(REPO, 2), 'bug', 'ff0000'])
  await sql('INSERT INTO issue_labels (issue_id, name, color) VALUES (?, ?, ?)', [await issueId(OTHER_REPO, 2), 'design', null])
  const doc = 'query($ws: ID!, $q: String, $repos: [ID!]) { workspace(id: $ws) { issueLabelOptions(query: $q, repositoryIds: $repos) { totalCount nodes { name color } } defaultRepository { githubIssueTypes { totalCount nodes { id name } } } } }'
  const all = await gql(app, 'bob', doc, { ws: WS_OLD })
  t.same(all.data.workspace.issueLabelOptions, { totalCount: 2, nodes: [{ name: 'bug', color: 'ff0000' }, { name: 'design', color: null }] })
  t.same(all.data.workspace.defaultRepository.githubIssueTypes, { totalCount: 0, nodes: [] })
  t.same((await gql(app, 'carol', doc, { ws: WS_OLD })).data.workspace.issueLabelOptions.nodes.map((n: { name: string }) => n.name), ['bug'], 'carol cannot read OTHER_REPO')
  t.same((await gql(app, 'bob', doc, { ws: WS_OLD, q: 'DES' })).data.workspace.issueLabelOptions.nodes.map((n: { name: string }) => n.name), ['design'])
  t.same((await gql(app, 'bob', doc, { ws: WS_OLD, repos: [encodeId('Repository', REPO)] })).data.workspace.issueLabelOptions.nodes.map((n: { name: string }) => n.name), ['bug'])
})

t.test('a page of 100 issues with zenhubUrl and assignees\' zenhubUser costs a fixed number of statements', { skip: process.env.TEST_DATABASE_URL !== undefined && 'counted on SQLite' }, async (t) => {
  const { default: Database } = await import('better-sqlite3')
  const executed: string[] = []
  const db = new Database(':memory:', { verbose: (text) => executed.push(String(text)) })
  t.teardown(() => db.close())
  const counted = await build(t, { database: db })
  const q = `{ searchIssuesByPipeline(pipelineId: "${P.todo}", filters: {}, first: 100) { nodes { number zenhubUrl(workspaceId: "${WS_OLD}")
    assignees { nodes { login zenhubUser { name } } } repository { estimateSet { values } } } } }`
  const count = async () => {
    await gql(counted, 'alice', '{ viewer { id } }')
    executed.length = 0
    const res = await gql(counted, 'alice', q)
    t.notOk(res.errors)
    return { statements: executed.length, issues: res.data.searchIssuesByPipeline.nodes.length }
  }
  db.prepare("INSERT INTO issue_assignees (issue_id, login, avatar_url) SELECT id, 'carol', NULL FROM issues").run()
  const small = await count()
  for (let n = 100; n < 160; n++) {
    t.equal((await counted.admin({ method: 'POST', url: `/admin/repositories/${REPO}/issues`, payload: { number: n, title: `n${n}` } })).statusCode, 201)
  }
  db.prepare("INSERT INTO issue_assignees (issue_id, login, avatar_url) SELECT id, 'u' || number, NULL FROM issues WHERE number >= 100").run()
  db.prepare("INSERT INTO issue_assignees (issue_id, login, avatar_url) SELECT id, 'bob', NULL FROM issues WHERE number >= 100").run()
  const large = await count()
  t.ok(large.issues > small.issues * 5, `${small.issues} then ${large.issues} issues`)
  t.equal(large.statements, small.statements, `${large.statements} statements either way`)
})

t.test('Pipeline.createdAt and updatedAt: kept from creation; a rename or move moves updatedAt, the others keep theirs', async (t) => {
  const details = 'query($id: ID!) { node(id: $id) { ... on Pipeline { id name createdAt updatedAt } } }'
  const before = (await gql(app, 'carol', details, { id: encodeId('Pipeline', P.todo) })).data.node
  const workspace = (await gql(app, 'carol', `{ workspace(id: "${WS_OLD}") { createdAt } }`)).data.workspace
  t.equal(before.createdAt, workspace.createdAt, 'a fixture\'s pipelines are made with their workspace')
  t.equal(before.updatedAt, before.createdAt)

  t.equal((await app.admin({ method: 'PATCH', url: '/admin/users/alice', payload: { administrator: true } })).statusCode, 200, 'pipelines are changed by administrators')
  const start = Date.now()
  const made = await gql(app, 'alice', 'mutation CreatePipeline($input: CreatePipelineInput!) { createPipeline(input: $input) { pipeline { id name description stage createdAt } } }',
    { input: { workspaceId: WS_OLD, name: 'Review' } })
  t.notOk(made.errors, JSON.stringify(made.errors))
  const createdAt = Date.parse(made.data.createPipeline.pipeline.createdAt)
  t.ok(createdAt >= start - 1000 && createdAt <= Date.now(), 'made now')
  await new Promise((resolve) => setTimeout(resolve, 20))
  const updated = await gql(app, 'alice', 'mutation UpdatePipeline($input: UpdatePipelineInput!) { updatePipeline(input: $input) { pipeline { id name isDefaultPRPipeline updatedAt } } }',
    { input: { pipelineId: made.data.createPipeline.pipeline.id, name: 'In review' } })
  t.notOk(updated.errors)
  t.ok(Date.parse(updated.data.updatePipeline.pipeline.updatedAt) > createdAt, 'renamed later')
  const again = (await gql(app, 'carol', details, { id: made.data.createPipeline.pipeline.id })).data.node
  t.equal(again.createdAt, made.data.createPipeline.pipeline.createdAt, 'createdAt stays')
  t.same((await gql(app, 'carol', details, { id: encodeId('Pipeline', P.todo) })).data.node, before, 'a pipeline not renamed nor moved keeps its time')
})

t.test('Repository createdAt, updatedAt, isPrivate, isArchived, and its owner, for repositories the host never described', async (t) => {
  const doc = 'query($ids: [Int!]!) { repositoriesByGhId(ghIds: $ids) { ghId createdAt updatedAt isPrivate isArchived owner { __typename login ghId avatarUrl } } }'
  const [repo] = (await gql(app, 'carol', doc, { ids: [REPO] })).data.repositoriesByGhId
  t.match(repo, { ghId: REPO, isPrivate: false, isArchived: false, owner: { __typename: 'User', login: 'acme', ghId: null, avatarUrl: '' } })
  t.ok(Number.isFinite(Date.parse(repo.createdAt)), 'made when the fixture made it')
  t.equal(repo.updatedAt, repo.createdAt, 'no host change')
  const owner = '{ ownerByLogin(login: "ACME") { __typename id login avatarUrl ... on User { name } } }'
  t.same((await gql(app, 'carol', owner)).data.ownerByLogin, { __typename: 'User', id: encodeId('User', 'acme'), login: 'acme', avatarUrl: '', name: null })
  t.equal((await gql(app, 'dave', owner)).data.ownerByLogin, null, 'no repository of it readable: no trace')
  t.equal((await gql(app, 'carol', '{ ownerByLogin(login: "nobody") { login } }')).data.ownerByLogin, null)
})

t.test('what the issue host says of a repository is kept: made, private, archived, its owner (an Organization); an older delivery changes nothing', async (t) => {
  const hosted = await build(t, { webhooks: { worker: false } })
  const connection = (await hosted.admin({ method: 'POST', url: '/admin/connections', payload: { kind: 'github', secret: SECRET, web_url: 'https://ghe.example.com' } })).json().id as string
  const repository = {
    id: 5151,
    name: 'gateway',
    full_name: 'acme-org/gateway',
    html_url: 'https://ghe.example.com/acme-org/gateway',
    private: true,
    archived: false,
    created_at: '2020-05-01T10:00:00Z',
    updated_at: '2026-01-01T00:00:00Z',
    owner: { login: 'acme-org', id: 99, type: 'Organization' }
  }
  t.same((await deliver(hosted, connection, 'repository', { action: 'created', repository })).json(), { result: 'handled' })
  t.equal((await hosted.admin({ method: 'PUT', url: '/admin/repositories/5151/permissions/carol', payload: { permission: 'read' } })).statusCode, 200)
  const doc = '{ repositoriesByGhId(ghIds: [5151]) { createdAt updatedAt isPrivate isArchived owner { __typename login ghId } } }'
  const read = async () => (await gql(hosted, 'carol', doc)).data.repositoriesByGhId[0]
  t.same(await read(), { createdAt: '2020-05-01T10:00:00.000Z', updatedAt: '2026-01-01T00:00:00.000Z', isPrivate: true, isArchived: false, owner: { __typename: 'Organization', login: 'acme-org', ghId: 99 } })
  const owner = '{ byId: ownerByGhId(ghId: 99) { __typename id login avatarUrl ... on Organization { login } } byLogin: ownerByLogin(login: "acme-org") { __typename ghId } }'
  t.same((await gql(hosted, 'carol', owner)).data, { byId: { __typename: 'Organization', id: encodeId('Organization', 'acme-org'), login: 'acme-org', avatarUrl: '' }, byLogin: { __typename: 'Organization', ghId: 99 } })
  t.same((await gql(hosted, 'bob', owner)).data, { byId: null, byLogin: null }, 'bob reads none of its repositories')

  await deliver(hosted, connection, 'repository', { action: 'archived', repository: { ...repository, archived: true, updated_at: '2026-02-01T00:00:00Z' } })
  t.match(await read(), { isArchived: true, isPrivate: true, updatedAt: '2026-02-01T00:00:00.000Z' }, 'archived')
  const issue = { number: 1, title: 'Old news', state: 'open', updated_at: '2025-01-01T00:00:00Z', html_url: 'https://ghe.example.com/acme-org/gateway/issues/1' }
  await deliver(hosted, connection, 'issues', { action: 'opened', issue, repository: { ...repository, private: false, updated_at: '2025-01-01T00:00:00Z' } })
  t.match(await read(), { isArchived: true, isPrivate: true }, 'a delivery older than what is kept changes nothing of it')
  await deliver(hosted, connection, 'issues', { action: 'edited', issue: { ...issue, updated_at: '2026-03-01T00:00:00Z' }, repository: { ...repository, private: false, archived: true, updated_at: '2026-03-01T00:00:00Z' } })
  t.match(await read(), { isPrivate: false }, 'a newer one names it public')
})
