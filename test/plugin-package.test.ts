import t from 'tap'
import { execFileSync } from 'node:child_process'
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { buildOnce } from './build.js'
import { ranOnce } from './once.js'
import { TEST_DATABASE_URL, testSchema } from './pg.js'

// The package as a Fastify developer gets it: `npm pack`, installed into a fresh host app, compiled
// as strict TypeScript and run as JavaScript. The host's node_modules link the package's production
// dependencies from ours (as listed in package-lock.json), so nothing is downloaded and a
// declaration that needs a dev dependency fails to compile. The host lives in the system's temporary
// folder: inside ours, Node and TypeScript would find our node_modules (dev dependencies included)
// by walking up. Once per CI run (test/once.ts).
const root = fileURLToPath(new URL('..', import.meta.url))
const DEMO_REPO = 103707262

// A strict TypeScript host: what it uses must compile, what it gets wrong on purpose must not.
const HOST_TS = `import Fastify from 'fastify'
import { planningApi, planningCore, boardsPlugin, planningLogRedaction, type PlanningInstance, type DemoToken } from 'planning-api-server'

const app = Fastify({ logger: { level: 'info', ...planningLogRedaction } })
let demo: DemoToken | undefined
await app.register(planningApi, {
  prefix: '/planning',
  database: './planning.db',
  domains: ['issues', 'boards'],
  demo: true,
  onDemoToken: (given) => { demo = given },
  rateLimit: { max: 100, timeWindow: 60_000 }
})
await app.register(async (scope) => {
  await scope.register(planningCore, { database: ':memory:' })
  await scope.register(boardsPlugin)
  const planning = scope as PlanningInstance
  const engine: 'sqlite' | 'postgres' = planning.planningEngine
  planning.log.info({ engine, repositories: await planning.planningStore.repositories.isEmpty() })
}, { prefix: '/boards' })
// @ts-expect-error the host's root instance has no planning decorators
app.log.info(app.planningStore)
// @ts-expect-error a database is a path or a better-sqlite3 handle
await app.register(planningApi, { database: 42 })
// @ts-expect-error a domain that does not exist
await app.register(planningApi, { domains: ['boards', 'nope'] })
await app.ready()
app.log.info(demo?.board)
await app.close()
`

const HOST_JS = `import Fastify from 'fastify'
import { planningApi, planningLogRedaction } from 'planning-api-server'

const app = Fastify({ logger: { level: 'info', ...planningLogRedaction } })
app.addHook('onSend', async (request, reply) => { reply.header('x-host', 'yes') })
app.get('/health', async () => ({ ok: true }))
let demo
await app.register(planningApi, {
  prefix: '/planning',
  databaseUrl: process.env.DATABASE_URL,
  databaseSchema: process.env.DATABASE_SCHEMA,
  redisUrl: undefined,
  demo: true,
  domains: ['issues', 'boards'],
  documentation: false,
  onDemoToken: (given) => { demo = given }
})
const origin = await app.listen({ host: '127.0.0.1', port: 0 })
const board = await fetch(origin + demo.board + '?access_token=' + demo.token)
const headers = { 'x-authentication-token': demo.token, 'content-type': 'application/json' }
const moves = '/planning/p1/repositories/${DEMO_REPO}/issues/3/moves'
const moved = await fetch(origin + moves, { method: 'POST', headers, body: JSON.stringify({ pipeline_id: '5d0a7a9741fd098f6b7f58a3', position: 'top' }) })
const after = await (await fetch(origin + demo.board, { headers })).json()
const pipeline = after.pipelines.find((p) => p.id === '5d0a7a9741fd098f6b7f58a3')
const chat = await fetch(origin + '/planning/api/v1/conversations', { headers })
const hostRoute = await fetch(origin + '/health')
await app.close()
console.log('RESULT ' + JSON.stringify({
  board: board.status, hostHeader: board.headers.get('x-host'), moved: moved.status, movedFirst: pipeline.issues[0].issue_number,
  chat: chat.status, hostRoute: hostRoute.status, token: demo.token
}))
`

