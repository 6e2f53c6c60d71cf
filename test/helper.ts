import type { FastifyInstance, InjectOptions, LightMyRequestResponse } from 'fastify'
import type { Test } from 'tap'
import Database from 'better-sqlite3'
import pg from 'pg'
import { fileURLToPath } from 'node:url'
import { buildApp, type BuildOptions } from '../app.js'
import { migratedSchema, TEST_DATABASE_URL, testSchema } from './pg.js'

export const ADMIN_TOKEN = 'test-admin-token-0123456789'
export const TOKENS = {
  alice: 'alice-token-123456',
  bob: 'bob-token-1234567',
  carol: 'carol-token-123456',
  dave: 'dave-token-1234567'
} as const

/** The TypeScript loader the tests run with (package.json, "tap"), for servers they start in a child process. */
export const TS_LOADER = fileURLToPath(import.meta.resolve('tsx'))

/** SECRET_KEY of every test app (connections need one); a test may pass `secretKey: undefined`. */
export const SECRET_KEY = Buffer.alloc(32, 7).toString('base64')

export const REPO = 1001
export const OTHER_REPO = 1002
export const PRIVATE_REPO = 1003
export const WS_OLD = 'aaaaaaaaaaaaaaaaaaaaaaa1'
export const WS_NEW = 'aaaaaaaaaaaaaaaaaaaaaaa2'
export const P = { todo: 'pipe-todo', doing: 'pipe-doing', done: 'pipe-done', ideas: 'pipe-ideas', now: 'pipe-now' } as const

/**
 * alice: admin on every repository; bob: write on REPO, read on OTHER_REPO; carol: read on REPO;
 * dave: nothing. WS_OLD (oldest) holds REPO and OTHER_REPO, WS_NEW holds REPO. PRIVATE_REPO is
 * in WS_OLD too but only alice can read it. Chat: alice is the broadcaster, bob a moderator.
 */
export function testFixture () {
  return {
    users: Object.entries(TOKENS).map(([login, token], i) => ({ id: i + 1, login, token })),
    repositories: [
      { id: REPO, owner: 'acme', name: 'api', permissions: { alice: 'admin', bob: 'write', carol: 'read' } },
      { id: OTHER_REPO, owner: 'acme', name: 'web', permissions: { alice: 'admin', bob: 'read' } },
      { id: PRIVATE_REPO, owner: 'acme', name: 'secret', permissions: { alice: 'admin' } }
    ],
    milestones: [{ repo_id: REPO, number: 1, title: 'v1.0' }],
    workspaces: [
      {
        id: WS_OLD,
        name: 'Engineering',
        description: null,
        repositories: [REPO, OTHER_REPO, PRIVATE_REPO],
        pipelines: [{ id: P.todo, name: 'To Do' }, { id: P.doing, name: 'Doing' }, { id: P.done, name: 'Done' }]
      },
      {
        id: WS_NEW,
        name: 'Roadmap',
        description: 'Plans',
        repositories: [REPO],
        pipelines: [{ id: P.ideas, name: 'Ideas' }, { id: P.now, name: 'Now' }]
      }
    ],
    chat: { broadcaster: 'alice', moderators: ['bob'] },
    issues: [
      ...[1, 2, 3, 4, 5, 6].map((n) => ({ repo_id: REPO, number: n, title: `Issue ${n}`, author: 'alice' })),
      { repo_id: REPO, number: 7, title: 'Closed one', state: 'closed' },
      ...[1, 2, 3].map((n) => ({ repo_id: OTHER_REPO, number: n, title: `Web ${n}` })),
      { repo_id: PRIVATE_REPO, number: 1, title: 'Secret' }
    ]
  }
}

export type App = FastifyInstance & {
  /** inject as a user of the test fixture (by login), JSON in and out */
  as: (login: keyof typeof TOKENS, options: InjectOptions) => Promise<LightMyRequestResponse>
  admin: (options: InjectOptions) => Promise<LightMyRequestResponse>
}

export const METRICS_TOKEN = 'metrics-token-0123456789'

