import t, { type Test } from 'tap'
import pg from 'pg'
import { spawn, type ChildProcess } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { join } from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import { fileURLToPath } from 'node:url'
import { formReceiver } from './receiver.js'
import { ADMIN_TOKEN, OTHER_REPO, P, TOKENS, testFixture, TS_LOADER } from './helper.js'
import { postgresAnswers } from './pg.js'
import { ranOnce } from './once.js'
import { OwnRedis, freePort, noRedisServer } from './redis-server.js'

// Two server processes on one PostgreSQL schema and a Redis of the test's own, under a mixed load
// of reads, moves and estimates (each sending a webhook), while PostgreSQL's backends are
// terminated (as a restart does) and Redis is stopped and started again. Afterwards every write
// that was acknowledged is there, with its webhook delivered, and neither process has exited.
const root = fileURLToPath(new URL('..', import.meta.url))
const PG = process.env.TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test'
const skip = ranOnce !== false ? ranOnce : noRedisServer !== false ? noRedisServer : await postgresAnswers(PG) ? false : `no PostgreSQL answers at ${PG} (set TEST_DATABASE_URL)`
if (skip !== false) t.comment(`skipping the outage-under-load test: ${skip}`)

/** The real server in a child process; resolves with its address once it answers. */
async function serve (t: Test, env: Record<string, string>): Promise<{ child: ChildProcess, address: string, log: string[] }> {
  const port = await freePort()
  const child = spawn(process.execPath, ['--import', TS_LOADER, join(root, 'server.ts')], {
    cwd: root, env: { ...process.env, PORT: String(port), LOG_LEVEL: 'warn', DEMO: 'false', ...env }, stdio: ['ignore', 'pipe', 'pipe']
  })
  t.teardown(() => { child.kill('SIGKILL') })
  const log: string[] = []
  let partial = ''
  child.stdout!.on('data', (d) => {
    const lines = (partial + String(d)).split('\n')
    partial = lines.pop()!
    log.push(...lines)
  })
  child.stderr!.on('data', (d) => log.push(String(d)))
  const address = `http://127.0.0.1:${port}`
  // Loading the TypeScript takes seconds (much longer on a busy machine).
  const deadline = Date.now() + 120_000
  for (;;) {
    if (child.exitCode !== null) throw new Error(`exited ${child.exitCode}: ${log.join('\n')}`)
    if (Date.now() > deadline) throw new Error(`not answering: ${log.join('\n')}`)
    try {
      if ((await fetch(`${address}/health`)).ok) return { child, address, log }
    } catch {}
    await sleep(100)
  }
}

async function admin<T> (work: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: PG })
  await client.connect()
  try {
    return await work(client)
  } finally {
    await client.end()
  }
}

/** A database of the test's own (the server has no variable for a schema), dropped after the test. */
async function testDatabase (t: Test): Promise<{ name: string, url: string }> {
  const name = `t_${randomBytes(6).toString('hex')}`
  await admin(async (client) => await client.query(`CREATE DATABASE ${name}`))
  t.teardown(async () => await admin(async (client) => await client.query(`DROP DATABASE ${name} WITH (FORCE)`)))
  const url = new URL(PG)
  url.pathname = `/${name}`
  return { name, url: url.href }
}

/** Terminates the database's backends as a PostgreSQL restart does; how many there were. */
async function terminateBackends (database: string): Promise<number> {
  return await admin(async (client) => {
    const { rows } = await client.query('SELECT pg_terminate_backend(pid) AS done FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()', [database])
    return rows.filter((r: { done: boolean }) => r.done).length
  })
}

