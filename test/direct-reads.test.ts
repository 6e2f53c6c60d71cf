import t from 'tap'
import Database from 'better-sqlite3'
import Fastify from 'fastify'
import { Writable } from 'node:stream'
import { loadFixture, openSqliteStore, planningApi } from '../app.js'
import { build, REPO, TOKENS, testFixture } from './helper.js'

const BOARD = `/p1/repositories/${REPO}/board`
const ISSUE = `/p1/repositories/${REPO}/issues/1`
const kept = ['etag', 'content-type', 'content-length', 'x-ratelimit-limit']

// On SQLite only: there an unchanged read is decided without waiting, which direct writes need.
t.test('a direct answer carries the same bytes and headers as the usual path', async (t) => {
  const direct = await build(t, { database: ':memory:' })
  const usual = await build(t, { database: ':memory:', directReads: false })
  for (const url of [BOARD, ISSUE]) {
    await direct.as('alice', { url })
    await usual.as('alice', { url })
    const [a, b] = [await direct.as('alice', { url }), await usual.as('alice', { url })]
    t.equal(a.statusCode, 200)
    t.equal(a.body, b.body, `${url}: the same bytes`)
    for (const name of kept) t.equal(a.headers[name], b.headers[name], `${url}: the same ${name}`)
    // Each app's window starts at its own first request, so the two resets may be a second apart.
    const resets = [a, b].map((res) => Number(res.headers['x-ratelimit-reset']))
    t.ok(Math.abs(resets[0] - resets[1]) <= 1, `${url}: the same x-ratelimit-reset, to the second`)
    t.equal(a.headers['x-ratelimit-used'], b.headers['x-ratelimit-used'], 'counted like any request')
    t.ok(Date.parse(String(a.headers.date)) > 0, 'Node adds the Date header')
  }
})

t.test('conditional and HEAD requests take the usual path', async (t) => {
  const app = await build(t, { database: ':memory:' })
  const first = await app.as('alice', { url: BOARD })
  const again = await app.as('alice', { url: BOARD, headers: { 'if-none-match': String(first.headers.etag) } })
  t.equal(again.statusCode, 304)
  t.equal(again.body, '')
  t.equal(again.headers['x-ratelimit-used'], '1', 'a 304 is given back to the window')
  const head = await app.as('alice', { method: 'HEAD', url: BOARD })
  t.equal(head.statusCode, 200)
  t.equal(head.body, '', 'HEAD still answers without a body')
  t.equal(head.headers.etag, first.headers.etag)
})

t.test('direct answers are logged like any other', async (t) => {
  const lines: string[] = []
  const logStream = new Writable({ write (chunk, _enc, done) { lines.push(String(chunk)); done() } })
  const app = await build(t, { database: ':memory:', logLevel: 'info', logStream })
  await app.as('alice', { url: BOARD })
  lines.length = 0
  await app.as('alice', { url: BOARD })
  const completed = lines.map((l) => JSON.parse(l) as { msg: string, res?: { statusCode: number } }).filter((l) => l.msg === 'request completed')
  t.equal(completed.length, 1)
  t.equal(completed[0].res?.statusCode, 200)
})

t.test('registered in a host app, reads go through its onSend hooks unless it asks for direct writes', async (t) => {
  for (const directReads of [false, true]) {
    const db = new Database(':memory:')
    const store = await openSqliteStore(db)
    await loadFixture(store, testFixture())
    await store.close()
    const host = Fastify()
    host.addHook('onSend', async (_request, reply) => { reply.header('x-host', 'seen') })
    await host.register(planningApi, { database: db, documentation: false, ...(directReads ? { directReads } : {}) })
    t.teardown(async () => { await host.close(); db.close() })
    const read = async () => await host.inject({ url: BOARD, headers: { 'x-authentication-token': TOKENS.alice } })
    await read()
    const res = await read()
    t.equal(res.statusCode, 200)
    t.equal(res.headers['x-host'], directReads ? undefined : 'seen', directReads ? 'written past the host hook, as asked' : 'the host hook sees the answer')
  }
})
