import t, { type Test } from 'tap'
import Database from 'better-sqlite3'
import pg from 'pg'
import { join } from 'node:path'
import { build, METRICS_TOKEN, P, REPO, OTHER_REPO, WS_OLD, type App } from './helper.js'
import { gql } from './gql.js'
import { deliver, SECRET } from './deliveries.js'
import Fastify from 'fastify'
import { boardJson } from '../plugins/board-bytes.js'
import { Board } from '../schemas/boards.js'
import type { Board as BoardData } from '../db/boards.js'
import { TEST_DATABASE_URL, testSchema } from './pg.js'

/**
 * Two instances on one database: `a` writes and reads, keeping its boards in memory and patching
 * them (db/board-model.ts); `b` knows nothing of `a`'s writes (on PostgreSQL it does not watch the
 * counter), so every read of its own is a fresh build of the whole board; on PostgreSQL `heard`
 * patches its boards from what it heard `a`'s writes reached. `sql` changes rows behind them, moving no counter.
 */
async function twoInstances (t: Test): Promise<{ a: App, b: App, heard?: App, sql: (text: string) => Promise<Array<Record<string, unknown>>> }> {
  if (TEST_DATABASE_URL !== undefined) {
    const { schema, drop } = await testSchema(TEST_DATABASE_URL)
    const client = new pg.Client({ connectionString: TEST_DATABASE_URL, options: `-c search_path=${schema}` })
    t.teardown(async () => {
      await client.end()
      await drop()
    })
    const options = { databaseUrl: TEST_DATABASE_URL, databaseSchema: schema, databasePoolMax: 4 }
    const a = await build(t, { ...options, metricsToken: METRICS_TOKEN })
    // Not watching the counter: it would hear what `a`'s writes reached and patch its boards too.
    const b = await build(t, { ...options, fixture: null, databaseWatch: false })
    // A third instance watching the counter: it hears what `a`'s writes reached and patches its boards from that.
    const heard = await build(t, { ...options, fixture: null })
    await client.connect()
    return { a, b, heard, sql: async (text) => (await client.query(text)).rows }
  }
  const file = join(t.testdir(), 'board.db')
  const a = await build(t, { database: file, metricsToken: METRICS_TOKEN })
  const b = await build(t, { database: file, fixture: null })
  const raw = new Database(file)
  t.teardown(() => raw.close())
  return {
    a,
    b,
    sql: async (text) => {
      const statement = raw.prepare(text)
      return statement.reader ? statement.all() as Array<Record<string, unknown>> : (statement.run(), [])
    }
  }
}

const BOARDS = [`/p1/repositories/${REPO}/board`, `/p2/workspaces/${WS_OLD}/repositories/${REPO}/board`, `/p1/repositories/${REPO}/board?pipeline_id=${P.doing}`]

