import t from 'tap'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js'
import { build, P, REPO, OTHER_REPO, PRIVATE_REPO, TOKENS, WS_OLD, type App } from './helper.js'

/** An MCP client of the SDK whose requests go to the app through inject (no socket). */
async function clientOf (app: App, token: string): Promise<Client> {
  const fetch = async (input: string | URL | Request, init?: RequestInit): Promise<Response> => {
    const url = new URL(input instanceof Request ? input.url : input)
    const headers: Record<string, string> = {}
    new Headers(init?.headers).forEach((value, name) => { headers[name] = value })
    const res = await app.inject({ method: (init?.method ?? 'GET') as 'POST', url: url.pathname, headers: { ...headers, authorization: `Bearer ${token}` }, payload: init?.body as string | undefined })
    const out = new Headers()
    for (const [name, value] of Object.entries(res.headers)) if (value !== undefined) out.set(name, String(value))
    return new Response(res.statusCode === 204 || res.statusCode === 202 ? null : res.body, { status: res.statusCode, headers: out })
  }
  const client = new Client({ name: 'test', version: '1.0.0' })
  await client.connect(new StreamableHTTPClientTransport(new URL('http://127.0.0.1/mcp'), { fetch }))
  return client
}

async function call (client: Client, name: string, args: Record<string, unknown> = {}): Promise<CallToolResult> {
  return await client.callTool({ name, arguments: args }) as CallToolResult
}
const text = (result: CallToolResult) => (result.content[0] as { text: string }).text
const data = (result: CallToolResult) => {
  if (result.isError === true) throw new Error(`tool refused: ${text(result)}`)
  return result.structuredContent as Record<string, any>
}

t.test('tools are listed with input schemas, and list_workspaces shows only what the caller reads', async (t) => {
  const app = await build(t)
  const bob = await clientOf(app, TOKENS.bob)
  const { tools } = await bob.listTools()
  t.same(tools.map((tool) => tool.name).sort(), ['add_dependency', 'close_issue', 'create_issue', 'get_board', 'get_issue', 'list_workspaces', 'move_issue', 'search_issues', 'set_estimate', 'sprint_report'])
  for (const tool of tools) {
    t.equal(tool.inputSchema.type, 'object', `${tool.name} has an object input schema`)
    t.ok(tool.description !== undefined && tool.description.length > 40, `${tool.name} says what it does`)
  }
  t.equal(tools.find((tool) => tool.name === 'move_issue')?.annotations?.readOnlyHint, false)
  t.equal(tools.find((tool) => tool.name === 'get_board')?.annotations?.readOnlyHint, true)

  const listed = data(await call(bob, 'list_workspaces'))
  const rest = (await app.as('bob', { url: '/p2/workspaces' })).json()
  t.same(listed.workspaces.map((w: any) => w.id), rest.map((w: any) => w.id), 'the same workspaces as GET /p2/workspaces')
  const engineering = listed.workspaces.find((w: any) => w.id === WS_OLD)
  t.same(engineering.repositories, [REPO, OTHER_REPO], 'a repository bob cannot read is left out')
  t.same(engineering.pipelines.map((p: any) => p.name), ['To Do', 'Doing', 'Done'])
  t.match(text(await call(bob, 'list_workspaces')), /"Engineering"/, 'the text content carries the same result')
})

