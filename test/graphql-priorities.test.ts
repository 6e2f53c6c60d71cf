import t from 'tap'
import { build, OTHER_REPO, P, PRIVATE_REPO, REPO, testFixture, TOKENS, WS_NEW, WS_OLD } from './helper.js'
import { encodeId } from '../plugins/graphql/ids.js'
import { gql, type Gql } from './gql.js'
import { TEST_DATABASE_URL, testSchema } from './pg.js'
import pg from 'pg'

// One app for the whole file; the tests run in order and build on each other.
const app = await build(t)
const code = (r: Gql) => r.errors?.[0]?.extensions.code

// The hosted service's clients' documents (/work/client-docs/zh), as they send them.
const GET_PRIORITIES = `query GetWorkspacePriorities($workspaceId: ID!) {
  workspace(id: $workspaceId) { prioritiesConnection { nodes { id name color description } } }
}`
const SET = `mutation SetIssuePriority($input: SetIssueInfoPrioritiesInput!) {
  setIssueInfoPriorities(input: $input) {
    pipelineIssues { id priority { id name color } issue { id number title repository { name ownerName } } }
  }
}`
const REMOVE = `mutation RemoveIssuePriority($input: RemoveIssueInfoPrioritiesInput!) {
  removeIssueInfoPriorities(input: $input) {
    pipelineIssues { id priority { id name } issue { id number title repository { name ownerName } } }
  }
}`
const FOR_PRIORITY = `query GetIssueForPriority($issueId: ID!, $workspaceId: ID!) {
  node(id: $issueId) {
    ... on Issue { id number title repository { name ownerName ghId } pipelineIssue(workspaceId: $workspaceId) { priority { id name } } }
  }
}`
const PIPELINE_ISSUES = `query GetPipelineIssues($pipelineId: ID!, $workspaceId: ID!, $first: Int, $after: String) {
  searchIssuesByPipeline(pipelineId: $pipelineId, filters: {}, first: $first, after: $after) {
    nodes { number repository { name } pipelineIssue(workspaceId: $workspaceId) { priority { name } } }
  }
}`

const issueId = async (repo: number, n: number): Promise<string> => (await gql(app, 'alice', `{ issueByInfo(repositoryGhId: ${repo}, issueNumber: ${n}) { id } }`)).data.issueByInfo.id
const priorities = async (ws: string) => (await gql(app, 'alice', GET_PRIORITIES, { workspaceId: ws })).data.workspace.prioritiesConnection.nodes as Array<{ id: string, name: string, color: string }>
const priorityOf = async (repo: number, n: number, ws = WS_OLD) =>
  (await gql(app, 'alice', FOR_PRIORITY, { issueId: await issueId(repo, n), workspaceId: ws })).data.node.pipelineIssue?.priority ?? null
let high: string
let medium: string

