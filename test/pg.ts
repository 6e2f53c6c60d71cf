import pg from 'pg'
import t, { type Test } from 'tap'
import { randomBytes } from 'node:crypto'

/** The PostgreSQL server the suite runs against as well, when set (docs/development.md). */
export const TEST_DATABASE_URL = process.env.TEST_DATABASE_URL === '' ? undefined : process.env.TEST_DATABASE_URL

let announced = false

/** A fresh schema for one test; `drop` removes it with everything in it. */
export async function testSchema (url: string): Promise<{ schema: string, drop: () => Promise<void> }> {
  if (!announced) t.comment(`PostgreSQL tests on ${url.replace(/\/\/[^@/]*@/, '//')}, each in a schema of its own (t_<random>, emptied for the next test of the file, dropped at its end); TEST_DATABASE_URL points elsewhere`)
  announced = true
  const schema = `t_${randomBytes(6).toString('hex')}`
  const client = new pg.Client({ connectionString: url })
  await client.connect()
  await client.query(`CREATE SCHEMA ${schema}`)
  await client.end()
  return {
    schema,
    drop: async () => {
      const dropper = new pg.Client({ connectionString: url })
      await dropper.connect()
      await dropper.query(`DROP SCHEMA ${schema} CASCADE`)
      await dropper.end()
    }
  }
}

/** What a freshly migrated schema holds: its structure's digest and the rows the migrations wrote. */
interface Pristine { digest: string, tables: string[], sequences: string[], seeded: Array<{ table: string, rows: unknown[] }> }
let pristine: Promise<Pristine> | undefined
/** Migrated schemas given back by the tests of this process, emptied to what the migrations left, to build on again. */
const idle: string[] = []
let made = 0
// set when the process's teardown has dropped the idle schemas: one given back later is dropped
let closed = false

/**
 * The structure of a schema as text (tables, columns, defaults, constraints, indexes, triggers,
 * functions), the schema's own name taken out, digested: two schemas the same migrations made agree.
 * Foreign keys' internal triggers are left out: their names carry OIDs, different in each schema
 * (the constraints themselves are in), and with them no schema but a process's first was reused.
 */
async function structure (client: pg.Client, schema: string): Promise<string> {
  const { rows } = await client.query(`SELECT md5(string_agg(replace(x, $1 || '.', ''), E'\n' ORDER BY x)) AS digest FROM (
      SELECT c.relname || ':' || c.relkind::text AS x FROM pg_class c WHERE c.relnamespace = $1::regnamespace
      UNION ALL SELECT c.relname || '.' || a.attname || ':' || format_type(a.atttypid, a.atttypmod) || ':' || a.attnotnull::text || ':' || coalesce(pg_get_expr(d.adbin, d.adrelid), '')
        FROM pg_attribute a JOIN pg_class c ON c.oid = a.attrelid LEFT JOIN pg_attrdef d ON d.adrelid = a.attrelid AND d.adnum = a.attnum
        WHERE c.relnamespace = $1::regnamespace AND a.attnum > 0 AND NOT a.attisdropped
      UNION ALL SELECT conname || ':' || pg_get_constraintdef(oid) FROM pg_constraint WHERE connamespace = $1::regnamespace
      UNION ALL SELECT pg_get_indexdef(i.indexrelid) FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid WHERE c.relnamespace = $1::regnamespace
      UNION ALL SELECT tgname || ':' || tg.tgrelid::regclass::text FROM pg_trigger tg JOIN pg_class c ON c.oid = tg.tgrelid WHERE c.relnamespace = $1::regnamespace AND NOT tg.tgisinternal
      UNION ALL SELECT p.proname || ':' || md5(p.prosrc) FROM pg_proc p WHERE p.pronamespace = $1::regnamespace) parts`, [schema])
  return String(rows[0].digest)
}

/** The tables that tests write, and the migrations' own rows, of a schema just migrated. */
async function readPristine (client: pg.Client, schema: string): Promise<Pristine> {
  const names = (await client.query('SELECT tablename FROM pg_tables WHERE schemaname = $1 ORDER BY tablename', [schema])).rows.map((r) => String(r.tablename))
  const tables = names.filter((name) => !name.startsWith('kysely_migration'))
  const seeded: Pristine['seeded'] = []
  for (const table of tables) {
    const rows = (await client.query(`SELECT row_to_json(r) AS row FROM ${schema}.${table} r`)).rows.map((r) => r.row as unknown)
    if (rows.length > 0) seeded.push({ table, rows })
  }
  const sequences = (await client.query('SELECT sequencename FROM pg_sequences WHERE schemaname = $1', [schema])).rows.map((r) => String(r.sequencename))
  return { digest: await structure(client, schema), tables, sequences, seeded }
}