t.test('two instances under load while PostgreSQL restarts and Redis goes away: no exit, no acknowledged write lost', { skip, timeout: 240_000 }, async (t) => {
  const database = await testDatabase(t)
  const redis = await OwnRedis.start(t)
  const receiver = await formReceiver(t)
  const env = {
    DATABASE_URL: database.url,
    DATABASE_POOL_MAX: '4',
    DATABASE_TIMEOUT_MS: '2000',
    REDIS_URL: redis.url,
    ADMIN_TOKEN,
    RATE_LIMIT_MAX: '100000',
    WEBHOOK_ALLOW_PRIVATE: 'true'
  }
  const begun = Date.now()
  const [a, b] = await Promise.all([serve(t, env), serve(t, env)])
  t.comment(`both instances answer after ${Date.now() - begun} ms`)
  const exits: string[] = []
  for (const [name, { child }] of [['A', a], ['B', b]] as const) child.on('exit', (code, signal) => exits.push(`${name} exited (${String(code ?? signal)})`))

  const request = async (address: string, login: keyof typeof TOKENS | 'admin', method: string, path: string, body?: object) => {
    const headers: Record<string, string> = login === 'admin' ? { authorization: `Bearer ${ADMIN_TOKEN}` } : { 'x-authentication-token': TOKENS[login] }
    if (body !== undefined) headers['content-type'] = 'application/json'
    const payload = body === undefined ? undefined : JSON.stringify(body)
    const res = await fetch(address + path, { method, headers, body: payload, signal: AbortSignal.timeout(10_000) })
    const text = await res.text()
    return { status: res.status, retryAfter: res.headers.get('retry-after'), json: (text === '' ? {} : JSON.parse(text)) as Record<string, any> }
  }
  const fixture = testFixture()
  const ISSUES = Array.from({ length: 8 }, (_, i) => 100 + i)
  fixture.issues.push(...ISSUES.map((n) => ({ repo_id: OTHER_REPO, number: n, title: `Load ${n}` })))
  t.equal((await request(a.address, 'admin', 'POST', '/admin/import', fixture)).status, 200)
  const hook = await request(a.address, 'alice', 'POST', `/p1/repositories/${OTHER_REPO}/webhooks`, { url: receiver.url })
  t.equal(hook.status, 201)

  const statuses = new Map<string, number>()
  const unexpected: string[] = []
  const count = (res: { status: number, retryAfter: string | null, json: Record<string, any> }, what: string): void => {
    statuses.set(String(res.status), (statuses.get(String(res.status)) ?? 0) + 1)
    if (res.status === 503 && res.retryAfter === '5' && res.json.error === 'Service Unavailable') return
    if (res.status !== 200) unexpected.push(`${what}: ${res.status} ${JSON.stringify(res.json)}`)
  }
  // Per issue: what its last acknowledged move and estimate set, and what later unacknowledged ones tried.
  const moves = new Map(ISSUES.map((n) => [n, { acknowledged: P.todo as string, maybe: [] as string[] }]))
  const estimates = new Map(ISSUES.map((n) => [n, { acknowledged: [] as number[], maybe: [] as number[] }]))
  const load = { running: true }
  const worker = async (issue: number, i: number) => {
    const pipelines = [P.doing, P.done, P.todo]
    for (let step = 1; load.running; step++) {
      const address = (i + step) % 2 === 0 ? a.address : b.address
      try {
        const to = pipelines[step % 3]
        const move = await request(address, 'alice', 'POST', `/p1/repositories/${OTHER_REPO}/issues/${issue}/moves`, { pipeline_id: to, position: 'top' })
        count(move, `move of ${issue}`)
        const m = moves.get(issue)!
        if (move.status === 200) Object.assign(m, { acknowledged: to, maybe: [] })
        else m.maybe.push(to)
        const estimate = await request(address, 'alice', 'PUT', `/p1/repositories/${OTHER_REPO}/issues/${issue}/estimate`, { estimate: step })
        count(estimate, `estimate of ${issue}`)
        if (estimate.status === 200) estimates.get(issue)!.acknowledged.push(step)
        else estimates.get(issue)!.maybe.push(step)
        count(await request(address, 'bob', 'GET', `/p1/repositories/${OTHER_REPO}/board`), 'board read')
      } catch (err) {
        unexpected.push(`${issue}: ${(err as Error).message}`) // no answer at all: a process gone or hung
      }
    }
  }
  const running = Promise.all(ISSUES.map(async (n, i) => await worker(n, i)))
  let terminated = 0
  const events: Array<[number, () => Promise<unknown>]> = [
    [1000, async () => { terminated += await terminateBackends(database.name) }],
    [1800, async () => { terminated += await terminateBackends(database.name) }],
    [2500, async () => await redis.stop()],
    [3500, async () => { terminated += await terminateBackends(database.name) }],
    [5000, async () => await redis.restart()],
    [6000, async () => { terminated += await terminateBackends(database.name) }],
    [7500, async () => {}]
  ]
  const started = Date.now()
  for (const [at, event] of events) {
    await sleep(Math.max(0, started + at - Date.now()))
    await event()
  }
  load.running = false
  await running
  t.comment(`answers: ${JSON.stringify(Object.fromEntries(statuses))}; backends terminated: ${terminated}`)
  t.ok(terminated >= 4, 'backends were terminated')
  t.same(unexpected, [], 'every answer a 200 or a 503 with Retry-After')
  t.ok((statuses.get('200') ?? 0) > 50, 'mostly served')

  // Both back in service without a restart: ready, Redis shared again.
  for (const { address } of [a, b]) {
    let ready = await request(address, 'carol', 'GET', '/ready')
    for (let i = 0; i < 50 && !(ready.status === 200 && ready.json.checks.redis === 'ok'); i++) {
      await sleep(100)
      ready = await request(address, 'carol', 'GET', '/ready')
    }
    t.same([ready.status, ready.json], [200, { status: 'ready', checks: { database: 'ok', redis: 'ok' } }], `${address} ready`)
  }

  const board = (await request(b.address, 'alice', 'GET', `/p1/repositories/${OTHER_REPO}/board`)).json as { pipelines: Array<{ id: string, issues: Array<{ issue_number: number, estimate?: { value: number } }> }> }
  for (const issue of ISSUES) {
    const m = moves.get(issue)!
    const e = estimates.get(issue)!
    const pipeline = board.pipelines.find((p) => p.issues.some((x) => x.issue_number === issue))
    const value = pipeline?.issues.find((x) => x.issue_number === issue)?.estimate?.value
    const lastAcknowledged = e.acknowledged.at(-1)
    const possible = [lastAcknowledged, ...e.maybe.filter((v) => lastAcknowledged === undefined || v > lastAcknowledged)]
    t.ok(pipeline !== undefined && [m.acknowledged, ...m.maybe].includes(pipeline.id), `issue ${issue}: the acknowledged move holds (${String(pipeline?.id)})`)
    t.ok(possible.includes(value), `issue ${issue}: estimate ${String(value)}, last acknowledged ${String(lastAcknowledged)}`)
  }
  // Every acknowledged estimate was written with its webhook delivery, which is sent once PostgreSQL answers.
  const expected = ISSUES.flatMap((n) => estimates.get(n)!.acknowledged.map((v) => `${n}:${v}`))
  const sent = () => new Set(receiver.received.filter((f) => f.type === 'estimate_set').map((f) => `${f.issue_number}:${f.estimate}`))
  const deadline = Date.now() + 20_000
  while (expected.some((k) => !sent().has(k)) && Date.now() < deadline) await sleep(100)
  t.same(expected.filter((k) => !sent().has(k)), [], `all ${expected.length} acknowledged estimates were delivered`)
  t.comment(`checked after ${Date.now() - begun} ms`)

  t.same(exits, [], 'neither process exited')
  for (const [name, { log }] of [['A', a], ['B', b]] as const) {
    const errors = log.filter((line) => /"level":(50|60)/.test(line))
    t.same(errors, [], `${name} logged no error`)
    const redisWarnings = log.filter((line) => line.includes('Redis is unreachable'))
    t.equal(redisWarnings.length, 1, `${name} warned once that Redis went away`)
  }
})
