import type { FastifyInstance } from 'fastify'
import t from 'tap'
import { once } from 'node:events'
import { randomBytes } from 'node:crypto'
import { Writable } from 'node:stream'
import { setTimeout as sleep } from 'node:timers/promises'
import WebSocket from 'ws'
import { buildApp } from '../app.js'
import { ADMIN_TOKEN, REPO, TOKENS, build, testFixture } from './helper.js'
import { ranOnce } from './once.js'
import { postgresAnswers, testSchema } from './pg.js'
import { OwnRedis, noRedisServer } from './redis-server.js'

// Redis going away under running instances: a Redis of the test's own, stopped and started again.
const redisSkip = ranOnce !== false ? ranOnce : noRedisServer
if (redisSkip !== false) t.comment(`skipping the Redis outage tests: ${redisSkip}`)
const PG = process.env.TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test'

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
})

const redisCheck = async (app: FastifyInstance): Promise<string> => (await app.inject({ url: '/ready' })).json().checks.redis

const pgSkip = redisSkip !== false ? redisSkip : await postgresAnswers(PG) ? false : `no PostgreSQL answers at ${PG} (set TEST_DATABASE_URL)`

t.test('chat fan-out pauses while Redis is down and resumes when it is back', { skip: pgSkip }, async (t) => {
  const redis = await OwnRedis.start(t)
  const { schema, drop } = await testSchema(PG)
  const { log, logStream } = logCapture()
  const options = {
    databaseUrl: PG, databaseSchema: schema, databasePoolMax: 3, redisUrl: redis.url, adminToken: ADMIN_TOKEN, documentation: false as const, logLevel: 'info', logStream
  }
  const a = await buildApp(options)
  await a.ready()
  const imported = await a.inject({ method: 'POST', url: '/admin/import', headers: { authorization: `Bearer ${ADMIN_TOKEN}` }, payload: testFixture() })
  t.equal(imported.statusCode, 200)
  const b = await buildApp(options)
  t.teardown(async () => {
    await Promise.all([a.close(), b.close()])
    await drop()
  })
  const address = await b.listen({ host: '127.0.0.1', port: 0 })
  const socket = new WebSocket(`${address.replace('http', 'ws')}/api/v1/ws?access_token=${TOKENS.carol}`)
  t.teardown(() => socket.terminate())
  const texts: string[] = []
  socket.on('message', (raw) => {
    const frame = JSON.parse(String(raw)) as { type: string, data?: { text?: string } }
    if (frame.type === 'message.created') texts.push(String(frame.data?.text))
  })
  await once(socket, 'open')
  const send = async (app: FastifyInstance, message: string) =>
    (await app.inject({ method: 'POST', url: '/api/v1/messages/send', headers: { 'x-authentication-token': TOKENS.dave }, payload: { message } })).statusCode

  t.equal(await send(a, 'before'), 201)
  await until('"before" on B', () => texts.includes('before'))
  await redis.stop()
  await until('both instances to notice', async () => await redisCheck(a) === 'degraded' && await redisCheck(b) === 'degraded')
  t.equal(await send(a, 'during'), 201, 'messages are still taken')
  await redis.restart()
  await until('both instances to reconnect', async () => await redisCheck(a) === 'ok' && await redisCheck(b) === 'ok')
  await sleep(200) // the subscriber resubscribes once connected
  t.equal(await send(a, 'after'), 201)
  await until('"after" on B', () => texts.includes('after'))
  t.notOk(texts.includes('during'), 'what was sent meanwhile reaches B\'s sockets by `resume` only')
  t.same(log.filter((l) => l.level >= 50), [], 'nothing logged as an error')
  t.equal(log.filter((l) => l.msg === 'chat fan-out failed').length, 0, 'no warning per message while Redis is known to be down')
})