/**
 * The first of several instances on one fresh PostgreSQL schema, with the test fixture imported,
 * and the options to build the others with. The caller closes the instances, then calls `drop`.
 */
export async function firstPostgresInstance (t: Test, url: string, extra: BuildOptions = {}) {
  const { schema, drop } = await testSchema(url)
  const shared = { adminToken: ADMIN_TOKEN, metricsToken: METRICS_TOKEN, documentation: false as const, rateLimit: false as const }
  const options = { databaseUrl: url, databaseSchema: schema, ...shared, ...extra }
  const a = await buildApp(options)
  const imported = await a.inject({ method: 'POST', url: '/admin/import', headers: { authorization: `Bearer ${ADMIN_TOKEN}` }, payload: testFixture() })
  t.equal(imported.statusCode, 200, imported.body)
  return { a, options, schema, drop }
}

/**
 * Builds the app on a fresh database holding the test fixture; closed after the test. The database
 * is in memory, or, when TEST_DATABASE_URL names a PostgreSQL server, a schema of its own there
 * (tests that give a database of their own keep it).
 */
export async function build (t: Test, options: BuildOptions & { fixture?: unknown, beforeReady?: (app: App) => void } = {}): Promise<App> {
  const { fixture, beforeReady, ...rest } = options
  let drop = async (): Promise<void> => {}
  if (TEST_DATABASE_URL !== undefined && rest.database === undefined && rest.databaseUrl === undefined) {
    const created = await migratedSchema(TEST_DATABASE_URL)
    Object.assign(rest, { databaseUrl: TEST_DATABASE_URL, databaseSchema: created.schema, databasePoolMax: 4 })
    drop = created.release
  }
  const defaults = { adminToken: ADMIN_TOKEN, rateLimit: { max: 10_000, timeWindow: 60_000 }, documentation: false, secretKey: SECRET_KEY }
  const app = await buildApp({ ...defaults, ...rest }) as App
  beforeReady?.(app)
  await app.ready()
  t.teardown(async () => {
    await app.close()
    await drop()
  })
  const base = rest.basePath ?? ''
  app.as = async (login, opts) => await app.inject({ ...opts, url: base + String(opts.url), headers: { 'x-authentication-token': TOKENS[login], ...opts.headers } })
  app.admin = async (opts) => await app.inject({ ...opts, url: base + String(opts.url), headers: { authorization: `Bearer ${ADMIN_TOKEN}`, ...opts.headers } })
  if (fixture !== null) {
    const res = await app.admin({ method: 'POST', url: '/admin/import', payload: fixture ?? testFixture() })
    if (res.statusCode !== 200) throw new Error(`fixture import failed: ${res.body}`)
  }
  return app
}

/**
 * `build` on either engine, plus plain SQL on the same database from outside the app (a row the
 * API would refuse, a statement count). `?` placeholders; rows come back as objects.
 */
export async function buildWithSql (t: Test, options: BuildOptions & { fixture?: unknown } = {}) {
  if (TEST_DATABASE_URL !== undefined) {
    const { schema, drop } = await testSchema(TEST_DATABASE_URL)
    const client = new pg.Client({ connectionString: TEST_DATABASE_URL, options: `-c search_path=${schema}` })
    await client.connect()
    t.teardown(async () => {
      await client.end()
      await drop()
    })
    const app = await build(t, { ...options, databaseUrl: TEST_DATABASE_URL, databaseSchema: schema, databasePoolMax: 4 })
    let n = 0
    const sql = async (text: string, params: unknown[] = []) => (await client.query(text.replace(/\?/g, () => `$${++n}`), params)).rows as Array<Record<string, unknown>>
    return { app, sql: async (text: string, params: unknown[] = []) => { n = 0; return await sql(text, params) } }
  }
  const handle = new Database(':memory:')
  t.teardown(() => handle.close())
  const app = await build(t, { ...options, database: handle })
  const sql = async (text: string, params: unknown[] = []) => {
    const statement = handle.prepare(text)
    return (statement.reader ? statement.all(...params) : (statement.run(...params), [])) as Array<Record<string, unknown>>
  }
  return { app, sql }
}
