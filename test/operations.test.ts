import t, { type Test } from 'tap'
import { spawn } from 'node:child_process'
import { once } from 'node:events'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import WebSocket from 'ws'
import { build, REPO, TOKENS, TS_LOADER } from './helper.js'

const root = fileURLToPath(new URL('..', import.meta.url))

/** The real server in a child process; resolves with its address and everything it logged. */
async function serve (t: Test, env: Record<string, string>, args: string[] = []) {
  const child = spawn(process.execPath, [...args, '--import', TS_LOADER, join(root, 'server.ts')], {
    cwd: root, env: { ...process.env, PORT: '0', LOG_LEVEL: 'info', ...env }, stdio: ['ignore', 'pipe', 'pipe']
  })
  t.teardown(() => { child.kill('SIGKILL') })
  const log = { out: '', err: '' }
  child.stdout.on('data', (d) => { log.out += String(d) })
  child.stderr.on('data', (d) => { log.err += String(d) })
  const address = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no listen line: ${log.out} ${log.err}`)), 30_000)
    child.on('exit', (code) => { clearTimeout(timer); reject(Object.assign(new Error(`exited ${code}: ${log.err}`), { code, log })) })
    child.stdout.on('data', () => {
      const m = /API documentation: (http:\/\/127\.0\.0\.1:\d+)/.exec(log.out)
      if (m !== null) { clearTimeout(timer); resolve(m[1]) }
    })
  })
  return { child, address, log }
}

t.test('health and readiness: no token, not rate limited, under BASE_PATH too', async (t) => {
  const app = await build(t, { basePath: '/api', rateLimit: { max: 2, timeWindow: 60_000 } })
  for (let i = 0; i < 4; i++) {
    const health = await app.inject({ url: '/api/health' })
    t.same([health.statusCode, health.json()], [200, { status: 'ok' }])
    t.equal(health.headers['x-ratelimit-used'], undefined, 'not counted')
  }
  const ready = await app.inject({ url: '/api/ready' })
  t.equal(ready.statusCode, 200)
  t.same(ready.json(), { status: 'ready', checks: { database: 'ok' } })
  t.equal((await app.as('alice', { url: `/p1/repositories/${REPO}/board` })).statusCode, 200, 'the API budget is untouched')
})

t.test('CORS: off by default; allowed origins get preflights and may read the rate-limit headers', async (t) => {
  const off = await build(t)
  const plain = await off.as('alice', { url: `/p1/repositories/${REPO}/board`, headers: { origin: 'https://board.example.com' } })
  t.equal(plain.headers['access-control-allow-origin'], undefined)
  const app = await build(t, { corsOrigins: ['https://board.example.com'] })
  const preflight = await app.inject({
    method: 'OPTIONS',
    url: `/p1/repositories/${REPO}/issues/1/moves`,
    headers: { origin: 'https://board.example.com', 'access-control-request-method': 'POST', 'access-control-request-headers': 'x-authentication-token,content-type' }
  })
  t.equal(preflight.statusCode, 204, 'answered before any token is asked for')
  t.equal(preflight.headers['access-control-allow-origin'], 'https://board.example.com')
  t.match(String(preflight.headers['access-control-allow-headers']), /X-Authentication-Token/i)
  const read = await app.as('alice', { url: `/p1/repositories/${REPO}/board`, headers: { origin: 'https://board.example.com' } })
  t.equal(read.headers['access-control-allow-origin'], 'https://board.example.com')
  t.match(String(read.headers['access-control-expose-headers']), /X-RateLimit-Used/)
  const other = await app.as('alice', { url: `/p1/repositories/${REPO}/board`, headers: { origin: 'https://evil.example.net' } })
  t.equal(other.headers['access-control-allow-origin'], undefined, 'other origins get no CORS headers')
  const graph = { method: 'OPTIONS' as const, url: '/public/graphql', headers: { 'access-control-request-method': 'POST', 'access-control-request-headers': 'authorization' } }
  t.equal((await app.inject({ ...graph, headers: { ...graph.headers, origin: 'https://evil.example.net' } })).headers['access-control-allow-origin'], undefined,
    'configured origins hold for GraphQL too')
  t.equal((await app.inject({ ...graph, headers: { ...graph.headers, origin: 'https://board.example.com' } })).headers['access-control-allow-origin'], 'https://board.example.com')
})

t.test('the live feed: 426 to a plain GET, 1001 to clients at shutdown', async (t) => {
  const app = await build(t)
  const plain = await app.as('alice', { url: '/api/v1/ws' })
  t.equal(plain.statusCode, 426)
  t.same(Object.keys(plain.json()).sort(), ['error', 'message', 'statusCode'])
  t.equal(plain.headers.upgrade, 'websocket')
  const address = await app.listen({ host: '127.0.0.1', port: 0 })
  const socket = new WebSocket(`${address.replace('http', 'ws')}/api/v1/ws?access_token=${TOKENS.carol}`)
  await once(socket, 'message')
  const closed = once(socket, 'close')
  await app.close()
  const [code] = await closed
  t.equal(code, 1001, 'going away')
})

t.test('the server starts from the shipped .env.example, and says where the docs are and how to get in again', async (t) => {
  const dir = t.testdir({})
  const first = await serve(t, { DATABASE_PATH: join(dir, 'planning.db') }, ['--env-file=.env.example'])
  t.match(first.log.out, /API documentation: http:\/\/127\.0\.0\.1:\d+\/documentation/)
  t.match(first.log.out, /demo data loaded; API token for alice/)
  t.equal((await fetch(`${first.address}/health`)).status, 200)
  first.child.kill('SIGTERM')
  await once(first.child, 'exit')
  const second = await serve(t, { DATABASE_PATH: join(dir, 'planning.db') }, ['--env-file=.env.example'])
  t.match(second.log.out, /a token for the demo user: npm run admin -- token alice/, 'a restart says how to get a token')
  second.child.kill('SIGTERM')
  await once(second.child, 'exit')
})

t.test('a missing SEED_FILE stops the start with one clear line', async (t) => {
  const dir = t.testdir({})
  const failed = await serve(t, { DATABASE_PATH: join(dir, 'planning.db'), SEED_FILE: join(dir, 'nope.json') }).catch((err: { code: number, log: { err: string } }) => err)
  t.match(failed, { code: 1 })
  const lines = (failed as { log: { err: string } }).log.err.trim().split('\n')
  t.equal(lines.length, 1, 'one line')
  t.match(lines[0], /did not start: cannot read fixture .*nope\.json/)
})

t.test('Prometheus metrics: off without METRICS_TOKEN, behind its Bearer token otherwise', async (t) => {
  const off = await build(t)
  t.equal((await off.inject({ url: '/metrics' })).statusCode, 404)
  const token = 'metrics-token-0123456789'
  const app = await build(t, { metricsToken: token, rateLimit: { max: 3, timeWindow: 60_000 } })
  t.equal((await app.inject({ url: '/metrics' })).statusCode, 401)
  for (let i = 0; i < 4; i++) await app.as('carol', { url: `/p1/repositories/${REPO}/issues/1` })
  const res = await app.inject({ url: '/metrics', headers: { authorization: `Bearer ${token}` } })
  t.equal(res.statusCode, 200)
  t.match(res.headers['content-type'], /text\/plain/)
  t.match(res.body, /planning_http_request_duration_seconds_count\{method="GET",route="\/p1\/repositories\/:repo_id\/issues\/:issue_number",status="200"\} 3/)
  t.match(res.body, /planning_rate_limit_refusals_total 1/)
  t.match(res.body, /planning_webhook_queue_depth 0/)
  t.match(res.body, /planning_chat_live_sockets 0/)
  t.match(res.body, /planning_webhook_attempt_seconds/)
})
