import t from 'tap'
import { once } from 'node:events'
import net, { type AddressInfo } from 'node:net'
import type { Test } from 'tap'
import { build, REPO, TOKENS } from './helper.js'
import type { SocketLimits } from '../config.js'

/** The app listening on 127.0.0.1 with these socket limits. */
async function listening (t: Test, limits: Partial<SocketLimits>) {
  const app = await build(t, { limits })
  await app.listen({ host: '127.0.0.1', port: 0 })
  return (app.server.address() as AddressInfo).port
}

/** A raw client socket that records what it receives and when it is closed. */
async function client (port: number) {
  const socket = net.connect(port, '127.0.0.1')
  await once(socket, 'connect')
  const state = { received: '', closedAt: 0 }
  socket.on('data', (d) => { state.received += String(d) })
  socket.on('error', () => {})
  socket.on('close', () => { state.closedAt = Date.now() })
  const closed = async (withinMs: number): Promise<boolean> => {
    const deadline = Date.now() + withinMs
    while (state.closedAt === 0 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20))
    return state.closedAt !== 0
  }
  return { socket, state, closed }
}

const request = (path: string, headers: Record<string, string | number>) =>
  `POST ${path} HTTP/1.1\r\nHost: x\r\n${Object.entries(headers).map(([k, v]) => `${k}: ${v}\r\n`).join('')}\r\n`

t.test('headers that never finish are cut off by the headers timeout', async (t) => {
  const port = await listening(t, { headersTimeoutMs: 1000, requestTimeoutMs: 1000 })
  const c = await client(port)
  const started = Date.now()
  c.socket.write('GET / HTTP/1.1\r\nHost: x\r\n')
  const timer = setInterval(() => c.socket.write('X-Slow: 1\r\n'), 100)
  t.teardown(() => clearInterval(timer))
  t.ok(await c.closed(4000), 'closed')
  t.ok(c.state.closedAt - started < 3500, `after ${c.state.closedAt - started} ms`)
})

t.test('a body that never finishes is cut off by the request timeout', async (t) => {
  const port = await listening(t, { headersTimeoutMs: 1000, requestTimeoutMs: 1500 })
  const c = await client(port)
  const started = Date.now()
  c.socket.write(request(`/p1/repositories/${REPO}/issues/1/moves`, { 'x-authentication-token': TOKENS.alice, 'content-type': 'application/json', 'content-length': 100000 }) + '{')
  const timer = setInterval(() => c.socket.write(' '), 100)
  t.teardown(() => clearInterval(timer))
  t.ok(await c.closed(5000), 'closed')
  t.ok(c.state.closedAt - started < 4500, `after ${c.state.closedAt - started} ms`)
  t.match(c.state.received, /^HTTP\/1\.1 408/, 'answered 408 Request Timeout')
})

t.test('an error answered before the body was read closes the connection', async (t) => {
  const port = await listening(t, { requestTimeoutMs: 60_000, headersTimeoutMs: 60_000 })
  const c = await client(port)
  const started = Date.now()
  c.socket.write(request(`/p1/repositories/${REPO}/issues/1/moves`, { 'content-type': 'application/json', 'content-length': 100000 }) + '{')
  const timer = setInterval(() => c.socket.write(' '), 100)
  t.teardown(() => clearInterval(timer))
  t.ok(await c.closed(2000), 'closed at once, not at the request timeout')
  t.ok(c.state.closedAt - started < 2000)
  t.match(c.state.received, /^HTTP\/1\.1 401[^]*connection: close/i, 'the 401 arrives first, saying so')
})

t.test('connections past MAX_CONNECTIONS are refused; the others keep working', async (t) => {
  const port = await listening(t, { maxConnections: 5, requestTimeoutMs: 60_000, headersTimeoutMs: 60_000 })
  const held = await Promise.all(Array.from({ length: 5 }, async () => await client(port)))
  t.teardown(() => held.forEach((c) => c.socket.destroy()))
  await new Promise((resolve) => setTimeout(resolve, 100))
  const extra = await client(port)
  extra.socket.write(`GET /p1/repositories/${REPO}/board HTTP/1.1\r\nHost: x\r\nX-Authentication-Token: ${TOKENS.alice}\r\n\r\n`)
  t.ok(await extra.closed(2000), 'the sixth connection is closed')
  t.equal(extra.state.received, '', 'without an answer')
  held[0].socket.destroy()
  await new Promise((resolve) => setTimeout(resolve, 100))
  const res = await fetch(`http://127.0.0.1:${port}/p1/repositories/${REPO}/board`, { headers: { 'x-authentication-token': TOKENS.alice } })
  t.equal(res.status, 200, 'a freed slot serves the next client')
})

t.test('idle keep-alive connections are closed after KEEP_ALIVE_TIMEOUT_MS', async (t) => {
  const port = await listening(t, { keepAliveTimeoutMs: 300 })
  const c = await client(port)
  c.socket.write(`GET /p1/repositories/${REPO}/board HTTP/1.1\r\nHost: x\r\nX-Authentication-Token: ${TOKENS.alice}\r\n\r\n`)
  t.ok(await c.closed(2000), 'closed when idle')
  t.match(c.state.received, /^HTTP\/1\.1 200/)
})