t.test('get_board, search_issues and get_issue answer what REST answers', async (t) => {
  const app = await build(t)
  const bob = await clientOf(app, TOKENS.bob)
  t.equal((await app.as('alice', { method: 'PUT', url: `/p1/repositories/${REPO}/issues/3/estimate`, payload: { estimate: 5 } })).statusCode, 200)
  t.equal((await app.as('alice', { method: 'POST', url: `/p2/workspaces/${WS_OLD}/repositories/${REPO}/issues/4/moves`, payload: { pipeline_id: P.doing, position: 'top' } })).statusCode, 200)

  const board = data(await call(bob, 'get_board', { workspace_id: WS_OLD }))
  const todo = board.pipelines.find((p: any) => p.id === P.todo)
  const doing = board.pipelines.find((p: any) => p.id === P.doing)
  const restBoard = (repo: number) => app.as('bob', { url: `/p2/workspaces/${WS_OLD}/repositories/${repo}/board` }).then((r) => r.json())
  const [api, web] = [await restBoard(REPO), await restBoard(OTHER_REPO)]
  const restTodo = [...api.pipelines[0].issues, ...web.pipelines[0].issues]
  t.equal(todo.issue_count, restTodo.length, 'the count matches the REST boards of the readable repositories')
  t.equal(todo.total_estimate, 5)
  t.same(doing.issues, [{ repo_id: REPO, issue_number: 4, title: 'Issue 4', estimate: null, is_epic: false }])
  t.notOk(board.pipelines.some((p: any) => p.issues.some((i: any) => i.repo_id === PRIVATE_REPO)), 'no issue of the private repository')
  t.same(data(await call(bob, 'get_board', { workspace_id: WS_OLD, repo_id: OTHER_REPO, issues_per_pipeline: 2 })).pipelines[0].issues.map((i: any) => i.title), ['Web 1', 'Web 2'])

  const found = data(await call(bob, 'search_issues', { workspace_id: WS_OLD, query: 'ISSUE 3' }))
  t.same(found, { total: 1, issues: [{ repo_id: REPO, issue_number: 3, title: 'Issue 3', pipeline_id: P.todo, pipeline_name: 'To Do', estimate: 5, is_epic: false }] })
  t.equal(data(await call(bob, 'search_issues', { workspace_id: WS_OLD, query: '%' })).total, 0, 'a wildcard is taken literally')
  t.equal(data(await call(bob, 'search_issues', { workspace_id: WS_OLD, pipeline_id: P.todo, limit: 2 })).issues.length, 2)
  t.equal(data(await call(bob, 'search_issues', { workspace_id: WS_OLD, query: 'secret' })).total, 0, 'nothing of a repository bob cannot read')

  const issue = data(await call(bob, 'get_issue', { repo_id: REPO, issue_number: 3 }))
  const restIssue = (await app.as('bob', { url: `/p1/repositories/${REPO}/issues?issue_numbers=3` })).json()[0]
  t.equal(issue.title, restIssue.title)
  t.same(issue.estimate, restIssue.estimate)
  t.same(issue.pipelines, restIssue.pipelines)
  t.equal(issue.repository, 'acme/api')

  const dave = await clientOf(app, TOKENS.dave)
  const hidden = await call(dave, 'get_issue', { repo_id: PRIVATE_REPO, issue_number: 1 })
  const missing = await call(dave, 'get_issue', { repo_id: 999999, issue_number: 1 })
  t.equal(hidden.isError, true)
  t.equal(text(hidden).replace(String(PRIVATE_REPO), 'N'), text(missing).replace('999999', 'N'), 'no read access reads as not found')
  t.equal((await call(dave, 'get_board', { workspace_id: WS_OLD })).isError, true, 'a workspace with nothing readable is not found')
})

t.test('writes: the same operations as REST, with the same permissions', async (t) => {
  const app = await build(t)
  const bob = await clientOf(app, TOKENS.bob)
  const carol = await clientOf(app, TOKENS.carol)

  const moved = data(await call(bob, 'move_issue', { workspace_id: WS_OLD, repo_id: REPO, issue_number: 2, pipeline_id: P.done }))
  t.same(moved.pipelines.find((p: any) => p.workspace_id === WS_OLD).pipeline_id, P.done)
  const board = (await app.as('bob', { url: `/p2/workspaces/${WS_OLD}/repositories/${REPO}/board` })).json()
  t.same(board.pipelines[2].issues.map((i: any) => i.issue_number), [2], 'the REST board shows the move')
  const events = (await app.as('bob', { url: `/p1/repositories/${REPO}/issues/2/events` })).json()
  t.match(events[0], { type: 'transferIssue', from_pipeline: { name: 'To Do' }, to_pipeline: { name: 'Done' }, user_id: 2 }, 'the move is an event of bob\'s')

  const refused = await call(carol, 'move_issue', { workspace_id: WS_OLD, repo_id: REPO, issue_number: 1, pipeline_id: P.done })
  t.equal(refused.isError, true)
  t.match(text(refused), /write permission on repository 1001 is required/)

  t.same(data(await call(bob, 'set_estimate', { repo_id: REPO, issue_number: 1, estimate: 8 })).estimate, { value: 8 })
  t.same((await app.as('bob', { url: `/p1/repositories/${REPO}/issues/1` })).json().estimate, { value: 8 })
  t.notOk('estimate' in data(await call(bob, 'set_estimate', { repo_id: REPO, issue_number: 1, estimate: null })), 'null clears it')

  const created = data(await call(bob, 'create_issue', { repo_id: REPO, title: 'Written by an assistant', pipeline_id: P.doing, estimate: 3 }))
  t.equal(created.issue_number, 8)
  t.equal(created.title, 'Written by an assistant')
  t.same((await app.as('bob', { url: `/p1/repositories/${REPO}/issues/8` })).json().pipeline, { name: 'Doing', pipeline_id: P.doing, workspace_id: WS_OLD })

  t.equal(data(await call(bob, 'close_issue', { repo_id: REPO, issue_number: 8 })).status, 'closed')
  t.notOk((await app.as('bob', { url: `/p2/workspaces/${WS_OLD}/repositories/${REPO}/board` })).json().pipelines.some((p: any) => p.issues.some((i: any) => i.issue_number === 8)), 'a closed issue leaves the board')

  const dependency = { blocking: { repo_id: REPO, issue_number: 1 }, blocked: { repo_id: REPO, issue_number: 3 } }
  t.same(data(await call(bob, 'add_dependency', dependency)), dependency)
  t.same((await app.as('bob', { url: `/p1/repositories/${REPO}/dependencies` })).json().dependencies, [dependency])
  const cycle = await call(bob, 'add_dependency', { blocking: dependency.blocked, blocked: dependency.blocking })
  t.equal(cycle.isError, true, 'a cycle is refused as a tool result')
  t.match(data(await call(bob, 'get_issue', { repo_id: REPO, issue_number: 3 })).blocked_by, [dependency.blocking])
})

