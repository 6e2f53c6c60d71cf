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

/**
 * Resolves once the migration's lock request on `schema`.dependencies is queued (it is then waiting
 * for the reader), asking on `client` (the migration holds its own pool's connection).
 */
async function queued (client: pg.Client, schema: string): Promise<void> {
  for (let i = 0; i < 600; i++) {
    const { rows } = await client.query(`SELECT 1 FROM pg_locks l JOIN pg_class c ON c.oid = l.relation JOIN pg_namespace n ON n.oid = c.relnamespace
      WHERE NOT l.granted AND c.relname = 'dependencies' AND n.nspname = $1`, [schema])
    if (rows.length > 0) return
    await new Promise((resolve) => setTimeout(resolve, 25))
  }
  throw new Error('the migration never asked for the lock')
}

/** A `retried` that ends the reader's transaction at the migration's first retry. */
function endedAtFirstRetry (reader: pg.Client) {
  const release = {
    done: false,
    retried: () => {
      if (!release.done) reader.query('ROLLBACK').catch(() => {})
      release.done = true
    }
  }
  return release
}

t.test('a migration waits only so long for a table lock another session holds, tries again, then the start fails saying why, nothing changed', { skip }, async (t) => {
  const { db, schema, reader, indexed } = await pendingBehindReader(t)
  const retries: number[] = []
  // Without the lock timeout the migration would wait for the reader: the race says so. (Each try
  // may also wait for other files' migrations, which hold Kysely's database-wide migration lock.)
  const outcome = await Promise.race([
    migrate(db, 'postgres', schema, { timeoutMs: 100, deadlineMs: 1000, pauseMs: 20, retried: (n) => retries.push(n) }).then(() => 'migrated', (err: Error) => err),
    new Promise((resolve) => setTimeout(resolve, 30_000, 'still waiting after 30 s'))
  ])
  t.type(outcome, MigrationError)
  t.match((outcome as Error).message, /could not take a table's lock: another session kept it longer than 100 ms, \d+ times in \d+ s/)
  t.ok(await indexed(), 'the pending migration was rolled back')
  const pending = await sql`SELECT 1 FROM kysely_migration WHERE name = '034-dependencies-blocking'`.execute(db)
  t.equal(pending.rows.length, 0, 'and is still pending')
  await reader.query('ROLLBACK')
  await migrate(db, 'postgres', schema)
  t.notOk(await indexed(), 'once the reader is gone it runs')
})

t.test('a lock let go between two tries: the migration runs', { skip }, async (t) => {
  const { db, schema, reader, indexed } = await pendingBehindReader(t)
  const release = endedAtFirstRetry(reader)
  const done = await migrate(db, 'postgres', schema, { timeoutMs: 100, deadlineMs: 30_000, pauseMs: 50, retried: release.retried })
  t.ok(release.done, 'it had tried and given up once')
  t.ok(done.includes('034-dependencies-blocking'))
  t.notOk(await indexed())
})

t.test('other sessions are not kept waiting behind a migration for longer than its lock timeout', { skip }, async (t) => {
  const { db, schema, reader } = await pendingBehindReader(t)
  const other = new pg.Client({ connectionString: PG })
  await other.connect()
  t.teardown(async () => { await other.end() })
  const migrating = migrate(db, 'postgres', schema, { timeoutMs: 500, deadlineMs: 30_000, pauseMs: 200, retried: endedAtFirstRetry(reader).retried })
    .catch((err: Error) => err)
  await queued(other, schema)
  // A plain read queues behind the migration's lock request, until that request gives up.
  const read = other.query(`SELECT count(*) FROM "${schema}".dependencies`).then(() => 'read')
  const outcome = await Promise.race([read, new Promise((resolve) => setTimeout(resolve, 10_000, 'still queued after 10 s'))])
  t.equal(outcome, 'read', 'the read got through once the migration gave up its turn')
  const result = await migrating
  t.ok(Array.isArray(result) && result.includes('034-dependencies-blocking'), 'the next try, after the reader ended, migrated')
})
