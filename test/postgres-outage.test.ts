import type { LightMyRequestResponse } from 'fastify'
import t, { type Test } from 'tap'
import pg from 'pg'
import { once } from 'node:events'
import { Writable } from 'node:stream'
import { setTimeout as sleep } from 'node:timers/promises'
import WebSocket from 'ws'
import { buildApp, type BuildOptions } from '../app.js'
import { sql } from 'kysely'
import { isDatabaseUnavailable } from '../db/engine/engine.js'
import { applicationName, postgresKysely } from '../db/engine/postgres.js'
import { formReceiver } from './receiver.js'
import { ADMIN_TOKEN, OTHER_REPO, P, REPO, TOKENS, WS_OLD, testFixture } from './helper.js'
import { open as openStream, waitFor } from './sse.js'
import { postgresAnswers, testSchema } from './pg.js'
import { ranOnce } from './once.js'
import { TcpProxy } from './tcp-proxy.js'

// PostgreSQL going away under a running server: restarted (its backends terminated), stopped
// (connections refused) and hung (connections accepted, nothing answered). The shared server is
// never stopped: a proxy in front of it plays the stopped and the hung one.
const PG = process.env.TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test'
const skip = ranOnce !== false ? ranOnce : await postgresAnswers(PG) ? false : `no PostgreSQL answers at ${PG} (set TEST_DATABASE_URL)`
if (skip !== false) t.comment(`skipping the PostgreSQL outage tests: ${skip}`)

interface Logged { level: number, msg: string, [key: string]: unknown }

/** An app on a fresh schema (through `url`, the proxy's when given), the test fixture loaded, its log kept. */
async function serve (t: Test, options: BuildOptions & { url?: string } = {}) {
  const { schema, drop } = await testSchema(PG)
  const log: Logged[] = []
  const logStream = new Writable({ write (line, _encoding, done) { log.push(JSON.parse(String(line)) as Logged); done() } })
  const { url = PG, ...rest } = options
  const app = await buildApp({
    databaseUrl: url,
    databaseSchema: schema,
    databasePoolMax: 4,
    adminToken: ADMIN_TOKEN,
    documentation: false,
    rateLimit: { max: 100_000, timeWindow: 60_000 },
    logLevel: 'info',
    logStream,
    ...rest
  })
  t.teardown(async () => {
    await app.close()
    await drop()
  })
  const fixture = testFixture()
  fixture.issues.push(...Array.from({ length: 20 }, (_, i) => ({ repo_id: OTHER_REPO, number: 100 + i, title: `Load ${i}` })))
  const imported = await app.inject({ method: 'POST', url: '/admin/import', headers: { authorization: `Bearer ${ADMIN_TOKEN}` }, payload: fixture })
  if (imported.statusCode !== 200) throw new Error(imported.body)
  const as = async (login: keyof typeof TOKENS, opts: { method?: 'GET' | 'POST' | 'PUT', url: string, payload?: object }) =>
    await app.inject({ ...opts, headers: { 'x-authentication-token': TOKENS[login] } })
  return { app, schema, log, as }
}

/** Terminates the schema's backends as a PostgreSQL restart does; how many there were. */
async function terminateBackends (schema: string): Promise<number> {
  const client = new pg.Client({ connectionString: PG })
  await client.connect()
  try {
    const { rows } = await client.query('SELECT pg_terminate_backend(pid) AS done FROM pg_stat_activity WHERE application_name = $1', [applicationName(schema)])
    return rows.filter((r: { done: boolean }) => r.done).length
  } finally {
    await client.end()
  }
}

/** A 503 as the API gives one while the database is away: the error shape, Retry-After, no internals. */
function isUnavailable (t: Test, res: LightMyRequestResponse, what: string): void {
  t.equal(res.statusCode, 503, what)
  t.equal(res.headers['retry-after'], '5', `${what}: Retry-After`)
  t.same(res.json(), { statusCode: 503, error: 'Service Unavailable', message: 'the database is unavailable; retry after 5 s' }, `${what}: the error shape, no internals`)
}

