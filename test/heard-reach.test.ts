import t, { type Test } from 'tap'
import pg from 'pg'
import { setTimeout as sleep } from 'node:timers/promises'
import { buildApp } from '../app.js'
import { isCommitting, parseReach, reachText } from '../db/engine/transaction.js'
import { ADMIN_TOKEN, firstPostgresInstance, METRICS_TOKEN, OTHER_REPO, P, REPO, TOKENS } from './helper.js'
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
  t.equal(reachText([1], Array.from({ length: 300 }, (_, i) => 100_000 + i)), null, 'nor one too long to keep in the counter\'s row')
  t.equal(reachText([1.5], []), null, 'nor one naming an id that is not a whole number')
  t.equal(reachText([-1], []), null)
  t.equal(reachText([1e15], []), null, 'or longer than 15 digits (the most a reach heard may hold)')
  const bump = (literal: string) => `UPDATE change_counter SET value = value + 1, reach = (value + 1)::text || ' ' || ${literal} WHERE id = 1 RETURNING value, listeners; COMMIT`
  t.ok(isCommitting(bump("'1001|7,8'")) && isCommitting(bump('NULL')) && isCommitting(bump("'1001|*'")), 'the committing statements are known as such')
  for (const other of [bump("'x'"), bump("'1'; DROP TABLE issues; --'"), bump('$1'), 'COMMIT', `${bump('NULL')}; SELECT 1`]) {
    t.notOk(isCommitting(other), `not a committing statement: ${other.slice(60, 110)}`)
  }
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
  const sql = async (text: string) => (await admin.query(text)).rows
  // Both listed in the counter's row: from then on each write waits until the other heard it.
  for (let i = 0; ; i++) {
    const { rows } = await admin.query<{ listeners: string[] }>('SELECT listeners FROM change_counter')
    if (rows[0].listeners.length === 2) break
    if (i > 500) throw new Error('the two instances were not both listening within 10 s')
    await sleep(20)
  }
  return { a, b, options, sql, schema }
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

t.test('the reach is sent before the counter\'s own notification, for its version, once per write that says it', { skip }, async (t) => {
  const { a, sql, schema } = await instances(t)
  const relid = String((await sql(`SELECT '"${schema}".change_counter'::regclass::oid::text AS relid`))[0].relid)
  const listener = new pg.Client({ connectionString: PG })
  await listener.connect()
  t.teardown(async () => await listener.end())
  const heard: string[] = []
  listener.on('notification', (message) => { heard.push(`${message.channel.split('_')[1]} ${message.payload ?? ''}`) })
  await listener.query(`LISTEN planning_reach_${relid}; LISTEN planning_counter_${relid}`)
  const version = Number((await sql('SELECT value FROM change_counter'))[0].value)
  t.equal((await a.inject({ method: 'PUT', url: `/p1/repositories/${REPO}/issues/1/estimate`, headers, payload: { estimate: 3 } })).statusCode, 200)
  t.equal((await a.inject({ method: 'PUT', url: `/admin/repositories/${REPO}/permissions/carol`, headers: { authorization: `Bearer ${ADMIN_TOKEN}` }, payload: { permission: 'read' } })).statusCode, 200)
  await sql('UPDATE change_counter SET value = value + 1')
  for (let i = 0; heard.length < 4 && i < 250; i++) await sleep(20)
  const id = Number((await sql(`SELECT id FROM issues WHERE repo_id = ${REPO} AND number = 1`))[0].id)
  t.same(heard, [
    `reach ${version + 1} ${REPO}|${id}`,
    `counter ${version + 1}`,
    `counter ${version + 2}`,
    `counter ${version + 3}`
  ], 'the estimate\'s reach, then its version; a permission (may change anything) and a bump by hand: the version only')
})

t.test('a write that may change anything is heard as such: another instance reads again what it kept', { skip }, async (t) => {
  const { a, b, options } = await instances(t)
  const fresh = await buildApp({ ...options, databaseWatch: false })
  t.teardown(async () => await fresh.close())
  const bob = { 'x-authentication-token': TOKENS.bob }
  t.equal((await b.inject({ url: BOARD, headers: bob })).statusCode, 200, 'bob reads the board on b')
  await boards(b, fresh)
  const revoked = await a.inject({ method: 'PUT', url: `/admin/repositories/${REPO}/permissions/bob`, headers: { authorization: `Bearer ${ADMIN_TOKEN}` }, payload: { permission: 'none' } })
  t.equal(revoked.statusCode, 200, revoked.body)
  t.equal((await b.inject({ url: BOARD, headers: bob })).statusCode, 404, 'bob\'s permission, revoked on a, is gone on b at once')
  const seen = await boards(b, fresh)
  t.equal(seen.made, 'whole', 'the board is read whole after it')
  t.equal(seen.mine, seen.whole)
})

t.test('the counter set back (a restore): what was heard before names other writes, and is forgotten', { skip }, async (t) => {
  const { a, b, options, sql } = await instances(t)
  const fresh = await buildApp({ ...options, databaseWatch: false })
  t.teardown(async () => await fresh.close())
  const bob = { 'x-authentication-token': TOKENS.bob }
  t.equal((await b.inject({ url: BOARD, headers: bob })).statusCode, 200)
  await boards(b, fresh)
  const version = Number((await sql('SELECT value FROM change_counter'))[0].value)
  const before = await sql(`SELECT estimate FROM issues WHERE repo_id = ${REPO} AND number = 1`)
  // An estimate on a at version + 1, heard by b with its reach (issue 1's row).
  t.equal((await a.inject({ method: 'PUT', url: `/p1/repositories/${REPO}/issues/1/estimate`, headers, payload: { estimate: 5 } })).statusCode, 200)
  // Restored to `version`, then a write that says nothing of its reach takes version + 1 again:
  // issue 2's estimate and bob's permission.
  await sql(`UPDATE issues SET estimate = ${String(before[0].estimate ?? 'NULL')} WHERE repo_id = ${REPO} AND number = 1`)
  await sql(`UPDATE change_counter SET value = ${version} WHERE id = 1`)
  await sql(`BEGIN; UPDATE issues SET estimate = 13 WHERE repo_id = ${REPO} AND number = 2;
    DELETE FROM permissions WHERE repo_id = ${REPO} AND user_id = (SELECT id FROM users WHERE login = 'bob');
    UPDATE change_counter SET value = value + 1 WHERE id = 1; COMMIT`)
  for (let i = 0; i < 100; i++) {
    if ((await b.inject({ url: BOARD, headers: bob })).statusCode === 404) break
    await sleep(20)
  }
  t.equal((await b.inject({ url: BOARD, headers: bob })).statusCode, 404, 'bob\'s permission, gone in the write after the restore, is gone on b')
  const seen = await boards(b, fresh)
  t.equal(seen.made, 'whole', 'the board is read whole, not patched as the forgotten write said')
  t.equal(seen.mine, seen.whole, 'and is the board read fresh')
  t.ok(seen.mine.includes('"estimate":{"value":13}'))
})
