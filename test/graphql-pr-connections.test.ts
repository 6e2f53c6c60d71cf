import t from 'tap'
import { build, OTHER_REPO, P, PRIVATE_REPO, REPO, testFixture, TOKENS, WS_OLD } from './helper.js'
import { encodeId } from '../plugins/graphql/ids.js'
import { gql, type Gql } from './gql.js'

// The test fixture with pull requests: REPO#20 and #21, OTHER_REPO#20, PRIVATE_REPO#20.
const fixture = testFixture() as ReturnType<typeof testFixture> & { issues: Array<Record<string, unknown>> }
for (const [repo, n] of [[REPO, 20], [REPO, 21], [OTHER_REPO, 20], [PRIVATE_REPO, 20]]) {
  fixture.issues.push({ repo_id: repo, number: n, title: `PR ${repo}#${n}`, pull_request: true })
}
const app = await build(t, { fixture })
const code = (r: Gql) => r.errors?.[0]?.extensions.code

// The hosted service's clients' documents (/work/client-docs/zh), as they send them.
const CONNECTED_PRS = `query IssueConnectedPRs($id: ID!) {
  node(id: $id) { ... on Issue { connectedPrs(first: 10) { nodes { number title repository { name ownerName } } } } }
}`
const CONNECTIONS = `query PRConnections($id: ID!) {
  node(id: $id) { ... on Issue { connections(first: 1) { nodes { id number title repository { name ownerName } } } } }
}`
const CREATE = `mutation CreateIssuePrConnection($input: CreateIssuePrConnectionInput!) {
  createIssuePrConnection(input: $input) { issue { id number title } pullRequest { id number title } }
}`
const DELETE = `mutation DeleteIssuePrConnection($input: DeleteIssuePrConnectionInput!) {
  deleteIssuePrConnection(input: $input) { issue { id number title } pullRequest { id number title } }
}`
const PIPELINE_ISSUES = `query GetPipelineIssues($pipelineId: ID!, $workspaceId: ID!, $first: Int, $after: String) {
  searchIssuesByPipeline(pipelineId: $pipelineId, filters: {}, first: $first, after: $after) {
    nodes { number pullRequest repository { name } connectedPrs(first: 10) { nodes { number title state repository { name ownerName } } }
      pipelineIssue(workspaceId: $workspaceId) { priority { name } } }
  }
}`

const ids = new Map<string, string>()
const id = async (repo: number, n: number): Promise<string> => {
  const key = `${repo}#${n}`
  if (!ids.has(key)) ids.set(key, (await gql(app, 'alice', `{ issueByInfo(repositoryGhId: ${repo}, issueNumber: ${n}) { id } }`)).data.issueByInfo.id)
  return ids.get(key)!
}
const prsOf = async (login: keyof typeof TOKENS, repo: number, n: number) =>
  (await gql(app, login, CONNECTED_PRS, { id: await id(repo, n) })).data.node.connectedPrs.nodes.map((p: { number: number, repository: { name: string } }) => `${p.repository.name}#${p.number}`)
const connect = async (login: keyof typeof TOKENS, issue: [number, number], pr: [number, number], doc = CREATE) =>
  await gql(app, login, doc, { input: { issueId: await id(...issue), pullRequestId: await id(...pr) } })

t.test('createIssuePrConnection connects a pull request to an issue, across repositories', async (t) => {
  const made = await connect('bob', [REPO, 1], [REPO, 20])
  t.equal(made.errors, undefined)
  t.same(made.data.createIssuePrConnection, {
    issue: { id: await id(REPO, 1), number: 1, title: 'Issue 1' },
    pullRequest: { id: await id(REPO, 20), number: 20, title: `PR ${REPO}#20` }
  })
  t.equal((await connect('bob', [REPO, 1], [OTHER_REPO, 20])).errors, undefined, 'a pull request of a repository bob only reads')
  t.equal((await connect('bob', [REPO, 1], [REPO, 20])).errors, undefined, 'again: nothing changes')
  t.same(await prsOf('bob', REPO, 1), ['api#20', 'web#20'], 'oldest connection first, once each')
  t.same(await prsOf('carol', REPO, 1), ['api#20'], 'a reader sees only the pull requests it can read')
  t.same(await prsOf('bob', REPO, 2), [], 'other issues have none')

  const back = await gql(app, 'carol', CONNECTIONS, { id: await id(REPO, 20) })
  t.same(back.data.node.connections.nodes, [{ id: await id(REPO, 1), number: 1, title: 'Issue 1', repository: { name: 'api', ownerName: 'acme' } }], 'the pull request\'s issues')
  t.same((await gql(app, 'bob', CONNECTIONS, { id: await id(REPO, 1) })).data.node.connections.nodes, [], 'empty for an issue')

  const board = await gql(app, 'bob', PIPELINE_ISSUES, { pipelineId: encodeId('Pipeline', P.todo), workspaceId: WS_OLD, first: 100 })
  const one = board.data.searchIssuesByPipeline.nodes.find((n: { number: number, repository: { name: string } }) => n.number === 1 && n.repository.name === 'api')
  t.same(one.connectedPrs.nodes.map((p: { number: number, state: string }) => [p.number, p.state]), [[20, 'OPEN'], [20, 'OPEN']], 'in a pipeline\'s issues')
})