t.test('backends terminated under load: 200 or 503, never a 500 or an exit; every acknowledged move holds', { skip }, async (t) => {
  const { app, schema, log, as } = await serve(t)
  const pipelines = [P.todo, P.doing, P.done]
  const statuses = new Map<number, number>()
  // Per issue: the pipeline of its last acknowledged move, and those of later unacknowledged ones.
  const outcome = new Map<number, { acknowledged: string | undefined, maybe: string[] }>()
  const load = { running: true }
  const worker = async (issue: number) => {
    const state = { acknowledged: undefined as string | undefined, maybe: [] as string[] }
    outcome.set(issue, state)
    for (let i = 0; load.running; i++) {
      const to = pipelines[i % 3]
      const move = await as('alice', { method: 'POST', url: `/p1/repositories/${OTHER_REPO}/issues/${issue}/moves`, payload: { pipeline_id: to, position: 'top' } })
      const read = await as('bob', { url: `/p1/repositories/${OTHER_REPO}/board` })
      for (const res of [move, read]) {
        statuses.set(res.statusCode, (statuses.get(res.statusCode) ?? 0) + 1)
        if (res.statusCode === 503) t.equal(res.headers['retry-after'], '5')
        else if (res.statusCode !== 200) t.fail(`answered ${res.statusCode}: ${res.body}`)
      }
      if (move.statusCode === 200) Object.assign(state, { acknowledged: to, maybe: [] })
      else state.maybe.push(to)
    }
  }
  const workers = Promise.all(Array.from({ length: 6 }, async (_, i) => await worker(100 + i)))
  let terminated = 0
  for (let round = 0; round < 4; round++) {
    await sleep(250)
    terminated += await terminateBackends(schema)
  }
  await sleep(250)
  load.running = false
  await workers
  t.ok(terminated >= 4, `backends terminated: ${terminated}`)
  t.ok((statuses.get(200) ?? 0) > 20, `served: ${JSON.stringify(Object.fromEntries(statuses))}`)

  const board = (await as('alice', { url: `/p1/repositories/${OTHER_REPO}/board` })).json() as { pipelines: Array<{ id: string, issues: Array<{ issue_number: number }> }> }
  for (const [issue, { acknowledged, maybe }] of outcome) {
    const at = board.pipelines.find((p) => p.issues.some((i) => i.issue_number === issue))?.id
    t.ok(at !== undefined && [acknowledged, ...maybe].includes(at), `issue ${issue}: in ${String(at)}, acknowledged ${String(acknowledged)}${maybe.length > 0 ? ` (then unacknowledged: ${maybe.join(', ')})` : ''}`)
  }
  const dropped = log.filter((l) => l.msg.startsWith('PostgreSQL closed a pooled connection'))
  t.ok(dropped.length <= 1, `dropped connections logged once a minute at most (${dropped.length})`)
  t.same(log.filter((l) => l.level >= 50).map((l) => l.msg), [], 'nothing logged as an error')
  t.equal((await as('bob', { method: 'PUT', url: `/p1/repositories/${REPO}/issues/1/estimate`, payload: { estimate: 3 } })).statusCode, 200, 'writes work again')
  t.equal((await app.inject({ url: '/ready' })).statusCode, 200)
})

