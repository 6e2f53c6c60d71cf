import t from 'tap'
import { build, buildWithSql, OTHER_REPO, P, REPO, WS_NEW, WS_OLD } from './helper.js'
import { encodeId } from '../plugins/graphql/ids.js'
import { gql } from './gql.js'

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
