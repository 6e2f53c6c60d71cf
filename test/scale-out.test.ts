import t, { type Test } from 'tap'
import { Redis } from 'ioredis'
import { once } from 'node:events'
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { createHmac, randomBytes } from 'node:crypto'
import WebSocket from 'ws'
import { buildApp } from '../app.js'
import { ADMIN_TOKEN, TOKENS, REPO, OTHER_REPO, P, testFixture } from './helper.js'
import { postgresAnswers, testSchema } from './pg.js'
import { ranOnce } from './once.js'

// Two instances on one PostgreSQL schema and one Redis, as behind a load balancer.
const PG = process.env.TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test'
// Index 15, not the default 0 a developer's own data is likely in; each pair's keys under a prefix of its own, deleted after.
const REDIS = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379/15'

async function redisAnswers (url: string): Promise<boolean> {
  const redis = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null, connectTimeout: 2000 })
  redis.on('error', () => {})
  try {
    await redis.connect()
    await redis.ping()
    return true
  } catch {
    return false
  } finally {
    redis.disconnect()
  }
}

const why = ranOnce !== false
  ? ranOnce
  : !await postgresAnswers(PG)
      ? `no PostgreSQL answers at ${PG} (set TEST_DATABASE_URL)`
      : !await redisAnswers(REDIS) ? `no Redis answers at ${REDIS} (set TEST_REDIS_URL)` : undefined
if (why !== undefined) t.comment(`skipping the multi-instance tests: ${why}`)
else t.comment(`multi-instance tests on Redis ${REDIS.replace(/\/\/[^@/]*@/, '//')} (keys under t:<random>:, deleted after); TEST_REDIS_URL points elsewhere`)

/** Deletes the keys under a test's prefix (and only those). */
async function dropKeys (prefix: string): Promise<void> {
  const redis = new Redis(REDIS, { maxRetriesPerRequest: 1 })
  try {
    let cursor = '0'
    do {
      const [next, keys] = await redis.scan(cursor, 'MATCH', `${prefix}*`, 'COUNT', 500)
      if (keys.length > 0) await redis.del(...keys)
      cursor = next
    } while (cursor !== '0')
  } finally {
    redis.disconnect()
  }
}

type Options = Parameters<typeof buildApp>[0]

/** Instances A and B sharing a fresh schema and a Redis key prefix; the test fixture loaded once. */
async function pair (t: Test, options: Options = {}, fixture: unknown = testFixture()) {
  const { schema, drop } = await testSchema(PG)
  const shared = {
    databaseUrl: PG,
    databaseSchema: schema,
    databasePoolMax: 5,
    redisUrl: REDIS,
    redisPrefix: `t:${randomBytes(4).toString('hex')}:`,
    adminToken: ADMIN_TOKEN,
    documentation: false as const,
    rateLimit: { max: 10_000, timeWindow: 60_000 },
    ...options
  }
  const a = await buildApp(shared)
  await a.ready()
  const imported = await a.inject({ method: 'POST', url: '/admin/import', headers: { authorization: `Bearer ${ADMIN_TOKEN}` }, payload: fixture as object })
  if (imported.statusCode !== 200) throw new Error(imported.body)
  const b = await buildApp(shared)
  await b.ready()
  t.teardown(async () => {
    await Promise.all([a.close(), b.close()])
    await drop()
    await dropKeys(shared.redisPrefix)
  })
  const as = (app: typeof a) => async (login: keyof typeof TOKENS, opts: { method?: 'GET' | 'POST' | 'PUT' | 'PATCH', url: string, payload?: object }) =>
    await app.inject({ ...opts, headers: { 'x-authentication-token': TOKENS[login] } })
  return { a, b, onA: as(a), onB: as(b) }
}

t.test('one rate-limit budget per token across both instances', { skip: why }, async (t) => {
  const { onA, onB } = await pair(t, { rateLimit: { max: 10, timeWindow: 60_000 } })
  const url = `/p1/repositories/${REPO}/issues/1`
  const used: string[] = []
  for (let i = 0; i < 5; i++) {
    used.push(String((await onA('carol', { url })).headers['x-ratelimit-used']))
    used.push(String((await onB('carol', { url })).headers['x-ratelimit-used']))
  }
  t.same(used, ['1', '2', '3', '4', '5', '6', '7', '8', '9', '10'], 'one count, whichever instance answers')
  t.equal((await onA('carol', { url })).statusCode, 403)
  t.equal((await onB('carol', { url })).statusCode, 403)
  t.equal((await onB('bob', { url })).statusCode, 200, 'another token has its own budget')
})

