import t from 'tap'
import Database from 'better-sqlite3'
import { execFileSync } from 'node:child_process'
import Fastify from 'fastify'
import { fileURLToPath } from 'node:url'
import { boardsPlugin, loadFixture, openSqliteStore, planningApi, planningCore } from '../app.js'
import { TOKENS, REPO, testFixture } from './helper.js'
import { buildOnce } from './build.js'

const root = fileURLToPath(new URL('..', import.meta.url))

async function hostDatabase () {
  const db = new Database(':memory:')
  const store = await openSqliteStore(db)
  await loadFixture(store, testFixture())
  await store.close()
  return db
}

t.test('another Fastify app registers the whole API under a prefix beside its own routes', async (t) => {
  const db = await hostDatabase()
  const host = Fastify()
  host.decorate('db', 'the host\'s own db decorator')
  host.decorate('config', { mine: true })
  host.setErrorHandler(async (err: Error, _request, reply) => reply.status(418).send({ host: true, message: err.message }))
  host.get('/health', async () => ({ ok: true, db: host.getDecorator<string>('db') }))
  host.get('/boom', async () => { throw new Error('host failure') })
  await host.register(planningApi, { prefix: '/planning', database: db, documentation: false })
  await host.ready()
  t.teardown(async () => { await host.close(); db.close() })

  t.same((await host.inject({ url: '/health' })).json(), { ok: true, db: 'the host\'s own db decorator' }, 'host decorators untouched')
  t.same((await host.inject({ url: '/boom' })).json(), { host: true, message: 'host failure' }, 'the host error handler keeps working')
  t.equal((await host.inject({ url: '/boom' })).statusCode, 418)
  const board = await host.inject({ url: `/planning/p1/repositories/${REPO}/board`, headers: { 'x-authentication-token': TOKENS.alice } })
  t.equal(board.statusCode, 200)
  t.ok(board.headers['x-ratelimit-limit'], 'our hooks apply inside our prefix')
  const bad = await host.inject({ url: '/planning/p1/repositories/abc/board', headers: { 'x-authentication-token': TOKENS.alice } })
  t.same(Object.keys(bad.json()).sort(), ['error', 'message', 'statusCode'], 'our error shape inside our prefix')
  t.notOk((await host.inject({ url: '/health' })).headers['x-ratelimit-limit'], 'and not outside it')
  t.equal(db.open, true)
  await host.close()
  t.equal(db.open, true, 'a database handle given by the host stays open')
})

t.test('a single domain plugin next to the core, under its own prefix', async (t) => {
  const db = await hostDatabase()
  const host = Fastify()
  host.get('/', async () => 'host root')
  await host.register(async (scope) => {
    await scope.register(planningCore, { database: db, rateLimit: false })
    await scope.register(boardsPlugin)
  }, { prefix: '/boards-only' })
  t.teardown(async () => { await host.close(); db.close() })
  const board = await host.inject({ url: `/boards-only/p1/repositories/${REPO}/board`, headers: { 'x-authentication-token': TOKENS.alice } })
  t.equal(board.statusCode, 200)
  t.equal(board.json().pipelines.length, 3)
  t.equal((await host.inject({ url: `/boards-only/p1/repositories/${REPO}/issues/1`, headers: { 'x-authentication-token': TOKENS.alice } })).statusCode, 404, 'other domains are not there')
  t.equal((await host.inject({ url: '/' })).body, 'host root')
})

t.test('planningApi can register a subset of domains', async (t) => {
  const host = Fastify()
  await host.register(planningApi, { database: await hostDatabase(), domains: ['issues'], documentation: false })
  t.teardown(() => host.close())
  t.equal((await host.inject({ url: `/p1/repositories/${REPO}/issues/1`, headers: { 'x-authentication-token': TOKENS.alice } })).statusCode, 200)
  t.equal((await host.inject({ url: `/p1/repositories/${REPO}/board`, headers: { 'x-authentication-token': TOKENS.alice } })).statusCode, 404)
})

t.test('the package: import by name, and npm pack holds only what users need', { timeout: 120_000 }, async (t) => {
  await buildOnce()
  const name = 'planning-api-server'
  const byName = await import(name) as Record<string, unknown>
  t.type(byName.planningApi, 'function')
  t.type(byName.planningCore, 'function')
  t.type(byName.boardsPlugin, 'function')
  const packed = JSON.parse(execFileSync('npm', ['pack', '--dry-run', '--json', '--ignore-scripts'], { cwd: root, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] })) as Array<{ files: Array<{ path: string }> }>
  const files = packed[0].files.map((f) => f.path)
  const unexpected = files.filter((f) => !/^dist\/.+\.(js|d\.ts)$/.test(f) &&
    !['package.json', 'README.md', 'dist/fixtures/demo.json', 'dist/board/index.html', 'dist/board/board.css', 'dist/board/icon.svg',
      'dist/plugins/graphql/schema/schema.graphql'].includes(f))
  t.same(unexpected, [], 'compiled JavaScript, declarations, the demo fixture, the board page, the GraphQL schema; nothing else')
  for (const needed of ['dist/app.js', 'dist/app.d.ts', 'dist/db/engine/migrations/index.js', 'dist/fixtures/demo.json', 'dist/server.js', 'dist/board/board.js']) t.ok(files.includes(needed), needed)
  t.notOk(files.some((f) => f.startsWith('dist/bench/') || f.startsWith('dist/sea/') || (f.endsWith('.ts') && !f.endsWith('.d.ts'))), 'no benchmarks, sources or tests')
})
