import t from 'tap'
import { buildSchema, graphqlSync, getIntrospectionQuery } from 'graphql'
import { build, testFixture, REPO, OTHER_REPO, PRIVATE_REPO, WS_OLD, WS_NEW, P, TOKENS, type App } from './helper.js'
import { encodeId } from '../plugins/graphql/ids.js'
import { gql } from './gql.js'

// One app for the whole file (CI budget); tests that write come last and undo nothing they rely on.
// Labels and assignees as the issue host brings them, on issues 5 and 6 of REPO and one of PRIVATE_REPO.
const hosted: Record<string, object> = {
  [`${REPO}#5`]: { labels: [{ name: 'bug', color: 'd73a4a' }], assignees: [{ login: 'octo', avatar_url: null }] },
  [`${REPO}#6`]: { labels: [{ name: 'bug', color: 'd73a4a' }, { name: 'ui', color: null }] },
  [`${PRIVATE_REPO}#1`]: { labels: [{ name: 'hidden', color: null }] }
}
const fixture = testFixture()
const app = await build(t, { fixture: { ...fixture, issues: fixture.issues.map((i) => ({ ...i, ...hosted[`${i.repo_id}#${i.number}`] })) } })
const repoId = encodeId('Repository', REPO)

t.test('transport: both paths, 401 without or with a bad token, rate-limit headers, bad bodies are 400 not 500', async (t) => {
  const q = { query: '{ viewer { id name } }' }
  for (const url of ['/public/graphql', '/public/graphql/']) {
    const res = await app.as('alice', { method: 'POST', url, payload: q })
    t.equal(res.statusCode, 200, url)
    t.same(res.json(), { data: { viewer: { id: encodeId('ZenhubUser', 1), name: 'alice' } } })
    t.ok(res.headers['x-ratelimit-limit'] !== undefined && res.headers['x-ratelimit-used'] !== undefined, 'rate-limit headers')
  }
  const bearer = await app.inject({ method: 'POST', url: '/public/graphql', payload: q, headers: { authorization: `Bearer ${TOKENS.bob}` } })
  t.equal(bearer.json().data.viewer.name, 'bob')
  t.equal((await app.inject({ method: 'POST', url: '/public/graphql', payload: q })).statusCode, 401)
  t.equal((await app.inject({ method: 'POST', url: '/public/graphql', payload: q, headers: { authorization: 'Bearer nope' } })).statusCode, 401)
  t.equal((await app.as('alice', { method: 'POST', url: '/public/graphql', payload: {} })).statusCode, 400)
  const syntax = await gql(app, 'alice', '{ viewer { ')
  t.equal(syntax.data, null)
  t.equal(syntax.errors![0].extensions.code, 'GRAPHQL_PARSE_FAILED')
  const unknown = await gql(app, 'alice', '{ nope }')
  t.equal(unknown.errors![0].extensions.code, 'GRAPHQL_VALIDATION_FAILED')
})

t.test('CORS: a preflight asking for Authorization is answered for any origin, without credentials; answers may be read', async (t) => {
  for (const url of ['/public/graphql', '/public/graphql/']) {
    const pre = await app.inject({ method: 'OPTIONS', url, headers: { origin: 'https://viewer.example', 'access-control-request-method': 'POST', 'access-control-request-headers': 'authorization,content-type' } })
    t.equal(pre.statusCode, 204, url)
    t.equal(pre.headers['access-control-allow-origin'], '*')
    t.match(String(pre.headers['access-control-allow-headers']), /Authorization/)
    t.match(String(pre.headers['access-control-allow-methods']), /POST/)
    t.equal(pre.headers['access-control-allow-credentials'], undefined, 'no cookies cross-origin')
  }
  const res = await app.inject({ method: 'POST', url: '/public/graphql', payload: { query: '{ viewer { name } }' }, headers: { origin: 'https://viewer.example', authorization: `Bearer ${TOKENS.bob}` } })
  t.equal(res.headers['access-control-allow-origin'], '*')
  t.match(String(res.headers['access-control-expose-headers']), /X-RateLimit-Limit/)
  t.equal(res.json().data.viewer.name, 'bob')
})