t.test('a 304 gives its request back to the shared window', { skip: why }, async (t) => {
  const { a, b, onA } = await pair(t, { rateLimit: { max: 10, timeWindow: 60_000 } })
  const url = `/p1/repositories/${REPO}/board`
  const first = await onA('carol', { url })
  t.equal(first.headers['x-ratelimit-used'], '1')
  for (const app of [b, a, b]) {
    const res = await app.inject({ url, headers: { 'x-authentication-token': TOKENS.carol, 'if-none-match': String(first.headers.etag) } })
    t.equal(res.statusCode, 304, 'both instances give the same tag')
    t.equal(res.headers['x-ratelimit-used'], '1')
  }
  t.equal((await onA('carol', { url })).headers['x-ratelimit-used'], '2', 'the refunds reached Redis')
})

t.test('writes through one instance are read through the other at once', { skip: why }, async (t) => {
  const { onA, onB } = await pair(t)
  const board = async () => (await onB('alice', { url: `/p1/repositories/${REPO}/board` })).json()
  t.same((await board()).pipelines[0].issues[0], { issue_number: 1, is_epic: false }, 'B has built and cached the board')
  t.equal((await onA('bob', { method: 'PUT', url: `/p1/repositories/${REPO}/issues/1/estimate`, payload: { estimate: 5 } })).statusCode, 200)
  t.same((await board()).pipelines[0].issues[0].estimate, { value: 5 }, 'B sees the estimate made through A')
  t.equal((await onB('bob', { method: 'POST', url: `/p1/repositories/${REPO}/issues/1/moves`, payload: { pipeline_id: P.done, position: 'top' } })).statusCode, 200)
  const data = (await onA('alice', { url: `/p1/repositories/${REPO}/issues/1` })).json()
  t.equal(data.pipeline.pipeline_id, P.done, 'A sees the move made through B')
})

t.test('token and permission changes reach the other instance at once', { skip: why }, async (t) => {
  const { a, onB } = await pair(t)
  const admin = async (method: 'POST' | 'PUT', url: string, payload?: object) =>
    await a.inject({ method, url, payload, headers: { authorization: `Bearer ${ADMIN_TOKEN}` } })
  const url = `/p1/repositories/${REPO}/issues/1`
  t.equal((await onB('carol', { url })).statusCode, 200, 'B has cached carol\'s token and access')
  t.equal((await admin('PUT', `/admin/repositories/${REPO}/permissions/carol`, { permission: 'none' })).statusCode, 200)
  t.equal((await onB('carol', { url })).statusCode, 404, 'the permission removed through A holds on B')
  t.equal((await admin('POST', '/admin/users/bob/token')).statusCode, 200)
  t.equal((await onB('bob', { url })).statusCode, 401, 'the old token stops working on B')
})

t.test('each webhook attempt is made once, with both workers running', { skip: why }, async (t) => {
  const receipts = new Map<string, number>()
  const receiver = createServer((req, res) => {
    const id = String(req.headers['x-planning-delivery'])
    const seen = (receipts.get(id) ?? 0) + 1
    receipts.set(id, seen)
    req.resume()
    req.on('end', () => { res.statusCode = seen === 1 ? 500 : 200; res.end() })
  })
  receiver.listen(0, '127.0.0.1')
  await once(receiver, 'listening')
  t.teardown(() => { receiver.closeAllConnections(); receiver.close() })
  const webhooks = { allowPrivate: true, retryBaseMs: 50, retryMaxMs: 200, timeoutMs: 2000, maxAttempts: 5 }
  const { onA, onB } = await pair(t, { webhooks })
  const hook = await onA('alice', { method: 'POST', url: `/p1/repositories/${REPO}/webhooks`, payload: { url: `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook` } })
  t.equal(hook.statusCode, 201)
  for (let v = 1; v <= 10; v++) await (v % 2 === 0 ? onA : onB)('bob', { method: 'PUT', url: `/p1/repositories/${REPO}/issues/2/estimate`, payload: { estimate: v } })
  const deadline = Date.now() + 15_000
  while ([...receipts.values()].filter((n) => n >= 2).length < 10 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 50))
  await new Promise((resolve) => setTimeout(resolve, 500))
  t.equal(receipts.size, 10, 'ten deliveries')
  t.same([...receipts.values()], Array(10).fill(2), 'each failed once, then was retried once: no attempt twice')
})