t.test('the packed package in a host app', { timeout: 240_000, skip: ranOnce }, async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'planning-host-'))
  t.teardown(() => { rmSync(dir, { recursive: true, force: true }) })
  const host = join(dir, 'host')
  mkdirSync(join(host, 'node_modules'), { recursive: true })
  await buildOnce()
  const [{ filename }] = JSON.parse(execFileSync('npm', ['pack', '--json', '--ignore-scripts', '--pack-destination', dir], {
    cwd: root, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore']
  })) as Array<{ filename: string }>
  const installed = join(host, 'node_modules', 'planning-api-server')
  mkdirSync(installed)
  execFileSync('tar', ['xzf', join(dir, filename), '-C', installed, '--strip-components=1'])
  linkProductionDependencies(host)
  writeFileSync(join(host, 'package.json'), JSON.stringify({ name: 'host', private: true, type: 'module' }))

  t.test('strict TypeScript with skipLibCheck: false', async (t) => {
    // Node's types come with better-sqlite3's; TypeScript itself runs from ours.
    t.ok(existsSync(join(host, 'node_modules', '@types', 'node')), 'Node\'s types are there')
    writeFileSync(join(host, 'tsconfig.json'), JSON.stringify({
      compilerOptions: {
        target: 'ES2022', module: 'NodeNext', moduleResolution: 'NodeNext', strict: true, skipLibCheck: false, noUnusedLocals: true, noEmit: true, types: ['node']
      },
      include: ['host.ts', 'example.ts']
    }))
    writeFileSync(join(host, 'host.ts'), HOST_TS)
    // The example of docs/plugin.md, as a reader copies it.
    const doc = readFileSync(join(root, 'docs', 'plugin.md'), 'utf8')
    writeFileSync(join(host, 'example.ts'), /```ts\n([\s\S]*?)```/.exec(doc)![1])
    let out = ''
    try {
      execFileSync(process.execPath, [join(root, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', host], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] })
    } catch (err) {
      out = String((err as { stdout: string }).stdout)
    }
    t.equal(out, '', 'the host and the example of docs/plugin.md compile, and the wrong uses the host expects to fail do fail')
  })

  const engines = [{ name: 'SQLite', env: {} as Record<string, string> }]
  if (TEST_DATABASE_URL !== undefined) {
    const { schema, drop } = await testSchema(TEST_DATABASE_URL)
    t.teardown(drop)
    engines.push({ name: 'PostgreSQL', env: { DATABASE_URL: TEST_DATABASE_URL, DATABASE_SCHEMA: schema } })
  }
  for (const engine of engines) {
    t.test(`JavaScript host on ${engine.name}`, async (t) => {
      writeFileSync(join(host, 'host.mjs'), HOST_JS)
      // A host that does not exit by itself after close() (a timer, a socket left open) fails here.
      const out = execFileSync(process.execPath, ['host.mjs'], { cwd: host, env: { ...process.env, ...engine.env }, encoding: 'utf8', timeout: 60_000 })
      const lines = out.trim().split('\n')
      const result = JSON.parse(lines.find((line) => line.startsWith('RESULT '))?.slice(7) ?? '{}') as Record<string, unknown> & { token: string }
      const log = lines.filter((line) => !line.startsWith('RESULT ')).join('\n')
      if (result.board !== 200) t.comment(out)
      t.equal(result.board, 200, 'a board read under the host\'s prefix, with the token in the query')
      t.equal(result.hostHeader, 'yes', 'the host\'s onSend hook saw the answer')
      t.equal(result.moved, 200, 'a move')
      t.equal(result.movedFirst, 3, 'the moved issue is at the top of its pipeline')
      t.equal(result.chat, 404, 'a domain the host did not ask for is not there')
      t.equal(result.hostRoute, 200, 'the host\'s own route')
      t.match(result.token, /^[A-Za-z0-9_-]{20,}$/, 'onDemoToken got the token')
      t.notOk(log.includes(result.token), 'the token value is nowhere in the host\'s log')
      t.match(log, /access_token=\[REDACTED\]/, 'the query parameter is logged redacted')
      t.notMatch(log, /npm run admin|REDIS_URL/, 'no hint meant for the standalone server')
      if (engine.name === 'PostgreSQL') t.match(log, /PostgreSQL without the redisUrl option/, 'the warning names the host\'s option')
    })
  }
})

/** Links each production dependency of the package (package-lock.json entries not marked dev) into the host's node_modules. */
function linkProductionDependencies (host: string): void {
  const lock = JSON.parse(readFileSync(join(root, 'package-lock.json'), 'utf8')) as { packages: Record<string, { dev?: boolean }> }
  for (const [path, entry] of Object.entries(lock.packages)) {
    if (!path.startsWith('node_modules/') || path.indexOf('/node_modules/', 1) !== -1 || entry.dev === true) continue
    const target = join(host, path)
    mkdirSync(dirname(target), { recursive: true })
    symlinkSync(join(root, path), target)
  }
}