t.test('a stopped database: 503 with Retry-After at once, /ready 503; all works again when it is back', { skip }, async (t) => {
  const proxy = await new TcpProxy({ host: new URL(PG).hostname, port: Number(new URL(PG).port || 5432) }).start()
  t.teardown(async () => await proxy.close())
  const receiver = await formReceiver(t)
  const { app, log, as } = await serve(t, { url: proxy.url(PG), webhooks: { allowPrivate: true, retryBaseMs: 50, retryMaxMs: 200 } })
  const hook = await as('alice', { method: 'POST', url: `/p1/repositories/${REPO}/webhooks`, payload: { url: receiver.url } })
  t.equal(hook.statusCode, 201)
  const base = await app.listen({ host: '127.0.0.1', port: 0 })
  const feed = `${base.replace('http', 'ws')}/api/v1/ws?access_token=${TOKENS.carol}`
  const board = `/p2/workspaces/${WS_OLD}/live`
  const stream = await openStream(base, board, { 'x-authentication-token': TOKENS.carol })
  t.teardown(() => { stream.close() })
  t.ok(await waitFor(stream, 'ready', 1), 'a board page\'s live stream is open')
  const open = new WebSocket(feed)
  t.teardown(() => open.terminate())
  const frames: Array<{ type: string, message?: string }> = []
  open.on('message', (raw) => frames.push(JSON.parse(String(raw)) as { type: string }))
  await once(open, 'open')
  for (let i = 0; i < 250 && !frames.some((f) => f.type === 'welcome'); i++) await sleep(20)

  await proxy.set('down')
  const started = Date.now()
  isUnavailable(t, await as('alice', { url: `/p1/repositories/${REPO}/board` }), 'a read')
  isUnavailable(t, await as('bob', { method: 'PUT', url: `/p1/repositories/${REPO}/issues/2/estimate`, payload: { estimate: 8 } }), 'a write')
  isUnavailable(t, await app.inject({ method: 'POST', url: '/api/v1/messages/send', headers: { 'x-authentication-token': 'a-token-never-seen-1' }, payload: { message: 'hi' } }), 'a request with a token not yet known')
  const ready = await app.inject({ url: '/ready' })
  t.equal(ready.statusCode, 503)
  t.same(ready.json(), { status: 'not ready', checks: { database: 'unavailable' } }, 'no internals on the probe either')
  t.ok(Date.now() - started < 2000, 'refused at once, not after a timeout')
  // A live feed connecting meanwhile: a 503 to the upgrade, or, once upgraded, 1013 Try Again Later.
  const refused = new WebSocket(feed)
  refused.on('error', () => {})
  const answer = await new Promise<string>((resolve) => {
    refused.on('unexpected-response', (request, response) => {
      request.destroy()
      resolve(`${String(response.statusCode)} ${String(response.headers['retry-after'])}`)
    })
    refused.on('close', (code) => resolve(String(code)))
  })
  t.ok(['503 5', '1013'].includes(answer), `a live feed connecting meanwhile is told to try again later (${answer})`)
  const refusedStream = await openStream(base, board, { 'x-authentication-token': TOKENS.carol })
  const refusedBody = JSON.parse(await refusedStream.ended) as unknown
  t.equal(refusedStream.res.statusCode, 503, 'a board page\'s live stream opened meanwhile: 503, not 404')
  t.equal(refusedStream.res.headers['retry-after'], '5', 'with Retry-After')
  t.same(refusedBody, { statusCode: 503, error: 'Service Unavailable', message: 'the database is unavailable; retry after 5 s' })
  open.send(JSON.stringify({ type: 'resume', after_seq: 0 }))
  for (let i = 0; i < 100 && !frames.some((f) => f.type === 'error'); i++) await sleep(20)
  t.match(frames.find((f) => f.type === 'error'), { message: /database is unavailable/ }, 'a resume frame meanwhile is answered')
  // Each failed request and each probe meanwhile: one warning for the outage, not one each.
  for (let i = 0; i < 10; i++) {
    t.equal((await as('alice', { url: `/p1/repositories/${REPO}/board` })).statusCode, 503)
    t.equal((await app.inject({ url: '/ready' })).statusCode, 503)
  }
  const warned = log.filter((l) => l.level === 40 && /database/.test(l.msg) && !/webhook/.test(l.msg))
  t.equal(warned.length, 1, `one warning for ${warned.length} requests and probes: ${warned.map((l) => l.msg).join('; ')}`)
  t.match(warned[0], { msg: 'the database is unavailable; requests answer 503 until it is back', alsoUnavailable: 0 })
  await sleep(1500) // the webhook worker looks for work now and then: it must keep trying, not die
  t.same(stream.events.map((e) => e.event), ['ready'], 'the open live stream waits through the outage: no end, no change')

  await proxy.set('up')
  t.equal((await app.inject({ url: '/ready' })).statusCode, 200, 'ready again without a restart')
  t.equal((await as('bob', { method: 'PUT', url: `/p1/repositories/${REPO}/issues/2/estimate`, payload: { estimate: 8 } })).statusCode, 200)
  t.equal((await as('alice', { url: `/p1/repositories/${REPO}/issues/2` })).json().estimate.value, 8)
  t.ok(await waitFor(stream, 'change', 1), 'the live stream tells of the first change after the outage')
  t.notOk(stream.events.some((e) => e.event === 'end'), 'and it never ended')
  const deadline = Date.now() + 10_000
  while (!receiver.received.some((r) => r.type === 'estimate_set') && Date.now() < deadline) await sleep(50)
  t.ok(receiver.received.some((r) => r.type === 'estimate_set'), 'the webhook worker sends again')
  t.same(log.filter((l) => l.level >= 50).map((l) => l.msg), [], 'nothing logged as an error')
  t.ok(log.filter((l) => l.msg === 'webhook outbox unreachable; retrying with backoff').length <= 1, 'the worker warned once')
})