t.test('a chat message sent through A reaches a socket on B; resume works on either', { skip: why }, async (t) => {
  const { a, b } = await pair(t)
  const addressB = await b.listen({ host: '127.0.0.1', port: 0 })
  const socket = new WebSocket(`${addressB.replace('http', 'ws')}/api/v1/ws?access_token=${TOKENS.carol}`)
  t.teardown(() => socket.terminate())
  const frames: Array<Record<string, unknown>> = []
  socket.on('message', (raw) => frames.push(JSON.parse(String(raw)) as Record<string, unknown>))
  await once(socket, 'open')
  const waitFor = async (pred: (f: Record<string, unknown>) => boolean) => {
    const deadline = Date.now() + 5000
    while (!frames.some(pred)) {
      if (Date.now() > deadline) throw new Error(`no such frame in ${JSON.stringify(frames)}`)
      await new Promise((resolve) => setTimeout(resolve, 20))
    }
    return frames.find(pred)!
  }
  const welcome = await waitFor((f) => f.type === 'welcome')
  const sent = await a.inject({ method: 'POST', url: '/api/v1/messages/send', headers: { 'x-authentication-token': TOKENS.dave }, payload: { message: 'hello from A' } })
  t.equal(sent.statusCode, 201)
  const created = await waitFor((f) => f.type === 'message.created')
  t.match(created, { seq: (welcome.seq as number) + 1, data: { text: 'hello from A' } })
  socket.send(JSON.stringify({ type: 'resume', after_seq: welcome.seq }))
  await new Promise((resolve) => setTimeout(resolve, 300))
  t.ok(frames.filter((f) => f.type === 'message.created').length >= 1, 'resume on B replays what A wrote')
})

t.test('200 concurrent moves split over both instances keep one consistent order', { skip: why }, async (t) => {
  const fixture = testFixture()
  fixture.issues.push(...Array.from({ length: 200 }, (_, i) => ({ repo_id: OTHER_REPO, number: 100 + i, title: `Load ${i}` })))
  // Two hundred moves queue for one pipeline's lock: on a busy machine the last wait longer than the default 5 s.
  const { onA, onB } = await pair(t, { databaseTimeoutMs: 60_000 }, fixture)
  const moves = Array.from({ length: 200 }, (_, i) => ({ number: 100 + i, position: i % 3 === 0 ? 'bottom' : 'top' }))
  const results = await Promise.all(moves.map(async (m, i) => await (i % 2 === 0 ? onA : onB)('alice', {
    method: 'POST', url: `/p1/repositories/${OTHER_REPO}/issues/${m.number}/moves`, payload: { pipeline_id: P.doing, position: m.position }
  })))
  t.same(results.map((r) => r.statusCode).filter((s) => s !== 200), [], 'every move answered 200')
  // The model: replay the moves in the order the database applied them (the order of their events).
  const applied: Array<{ number: number, at: string }> = []
  for (const m of moves) {
    const events = (await onA('alice', { url: `/p1/repositories/${OTHER_REPO}/issues/${m.number}/events` })).json() as Array<{ created_at: string }>
    applied.push({ number: m.number, at: events[0].created_at })
  }
  const board = (await onB('alice', { url: `/p1/repositories/${OTHER_REPO}/board` })).json() as { pipelines: Array<{ id: string, issues: Array<{ issue_number: number, position?: number }> }> }
  const doing = board.pipelines.find((p) => p.id === P.doing)!.issues
  t.equal(doing.length, 200, 'every issue once')
  const positions = doing.map((i) => i.position!)
  t.same(positions, [...positions].sort((x, y) => x - y), 'positions increase down the column')
  t.equal(new Set(positions).size, 200, 'no two issues share a position')
  const tops = doing.filter((i) => moves.find((m) => m.number === i.issue_number)!.position === 'top')
  const bottoms = doing.filter((i) => moves.find((m) => m.number === i.issue_number)!.position === 'bottom')
  t.same(doing.map((i) => i.issue_number), [...tops, ...bottoms].map((i) => i.issue_number), 'every top move above every bottom move')
  const at = (n: number) => applied.find((x) => x.number === n)!.at
  const nonIncreasing = (xs: string[]) => xs.every((x, i) => i === 0 || xs[i - 1] >= x)
  t.ok(nonIncreasing(tops.map((i) => at(i.issue_number))), 'tops: the later move stands higher')
  t.ok(nonIncreasing(bottoms.map((i) => at(i.issue_number)).reverse()), 'bottoms: the later move stands lower')
})

t.test('dependencies that together would close a cycle: exactly one of each pair is made', { skip: why }, async (t) => {
  const { onA, onB } = await pair(t)
  const ref = (n: number) => ({ repo_id: REPO, issue_number: n })
  const pairs = [[1, 2], [3, 4], [5, 6]]
  for (let round = 0; round < 3; round++) {
    const outcomes = await Promise.all(pairs.flatMap(([x, y]) => [
      onA('alice', { method: 'POST', url: '/p1/dependencies', payload: { blocking: ref(x), blocked: ref(y) } }),
      onB('alice', { method: 'POST', url: '/p1/dependencies', payload: { blocking: ref(y), blocked: ref(x) } })
    ]))
    for (let i = 0; i < pairs.length; i++) {
      const codes = [outcomes[2 * i].statusCode, outcomes[2 * i + 1].statusCode].sort()
      t.same(codes, [200, 400], `round ${round}, pair ${pairs[i].join('/')}: one made (or kept), the reverse refused`)
    }
  }
  const deps = (await onB('alice', { url: `/p1/repositories/${REPO}/dependencies` })).json().dependencies
  t.equal(deps.length, 3, 'one edge per pair, no cycle')
})

