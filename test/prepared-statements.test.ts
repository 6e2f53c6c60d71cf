import { sql } from 'kysely'
import t from 'tap'
import { migrate } from '../db/engine/migrations/index.js'
import { postgresKysely } from '../db/engine/postgres.js'
import { prepared } from '../db/engine/prepared.js'
import { changeVersion } from '../db/engine/transaction.js'
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
