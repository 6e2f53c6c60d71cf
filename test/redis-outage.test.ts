import type { FastifyInstance } from 'fastify'
import t from 'tap'
import { once } from 'node:events'
import { randomBytes } from 'node:crypto'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Writable } from 'node:stream'
import { setTimeout as sleep } from 'node:timers/promises'
import WebSocket from 'ws'
import type { Test } from 'tap'
import { buildApp, type BuildOptions } from '../app.js'
import { ADMIN_TOKEN, REPO, TOKENS, build, testFixture } from './helper.js'
import { ranOnce } from './once.js'
import { TEST_DATABASE_URL, testSchema } from './pg.js'
import { OwnRedis, noRedisServer } from './redis-server.js'

// Redis going away under running instances: a Redis of the test's own, stopped and started again.
const redisSkip = ranOnce !== false ? ranOnce : noRedisServer
if (redisSkip !== false) t.comment(`skipping the Redis outage tests: ${redisSkip}`)

interface Logged { level: number, msg: string }
function logCapture (): { log: Logged[], logStream: Writable } {
  const log: Logged[] = []
  return { log, logStream: new Writable({ write (line, _encoding, done) { log.push(JSON.parse(String(line)) as Logged); done() } }) }
}

async function until (what: string, check: () => boolean | Promise<boolean>, ms = 8000): Promise<void> {
  const deadline = Date.now() + ms
  while (!await check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`)
    await sleep(20)
  }
}

t.test('Redis down: still ready ("degraded"), per-instance limits, one warning each way; shared again when back', { skip: redisSkip }, async (t) => {
  const redis = await OwnRedis.start(t)
  const { log, logStream } = logCapture()
  const app = await build(t, { redisUrl: redis.url, redisPrefix: `t:${randomBytes(4).toString('hex')}:`, rateLimit: { max: 3, timeWindow: 60_000 }, logLevel: 'info', logStream })
  const url = `/p1/repositories/${REPO}/issues/1`
  const ready = async (): Promise<[number, { checks: Record<string, string> }]> => {
    const res = await app.inject({ url: '/ready' })
    return [res.statusCode, res.json()]
  }
  t.same(await ready(), [200, { status: 'ready', checks: { database: 'ok', redis: 'ok' } }])
  t.equal((await app.as('carol', { url })).headers['x-ratelimit-used'], '1')

  await redis.stop()
  await until('the instance to notice', async () => (await ready())[1].checks.redis === 'degraded')
  t.same(await ready(), [200, { status: 'ready', checks: { database: 'ok', redis: 'degraded' } }], 'still ready: a load balancer keeps sending traffic')
  const used: string[] = []
  for (let i = 0; i < 4; i++) {
    const res = await app.as('carol', { url })
    used.push(`${res.statusCode}:${String(res.headers['x-ratelimit-used'])}`)
  }
  t.same(used, ['200:1', '200:2', '200:3', '403:4'], 'the limit holds, in this instance\'s own windows')
  await sleep(2500) // ioredis tries to reconnect meanwhile, failing each time
  for (let i = 0; i < 20; i++) await app.as('alice', { url })
  const warnings = () => log.filter((l) => l.level >= 40).map((l) => l.msg)
  t.same(warnings(), ['Redis is unreachable: rate limits are per instance and chat fan-out pauses until it is back'], 'one warning, not one per command or reconnection')

  await redis.restart()
  await until('the instance to reconnect', async () => (await ready())[1].checks.redis === 'ok')
  t.same(await ready(), [200, { status: 'ready', checks: { database: 'ok', redis: 'ok' } }])
  t.equal((await app.as('carol', { url })).headers['x-ratelimit-used'], '1', 'counted in Redis again (a new Redis: a new window)')
  t.same(warnings(), [
    'Redis is unreachable: rate limits are per instance and chat fan-out pauses until it is back',
    'Redis is back: shared rate limits and chat fan-out resumed'
  ], 'and one when it is back')
  t.same(log.filter((l) => l.level >= 50), [], 'nothing logged as an error')
  t.equal(log.filter((l) => l.msg === 'chat fan-out failed').length, 0, 'no warning per message while Redis is known to be down')
})

const redisCheck = async (app: FastifyInstance): Promise<string> => (await app.inject({ url: '/ready' })).json().checks.redis

/** Options that put two instances on one database: the PostgreSQL the suite runs on (a schema of its own), else a SQLite file. */
async function sharedDatabase (t: Test): Promise<BuildOptions> {
  if (TEST_DATABASE_URL !== undefined) {
    const { schema, drop } = await testSchema(TEST_DATABASE_URL)
    t.teardown(drop)
    return { databaseUrl: TEST_DATABASE_URL, databaseSchema: schema, databasePoolMax: 3 }
  }
  const dir = mkdtempSync(join(tmpdir(), 'redis-outage-'))
  t.teardown(() => rmSync(dir, { recursive: true, force: true }))
  return { database: join(dir, 'planning.db') }
}

t.test('chat during a Redis outage: open sockets end with every message, in order, once', { skip: redisSkip }, async (t) => {
  const redis = await OwnRedis.start(t)
  const { log, logStream } = logCapture()
  const options = {
    ...await sharedDatabase(t), redisUrl: redis.url, adminToken: ADMIN_TOKEN, documentation: false as const, rateLimit: false as const, logLevel: 'info', logStream
  }
  const a = await buildApp(options)
  await a.ready()
  const imported = await a.inject({ method: 'POST', url: '/admin/import', headers: { authorization: `Bearer ${ADMIN_TOKEN}` }, payload: testFixture() })
  t.equal(imported.statusCode, 200)
  const b = await buildApp(options)
  t.teardown(async () => await Promise.all([a.close(), b.close()]))
  const feeds = await Promise.all([a, b].map(async (app) => {
    const address = await app.listen({ host: '127.0.0.1', port: 0 })
    const socket = new WebSocket(`${address.replace('http', 'ws')}/api/v1/ws?access_token=${TOKENS.carol}`)
    t.teardown(() => socket.terminate())
    const got: Array<{ seq: number, text: string }> = []
    socket.on('message', (raw) => {
      const frame = JSON.parse(String(raw)) as { type: string, seq: number, data?: { text?: string } }
      if (frame.type === 'message.created') got.push({ seq: frame.seq, text: String(frame.data?.text) })
    })
    await once(socket, 'open')
    return got
  }))
  const sent: string[] = []
  const send = async (app: FastifyInstance, message: string) => {
    const res = await app.inject({ method: 'POST', url: '/api/v1/messages/send', headers: { 'x-authentication-token': TOKENS.dave }, payload: { message } })
    t.equal(res.statusCode, 201)
    sent.push(message)
  }
  const everyone = (feed: Array<{ text: string }>) => sent.every((text) => feed.some((m) => m.text === text))

  await send(a, 'before')
  await until('"before" on both', () => feeds.every(everyone))
  await redis.stop()
  await until('both instances to notice', async () => await redisCheck(a) === 'degraded' && await redisCheck(b) === 'degraded')
  for (let i = 0; i < 6; i++) await send(i % 3 === 2 ? b : a, `during ${i}`)
  await redis.restart()
  await until('both instances to reconnect', async () => await redisCheck(a) === 'ok' && await redisCheck(b) === 'ok')
  await until('every message on both sockets, without a resume', () => feeds.every(everyone))
  await send(b, 'after')
  await until('"after" on both', () => feeds.every(everyone))
  for (const [name, feed] of [['A', feeds[0]], ['B', feeds[1]]] as const) {
    t.same(feed.map((m) => m.text), sent, `the socket on ${name} has every message once, in the order sent`)
    t.ok(feed.every((m, i) => i === 0 || m.seq > feed[i - 1].seq), `by growing seq on ${name}`)
  }
  t.same(log.filter((l) => l.level >= 50), [], 'nothing logged as an error')
  t.equal(log.filter((l) => l.msg === 'chat fan-out failed').length, 0, 'no warning per message while Redis is known to be down')
})