t.test('one issue\'s pipeline labels written through both instances: one write at a time, the last move\'s label last', { skip: why }, async (t) => {
  const labels = new Set<string>()
  let inFlight = 0
  let mostInFlight = 0
  const server = createServer((req, res) => {
    let body = ''
    req.on('data', (d) => { body += String(d) })
    req.on('end', () => {
      res.setHeader('content-type', 'application/json')
      if (req.url === '/user') return res.end(JSON.stringify({ id: 7, login: 'planning-bot' }))
      inFlight++
      mostInFlight = Math.max(mostInFlight, inFlight)
      setTimeout(() => {
        inFlight--
        const removed = /\/labels\/(.+)$/.exec(req.url!)
        if (req.method === 'DELETE' && removed !== null) labels.delete(decodeURIComponent(removed[1]))
        if (req.method === 'POST') for (const name of (JSON.parse(body) as { labels: string[] }).labels) labels.add(name)
        res.end('[]')
      }, 15)
    })
  })
  server.listen(0, '127.0.0.1')
  await once(server, 'listening')
  t.teardown(() => { server.closeAllConnections(); server.close() })
  const hostUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  const { a, b, onA, onB } = await pair(t, { secretKey: randomBytes(32).toString('base64'), hosts: { allowPrivate: true }, sync: { pollMs: 20, retryBaseMs: 20 } })
  const admin = { authorization: `Bearer ${ADMIN_TOKEN}` }
  const made = await a.inject({ method: 'POST', url: '/admin/connections', headers: admin, payload: { kind: 'github', secret: 'a-webhook-secret', api_url: hostUrl, token: 'ghp_writer' } })
  t.equal(made.statusCode, 201, made.body)
  const connection = made.json().id as string
  const payload = JSON.stringify({
    action: 'opened',
    repository: { id: 6000, name: 'svc', full_name: 'team/svc', owner: { login: 'team', id: 70 }, html_url: 'https://github.com/team/svc', updated_at: '2026-01-01T00:00:00Z' },
    issue: { number: 1, title: 'Shared', state: 'open', updated_at: '2026-01-02T00:00:00Z', labels: [], assignees: [] },
    sender: { id: 42, login: 'someone' }
  })
  const signature = `sha256=${createHmac('sha256', 'a-webhook-secret').update(payload).digest('hex')}`
  const delivered = await b.inject({ method: 'POST', url: `/integrations/${connection}/webhook`, headers: { 'content-type': 'application/json', 'x-github-event': 'issues', 'x-github-delivery': 'd-1', 'x-hub-signature-256': signature }, payload })
  t.equal(delivered.statusCode, 200, delivered.body)
  const ws = (await a.inject({ method: 'POST', url: '/admin/workspaces', headers: admin, payload: { name: 'Shared', repositories: [6000], pipelines: ['Inbox', 'Doing', 'Review', 'Done'] } })).json()
  await a.inject({ method: 'PUT', url: '/admin/repositories/6000/permissions/alice', headers: admin, payload: { permission: 'admin' } })
  const lanes = (ws.pipelines as Array<{ id: string }>).slice(1).map((p) => p.id)
  for (const [i, pipeline] of lanes.entries()) {
    const mapped = await onA('alice', { method: 'PATCH', url: `/p2/workspaces/${ws.id as string}/pipelines/${pipeline}`, payload: { host_label: `status ${i}` } })
    t.equal(mapped.statusCode, 204, mapped.body)
  }
  for (let i = 0; i < 20; i++) {
    const moved = await (i % 2 === 0 ? onA : onB)('alice', { method: 'POST', url: '/p1/repositories/6000/issues/1/moves', payload: { pipeline_id: lanes[i % 3], position: 'top' } })
    t.equal(moved.statusCode, 200)
    await new Promise((resolve) => setTimeout(resolve, 5))
  }
  const last = `status ${19 % 3}`
  const deadline = Date.now() + 10_000
  const pending = async () => (await a.inject({ url: `/admin/connections/${connection}/outbox`, headers: admin })).json() as unknown[]
  const host = { busy: () => inFlight > 0 }
  let outbox = await pending()
  while ((outbox.length > 0 || host.busy()) && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 50))
    outbox = await pending()
  }
  t.same([...labels], [last], 'the host ends with the last pipeline\'s label only')
  t.equal(mostInFlight, 1, 'never two writes of the issue at once, whichever instance claimed them')
  t.same(outbox, [], 'nothing pending or failed')
})