t.test('every workspace has the default priorities, its own', async (t) => {
  const old = await priorities(WS_OLD)
  t.same(old.map((p) => p.name), ['High priority', 'Medium priority', 'Low priority'])
  t.ok(old.every((p) => /^#[0-9a-f]{6}$/.test(p.color)), 'colors as #rrggbb')
  high = old[0].id
  medium = old[1].id
  t.match(Buffer.from(high, 'base64').toString(), /^gid:\/\/raptor\/Priority\/\d+$/)
  const fresh = await priorities(WS_NEW)
  t.same(fresh.map((p) => p.name), old.map((p) => p.name))
  t.not(fresh[0].id, high, 'each workspace has its own')
  const made = await app.admin({ method: 'POST', url: '/admin/workspaces', payload: { name: 'Later', repositories: [REPO], pipelines: ['Backlog'] } })
  t.equal(made.statusCode, 201, made.body)
  t.equal((await priorities(made.json().id)).length, 3, 'a workspace made later gets them too')
  const deprecated = await gql(app, 'carol', `{ workspace(id: "${WS_OLD}") { priorities { name createdAt updatedAt } } }`)
  t.equal(deprecated.data.workspace.priorities.length, 3, 'Workspace.priorities as well, for a reader')
  t.same((await gql(app, 'dave', GET_PRIORITIES, { workspaceId: WS_OLD })).data.workspace, null, 'a user without the workspace sees none')
})

t.test('setIssueInfoPriorities: sets, replaces, and answers the workspace\'s pipeline issues', async (t) => {
  const set = await gql(app, 'bob', SET, { input: { priorityId: high, issues: [{ repositoryGhId: REPO, issueNumber: 1 }, { repositoryId: encodeId('Repository', REPO), issueNumber: 2 }] } })
  t.equal(set.errors, undefined)
  t.same(set.data.setIssueInfoPriorities.pipelineIssues.map((pi: any) => [pi.issue.number, pi.priority.name, pi.issue.repository]), [
    [1, 'High priority', { name: 'api', ownerName: 'acme' }], [2, 'High priority', { name: 'api', ownerName: 'acme' }]
  ])
  t.equal(set.data.setIssueInfoPriorities.pipelineIssues[0].priority.id, high)
  t.same(await priorityOf(REPO, 1), { id: high, name: 'High priority' }, 'stored')
  t.equal(await priorityOf(REPO, 1, WS_NEW), null, 'in that workspace only')
  t.equal(await priorityOf(REPO, 3), null, 'an issue not given has none')

  await gql(app, 'bob', SET, { input: { priorityId: medium, issues: [{ repositoryGhId: REPO, issueNumber: 2 }] } })
  t.same(await priorityOf(REPO, 2), { id: medium, name: 'Medium priority' }, 'one priority per issue and workspace: replaced')

  const board = await gql(app, 'carol', PIPELINE_ISSUES, { pipelineId: encodeId('Pipeline', P.todo), workspaceId: WS_OLD, first: 100 })
  const seen = Object.fromEntries(board.data.searchIssuesByPipeline.nodes.filter((n: any) => n.repository.name === 'api').map((n: any) => [n.number, n.pipelineIssue.priority?.name ?? null]))
  t.match(seen, { 1: 'High priority', 2: 'Medium priority', 3: null }, 'PipelineIssue.priority in a pipeline\'s issues')
})

t.test('refusals: NOT_FOUND without read access, FORBIDDEN without write, BAD_USER_INPUT for what cannot be; nothing changes', async (t) => {
  const input = (issues: unknown[], priorityId = high) => ({ input: { priorityId, issues } })
  t.equal(code(await gql(app, 'carol', SET, input([{ repositoryGhId: REPO, issueNumber: 3 }]))), 'FORBIDDEN', 'read permission only')
  t.equal(code(await gql(app, 'dave', SET, input([{ repositoryGhId: REPO, issueNumber: 3 }]))), 'NOT_FOUND', 'a user without the workspace: no such priority')
  const mixed = await gql(app, 'bob', SET, input([{ repositoryGhId: REPO, issueNumber: 3 }, { repositoryGhId: OTHER_REPO, issueNumber: 1 }]))
  t.equal(code(mixed), 'FORBIDDEN', 'bob only reads OTHER_REPO: the whole batch is refused')
  const hidden = await gql(app, 'bob', SET, input([{ repositoryGhId: REPO, issueNumber: 3 }, { repositoryGhId: PRIVATE_REPO, issueNumber: 1 }]))
  t.equal(code(hidden), 'NOT_FOUND', 'an issue bob cannot read')
  t.notMatch(JSON.stringify(hidden), /Secret/, 'no trace of it')
  t.equal(code(await gql(app, 'bob', SET, input([{ repositoryGhId: REPO, issueNumber: 999 }]))), 'NOT_FOUND', 'no such issue')
  t.equal(await priorityOf(REPO, 3), null, 'nothing was set by the refused batches')

  const roadmapHigh = (await priorities(WS_NEW))[0].id
  const outside = await gql(app, 'alice', SET, input([{ repositoryGhId: OTHER_REPO, issueNumber: 1 }], roadmapHigh))
  t.equal(code(outside), 'BAD_USER_INPUT', 'an issue of a repository the priority\'s workspace does not hold')
  t.match(outside.errors?.[0].message, /not in the priority's workspace/)
  t.equal(code(await gql(app, 'bob', SET, input([], 'not-an-id'))), 'BAD_USER_INPUT', 'not a priority id')
  t.equal(code(await gql(app, 'bob', SET, input([], encodeId('Priority', 999_999)))), 'NOT_FOUND')
  t.equal(code(await gql(app, 'bob', SET, input([{ issueNumber: 3 }]))), 'BAD_USER_INPUT', 'neither repositoryGhId nor repositoryId')
  const many = Array.from({ length: 101 }, (_, i) => ({ repositoryGhId: REPO, issueNumber: i + 1 }))
  t.equal(code(await gql(app, 'bob', SET, input(many))), 'BAD_USER_INPUT', 'at most 100 issues')

  const token = (await app.as('bob', { method: 'POST', url: '/account/tokens', payload: { name: 'reader', scope: 'read' } })).json().token as string
  const asReader = await app.inject({ method: 'POST', url: '/public/graphql', headers: { authorization: `Bearer ${token}` }, payload: { query: SET, variables: input([{ repositoryGhId: REPO, issueNumber: 3 }]) } })
  t.equal(code(asReader.json()), 'FORBIDDEN', 'a read-only token')
  t.equal(await priorityOf(REPO, 3), null)
})

t.test('removeIssueInfoPriorities: takes it away in that workspace', async (t) => {
  await gql(app, 'alice', SET, { input: { priorityId: (await priorities(WS_NEW))[0].id, issues: [{ repositoryGhId: REPO, issueNumber: 1 }] } })
  t.equal(code(await gql(app, 'carol', REMOVE, { input: { workspaceId: WS_OLD, issues: [{ repositoryGhId: REPO, issueNumber: 1 }] } })), 'FORBIDDEN')
  t.equal(code(await gql(app, 'dave', REMOVE, { input: { workspaceId: WS_OLD, issues: [{ repositoryGhId: REPO, issueNumber: 1 }] } })), 'NOT_FOUND')
  const removed = await gql(app, 'bob', REMOVE, { input: { workspaceId: WS_OLD, issues: [{ repositoryGhId: REPO, issueNumber: 1 }, { repositoryGhId: REPO, issueNumber: 3 }] } })
  t.same(removed.data.removeIssueInfoPriorities.pipelineIssues.map((pi: any) => [pi.issue.number, pi.priority]), [[1, null], [3, null]], 'one without a priority is left as it is')
  t.equal(await priorityOf(REPO, 1), null)
  t.same(await priorityOf(REPO, 1, WS_NEW), { id: (await priorities(WS_NEW))[0].id, name: 'High priority' }, 'the other workspace\'s stays')
  t.same(await priorityOf(REPO, 2), { id: medium, name: 'Medium priority' }, 'other issues keep theirs')
})

t.test('a closed issue keeps its priority; searchClosedIssues shows it', async (t) => {
  const set = await gql(app, 'bob', SET, { input: { priorityId: high, issues: [{ repositoryGhId: REPO, issueNumber: 7 }] } })
  t.equal(set.errors, undefined)
  const closed = await gql(app, 'bob', `query($w: ID!) { searchClosedIssues(workspaceId: $w, filters: {}, first: 100) {
    nodes { number pipelineIssue(workspaceId: $w) { priority { name } } } } }`, { w: WS_OLD })
  t.same(closed.data.searchClosedIssues.nodes.find((n: any) => n.number === 7)?.pipelineIssue, { priority: { name: 'High priority' } })
})

t.test('export and import carry the issues\' priorities', async (t) => {
  const exported = await app.admin({ url: '/admin/export' })
  t.equal(exported.statusCode, 200)
  const fixture = exported.json()
  const two = fixture.issues.find((i: any) => i.repo_id === REPO && i.number === 2)
  t.same(two.priorities, { [WS_OLD]: 'Medium priority' })
  // An export holds no tokens: the test users get theirs back.
  fixture.users = fixture.users.map((u: { login: keyof typeof TOKENS }) => ({ ...u, token: TOKENS[u.login] }))
  const copy = await build(t, { fixture })
  const read = async (n: number, ws: string) => (await gql(copy, 'alice', `{ issueByInfo(repositoryGhId: ${REPO}, issueNumber: ${n}) { pipelineIssue(workspaceId: "${ws}") { priority { name } } } }`)).data.issueByInfo.pipelineIssue.priority
  t.same(await read(2, WS_OLD), { name: 'Medium priority' })
  t.same(await read(1, WS_NEW), { name: 'High priority' })
  t.equal(await read(1, WS_OLD), null)

  const bad = testFixture() as any
  bad.issues[0].priorities = { [WS_OLD]: 'Urgent' }
  const empty = await build(t, { fixture: null })
  const refused = await empty.admin({ method: 'POST', url: '/admin/import', payload: bad })
  t.equal(refused.statusCode, 400, 'a priority the workspace does not have')
  t.match(refused.json().message, /no priority named 'Urgent'/)
})

t.test('a repository taken out of a workspace takes its issues\' priorities there with it', async (t) => {
  const out = await app.admin({ method: 'PATCH', url: `/admin/workspaces/${WS_NEW}`, payload: { remove_repositories: [REPO] } })
  t.equal(out.statusCode, 200, out.body)
  const back = await app.admin({ method: 'PATCH', url: `/admin/workspaces/${WS_NEW}`, payload: { add_repositories: [REPO] } })
  t.equal(back.statusCode, 200, back.body)
  t.equal(await priorityOf(REPO, 1, WS_NEW), null, 'not there when it comes back')
  t.same(await priorityOf(REPO, 2), { id: medium, name: 'Medium priority' }, 'other workspaces keep theirs')
})

t.test('a page of 100 issues with priorities and connected pull requests costs a fixed number of statements', { skip: process.env.TEST_DATABASE_URL !== undefined && 'counted on SQLite' }, async (t) => {
  const { default: Database } = await import('better-sqlite3')
  const executed: string[] = []
  const db = new Database(':memory:', { verbose: (text) => executed.push(String(text)) })
  t.teardown(() => db.close())
  const counted = await build(t, { database: db })
  const fill = () => {
    db.prepare(`INSERT OR REPLACE INTO issue_priorities (workspace_id, issue_id, priority_id, set_at)
      SELECT p.workspace_id, i.id, p.id, '2026-01-01T00:00:00.000Z' FROM issues i JOIN priorities p ON p.workspace_id = ? AND p.position = i.number % 3 WHERE i.repo_id = ?`).run(WS_OLD, REPO)
    db.prepare(`INSERT OR IGNORE INTO issue_pr_connections (issue_id, pull_request_id, created_at)
      SELECT i.id, pr.id, '2026-01-01T00:00:00.000Z' FROM issues i JOIN issues pr ON pr.is_pull_request = 1 AND pr.number % 3 = i.number % 3 WHERE i.is_pull_request = 0`).run()
  }
  const count = async () => {
    await gql(counted, 'alice', '{ viewer { id } }')
    executed.length = 0
    const res = await gql(counted, 'alice', PIPELINE_ISSUES.replace('pipelineIssue(', 'connectedPrs(first: 10) { nodes { number state repository { name } } } pipelineIssue('),
      { pipelineId: encodeId('Pipeline', P.todo), workspaceId: WS_OLD, first: 100 })
    t.notOk(res.errors)
    const nodes = res.data.searchIssuesByPipeline.nodes
    return { statements: executed.length, issues: nodes.length, prioritized: nodes.filter((n: any) => n.pipelineIssue.priority !== null).length }
  }
  db.prepare('UPDATE issues SET is_pull_request = 1 WHERE repo_id = ? AND number = 6').run(REPO)
  fill()
  const small = await count()
  for (let n = 100; n < 160; n++) {
    t.equal((await counted.admin({ method: 'POST', url: `/admin/repositories/${REPO}/issues`, payload: { number: n, title: `n${n}` } })).statusCode, 201)
  }
  db.prepare('UPDATE issues SET is_pull_request = 1 WHERE repo_id = ? AND number >= 150').run(REPO)
  fill()
  const large = await count()
  t.ok(large.issues > small.issues * 5 && large.prioritized > small.prioritized * 5, `${small.issues} then ${large.issues} issues`)
  t.equal(large.statements, small.statements, `${large.statements} statements either way`)
})

t.test('migration 028 gives the workspaces already there the default priorities', async (t) => {
  // A database of its own, migrated and filled, then set back to before 028: its workspaces are
  // there, their priorities not; the next start runs 028 again.
  let exec: (text: string) => Promise<Array<Record<string, unknown>>>
  let options: Parameters<typeof build>[1]
  if (TEST_DATABASE_URL !== undefined) {
    const { schema, drop } = await testSchema(TEST_DATABASE_URL)
    const client = new pg.Client({ connectionString: TEST_DATABASE_URL, options: `-c search_path=${schema}` })
    await client.connect()
    t.teardown(async () => { await client.end(); await drop() })
    exec = async (text) => (await client.query(text)).rows
    options = { databaseUrl: TEST_DATABASE_URL, databaseSchema: schema, databasePoolMax: 2 }
  } else {
    const { default: Database } = await import('better-sqlite3')
    const db = new Database(':memory:')
    t.teardown(() => db.close())
    exec = async (text) => { const st = db.prepare(text); return st.reader ? st.all() as Array<Record<string, unknown>> : (st.run(), []) }
    options = { database: db }
  }
  const before = await build(t, options)
  await before.close()
  for (const table of ['issue_pr_connections', 'issue_priorities', 'priorities']) await exec(`DROP TABLE ${table}`)
  await exec("DELETE FROM kysely_migration WHERE name = '028-priorities'")
  const after = await build(t, { ...options, fixture: null })
  const rows = await exec('SELECT workspace_id, name FROM priorities ORDER BY workspace_id, position')
  t.same(rows.map((r) => `${String(r.workspace_id)} ${String(r.name)}`), [WS_OLD, WS_NEW].sort().flatMap((ws) => ['High', 'Medium', 'Low'].map((p) => `${ws} ${p} priority`)))
  t.equal((await gql(after, 'alice', GET_PRIORITIES, { workspaceId: WS_OLD })).data.workspace.prioritiesConnection.nodes.length, 3)
  await after.close()
})