t.test('/graphiql: an explorer page, public, loading only this origin\'s own files', async (t) => {
  const page = await app.inject({ url: '/graphiql' })
  t.equal(page.statusCode, 200)
  t.match(page.headers['content-type'], /text\/html/)
  t.match(page.headers['content-security-policy'], /default-src 'none'; script-src 'self'/)
  const refs = [...page.body.matchAll(/(?:src|href)="([^"]+)"/g)].map((m) => m[1])
  t.same(refs.sort(), ['graphiql/explorer.css', 'graphiql/explorer.js'])
  for (const ref of refs) {
    const asset = await app.inject({ url: `/${ref}` })
    t.equal(asset.statusCode, 200, ref)
    t.notMatch(asset.body, /https?:\/\//, `${ref} loads nothing from elsewhere`)
  }
  t.match((await app.inject({ url: '/graphiql/explorer.js' })).body, /public\/graphql/, 'it posts to this server\'s endpoint')
})

t.test('limits: depth, aliases and complexity are refused in validation, with no data', async (t) => {
  let deep = 'id'
  for (let i = 0; i < 30; i++) deep = `pipelineIssue(workspaceId: "x") { issue { ${deep} } }`
  const d = await gql(app, 'alice', `{ issueByInfo(repositoryGhId: ${REPO}, issueNumber: 1) { ${deep} } }`)
  t.equal(d.data, null)
  t.ok(d.errors!.length > 0)
  const aliases = Array.from({ length: 1000 }, (_, i) => `a${i}: viewer { id }`).join(' ')
  const a = await gql(app, 'alice', `{ ${aliases} }`)
  t.equal(a.data, null)
  t.match(a.errors![0].message, /aliases/)
  const big = await gql(app, 'alice', `{ workspace(id: "${WS_OLD}") { pipelinesConnection(first: 100) { nodes { issues(first: 100) { nodes {
    labels(first: 100) { nodes { name } } assignees(first: 100) { nodes { login } } } } } } } }`)
  t.equal(big.data, null)
  t.match(big.errors![0].message, /too complex/)
  const estimates = Array.from({ length: 11 }, (_, i) => `e${i}: setEstimate(input: { issueId: "${encodeId('Issue', 1)}", value: ${i + 1} }) { clientMutationId }`).join(' ')
  const many = await gql(app, 'alice', `mutation { ${estimates} }`)
  t.equal(many.data, null)
  t.match(many.errors![0], { message: /11 mutations; at most 10/, extensions: { code: 'QUERY_TOO_COMPLEX' } })
})

t.test('introspection answers, and our schema conflicts with nothing in the reference', async (t) => {
  const res = await gql(app, 'alice', getIntrospectionQuery())
  t.ok(res.data.__schema.types.length > 20)
})

t.test('workspace, pipelines, repositories and the board through searchIssuesByPipeline, as REST has it', async (t) => {
  const ws = await gql(app, 'alice', `query($id: ID!) { workspace(id: $id) { id name displayName zenhubOrganization { id }
    pipelinesConnection(first: 50) { totalCount nodes { id name issues { totalCount pipelineCounts { issuesCount sumEstimates } } } }
    repositoriesConnection { nodes { id ghId name ownerName } } defaultRepository { ghId } activeSprint { id } } }`, { id: WS_OLD })
  t.notOk(ws.errors)
  const w = ws.data.workspace
  t.equal(w.id, WS_OLD)
  t.same(w.pipelinesConnection.nodes.map((p: any) => p.name), ['To Do', 'Doing', 'Done'])
  t.same(w.repositoriesConnection.nodes.map((r: any) => r.ghId), [REPO, OTHER_REPO, PRIVATE_REPO])
  t.equal(w.repositoriesConnection.nodes[0].id, repoId)
  const carol = await gql(app, 'carol', `{ workspace(id: "${WS_OLD}") { repositoriesConnection { nodes { ghId } } } }`)
  t.same(carol.data.workspace.repositoriesConnection.nodes.map((r: any) => r.ghId), [REPO], 'only what carol can read')
  t.same((await gql(app, 'dave', `{ workspace(id: "${WS_OLD}") { id } }`)).data, { workspace: null })

  const rest = (await app.as('alice', { url: `/p2/workspaces/${WS_OLD}/repositories/${REPO}/board` })).json()
  const todo = rest.pipelines.find((p: any) => p.id === P.todo).issues.map((i: any) => i.issue_number)
  const page = await gql(app, 'alice', `query($p: ID!, $r: [ID!]) { searchIssuesByPipeline(pipelineId: $p, filters: { repositoryIds: $r }) {
    totalCount nodes { number repository { ghId } pipelineIssue(workspaceId: "${WS_OLD}") { pipeline { id name } } } } }`,
  { p: encodeId('Pipeline', P.todo), r: [repoId] })
  t.notOk(page.errors)
  t.same(page.data.searchIssuesByPipeline.nodes.map((n: any) => n.number), todo, 'the REST board\'s order')
  t.equal(page.data.searchIssuesByPipeline.nodes[0].pipelineIssue.pipeline.name, 'To Do')
  const hex = await gql(app, 'alice', `{ searchIssuesByPipeline(pipelineId: "${P.todo}", filters: {}) { totalCount } }`)
  t.ok(hex.data.searchIssuesByPipeline.totalCount >= todo.length, 'the REST pipeline id as it is')
})

t.test('issueByInfo against its REST twin; NOT_FOUND for a missing issue and for a repository the user cannot read', async (t) => {
  await app.as('alice', { method: 'PUT', url: `/p1/repositories/${REPO}/issues/2/estimate`, payload: { estimate: 5 } })
  const rest = (await app.as('alice', { url: `/p1/repositories/${REPO}/issues/2` })).json()
  const res = await gql(app, 'alice', `{ issueByInfo(repositoryGhId: ${REPO}, issueNumber: 2) { id number title state estimate { value }
    htmlUrl repository { ghId } pipelineIssues { nodes { pipeline { name } workspace { id } } } labels { nodes { name } } assignees { nodes { login } } } }`)
  t.notOk(res.errors)
  const issue = res.data.issueByInfo
  t.equal(issue.estimate.value, rest.estimate.value)
  t.equal(issue.state, 'OPEN')
  t.same(issue.pipelineIssues.nodes.map((n: any) => n.pipeline.name), rest.pipelines.map((p: any) => p.name))
  const byNode = await gql(app, 'alice', `{ node(id: "${issue.id}") { __typename ... on Issue { number } } }`)
  t.same(byNode.data.node, { __typename: 'Issue', number: 2 })
  const missing = await gql(app, 'alice', `{ issueByInfo(repositoryGhId: ${REPO}, issueNumber: 999) { id } }`)
  t.equal(missing.data, null)
  t.equal(missing.errors![0].extensions.code, 'NOT_FOUND')
  const hidden = await gql(app, 'bob', `{ issueByInfo(repositoryGhId: ${PRIVATE_REPO}, issueNumber: 1) { id } }`)
  t.equal(hidden.errors![0].extensions.code, 'NOT_FOUND')
  t.same((await gql(app, 'bob', `{ node(id: "${encodeId('Repository', PRIVATE_REPO)}") { id } }`)).data, { node: null })
  const repos = await gql(app, 'bob', `{ repositoriesByGhId(ghIds: [${REPO}, ${PRIVATE_REPO}]) { ghId workspacesConnection { nodes { id } } } }`)
  t.same(repos.data.repositoriesByGhId, [{ ghId: REPO, workspacesConnection: { nodes: [{ id: WS_OLD }, { id: WS_NEW }] } }])
})

t.test('viewer: searchWorkspaces and zenhubOrganizations', async (t) => {
  const res = await gql(app, 'carol', '{ viewer { searchWorkspaces(query: "road") { nodes { id name } } zenhubOrganizations { nodes { id workspaces { totalCount } } } } }')
  t.same(res.data.viewer.searchWorkspaces.nodes, [{ id: WS_NEW, name: 'Roadmap' }])
  t.equal(res.data.viewer.zenhubOrganizations.nodes[0].workspaces.totalCount, 2)
})

t.test('pagination over a board that changes between pages', async (t) => {
  const q = `query($after: String) { searchIssuesByPipeline(pipelineId: "${encodeId('Pipeline', P.todo)}", filters: {}, first: 2, after: $after) {
    pageInfo { hasNextPage endCursor } nodes { number repository { ghId } } } }`
  const first = (await gql(app, 'alice', q)).data.searchIssuesByPipeline
  t.equal(first.nodes.length, 2)
  // An issue moves from the head of the pipeline away, and another to its top: the next page goes on after the cursor.
  const seen = first.nodes.map((n: any) => `${n.repository.ghId}#${n.number}`)
  await app.as('alice', { method: 'POST', url: `/p2/workspaces/${WS_OLD}/repositories/${REPO}/issues/${first.nodes[0].number}/moves`, payload: { pipeline_id: P.doing, position: 'top' } })
  const second = (await gql(app, 'alice', q, { after: first.pageInfo.endCursor })).data.searchIssuesByPipeline
  const next = second.nodes.map((n: any) => `${n.repository.ghId}#${n.number}`)
  t.equal(next.length, 2)
  t.notOk(next.some((k: string) => seen.includes(k)), 'no issue twice')
  const bad = await gql(app, 'alice', `{ searchIssuesByPipeline(pipelineId: "${encodeId('Pipeline', P.todo)}", filters: {}, after: "junk") { totalCount } }`)
  t.equal(bad.errors![0].extensions.code, 'BAD_USER_INPUT')
  const tooMany = await gql(app, 'alice', `{ searchIssuesByPipeline(pipelineId: "${encodeId('Pipeline', P.todo)}", filters: {}, first: 101) { totalCount } }`)
  t.equal(tooMany.errors![0].extensions.code, 'BAD_USER_INPUT')
})

export { buildSchema, graphqlSync, WS_NEW }

t.test('a page of 100 issues with their fields costs a fixed number of statements', { skip: process.env.TEST_DATABASE_URL !== undefined && 'counted on SQLite' }, async (t) => {
  const { default: Database } = await import('better-sqlite3')
  const executed: string[] = []
  const db = new Database(':memory:', { verbose: (sql) => executed.push(String(sql)) })
  const counted = await build(t, { database: db })
  t.teardown(() => db.close())
  const q = `{ searchIssuesByPipeline(pipelineId: "${P.todo}", filters: {}, first: 100) { totalCount nodes { id number title htmlUrl estimate { value }
    repository { ghId name } labels { nodes { name } } assignees { nodes { login } } milestone { title } closedAt parentIssue { number }
    blockingIssues { nodes { number } } blockedIssues { nodes { number } } pipelineIssue(workspaceId: "${WS_OLD}") { pipeline { name } workspace { id } }
    pipelineIssues { nodes { pipeline { id } } } } } }`
  const count = async () => {
    await gql(counted, 'alice', '{ viewer { id } }')
    executed.length = 0
    const res = await gql(counted, 'alice', q)
    t.notOk(res.errors)
    return { statements: executed.length, issues: res.data.searchIssuesByPipeline.nodes.length }
  }
  const small = await count()
  for (let n = 100; n < 160; n++) {
    await counted.admin({ method: 'POST', url: `/admin/repositories/${REPO}/issues`, payload: { number: n, title: `n${n}` } })
  }
  const large = await count()
  t.ok(large.issues > small.issues * 5, `${small.issues} then ${large.issues} issues`)
  t.equal(large.statements, small.statements, `${large.statements} statements either way`)
})

t.test('mutations: moveIssue and setEstimate do what their REST twins do; a read token and a read user are refused', async (t) => {
  const issue = (await gql(app, 'bob', `{ issueByInfo(repositoryGhId: ${REPO}, issueNumber: 4) { id } }`)).data.issueByInfo.id
  const moved = await gql(app, 'bob', `mutation($i: MoveIssueInput!) { moveIssue(input: $i) { clientMutationId issue { number pipelineIssue(workspaceId: "${WS_OLD}") { pipeline { name } } } pipeline { name } } }`,
    { i: { issueId: issue, pipelineId: encodeId('Pipeline', P.doing), position: 0, clientMutationId: 'm1' } })
  t.notOk(moved.errors)
  t.same(moved.data.moveIssue, { clientMutationId: 'm1', issue: { number: 4, pipelineIssue: { pipeline: { name: 'Doing' } } }, pipeline: { name: 'Doing' } })
  const board = (await app.as('bob', { url: `/p2/workspaces/${WS_OLD}/repositories/${REPO}/board` })).json()
  t.equal(board.pipelines.find((p: any) => p.id === P.doing).issues[0].issue_number, 4, 'REST sees the move at the top')

  const est = await gql(app, 'bob', `mutation { setEstimate(input: { issueId: "${issue}", value: 8 }) { issue { estimate { value } } } }`)
  t.same(est.data.setEstimate.issue.estimate, { value: 8 })
  t.same((await app.as('bob', { url: `/p1/repositories/${REPO}/issues/4` })).json().estimate, { value: 8 })
  const cleared = await gql(app, 'bob', `mutation { setEstimate(input: { issueId: "${issue}", value: null }) { issue { estimate { value } } } }`)
  t.equal(cleared.data.setEstimate.issue.estimate, null)

  const carol = await gql(app, 'carol', `mutation { setEstimate(input: { issueId: "${issue}", value: 2 }) { issue { id } } }`)
  t.equal(carol.errors![0].extensions.code, 'FORBIDDEN', 'read permission only')
  const dave = await gql(app, 'dave', `mutation { setEstimate(input: { issueId: "${issue}", value: 2 }) { issue { id } } }`)
  t.equal(dave.errors![0].extensions.code, 'NOT_FOUND', 'no access at all')
  const made = await app.as('bob', { method: 'POST', url: '/account/tokens', payload: { name: 'reader', scope: 'read' } })
  const readToken = made.json().token as string
  const read = await app.inject({ method: 'POST', url: '/public/graphql', headers: { authorization: `Bearer ${readToken}` }, payload: { query: `mutation { setEstimate(input: { issueId: "${issue}", value: 2 }) { issue { id } } }` } })
  t.equal(read.statusCode, 200)
  t.equal(read.json().errors[0].extensions.code, 'FORBIDDEN', 'a read token')
  const readQuery = await app.inject({ method: 'POST', url: '/public/graphql', headers: { authorization: `Bearer ${readToken}` }, payload: { query: '{ viewer { name } }' } })
  t.same(readQuery.json(), { data: { viewer: { name: 'bob' } } }, 'a read token reads')
  t.equal((await app.as('bob', { url: `/p1/repositories/${REPO}/issues/4` })).json().estimate, undefined, 'nothing changed')

  const many = await gql(app, 'alice', 'mutation($ids: [ID!]!) { setMultipleEstimates(input: { issueIds: $ids, value: 3 }) { issues { number estimate { value } } } }',
    { ids: [issue, (await gql(app, 'alice', `{ issueByInfo(repositoryGhId: ${REPO}, issueNumber: 5) { id } }`)).data.issueByInfo.id] })
  t.same(many.data.setMultipleEstimates.issues, [{ number: 4, estimate: { value: 3 } }, { number: 5, estimate: { value: 3 } }])
})

t.test('mutations: createIssueDependency and deleteIssueDependency against GET /p1/repositories/:id/dependencies', async (t) => {
  const info = (n: number) => `{ repositoryGhId: ${REPO}, issueNumber: ${n} }`
  const made = await gql(app, 'bob', `mutation { createIssueDependency(input: { blockingIssue: ${info(1)}, blockedIssue: ${info(3)} }) { issueDependency { id blockingIssue { number } blockedIssue { number blockingIssues { nodes { number } } } } } }`)
  t.notOk(made.errors)
  t.same(made.data.createIssueDependency.issueDependency.blockedIssue, { number: 3, blockingIssues: { nodes: [{ number: 1 }] } })
  const rest = (await app.as('bob', { url: `/p1/repositories/${REPO}/dependencies` })).json()
  t.ok(rest.dependencies.some((d: any) => d.blocking.issue_number === 1 && d.blocked.issue_number === 3))
  const again = await gql(app, 'bob', `mutation { createIssueDependency(input: { blockingIssue: ${info(1)}, blockedIssue: ${info(3)} }) { issueDependency { id } } }`)
  t.notOk(again.errors, 'as REST: making it again is no error')
  const once = (await app.as('bob', { url: `/p1/repositories/${REPO}/dependencies` })).json().dependencies
  t.equal(once.filter((d: any) => d.blocking.issue_number === 1 && d.blocked.issue_number === 3).length, 1, 'and it is there once')
  const gone = await gql(app, 'bob', `mutation { deleteIssueDependency(input: { blockingIssue: ${info(1)}, blockedIssue: ${info(3)}, clientMutationId: "d" }) { clientMutationId } }`)
  t.same(gone.data, { deleteIssueDependency: { clientMutationId: 'd' } })
  t.notOk((await app.as('bob', { url: `/p1/repositories/${REPO}/dependencies` })).json().dependencies.some((d: any) => d.blocking.issue_number === 1 && d.blocked.issue_number === 3))
})

t.test('workspace lists: issues, epics, labels, users, assignees; searchIssues; an issue\'s releases; a sprint\'s sprintIssues', async (t) => {
  t.equal((await app.as('alice', { method: 'POST', url: `/p1/repositories/${REPO}/issues/6/convert_to_epic`, payload: { issues: [{ repo_id: REPO, issue_number: 5 }] } })).statusCode, 200)
  const release = (await app.as('alice', { method: 'POST', url: `/p1/repositories/${REPO}/reports/release`, payload: { title: 'R1', start_date: '2026-01-01T00:00:00Z', desired_end_date: '2026-03-01T00:00:00Z' } })).json()
  t.equal((await app.as('alice', { method: 'PATCH', url: `/p1/reports/release/${release.release_id}/issues`, payload: { add_issues: [{ repo_id: REPO, issue_number: 5 }], remove_issues: [] } })).statusCode, 200)

  const res = await gql(app, 'carol', `{ workspace(id: "${WS_OLD}") {
    issues(first: 3) { totalCount nodes { number state } pageInfo { hasNextPage } }
    labelled: issues(filters: { labels: { in: ["ui"] } }) { nodes { number } }
    epics { nodes { id issue { number } childIssues { nodes { number } } issueCountProgress { open closed total } issueEstimateProgress { total } } }
    viewerPermission
    zenhubLabels { nodes { id name color } }
    zenhubUsers { nodes { name } }
    assignees { nodes { login } } } }`)
  t.notOk(res.errors)
  const w = res.data.workspace
  t.equal(w.issues.totalCount, 7, 'REPO\'s seven issues, the closed one too: carol reads only REPO')
  t.same(w.issues.nodes.map((n: any) => n.number), [7, 6, 5], 'newest first')
  t.equal(w.issues.nodes[0].state, 'CLOSED')
  t.same(w.labelled.nodes.map((n: any) => n.number), [6])
  const restEpics = (await app.as('carol', { url: `/p1/repositories/${REPO}/epics` })).json().epic_issues.map((e: any) => e.issue_number)
  t.same(w.epics.nodes.map((e: any) => e.issue.number), restEpics, 'the REST epics')
  t.same(w.epics.nodes[0].childIssues.nodes, [{ number: 5 }])
  t.same(w.epics.nodes[0].issueCountProgress, { open: 1, closed: 0, total: 1 })
  t.equal(w.viewerPermission, 'READ', 'carol reads REPO only')
  t.equal((await gql(app, 'bob', `{ workspace(id: "${WS_OLD}") { viewerPermission } }`)).data.workspace.viewerPermission, 'WRITE')
  t.same(w.zenhubLabels.nodes.map((l: any) => [l.name, l.color]), [['bug', 'd73a4a'], ['ui', null]], 'not the label only PRIVATE_REPO has')
  t.same(w.zenhubUsers.nodes.map((u: any) => u.name), ['alice', 'bob'], 'writers of REPO')
  t.same(w.assignees.nodes.map((u: any) => u.login), ['alice', 'bob', 'octo'])
  const label = await gql(app, 'carol', `{ node(id: "${w.zenhubLabels.nodes[0].id}") { ... on ZenhubLabel { name } } epic: node(id: "${w.epics.nodes[0].id}") { ... on Epic { issue { number } } } }`)
  t.same(label.data, { node: { name: 'bug' }, epic: { issue: { number: 6 } } })

  const todo = encodeId('Pipeline', P.todo)
  const search = await gql(app, 'alice', `query($f: EpicAssignableIssueSearchFiltersInput!) { searchIssues(workspaceId: "${WS_OLD}", filters: $f, includeClosed: true) { totalCount nodes { number repository { ghId } } } }`,
    { f: { repositoryIds: [repoId], pipelineIds: [] } })
  t.same(search.data.searchIssues.nodes.map((n: any) => n.number), [7, 6, 5, 4, 3, 2, 1])
  const inTodo = await gql(app, 'alice', `query($f: EpicAssignableIssueSearchFiltersInput!) { searchIssues(workspaceId: "${WS_OLD}", filters: $f) { nodes { number repository { ghId } } } }`,
    { f: { repositoryIds: [repoId], pipelineIds: [todo] } })
  const board = (await app.as('alice', { url: `/p2/workspaces/${WS_OLD}/repositories/${REPO}/board` })).json()
  const restTodo = board.pipelines.find((p: any) => p.id === P.todo).issues.map((i: any) => i.issue_number).sort((a: number, b: number) => b - a)
  t.same(inTodo.data.searchIssues.nodes.map((n: any) => n.number), restTodo, 'the open issues the REST board has in To Do')

  const issue = await gql(app, 'carol', `{ issueByInfo(repositoryGhId: ${REPO}, issueNumber: 5) { releases { nodes { id title state startOn } } parentIssue { number }
    ghUpdatedAt labels { nodes { id } } repository { labels { nodes { name } } milestones { nodes { id title } } assignableUsers { nodes { login } } issues(first: 1) { nodes { number } } } } }`)
  t.notOk(issue.errors)
  t.same(issue.data.issueByInfo.releases.nodes.map((r: any) => [r.title, r.state, r.startOn]), [['R1', 'OPEN', '2026-01-01']])
  t.equal(issue.data.issueByInfo.parentIssue.number, 6)
  const parent = await gql(app, 'carol', `{ issueByInfo(repositoryGhId: ${REPO}, issueNumber: 6) { githubChildIssues { totalCount nodes { number } } } }`)
  t.same(parent.data.issueByInfo.githubChildIssues, { totalCount: 1, nodes: [{ number: 5 }] }, 'the child whose parentIssue it is')
  t.same(issue.data.issueByInfo.repository.labels.nodes.map((l: any) => l.name), ['bug', 'ui'])
  t.same(issue.data.issueByInfo.repository.milestones.nodes.map((m: any) => m.title), ['v1.0'])
  t.equal(issue.data.issueByInfo.repository.milestones.nodes[0].id, encodeId('Milestone', `${REPO}:1`))
  t.same(issue.data.issueByInfo.labels.nodes, [{ id: encodeId('Label', 'bug') }])
  t.ok(Date.parse(issue.data.issueByInfo.ghUpdatedAt) > 0)
  t.same(issue.data.issueByInfo.repository.assignableUsers.nodes.map((u: any) => u.login), ['alice', 'bob', 'octo'])
  t.same(issue.data.issueByInfo.repository.issues.nodes, [{ number: 7 }])

  await app.as('alice', { method: 'PUT', url: `/p2/workspaces/${WS_NEW}/sprint_config`, payload: { length_weeks: 2, starts_on: new Date(Date.now() - 86_400_000).toISOString().slice(0, 10), time_zone: 'UTC', carry_over: false } })
  const active = (await app.as('alice', { url: `/p2/workspaces/${WS_NEW}/sprints` })).json().find((s: any) => s.state === 'active')
  await app.as('bob', { method: 'POST', url: `/p2/sprints/${active.id}/issues`, payload: { issues: [{ repo_id: REPO, issue_number: 5 }, { repo_id: REPO, issue_number: 6 }] } })
  const sprint = await gql(app, 'carol', `{ workspace(id: "${WS_NEW}") { upcomingSprint { startAt } previousSprint { id } averageSprintVelocity activeSprint { id endAt sprintIssues { totalCount nodes { id issue { number } sprint { name } } }
    ui: sprintIssues(labelIds: ["${encodeId('ZenhubLabel', 'ui')}"]) { nodes { issue { number } } } } } }`)
  t.notOk(sprint.errors)
  t.same(sprint.data.workspace.activeSprint.sprintIssues.nodes.map((n: any) => n.issue.number), [5, 6])
  t.same(sprint.data.workspace.activeSprint.ui.nodes.map((n: any) => n.issue.number), [6])
  t.equal(sprint.data.workspace.upcomingSprint.startAt, sprint.data.workspace.activeSprint.endAt, 'the next sprint starts where the active one ends')
  t.same([sprint.data.workspace.previousSprint, sprint.data.workspace.averageSprintVelocity], [null, null], 'none has ended yet')
})

t.test('workspace issues and searchIssues cost a fixed number of statements per page', { skip: process.env.TEST_DATABASE_URL !== undefined && 'counted on SQLite' }, async (t) => {
  const { default: Database } = await import('better-sqlite3')
  const executed: string[] = []
  const db = new Database(':memory:', { verbose: (sql) => executed.push(String(sql)) })
  const counted = await build(t, { database: db })
  t.teardown(() => db.close())
  const q = `{ workspace(id: "${WS_OLD}") { issues(first: 100) { nodes { number labels { nodes { name } } releases { nodes { title } } parentIssue { number } } }
    epics { nodes { issue { number } } } zenhubLabels { nodes { name } } assignees { nodes { login } } zenhubUsers { nodes { name createdAt } } }
    searchIssues(workspaceId: "${WS_OLD}", filters: { repositoryIds: [], pipelineIds: [] }) { nodes { number repository { ghId } releases { nodes { title } } } } }`
  const count = async () => {
    await gql(counted, 'alice', '{ viewer { id } }')
    executed.length = 0
    const res = await gql(counted, 'alice', q)
    t.notOk(res.errors)
    t.same(executed.filter((text) => text.includes('workspace_views')), [], 'the view it records is not written during the read')
    return { statements: executed.length, issues: res.data.workspace.issues.nodes.length }
  }
  // The workspace's first read in a minute: its view is written after, with the others (db/workspace-views.ts).
  const small = await count()
  executed.length = 0
  for (const end = Date.now() + 5000; !executed.some((text) => text.includes('workspace_views')) && Date.now() < end;) await new Promise((resolve) => setTimeout(resolve, 50))
  t.ok(executed.some((text) => text.includes('workspace_views')), 'and is written just after, by itself')
  for (let n = 100; n < 140; n++) await counted.admin({ method: 'POST', url: `/admin/repositories/${REPO}/issues`, payload: { number: n, title: `n${n}` } })
  const large = await count()
  t.ok(large.issues > small.issues * 3, `${small.issues} then ${large.issues} issues`)
  t.equal(large.statements, small.statements, `${large.statements} statements either way`)
})

t.test('a repeated read is answered from kept bytes until something is written; per viewer; never a read of the clock', async (t) => {
  const sqlite = process.env.TEST_DATABASE_URL === undefined
  const executed: string[] = []
  let counted: App = app
  if (sqlite) {
    const { default: Database } = await import('better-sqlite3')
    const db = new Database(':memory:', { verbose: (sql) => executed.push(String(sql)) })
    counted = await build(t, { database: db })
    t.teardown(() => db.close())
  }
  const q = `{ issueByInfo(repositoryGhId: ${PRIVATE_REPO}, issueNumber: 1) { number title } }`
  const first = await gql(counted, 'alice', q)
  t.equal(first.data.issueByInfo.number, 1)
  executed.length = 0
  t.same(await gql(counted, 'alice', q), first, 'the same answer again')
  if (sqlite) t.equal(executed.filter((s) => !/change_counter/.test(s)).length, 0, 'without running the document')
  const bob = await gql(counted, 'bob', q)
  t.equal(bob.data, null, 'another viewer gets their own answer, not the kept one')
  t.equal(bob.errors![0].extensions.code, 'NOT_FOUND')
  await counted.admin({ method: 'PATCH', url: `/admin/repositories/${PRIVATE_REPO}/issues/1`, payload: { title: 'Renamed after the first read' } })
  t.equal((await gql(counted, 'alice', q)).data.issueByInfo.title, 'Renamed after the first read', 'a write is seen at once')
  const sprints = `{ workspace(id: "${WS_OLD}") { sprints(first: 5) { nodes { id state } } } }`
  t.notOk((await gql(counted, 'alice', sprints)).errors)
  executed.length = 0
  t.notOk((await gql(counted, 'alice', sprints)).errors)
  if (sqlite) t.ok(executed.filter((s) => !/change_counter/.test(s)).length > 0, 'an answer that read the clock runs again')
})

t.test('costly fields count as many (descriptions, timelines), plain lists count their ids, U+0000 in a literal is refused', async (t) => {
  const ids = JSON.stringify(Array.from({ length: 100 }, (_, i) => encodeId('Issue', i + 1)))
  const bodies = Array.from({ length: 10 }, (_, i) => `a${i}: issues(ids: ${ids}) { body }`).join(' ')
  const many = await gql(app, 'alice', `{ ${bodies} }`)
  t.equal(many.data, null)
  t.equal(many.errors![0].extensions.code, 'QUERY_TOO_COMPLEX', '1,000 descriptions in one document')
  const one = (await gql(app, 'alice', `{ issueByInfo(repositoryGhId: ${REPO}, issueNumber: 1) { id } }`)).data.issueByInfo.id
  const few = await gql(app, 'alice', `{ issues(ids: ${JSON.stringify(Array(100).fill(one))}) { number body } }`)
  t.notOk(few.errors, 'a page of them is fine')
  const nul = await gql(app, 'alice', 'mutation { createIssue(input: { repositoryId: "x", title: "a\\u0000b" }) { issue { id } } }')
  t.equal(nul.data, null)
  t.match(nul.errors![0], { message: /U\+0000/, extensions: { code: 'BAD_USER_INPUT' } })
})