t.test('a board patched for each write answers what a fresh build of the whole board answers, byte for byte', async (t) => {
  const { a, b, heard } = await twoInstances(t)
  const same = async (what: string) => {
    for (const url of BOARDS) {
      const mine = await a.as('alice', { url })
      const fresh = await b.as('alice', { url })
      t.equal(mine.statusCode, 200)
      t.equal(mine.body, fresh.body, `${what}: ${url}`)
      t.equal(mine.headers.etag, fresh.headers.etag, `${what}: ${url}, its tag`)
      if (heard !== undefined) t.equal((await heard.as('alice', { url })).body, fresh.body, `${what}: ${url}, on an instance that heard the writes`)
    }
  }
  const ok = (res: { statusCode: number, body: string }) => t.ok(res.statusCode < 300, res.body)
  const move = async (n: number, pipeline: string, position: string | number) =>
    ok(await a.as('alice', { method: 'POST', url: `/p1/repositories/${REPO}/issues/${n}/moves`, payload: { pipeline_id: pipeline, position } }))
  await same('before any write')

  ok(await a.as('alice', { method: 'PUT', url: `/p1/repositories/${REPO}/issues/1/estimate`, payload: { estimate: 3 } }))
  await same('an estimate set')
  ok(await a.as('alice', { method: 'PUT', url: `/p1/repositories/${REPO}/issues/1/estimate`, payload: { estimate: 0.5 } }))
  ok(await a.as('alice', { method: 'PUT', url: `/p1/repositories/${REPO}/issues/2/estimate`, payload: { estimate: 8 } }))
  await same('two estimates between reads')
  ok(await a.as('alice', { method: 'PUT', url: `/p1/repositories/${REPO}/issues/1/estimate`, payload: { estimate: null } }))
  await same('an estimate cleared')

  await move(2, P.doing, 'top')
  await same('a move to another pipeline')
  await move(3, P.doing, 1)
  await move(4, P.todo, 'bottom')
  await same('a move to an index and one within its pipeline')
  await move(1, P.done, 0)
  await move(4, P.todo, 'top')
  await same('moves back and forth')

  const dependency = { blocking: { repo_id: REPO, issue_number: 1 }, blocked: { repo_id: REPO, issue_number: 2 } }
  ok(await a.as('alice', { method: 'POST', url: '/p1/dependencies', payload: dependency }))
  await same('a dependency added')
  ok(await a.as('alice', { method: 'DELETE', url: '/p1/dependencies', payload: dependency }))
  await same('a dependency removed')

  ok(await a.as('alice', { method: 'POST', url: `/p1/repositories/${REPO}/issues/3/close` }))
  await same('an issue closed')
  ok(await a.as('alice', { method: 'POST', url: `/p1/repositories/${REPO}/issues/3/reopen` }))
  await same('an issue reopened')

  const id = (await gql(a, 'alice', `{ issueByInfo(repositoryGhId: ${REPO}, issueNumber: 5) { id } }`)).data.issueByInfo.id
  t.notOk((await gql(a, 'alice', `mutation { setEstimate(input: { issueId: "${id}", value: 13 }) { clientMutationId } }`)).errors)
  await same('an estimate set through GraphQL')
  t.notOk((await gql(a, 'alice', `mutation { moveIssue(input: { issueId: "${id}", pipelineId: "${P.doing}", position: 0 }) { issue { number } } }`)).errors)
  await same('a move through GraphQL')

  // Moves into the same gap, again and again, until the pipeline is respaced around it.
  for (let i = 0; i < 64; i++) {
    await move(i % 2 === 0 ? 6 : 4, P.doing, 1)
    if (i % 16 === 15) await same(`${i + 1} moves into one gap`)
  }
  ok(await a.as('alice', { method: 'PUT', url: `/p1/repositories/${OTHER_REPO}/issues/1/estimate`, payload: { estimate: 2 } }))
  await same('a write to another repository')
})

t.test('after a write that names its rows only those rows are read again; any other write reads the board whole', async (t) => {
  const { a, b, sql } = await twoInstances(t)
  const board = async (app: App) => (await app.as('alice', { url: BOARDS[0] })).body
  const estimates = (body: string) => JSON.parse(body).pipelines.flatMap((p: { issues: Array<{ issue_number: number, estimate?: { value: number } }> }) =>
    p.issues.map((i) => [i.issue_number, i.estimate?.value ?? null]))
  await board(a)
  // Behind the API's back (no counter moved): only a fresh build sees it.
  await sql(`UPDATE issues SET estimate = 21 WHERE repo_id = ${REPO} AND number = 6`)
  t.equal((await a.as('alice', { method: 'PUT', url: `/p1/repositories/${REPO}/issues/1/estimate`, payload: { estimate: 5 } })).statusCode, 200)
  const patched = estimates(await board(a))
  t.match(patched, [[1, 5]], 'the written row was read again')
  t.same(patched.find((e: number[]) => e[0] === 6), [6, null], 'the row no write named is as it was kept')
  t.same(estimates(await board(b)).find((e: number[]) => e[0] === 6), [6, 21], 'a fresh build reads it')
  // A write that says nothing of its rows (a pipeline renamed, here) has the whole board read again.
  t.equal((await a.admin({ method: 'PATCH', url: `/admin/workspaces/${WS_OLD}`, payload: { name: 'Renamed' } })).statusCode, 200)
  t.equal(await board(a), await board(b), 'read whole again')
})

