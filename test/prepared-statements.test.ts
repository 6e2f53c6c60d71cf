import { sql } from 'kysely'
import pg from 'pg'
import t from 'tap'
import { migrate } from '../db/migrations/index.js'
import { postgresKysely } from '../db/postgres.js'
import { prepared } from '../db/prepared.js'
import { changeVersion, writeTransaction } from '../db/transaction.js'
import { ranOnce } from './once.js'
import { postgresAnswers, testSchema } from './pg.js'

const PG = process.env.TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test'

const skip = ranOnce !== false ? ranOnce : await postgresAnswers(PG) ? false : `no PostgreSQL answers at ${PG} (set TEST_DATABASE_URL)`
t.test('on PostgreSQL a prepared query runs as a named statement, parsed once per connection; other SQL does not', { skip }, async (t) => {
  const { schema, drop } = await testSchema(PG)
  // One connection, so the session asked about its statements is the one that ran them.
  const db = postgresKysely({ url: PG, schema, poolMax: 1 })
  t.teardown(async () => {
    await db.destroy()
    await drop()
  })
  await migrate(db, 'postgres', schema)
  const statements = async () => (await sql<{ name: string, statement: string }>`SELECT name, statement FROM pg_prepared_statements`.execute(db)).rows

  t.same(await statements(), [], 'nothing named before a prepared query runs')
  t.equal(await changeVersion(db), 0)
  await sql`UPDATE change_counter SET value = value + 1`.execute(db)
  t.equal(await changeVersion(db), 1, 'run again on the same connection: the named statement answers with the new value')
  const named = await statements()
  t.equal(named.length, 1, 'one statement kept, however often it ran')
  t.match(named[0], { name: /^planning_[0-9a-f]{16}$/, statement: /from "change_counter"/ })
  t.notMatch(named[0].statement, /UPDATE/, 'SQL built on the spot is not kept')

  // Another instance's migration changes a column's type: the kept statement can no longer run.
  const names = prepared<{ id: number }>()((db, p) => db.selectFrom('repositories').select('name').where('id', '>=', p.id))
  await sql`INSERT INTO repositories (id, owner, name, html_url) VALUES (1, 'o', 'r', '')`.execute(db)
  t.same((await names(db, { id: 0 })).rows, [{ name: 'r' }])
  await sql`ALTER TABLE repositories ALTER COLUMN name TYPE varchar(300)`.execute(db)
  await t.rejects(names(db, { id: 0 }), { code: '0A000' }, 'the first run after the change fails')
  t.same((await names(db, { id: 0 })).rows, [{ name: 'r' }], 'its connection was closed: the next run parses the statement again on a new one')
})

t.test('with preparedStatements false (a pooler that does not keep them) nothing is named', { skip }, async (t) => {
  const { schema, drop } = await testSchema(PG)
  const db = postgresKysely({ url: PG, schema, poolMax: 1, preparedStatements: false })
  t.teardown(async () => {
    await db.destroy()
    await drop()
  })
  await migrate(db, 'postgres', schema)
  t.equal(await changeVersion(db), 0)
  t.equal(await changeVersion(db), 0)
  const { rows } = await sql<{ name: string }>`SELECT name FROM pg_prepared_statements`.execute(db)
  t.same(rows, [])
})

t.test('on PostgreSQL a write sends its counter bump with its commit, in one round trip', { skip }, async (t) => {
  const { schema, drop } = await testSchema(PG)
  // What the connection sends, recorded below the pool's wrappers (installed when it connects).
  const sent: string[] = []
  const send = pg.Client.prototype.query
  pg.Client.prototype.query = function (this: pg.Client, ...args: unknown[]) {
    const [query] = args
    sent.push(typeof query === 'string' ? query : String((query as { text?: string }).text))
    return (send as (...a: unknown[]) => unknown).apply(this, args)
  } as typeof send
  const db = postgresKysely({ url: PG, schema, poolMax: 1 })
  const other = new pg.Client({ connectionString: PG, options: `-c search_path=${schema}` })
  t.teardown(async () => {
    pg.Client.prototype.query = send
    await other.end()
    await db.destroy()
    await drop()
  })
  await migrate(db, 'postgres', schema)
  await other.connect()
  const name = async (id: number) => (await other.query('SELECT name FROM repositories WHERE id = $1', [id])).rows[0]?.name as string | undefined
  const insert = (id: number) => sql`INSERT INTO repositories (id, owner, name, html_url) VALUES (${id}, 'o', ${`r${id}`}, '')`

  sent.length = 0
  t.equal(await writeTransaction(db, async (trx) => { await insert(1).execute(trx); return 'done' }), 'done')
  t.same(sent.map((text) => text.split(' ')[0]), ['begin', 'INSERT', 'UPDATE'], 'begin, the write, the bump with the commit: no commit of its own')
  t.match(sent[2], /; COMMIT$/)
  t.equal(await name(1), 'r1', 'committed: seen from another connection')
  t.equal(Number((await other.query('SELECT value FROM change_counter')).rows[0].value), 1, 'the counter moved once')

  await t.rejects(writeTransaction(db, async (trx) => {
    await insert(2).execute(trx)
    throw new Error('refused')
  }), /refused/)
  t.equal(await name(2), undefined, 'a write that throws is rolled back')
  sent.length = 0
  await writeTransaction(db, async (trx) => { await insert(3).execute(trx) })
  t.equal(sent[0], 'begin', 'the next write opens its own transaction')
  t.equal(await name(3), 'r3')
  await sql`SELECT 1`.execute(db)
  t.equal(Number((await other.query('SELECT value FROM change_counter')).rows[0].value), 2)

  // The bump refused in the combined query: nothing commits, and the next write is whole.
  await other.query('ALTER TABLE change_counter ADD CONSTRAINT below_three CHECK (value < 3)')
  await t.rejects(writeTransaction(db, async (trx) => { await insert(4).execute(trx) }), { code: '23514' })
  t.equal(await name(4), undefined, 'the write whose bump failed is not committed')
  await other.query('ALTER TABLE change_counter DROP CONSTRAINT below_three')
  sent.length = 0
  await writeTransaction(db, async (trx) => { await insert(5).execute(trx) })
  t.same(sent.map((text) => text.split(' ')[0]), ['begin', 'INSERT', 'UPDATE'])
  t.equal(await name(5), 'r5')
  t.equal(Number((await other.query('SELECT value FROM change_counter')).rows[0].value), 3)
})