t.test('a read token reads but cannot write; bad arguments and unknown tools are tool errors', async (t) => {
  const app = await build(t)
  const made = await app.as('bob', { method: 'POST', url: '/account/tokens', payload: { name: 'assistant', scope: 'read' } })
  const reader = await clientOf(app, made.json().token)
  t.equal(data(await call(reader, 'get_issue', { repo_id: REPO, issue_number: 1 })).title, 'Issue 1')
  const refused = await call(reader, 'set_estimate', { repo_id: REPO, issue_number: 1, estimate: 2 })
  t.equal(refused.isError, true)
  t.match(text(refused), /scope read/)
  t.notOk('estimate' in (await app.as('bob', { url: `/p1/repositories/${REPO}/issues/1` })).json(), 'nothing changed')

  const bob = await clientOf(app, TOKENS.bob)
  const wrong = await call(bob, 'set_estimate', { repo_id: 'x', issue_number: 1, estimate: 2 })
  t.equal(wrong.isError, true)
  t.match(text(wrong), /^set_estimate: argument repo_id: /)
  t.match(text(await call(bob, 'set_estimate', { repo_id: REPO, issue_number: 1, estimate: 2, extra: 1 })), /set_estimate: /)
  t.match(text(await call(bob, 'delete_everything')), /there is no tool "delete_everything"/)
  const position = await call(bob, 'move_issue', { workspace_id: WS_OLD, repo_id: REPO, issue_number: 1, pipeline_id: 'nope' })
  t.equal(position.isError, true)
  t.match(text(position), /not a pipeline of workspace/)
})

t.test('sprint_report: the active sprint, or a named one', async (t) => {
  const now = Date.parse('2026-11-20T12:00:00Z')
  const app = await build(t, { clock: () => now })
  const bob = await clientOf(app, TOKENS.bob)
  const none = await call(bob, 'sprint_report', { workspace_id: WS_OLD })
  t.equal(none.isError, true)
  t.match(text(none), /no active sprint/)
  t.equal((await app.as('alice', { method: 'PUT', url: `/p2/workspaces/${WS_OLD}/sprint_config`, payload: { starts_on: '2026-11-23', length_weeks: 2, time_zone: 'UTC' } })).statusCode, 200)
  const sprints = (await app.as('bob', { url: `/p2/workspaces/${WS_OLD}/sprints` })).json()
  t.ok(sprints.length > 0)
  const report = data(await call(bob, 'sprint_report', { workspace_id: WS_OLD, sprint_id: sprints[0].id }))
  t.same(report.sprint, sprints[0], 'the sprint as GET /p2/workspaces/:id/sprints gives it')
  t.same(report.burndown, (await app.as('bob', { url: `/p2/sprints/${sprints[0].id}/burndown` })).json(), 'the burndown as REST gives it')
  t.equal((await call(bob, 'sprint_report', { workspace_id: WS_OLD, sprint_id: 'nope' })).isError, true)
})

t.test('transport: tokens as REST takes them, no stream, no session', async (t) => {
  const app = await build(t)
  const initialize = { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'curl', version: '1' } } }
  const accept = 'application/json, text/event-stream'
  const anonymous = await app.inject({ method: 'POST', url: '/mcp', headers: { accept }, payload: initialize })
  t.equal(anonymous.statusCode, 401)
  t.equal((await app.inject({ method: 'POST', url: '/mcp', headers: { accept, 'x-authentication-token': 'nope' }, payload: initialize })).statusCode, 401)
  const ok = await app.inject({ method: 'POST', url: '/mcp', headers: { accept, 'x-authentication-token': TOKENS.carol }, payload: initialize })
  t.equal(ok.statusCode, 200)
  t.equal(ok.json().result.serverInfo.name, 'planning-api-server')
  t.ok(ok.headers['x-ratelimit-used'] !== undefined, 'counted against the token\'s rate limit')
  t.equal((await app.inject({ method: 'GET', url: '/mcp', headers: { accept: 'text/event-stream', 'x-authentication-token': TOKENS.carol } })).statusCode, 405)
  const list = { jsonrpc: '2.0', id: 2, method: 'tools/list' }
  const viaList = await app.inject({ method: 'POST', url: '/mcp', headers: { accept, authorization: `Bearer ${TOKENS.carol}` }, payload: list })
  t.equal(viaList.json().result.tools.length, 10, 'stateless: any request stands on its own')
})