t.test('a board made of its pipelines\' kept JSON is the JSON of the whole board, byte for byte', async (t) => {
  const app = Fastify()
  t.teardown(async () => await app.close())
  let board: BoardData = { pipelines: [] }
  const response = { 200: Board }
  // ?clone: the same board as new objects, nothing kept for them.
  app.get('/joined', { schema: { response } }, async (request, reply) => {
    const answer = boardJson(reply, 'clone' in (request.query as object) ? structuredClone(board) : board)
    return await reply.header('x-tag', answer.etag).type('application/json; charset=utf-8').send(answer.body)
  })
  app.get('/whole', { schema: { response } }, async () => board)
  const tags = new Set<unknown>()
  const same = async (what: string) => {
    const joined = await app.inject({ url: '/joined' })
    const whole = await app.inject({ url: '/whole' })
    t.equal(joined.body, whole.body, what)
    t.same(JSON.parse(joined.body), board, `${what}: the board's values`)
    t.equal((await app.inject({ url: '/joined?clone' })).headers['x-tag'], joined.headers['x-tag'], `${what}: the same bytes made afresh, the same tag`)
    tags.add(joined.headers['x-tag'])
  }
  await same('no pipeline')
  const todo = { id: 'p1', name: 'To "do" \u2028 é', issues: [{ issue_number: 1, is_epic: false, estimate: { value: 0.5 }, position: 0 }, { issue_number: 2, is_epic: true }] }
  const empty = { id: 'p2', name: 'Empty', issues: [] }
  board = { pipelines: [todo, empty] }
  await same('two pipelines, one empty')
  await same('the same pipelines again (their kept JSON)')
  board = { pipelines: [{ ...todo, issues: [...todo.issues, { issue_number: 3, is_epic: false }] }, empty, { id: 'p3', name: 'Done', issues: [{ issue_number: 4, is_epic: false }] }] }
  await same('one pipeline changed, one kept, one new')
  t.equal(tags.size, 3, 'other bytes, another tag')
})

