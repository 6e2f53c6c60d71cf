import t, { type Test } from 'tap'
import pg from 'pg'
import { spawn } from 'node:child_process'
import { once } from 'node:events'
import { setTimeout as sleep } from 'node:timers/promises'
import { fileURLToPath } from 'node:url'
import { buildApp } from '../app.js'
import { applicationName } from '../db/engine/postgres.js'
import { firstPostgresInstance, METRICS_TOKEN, REPO, TOKENS, TS_LOADER } from './helper.js'
import { postgresAnswers } from './pg.js'
import { ranOnce } from './once.js'

// Reads with no round trip on PostgreSQL (README, "Scale out"): instances answer from the change
// counter they hear of, and a write is acknowledged once every listed instance heard it, or once
// an instance that did not can no longer trust what it heard.
const PG = process.env.TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test'
const skip = ranOnce !== false ? ranOnce : await postgresAnswers(PG) ? undefined : `no PostgreSQL answers at ${PG} (set TEST_DATABASE_URL)`
t.setTimeout(300_000)
const TIMINGS = { heartbeatMs: 50, trustMs: 300, fenceMs: 500, lapseMs: 1000, retryMs: 200 }
const headers = { 'x-authentication-token': TOKENS.alice }
const estimateUrl = `/p1/repositories/${REPO}/issues/1/estimate`
const issueUrl = `/p1/repositories/${REPO}/issues/1`

async function instances (t: Test) {
  const { a, options, schema, drop } = await firstPostgresInstance(t, PG, { databaseWatch: TIMINGS })
  const admin = new pg.Client({ connectionString: PG, options: `-c search_path=${schema}` })
  await admin.connect()
  t.teardown(async () => {
    await admin.end()
    await drop()
  })
  return { a, options, schema, admin }
}

type App = Awaited<ReturnType<typeof buildApp>>

async function counts (app: App): Promise<Record<string, number>> {
  const body = (await app.inject({ url: '/metrics', headers: { authorization: `Bearer ${METRICS_TOKEN}` } })).body
  const count = (name: string) => Number(body.split('\n').find((line) => line.startsWith(`${name} `))?.split(' ')[1])
  return { watched: count('planning_change_counter_watched_total'), queries: count('planning_change_counter_queries_total') }
}

async function until (what: string, done: () => Promise<boolean>, ms = 20_000): Promise<void> {
  const deadline = Date.now() + ms
  while (!await done()) {
    if (Date.now() > deadline) throw new Error(`not within ${ms} ms: ${what}`)
    await sleep(20)
  }
}

async function write (app: App, estimate: number): Promise<number> {
  const started = performance.now()
  const res = await app.inject({ method: 'PUT', url: estimateUrl, headers, payload: { estimate } })
  if (res.statusCode !== 200) throw new Error(`write: ${res.statusCode} ${res.body}`)
  return performance.now() - started
}

const estimateOf = (body: string): number | undefined => (JSON.parse(body) as { estimate?: { value: number } }).estimate?.value

