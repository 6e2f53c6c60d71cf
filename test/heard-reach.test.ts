import t, { type Test } from 'tap'
import pg from 'pg'
import { setTimeout as sleep } from 'node:timers/promises'
import { buildApp } from '../app.js'
import { parseReach, reachText } from '../db/engine/transaction.js'
import { firstPostgresInstance, METRICS_TOKEN, OTHER_REPO, P, REPO, TOKENS } from './helper.js'
import { postgresAnswers } from './pg.js'
import { ranOnce } from './once.js'

// What a write reached, heard by the other instances on PostgreSQL (README, "Scale out"): they
// keep their boards and cached answers across it as the writer does, instead of reading them whole.
const PG = process.env.TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test'
const skip = ranOnce !== false ? ranOnce : await postgresAnswers(PG) ? undefined : `no PostgreSQL answers at ${PG} (set TEST_DATABASE_URL)`
const TIMINGS = { heartbeatMs: 50, trustMs: 300, fenceMs: 500, lapseMs: 1000, retryMs: 200 }
const headers = { 'x-authentication-token': TOKENS.alice }
const BOARD = `/p1/repositories/${REPO}/board`
type App = Awaited<ReturnType<typeof buildApp>>

t.test('a reach is written and read back; anything else heard is not taken', async (t) => {
  t.equal(reachText([1001, 1001, 1002], [7, 8, 7]), '1001,1002|7,8')
  t.equal(reachText([1001], undefined), '1001|*', 'rows not said')
  t.equal(reachText([], []), '|')
  t.equal(reachText(undefined, [1]), null, 'a write that may change anything says nothing')
  t.equal(reachText([1], Array.from({ length: 2000 }, (_, i) => 100_000 + i)), null, 'nor one too long for a notification')
  t.same(parseReach('42 1001,1002|7,8'), { version: 42, repositories: [1001, 1002], boardRows: [7, 8] })
  t.same(parseReach('43 1001|*'), { version: 43, repositories: [1001], boardRows: undefined })
  t.same(parseReach('44 |'), { version: 44, repositories: [], boardRows: [] })
  for (const bad of ['', '42', '42 ', 'x 1|2', '42 1,|2', '42 1|2,', '42 1|*,3', '42 1|2|3', '42 -1|2', `42 ${'1,'.repeat(5000)}1|*`, '42 1|2; DROP']) {
    t.equal(parseReach(bad), undefined, `refused: ${bad.slice(0, 30)}`)
  }
})

async function instances (t: Test) {
  const { a, options, schema, drop } = await firstPostgresInstance(t, PG, { databaseWatch: TIMINGS })
  const admin = new pg.Client({ connectionString: PG, options: `-c search_path=${schema}` })
  await admin.connect()
  const b = await buildApp(options)
  t.teardown(async () => {
    await Promise.all([a.close(), b.close()])
    await admin.end()
    await drop()
  })
  await Promise.all([a.ready(), b.ready()])
  // Both listed in the counter's row: from then on each write waits until the other heard it.
  for (let i = 0; ; i++) {
    const { rows } = await admin.query<{ listeners: string[] }>('SELECT listeners FROM change_counter')
    if (rows[0].listeners.length === 2) break
    if (i > 500) throw new Error('the two instances were not both listening within 10 s')
    await sleep(20)
  }
  return { a, b, options }
}

/** The board as `app` answers it, as an instance that knows no write answers it (a fresh build), and how `app` made it. */
async function boards (app: App, fresh: App) {
  const before = await modelCounts(app)
  const [mine, whole] = await Promise.all([app.inject({ url: BOARD, headers }), fresh.inject({ url: BOARD, headers })])
  const after = await modelCounts(app)
  const made = after.whole > before.whole ? 'whole' : after.patched > before.patched ? 'patched' : 'kept'
  return { mine: mine.body, whole: whole.body, status: mine.statusCode, made }
}

/** Whole-board reads and patched ones so far (db/board-model.ts), from the metrics. */
async function modelCounts (app: App): Promise<{ whole: number, patched: number }> {
  const body = (await app.inject({ url: '/metrics', headers: { authorization: `Bearer ${METRICS_TOKEN}` } })).body
  const count = (name: string) => Number(body.split('\n').find((line) => line.startsWith(`${name} `))?.split(' ')[1])
  return { whole: count('planning_board_reads_whole_total'), patched: count('planning_board_reads_patched_total') }
}

t.test('another instance hears what each write reached: it patches its board, which matches a fresh build of the whole', { skip }, async (t) => {
  const { a, b, options } = await instances(t)
  const fresh = await buildApp({ ...options, databaseWatch: false })
  t.teardown(async () => await fresh.close())
  let seen = await boards(b, fresh)
  t.equal(seen.status, 200)
  t.equal(seen.made, 'whole', 'b keeps the board in memory from its first read')

  const estimated = await a.inject({ method: 'PUT', url: `/p1/repositories/${REPO}/issues/1/estimate`, headers, payload: { estimate: 5 } })
  t.equal(estimated.statusCode, 200, estimated.body)
  seen = await boards(b, fresh)
  t.equal(seen.made, 'patched', 'b read again only the row of the estimated issue')
  t.equal(seen.mine, seen.whole, 'b\'s patched board is the whole board read fresh')
  t.ok(seen.mine.includes('"estimate":{"value":5}'), 'and shows the estimate')

  const moved = await a.inject({ method: 'POST', url: `/p1/repositories/${REPO}/issues/2/moves`, headers, payload: { pipeline_id: P.doing, position: 'top' } })
  t.equal(moved.statusCode, 200, moved.body)
  seen = await boards(b, fresh)
  t.equal(seen.made, 'patched', 'a move: patched')
  t.equal(seen.mine, seen.whole, 'after the move too')

  // A write to another repository only: b's board of this one holds as it was.
  const other = await a.inject({ method: 'PUT', url: `/p1/repositories/${OTHER_REPO}/issues/1/estimate`, headers, payload: { estimate: 2 } })
  t.equal(other.statusCode, 200, other.body)
  seen = await boards(b, fresh)
  t.not(seen.made, 'whole', 'a write to another repository: not read whole')
  t.equal(seen.mine, seen.whole)

  // A dependency insert bumps the counter in a statement of its own, which sets no reach: the
  // reach left in the row by the write before is not sent again for it, and b reads the board whole.
  const dependency = await a.inject({
    method: 'POST',
    url: '/p1/dependencies',
    headers,
    payload: { blocking: { repo_id: REPO, issue_number: 1 }, blocked: { repo_id: REPO, issue_number: 3 } }
  })
  t.equal(dependency.statusCode, 200, dependency.body)
  seen = await boards(b, fresh)
  t.equal(seen.made, 'whole', 'a write that said nothing of its reach: read whole')
  t.equal(seen.mine, seen.whole)

  // 30 estimates in a row, each read on b right after it is acknowledged.
  const made: string[] = []
  for (let i = 0; i < 30; i++) {
    const res = await a.inject({ method: 'PUT', url: `/p1/repositories/${REPO}/issues/${1 + (i % 3)}/estimate`, headers, payload: { estimate: i } })
    t.equal(res.statusCode, 200)
    seen = await boards(b, fresh)
    made.push(seen.made)
    if (seen.mine !== seen.whole) t.fail(`estimate ${i}: b's board is not the whole board read fresh`)
  }
  t.same([...new Set(made)], ['patched'], 'each heard before the write was acknowledged: all 30 patched')
})