/**
 * A migrated schema for one test (\`build\`): one this process gave back if there is one, else a new
 * one, migrated here. \`release\` gives it back emptied to what the migrations wrote (every table
 * emptied, its sequences restarted, the migrations' rows put back) when its structure is still
 * the migrations' (a test may have dropped or added something), else drops it. Migrating costs
 * PostgreSQL a few hundred statements, about 1-2 s a schema; emptying one, one round trip.
 */
export async function migratedSchema (url: string): Promise<{ schema: string, release: () => Promise<void> }> {
  const reused = idle.pop()
  const schema = reused ?? (await testSchema(url)).schema
  if (reused === undefined) {
    if (made++ === 0) {
      t.teardown(async () => {
        closed = true
        await dropSchemas(url, idle.splice(0))
      })
    }
    try {
      const [{ postgresKysely }, { migrate }] = await Promise.all([import('../db/engine/postgres.js'), import('../db/engine/migrations/index.js')])
      const db = postgresKysely({ url, schema, poolMax: 1 })
      try {
        await migrate(db, 'postgres', schema)
      } finally {
        await db.destroy()
      }
      pristine ??= withClient(url, async (client) => await readPristine(client, schema)).catch((err: unknown) => { pristine = undefined; throw err })
      await pristine
    } catch (err) {
      await dropSchemas(url, [schema]).catch(() => {})
      throw err
    }
  }
  return { schema, release: async () => { await release(url, schema) } }
}

/** Gives a test's schema back emptied, or drops it (its structure changed, or emptying failed: said in a comment). */
async function release (url: string, schema: string): Promise<void> {
  // a test's app closed after the file's teardown (a teardown of its own that ran later): nothing will reuse it
  if (closed) {
    await dropSchemas(url, [schema])
    return
  }
  const why = await withClient(url, async (client) => {
    const { digest, tables, sequences, seeded } = await pristine!
    if (await structure(client, schema) !== digest) return 'its structure changed'
    // DELETE, not TRUNCATE (which makes every table's and index's files anew: 1-2 s), with the
    // foreign keys' and other triggers off for the transaction (a superuser's setting).
    const quoted = (text: string) => `'${text.replace(/'/g, "''")}'`
    await client.query([
      'BEGIN', 'SET LOCAL session_replication_role = replica',
      ...tables.map((name) => `DELETE FROM ${schema}.${name}`),
      ...sequences.map((name) => `SELECT setval(${quoted(`${schema}.${name}`)}, 1, false)`),
      ...seeded.map(({ table, rows }) => `INSERT INTO ${schema}.${table} SELECT * FROM json_populate_recordset(NULL::${schema}.${table}, ${quoted(JSON.stringify(rows))})`),
      'COMMIT'
    ].join('; '))
    return undefined
  }).catch((err: unknown) => `emptying it failed: ${err instanceof Error ? err.message : String(err)}`)
  // the teardown may have run while it was being emptied
  if (why === undefined && closed) {
    await dropSchemas(url, [schema])
    return
  }
  if (why === undefined) {
    idle.push(schema)
    return
  }
  t.comment(`schema ${schema} dropped, not used again: ${why}`)
  await dropSchemas(url, [schema])
}

async function withClient<R> (url: string, use: (client: pg.Client) => Promise<R>): Promise<R> {
  const client = new pg.Client({ connectionString: url })
  await client.connect()
  try {
    return await use(client)
  } finally {
    await client.end()
  }
}

async function dropSchemas (url: string, schemas: string[]): Promise<void> {
  if (schemas.length > 0) await withClient(url, async (client) => { await client.query(`DROP SCHEMA ${schemas.join(', ')} CASCADE`) })
}

/** Whether a PostgreSQL server answers at this URL (tests that need one skip otherwise). */
export async function postgresAnswers (url: string | undefined): Promise<boolean> {
  if (url === undefined) return false
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 2000 })
  try {
    await client.connect()
    await client.end()
    return true
  } catch {
    return false
  }
}

/**
 * Records the text of every query a pg client sends, below the pool's wrappers, until the test
 * ends; `refuse` may answer one with an error instead of sending it.
 */
export function recordSent (test: Test, refuse?: (text: string) => Error | undefined): string[] {
  const sent: string[] = []
  const send = pg.Client.prototype.query
  pg.Client.prototype.query = function (this: pg.Client, ...args: unknown[]) {
    const [query] = args
    const text = typeof query === 'string' ? query : String((query as { text?: string }).text)
    sent.push(text)
    const refused = refuse?.(text)
    if (refused !== undefined) return Promise.reject(refused)
    return (send as (...a: unknown[]) => unknown).apply(this, args)
  } as typeof send
  test.teardown(() => { pg.Client.prototype.query = send })
  return sent
}
