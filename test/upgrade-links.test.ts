import t from 'tap'
import { Migrator, type Kysely, type Migration } from 'kysely'
import { migrate, migrations, type Engine } from '../db/engine/migrations/index.js'
import { postgresKysely } from '../db/engine/postgres.js'
import type { Database } from '../db/schema.js'
import { sqliteKysely } from '../db/engine/sqlite.js'
import { TEST_DATABASE_URL, testSchema } from './pg.js'

const NEW = '021-upgrade-links'

t.test('an upgraded install: links made by equal ids are undone and audited, others stay', async (t) => {
  let db: Kysely<Database>
  let engine: Engine = 'sqlite'
  let schema: string | undefined
  if (TEST_DATABASE_URL !== undefined) {
    const created = await testSchema(TEST_DATABASE_URL)
    schema = created.schema
    engine = 'postgres'
    db = postgresKysely({ url: TEST_DATABASE_URL, schema, poolMax: 2 })
    t.teardown(async () => { await db.destroy(); await created.drop() })
  } else {
    db = sqliteKysely(':memory:').db
    t.teardown(async () => { await db.destroy() })
  }
  // The release before: the migrations before the new one, with data from before 005. (Later ones
  // run through migrate(), as at a real start: 023 needs SQLite's foreign keys off.)
  const before: Record<string, Migration> = Object.fromEntries(Object.entries(migrations(engine)).filter(([name]) => name < NEW))
  const provider = { getMigrations: async () => before }
  const migrator = new Migrator({ db, provider, allowUnorderedMigrations: true, ...(schema === undefined ? {} : { migrationTableSchema: schema }) })
  t.equal((await migrator.migrateTo('004-extensions')).error, undefined)
  const raw = db as unknown as Kysely<any>
  await raw.insertInto('users').values([{ id: 5, login: 'alice', created_at: '2025-01-01T00:00:00Z' }, { id: 6, login: 'carol', created_at: '2025-01-01T00:00:00Z' }]).execute()
  await raw.insertInto('connections').values({ id: 'c'.repeat(24), kind: 'github', web_url: 'https://github.com', api_url: 'https://api.github.com', secret: 'x', created_at: '2025-01-01T00:00:00Z' }).execute()
  await raw.insertInto('repositories').values({ id: 100, owner: 'o', name: 'r', connection_id: 'c'.repeat(24) }).execute()
  await raw.insertInto('permissions').values([{ user_id: 5, repo_id: 100, level: 3 }, { user_id: 6, repo_id: 100, level: 2 }]).execute()
  t.equal((await migrator.migrateToLatest()).error, undefined)
  const linked = await raw.selectFrom('host_identities').select(['platform_user_id', 'user_id']).orderBy('platform_user_id').execute()
  t.same(linked.map((l) => [Number(l.platform_user_id), Number(l.user_id)]), [[5, 5], [6, 6]], 'the old migration linked by equal ids')
  // Linked later: by an administrator (carol to host user 60) or a sign-up (host user 7 as local user 7).
  await raw.updateTable('host_identities').set({ user_id: null }).where('platform_user_id', '=', 6).execute()
  await raw.insertInto('users').values({ id: 7, login: 'seven', created_at: '2099-01-01T00:00:00Z' }).execute()
  await raw.insertInto('host_identities').values([
    { connection_id: 'c'.repeat(24), platform_user_id: 60, login: 'carol-gh', user_id: 6, created_at: '2099-01-01T00:00:00Z' },
    { connection_id: 'c'.repeat(24), platform_user_id: 7, login: 'seven', user_id: 7, created_at: '2099-01-01T00:00:00Z' }
  ]).execute()

  t.same((await migrate(db, engine, schema)).sort(), Object.keys(migrations(engine)).sort())
  const after = await raw.selectFrom('host_identities').select(['platform_user_id', 'user_id']).orderBy('platform_user_id').execute()
  t.same(after.map((l) => [Number(l.platform_user_id), l.user_id === null ? null : Number(l.user_id)]), [[5, null], [6, null], [7, 7], [60, 6]], 'only the equal-id link of the upgrade is undone')
  const audit = await raw.selectFrom('audit_log').selectAll().execute()
  t.equal(audit.length, 1)
  t.match(audit[0], { actor: 'system', action: 'identity.unlinked', target: 'user:alice' })
  t.match(JSON.parse(audit[0].detail), { connection_id: 'c'.repeat(24), platform_user_id: 5, reason: /PUT \/admin\/users/ })
  const permissions = await raw.selectFrom('permissions').select(['user_id', 'level']).where('user_id', '=', 5).execute()
  t.same(permissions.map((p) => Number(p.level)), [3], 'the local user keeps their own permissions')
})