t.test('a close, a reopen and the issue host\'s changes name their rows: the next read patches the kept board to what a fresh build answers', async (t) => {
  const { a, b, heard, sql } = await twoInstances(t)
  const ok = (res: { statusCode: number, body: string }) => t.ok(res.statusCode < 300, res.body)
  const same = async (what: string, urls: string[]) => {
    for (const url of urls) {
      const mine = await a.as('alice', { url })
      const fresh = await b.as('alice', { url })
      t.equal(mine.statusCode, 200, `${what}: ${url}`)
      t.equal(mine.body, fresh.body, `${what}: ${url}`)
      t.equal(mine.headers.etag, fresh.headers.etag, `${what}: ${url}, its tag`)
      if (heard !== undefined) t.equal((await heard.as('alice', { url })).body, fresh.body, `${what}: ${url}, on an instance that heard the writes`)
    }
  }
  const boardReads = async () => {
    const text = (await a.inject({ url: '/metrics', headers: { authorization: `Bearer ${METRICS_TOKEN}` } })).body
    const count = (name: string) => Number(new RegExp(`^${name} (\\d+)$`, 'm').exec(text)?.[1] ?? Number.NaN)
    return { whole: count('planning_board_reads_whole_total'), patched: count('planning_board_reads_patched_total'), hits: count('planning_read_cache_hits_total') }
  }
  /**
   * `write`, then a read: a row no write names (`sentinel`'s estimate) is changed behind both
   * instances first, so a board read whole would show it and a patched one does not. Put back, the
   * patched answers must be a fresh build's. A write that changed no board row (`rows` false)
   * leaves the kept answer good: it is sent as it was.
   */
  const patched = async (what: string, write: () => Promise<unknown>, urls = BOARDS, repo = REPO, sentinel = 6, rows = true) => {
    const where = `WHERE repo_id = ${repo} AND number = ${sentinel}`
    const [{ estimate }] = await sql(`SELECT estimate FROM issues ${where}`)
    await sql(`UPDATE issues SET estimate = 21 ${where}`)
    const before = await boardReads()
    await write()
    const board = (await a.as('alice', { url: urls[0] })).json() as { pipelines: Array<{ issues: Array<{ issue_number: number, estimate?: { value: number } }> }> }
    const after = await boardReads()
    if (rows) t.same([after.whole - before.whole, after.patched - before.patched], [0, 1], `${what}: the kept board patched, not read whole`)
    else t.same([after.whole - before.whole, after.patched - before.patched, after.hits - before.hits], [0, 0, 1], `${what}: no board row changed, the kept answer sent`)
    const kept = board.pipelines.flatMap((p) => p.issues).find((i) => i.issue_number === sentinel)
    t.not(kept?.estimate?.value, 21, `${what}: the row no write named is as kept`)
    await sql(`UPDATE issues SET estimate = ${estimate === null ? 'NULL' : Number(estimate)} ${where}`)
    await same(what, urls)
  }
  const numbers = (body: string) => (JSON.parse(body).pipelines as Array<{ issues: Array<{ issue_number: number }> }>)
    .flatMap((p) => p.issues.map((i) => i.issue_number)).sort((x, y) => x - y)
  await same('before any write', BOARDS)

  await patched('an issue closed (REST)', async () => ok(await a.as('alice', { method: 'POST', url: `/p1/repositories/${REPO}/issues/3/close` })))
  t.notOk(numbers((await a.as('alice', { url: BOARDS[0] })).body).includes(3), 'the closed issue is off the board')
  await patched('an issue reopened (REST)', async () => ok(await a.as('alice', { method: 'POST', url: `/p1/repositories/${REPO}/issues/3/reopen` })))
  await patched('an issue closed from the start reopened (REST)', async () => ok(await a.as('alice', { method: 'POST', url: `/p1/repositories/${REPO}/issues/7/reopen` })))
  t.ok(numbers((await a.as('alice', { url: BOARDS[0] })).body).includes(7), 'the reopened issue is on the board')
  const admin = async (n: number, payload: object) => ok(await a.admin({ method: 'PATCH', url: `/admin/repositories/${REPO}/issues/${n}`, payload }))
  await patched('an issue closed (admin API)', async () => await admin(7, { state: 'closed' }))
  const noRow = [BOARDS, REPO, 6, false] as const
  await patched('an issue retitled (admin API)', async () => await admin(2, { title: 'Renamed' }), ...noRow)
  await patched('an issue retitled (REST)', async () => ok(await a.as('alice', { method: 'PATCH', url: `/p1/repositories/${REPO}/issues/2`, payload: { title: 'Renamed again' } })), ...noRow)
  const gid = async (n: number) => (await gql(a, 'alice', `{ issueByInfo(repositoryGhId: ${REPO}, issueNumber: ${n}) { id } }`)).data.issueByInfo.id as string
  const [four, five] = [await gid(4), await gid(5)]
  await patched('two issues closed (GraphQL)', async () => t.notOk((await gql(a, 'alice', `mutation { closeIssues(input: { issueIds: ["${four}", "${five}"] }) { clientMutationId } }`)).errors))
  await patched('two issues reopened to a pipeline\'s start (GraphQL, a move each)', async () =>
    t.notOk((await gql(a, 'alice', `mutation { reopenIssues(input: { issueIds: ["${four}", "${five}"], pipelineId: "${P.done}", position: START }) { clientMutationId } }`)).errors))
  const epic = (path: string, payload: object) => async () => ok(await a.as('alice', { method: 'POST', url: `/p1/repositories/${REPO}/${path}`, payload }))
  await patched('an issue made an epic, with a child in another repository', epic('issues/2/convert_to_epic', { issues: [{ repo_id: OTHER_REPO, issue_number: 1 }] }))
  await patched('an epic\'s issues changed', epic('epics/2/update_issues', { remove_issues: [{ repo_id: OTHER_REPO, issue_number: 1 }], add_issues: [{ repo_id: REPO, issue_number: 1 }] }), ...noRow)
  await patched('an epic made an issue again', epic('epics/2/convert_to_issue', {}))
  await patched('an issue opened (REST)', async () => ok(await a.as('alice', { method: 'POST', url: `/p1/repositories/${REPO}/issues`, payload: { title: 'New', pipeline_id: P.doing, position: 0, estimate: 2 } })))

  // The issue host's deliveries to a repository bound to a connection, on a board of its own.
  const connection = (await a.admin({ method: 'POST', url: '/admin/connections', payload: { kind: 'github', secret: SECRET } })).json().id as string
  const repo = { id: 6000, name: 'svc', full_name: 'team/svc', owner: { login: 'team', id: 70 }, html_url: 'https://github.com/team/svc', updated_at: '2026-01-01T00:00:00Z' }
  let clock = Date.parse('2026-01-02T00:00:00Z')
  const issue = (number: number, extra: object = {}) => ({ number, title: `Hosted ${number}`, state: 'open', updated_at: new Date(clock += 1000).toISOString(), labels: [], assignees: [], ...extra })
  const delivered = async (action: string, body: object) => t.same((await deliver(a, connection, 'issues', { action, repository: repo, sender: { id: 42, login: 'someone' }, ...body })).json(), { result: 'handled' }, action)
  for (const n of [1, 2, 3, 4]) await delivered('opened', { issue: issue(n) })
  const ws = (await a.admin({ method: 'POST', url: '/admin/workspaces', payload: { name: 'Synced', repositories: [6000], pipelines: ['Inbox', 'Doing'] } })).json()
  ok(await a.admin({ method: 'PUT', url: '/admin/repositories/6000/permissions/alice', payload: { permission: 'admin' } }))
  ok(await a.as('alice', { method: 'PATCH', url: `/p2/workspaces/${ws.id}/pipelines/${ws.pipelines[1].id}`, payload: { host_label: 'doing' } }))
  const hosted = [`/p2/workspaces/${ws.id}/repositories/6000/board`]
  await same('the hosted board', hosted)
  const delivery = async (what: string, action: string, body: object, rows = true) => await patched(`${what} (a delivery)`, async () => await delivered(action, body), hosted, 6000, 1, rows)
  await delivery('an issue opened', 'opened', { issue: issue(5) })
  await delivery('an issue closed', 'closed', { issue: issue(2, { state: 'closed' }) })
  await delivery('an issue reopened', 'reopened', { issue: issue(2) })
  await delivery('a label put on that a pipeline names (a move)', 'labeled', { issue: issue(3, { labels: [{ name: 'doing', color: 'ededed' }] }), label: { name: 'doing' } })
  await delivery('a label no pipeline names', 'labeled', { issue: issue(4, { labels: [{ name: 'bug', color: 'ededed' }] }), label: { name: 'bug' } }, false)
  await delivery('an assignee', 'assigned', { issue: issue(4, { labels: [{ name: 'bug', color: 'ededed' }], assignees: [{ login: 'dana', avatar_url: null }] }) }, false)
  await delivery('a title', 'edited', { issue: issue(4, { title: 'Edited' }) }, false)
  await delivery('an issue transferred away', 'transferred', { issue: issue(4) })
  await delivery('an issue deleted', 'deleted', { issue: issue(5) })
  t.same(numbers((await a.as('alice', { url: hosted[0] })).body), [1, 2, 3], 'the board holds what the host holds')
  // Nothing on the other repositories' boards was read again for any of it.
  await same('the first repository after the deliveries', BOARDS)
})