t.test('reads make no round trip once an instance hears the counter; a lost connection falls back and comes back', { skip }, async (t) => {
  const { a, options, schema, admin } = await instances(t)
  const b = await buildApp(options)
  t.teardown(async () => await Promise.all([a.close(), b.close()]))
  const read = async (): Promise<number | undefined> => estimateOf((await b.inject({ url: issueUrl, headers })).body)
  const watchedNow = async (): Promise<boolean> => {
    const before = await counts(b)
    await read()
    return (await counts(b)).watched > before.watched
  }
  await until('B answers from the counter it hears of', watchedNow)
  const { rows } = await admin.query<{ listeners: string[] }>('SELECT listeners FROM change_counter')
  t.equal(rows[0].listeners.length, 2, 'both instances are listed in the counter\'s row')

  const before = await counts(b)
  for (let round = 1; round <= 50; round++) {
    await write(a, round)
    if (await read() !== round) t.fail(`round ${round}: B did not show the write acknowledged by A`)
  }
  const after = await counts(b)
  t.equal(after.queries, before.queries, 'B asked PostgreSQL for the counter not once in 50 rounds')
  t.ok(after.watched - before.watched >= 50, 'each of its reads was answered from what it heard')

  // Both instances' renewals held up in PostgreSQL (their rows locked): their listening sessions
  // are busy, so they hear nothing more, and B cannot say it heard the next write.
  await admin.query('BEGIN')
  await admin.query('SELECT 1 FROM counter_listeners FOR UPDATE')
  await sleep(TIMINGS.heartbeatMs * 2)
  const waited = await write(a, 51)
  t.ok(waited >= TIMINGS.fenceMs - 5, `the write waited for B (${waited.toFixed(0)} ms)`)
  t.equal(await read(), 51, 'B no longer trusts what it heard: it asks PostgreSQL, and shows the write')
  await admin.query('ROLLBACK')
  await until('B answers from the counter again', watchedNow)

  // PostgreSQL drops both instances' listening connections (a restart does).
  const { rowCount } = await admin.query(`SELECT pg_terminate_backend(pid) FROM pg_stat_activity
    WHERE application_name = $1 AND (query LIKE '%counter_listeners%' OR query LIKE '%pg_notify%')`, [applicationName(schema)])
  t.equal(rowCount, 2, 'the two listening connections terminated')
  for (let round = 52; round <= 61; round++) {
    await write(a, round)
    t.equal(await read(), round, `round ${round}, while the connections are away or back: B shows the write`)
  }
  await until('B answers from the counter again, on a new connection', watchedNow)
  await write(a, 62)
  t.equal(await read(), 62)

  // The counter set back by hand (a restore does): what was heard before counts no more.
  await admin.query('UPDATE change_counter SET value = value - 5')
  await write(a, 7)
  t.equal(await read(), 7, 'B shows a write made after the counter went back')

  await b.close()
  const left = await admin.query<{ listeners: string[] }>('SELECT listeners FROM change_counter')
  t.equal(left.rows[0].listeners.length, 1, 'a closed instance takes itself off the list')
  t.ok(await write(a, 63) < TIMINGS.fenceMs, 'so writes do not wait for it')
})

t.test('a stopped instance: the write waits for it at most fenceMs, and once it runs again its first read shows the write', { skip }, async (t) => {
  const { a, schema, admin } = await instances(t)
  t.teardown(async () => await a.close())
  const child = spawn(process.execPath, ['--import', TS_LOADER, fileURLToPath(new URL('watch-instance.ts', import.meta.url))], {
    env: { ...process.env, WATCH_DATABASE_URL: PG, WATCH_SCHEMA: schema, WATCH_TIMINGS: JSON.stringify(TIMINGS), WATCH_METRICS_TOKEN: METRICS_TOKEN },
    stdio: ['ignore', 'pipe', 'inherit']
  })
  t.teardown(() => { child.kill('SIGKILL') })
  let out = ''
  child.stdout.on('data', (d) => { out += String(d) })
  await until('the other instance listens', async () => /listening (\S+)\n/.test(out), 120_000)
  const address = /listening (\S+)\n/.exec(out)![1]
  const readB = async (): Promise<number | undefined> => estimateOf(await (await fetch(address + issueUrl, { headers })).text())
  await until('both are listed', async () => (await admin.query('SELECT 1 FROM counter_listeners')).rowCount === 2)
  await until('a write does not wait for a running instance', async () => await write(a, 1) < TIMINGS.fenceMs / 2)
  t.equal(await readB(), 1)

  const sessions = (await admin.query<{ pid: number }>('SELECT pid FROM counter_listeners')).rows.map((row) => row.pid)
  child.kill('SIGSTOP')
  const waited = await write(a, 2)
  t.ok(waited >= TIMINGS.fenceMs - 5, `the write waited for the stopped instance (${waited.toFixed(0)} ms)`)
  await until('the stopped instance is taken off the list', async () => (await admin.query('SELECT 1 FROM counter_listeners')).rowCount === 1)
  const alive = async () => (await admin.query('SELECT 1 FROM pg_stat_activity WHERE pid = ANY($1)', [sessions])).rowCount
  await until('its listening session is ended, so PostgreSQL keeps no notifications for it', async () => await alive() === 1)
  t.ok(await write(a, 3) < TIMINGS.fenceMs, 'writes no longer wait for it')
  child.kill('SIGCONT')
  t.equal(await readB(), 3, 'its first read once running again shows the writes')
  await until('it joins again', async () => (await admin.query('SELECT 1 FROM counter_listeners')).rowCount === 2)
  await write(a, 4)
  t.equal(await readB(), 4)

  child.kill('SIGKILL')
  await once(child, 'exit')
  await until('the killed instance is taken off the list', async () => (await admin.query('SELECT 1 FROM counter_listeners')).rowCount === 1)
  t.ok(await write(a, 5) < TIMINGS.fenceMs, 'writes no longer wait for a killed one either')
})
