import { sql } from 'kysely'
import pg from 'pg'
import t, { type Test } from 'tap'
import { migrate, MigrationError } from '../db/engine/migrations/index.js'
import { postgresKysely } from '../db/engine/postgres.js'
import { ranOnce } from './once.js'
import { postgresAnswers, testSchema } from './pg.js'

const PG = process.env.TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test'
const skip = ranOnce !== false ? ranOnce : await postgresAnswers(PG) ? false : `no PostgreSQL answers at ${PG} (set TEST_DATABASE_URL)`

/**
 * A migrated schema with its last migration (a DROP INDEX on `dependencies`) pending again, and
 * another session reading `dependencies` in an open transaction: the migration needs that table's
 * exclusive lock, which waits for the reader.
 */
async function pendingBehindReader (t: Test) {
  const { schema, drop } = await testSchema(PG)
  const db = postgresKysely({ url: PG, schema, poolMax: 1 })
  const reader = new pg.Client({ connectionString: PG })
  await reader.connect()
  t.teardown(async () => {
    await reader.end().catch(() => {})
    await db.destroy()
    await drop()
  })
  await migrate(db, 'postgres', schema)
  await sql`CREATE INDEX dependencies_blocking ON dependencies (blocking_id)`.execute(db)
  await sql`DELETE FROM kysely_migration WHERE name = '034-dependencies-blocking'`.execute(db)
  await reader.query('BEGIN')
  await reader.query(`SELECT count(*) FROM "${schema}".dependencies`)
  const indexed = async () => (await sql<{ n: number }>`SELECT count(*)::int AS n FROM pg_indexes WHERE schemaname = ${schema} AND indexname = 'dependencies_blocking'`.execute(db)).rows[0].n === 1
  return { db, schema, reader, indexed }
}

t.test('a migration waits only so long for a table lock another session holds, then the start fails saying why, nothing changed', { skip }, async (t) => {
  const { db, schema, reader, indexed } = await pendingBehindReader(t)
  const started = Date.now()
  // Without the lock timeout the migration would wait for the reader: the race says so.
  const outcome = await Promise.race([
    migrate(db, 'postgres', schema, { timeoutMs: 100, attempts: 3, pauseMs: 20 }).then(() => 'migrated', (err: Error) => err),
    new Promise((resolve) => setTimeout(resolve, 5000, 'still waiting after 5 s'))
  ])
  t.type(outcome, MigrationError)
  t.match((outcome as Error).message, /could not take a table's lock: another session kept it longer than 100 ms, 3 times/)
  t.ok(Date.now() - started < 4000, 'three tries of 100 ms and their pauses')
  t.ok(await indexed(), 'the pending migration was rolled back')
  const pending = await sql`SELECT 1 FROM kysely_migration WHERE name = '034-dependencies-blocking'`.execute(db)
  t.equal(pending.rows.length, 0, 'and is still pending')
  await reader.query('ROLLBACK')
  await migrate(db, 'postgres', schema)
  t.notOk(await indexed(), 'once the reader is gone it runs')
})

t.test('a lock let go between two tries: the migration runs', { skip }, async (t) => {
  const { db, schema, reader, indexed } = await pendingBehindReader(t)
  setTimeout(() => { reader.query('ROLLBACK').catch(() => {}) }, 300)
  const done = await migrate(db, 'postgres', schema, { timeoutMs: 100, attempts: 20, pauseMs: 50 })
  t.ok(done.includes('034-dependencies-blocking'))
  t.notOk(await indexed())
})

t.test('other sessions are not kept waiting behind a migration for longer than its lock timeout', { skip }, async (t) => {
  const { db, schema, reader } = await pendingBehindReader(t)
  const other = new pg.Client({ connectionString: PG })
  await other.connect()
  t.teardown(async () => { await other.end() })
  const migrating = migrate(db, 'postgres', schema, { timeoutMs: 300, attempts: 2, pauseMs: 1000 }).catch((err: Error) => err)
  await new Promise((resolve) => setTimeout(resolve, 100))
  // A plain read queues behind the migration's lock request, until that request gives up.
  const started = Date.now()
  await other.query(`SELECT count(*) FROM "${schema}".dependencies`)
  const waited = Date.now() - started
  t.ok(waited < 1000, `a read queued behind the migration got through after ${waited} ms`)
  await reader.query('ROLLBACK')
  const result = await migrating
  t.ok(Array.isArray(result) && result.includes('034-dependencies-blocking'), 'the second try, after the reader ended, migrated')
})