t.test('refusals: NOT_FOUND without read access, FORBIDDEN without write, BAD_USER_INPUT for the wrong kinds; nothing changes', async (t) => {
  t.equal(code(await connect('carol', [REPO, 2], [REPO, 20])), 'FORBIDDEN', 'read permission on the issue only')
  t.equal(code(await connect('bob', [OTHER_REPO, 1], [REPO, 20])), 'FORBIDDEN', 'bob only reads the issue\'s repository')
  t.equal(code(await connect('dave', [REPO, 2], [REPO, 20])), 'NOT_FOUND', 'no access at all')
  const hidden = await connect('bob', [REPO, 2], [PRIVATE_REPO, 20])
  t.equal(code(hidden), 'NOT_FOUND', 'a pull request bob cannot read')
  t.notMatch(JSON.stringify(hidden), /PR 1003/, 'no trace of it')
  t.equal(code(await connect('bob', [REPO, 2], [REPO, 3])), 'BAD_USER_INPUT', 'pullRequestId names an issue')
  t.equal(code(await connect('bob', [REPO, 21], [REPO, 20])), 'BAD_USER_INPUT', 'issueId names a pull request')
  t.equal(code(await gql(app, 'bob', CREATE, { input: { issueId: 'nope', pullRequestId: await id(REPO, 20) } })), 'BAD_USER_INPUT', 'not an issue id')
  const token = (await app.as('bob', { method: 'POST', url: '/account/tokens', payload: { name: 'reader', scope: 'read' } })).json().token as string
  const asReader = await app.inject({
    method: 'POST',
    url: '/public/graphql',
    headers: { authorization: `Bearer ${token}` },
    payload: { query: CREATE, variables: { input: { issueId: await id(REPO, 2), pullRequestId: await id(REPO, 20) } } }
  })
  t.equal(code(asReader.json()), 'FORBIDDEN', 'a read-only token')
  t.same(await prsOf('alice', REPO, 2), [], 'nothing was connected')
  t.same(await prsOf('alice', REPO, 21), [])
})

t.test('deleteIssuePrConnection disconnects them', async (t) => {
  t.equal(code(await connect('carol', [REPO, 1], [REPO, 20], DELETE)), 'FORBIDDEN')
  const gone = await connect('bob', [REPO, 1], [OTHER_REPO, 20], DELETE)
  t.same(gone.data.deleteIssuePrConnection.pullRequest, { id: await id(OTHER_REPO, 20), number: 20, title: `PR ${OTHER_REPO}#20` })
  t.same(await prsOf('bob', REPO, 1), ['api#20'])
  t.equal(code(await connect('bob', [REPO, 1], [OTHER_REPO, 20], DELETE)), 'NOT_FOUND', 'not connected (any more)')
})

t.test('export and import carry the connections', async (t) => {
  await connect('alice', [OTHER_REPO, 1], [PRIVATE_REPO, 20])
  const exported = (await app.admin({ url: '/admin/export' })).json()
  const one = exported.issues.find((i: { repo_id: number, number: number }) => i.repo_id === REPO && i.number === 1)
  t.match(one.connected_prs, [{ repo_id: REPO, issue_number: 20, created_at: String }])
  t.equal(one.connected_prs.length, 1)
  exported.users = exported.users.map((u: { login: keyof typeof TOKENS }) => ({ ...u, token: TOKENS[u.login] }))
  const copy = await build(t, { fixture: exported })
  const read = async (repo: number, n: number) => (await gql(copy, 'alice', `{ issueByInfo(repositoryGhId: ${repo}, issueNumber: ${n}) { connectedPrs { nodes { number repository { name } } } } }`))
    .data.issueByInfo.connectedPrs.nodes
  t.same(await read(REPO, 1), [{ number: 20, repository: { name: 'api' } }])
  t.same(await read(OTHER_REPO, 1), [{ number: 20, repository: { name: 'secret' } }])

  const bad = structuredClone(fixture) as typeof fixture
  bad.issues[0].connected_prs = [{ repo_id: REPO, issue_number: 2 }]
  const empty = await build(t, { fixture: null })
  const refused = await empty.admin({ method: 'POST', url: '/admin/import', payload: bad })
  t.equal(refused.statusCode, 400, 'connected_prs naming an issue that is not a pull request')
})