t.test('a hung database: requests and /ready answer 503 within DATABASE_TIMEOUT_MS, the wait for a connection included; all works again after', { skip }, async (t) => {
  const proxy = await new TcpProxy({ host: new URL(PG).hostname, port: Number(new URL(PG).port || 5432) }).start()
  t.teardown(async () => await proxy.close())
  const { app, as } = await serve(t, { url: proxy.url(PG), databaseTimeoutMs: 1000 })
  t.equal((await as('alice', { url: `/p1/repositories/${REPO}/board` })).statusCode, 200)

  await proxy.set('hung')
  // For its first second the instance may still answer reads from the counter it heard (README,
  // "Scale out"): nothing can be acknowledged meanwhile that it did not hear. Then it must ask.
  await sleep(1100)
  const timed = async <T>(work: Promise<T>): Promise<[T, number]> => {
    const started = Date.now()
    const result = await work
    return [result, Date.now() - started]
  }
  // More writes than the pool holds (4): those waiting for a connection spend their one deadline
  // waiting, not a timeout for the wait and then another for each statement.
  const [[read, readMs], [ready, readyMs], ...writes] = await Promise.all([
    timed(as('alice', { url: `/p1/repositories/${REPO}/board` })),
    timed(app.inject({ url: '/ready' })),
    ...[1, 2, 3, 4, 5, 6].map(async (n) => await timed(as('bob', { method: 'PUT', url: `/p1/repositories/${REPO}/issues/${n}/estimate`, payload: { estimate: 2 } })))
  ])
  isUnavailable(t, read, 'a read')
  for (const [write] of writes) isUnavailable(t, write, 'a write')
  t.equal(ready.statusCode, 503, '/ready')
  const answered: Array<[string, number]> = [['read', readMs], ['/ready', readyMs], ...writes.map(([, ms], i): [string, number] => [`write ${i + 1}`, ms])]
  for (const [what, ms] of answered) t.ok(ms >= 900 && ms < 1600, `${what} answered after ${ms} ms (DATABASE_TIMEOUT_MS 1000)`)

  await proxy.set('up')
  let again = await app.inject({ url: '/ready' })
  for (let i = 0; again.statusCode !== 200 && i < 20; i++) {
    await sleep(100)
    again = await app.inject({ url: '/ready' })
  }
  t.equal(again.statusCode, 200, 'ready again')
  t.equal((await as('bob', { method: 'PUT', url: `/p1/repositories/${REPO}/issues/3/estimate`, payload: { estimate: 2 } })).statusCode, 200)
  t.equal((await as('alice', { url: `/p1/repositories/${REPO}/issues/3` })).json().estimate.value, 2)
  const board = await as('alice', { url: `/p1/repositories/${REPO}/board` })
  t.equal(board.statusCode, 200)
})

t.test('a slow database: one DATABASE_TIMEOUT_MS for each use of a connection, its wait for the pool and every statement of a transaction together', { skip }, async (t) => {
  const { schema, drop } = await testSchema(PG)
  const db = postgresKysely({ url: PG, schema, poolMax: 1, timeoutMs: 1000 })
  t.teardown(async () => {
    await db.destroy()
    await drop()
  })
  const nap = sql`SELECT pg_sleep(0.6)`
  await sql`SELECT 1`.execute(db)
  const failure = async (work: Promise<unknown>): Promise<[unknown, number]> => {
    const started = Date.now()
    try {
      await work
      return [undefined, Date.now() - started]
    } catch (err) {
      return [err, Date.now() - started]
    }
  }
  // Two statements of 0.6 s each: each within the timeout, together not.
  const [err, ms] = await failure(db.transaction().execute(async (trx) => {
    await nap.execute(trx)
    await nap.execute(trx)
  }))
  t.ok(isDatabaseUnavailable(err), `the transaction failed as the database being unavailable: ${String(err)}`)
  t.ok(ms >= 900 && ms < 1300, `after ${ms} ms`)
  // The pool's one connection busy for 0.6 s: a query waiting for it has 0.4 s left.
  const [[first], [second, secondMs]] = await Promise.all([failure(nap.execute(db)), failure(nap.execute(db))])
  t.equal(first, undefined, `the first query had its connection at once: ${String(first)}`)
  t.ok(isDatabaseUnavailable(second), `the second, after waiting for the connection, failed: ${String(second)}`)
  t.ok(secondMs >= 900 && secondMs < 1300, `after ${secondMs} ms`)
  t.same((await sql<{ one: number }>`SELECT 1 AS one`.execute(db)).rows, [{ one: 1 }], 'the pool works again')
})
