import pg from 'pg'
import t from 'tap'
import { isDatabaseUnavailable } from '../db/engine/engine.js'
import { applicationName } from '../db/engine/postgres.js'
import { counterConnection } from '../db/engine/postgres-version.js'
import { ranOnce } from './once.js'
import { postgresAnswers, testSchema } from './pg.js'

const PG = process.env.TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test'

const skip = ranOnce !== false ? ranOnce : await postgresAnswers(PG) ? false : `no PostgreSQL answers at ${PG} (set TEST_DATABASE_URL)`
t.test('the counter connection: reads the counter as it moves, opens itself again after PostgreSQL drops it', { skip }, async (t) => {
  const { schema, drop } = await testSchema(PG)
  const other = new pg.Client({ connectionString: PG, options: `-c search_path=${schema}` })
  await other.connect()
  t.teardown(async () => {
    await other.end()
    await drop()
  })
  await other.query('CREATE TABLE change_counter (id INTEGER PRIMARY KEY, value BIGINT NOT NULL); INSERT INTO change_counter VALUES (1, 5)')
  const dropped: Error[] = []
  const counter = counterConnection({ url: PG, schema, timeoutMs: 2000, onConnectionError: (err) => dropped.push(err) })
  t.equal(await counter.read(), 5)
  await other.query('UPDATE change_counter SET value = value + 1')
  t.equal(await counter.read(), 6, 'a write on another connection is read at once')

  const { rowCount } = await other.query('SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = $1', [applicationName(schema)])
  t.equal(rowCount, 1, 'its one backend terminated')
  await other.query('UPDATE change_counter SET value = value + 1')
  const failures: unknown[] = []
  let value: number | undefined
  for (let i = 0; value === undefined && i < 5; i++) value = await counter.read().catch((err: unknown) => { failures.push(err); return undefined })
  t.equal(value, 7, 'read again on a new connection')
  t.ok(failures.length <= 1 && failures.every(isDatabaseUnavailable), 'at most the read in flight fails, as the database being away')
  t.ok(dropped.length <= 1, 'the drop is reported')

  await counter.close()
  await t.rejects(counter.read(), /closed/, 'a closed connection reads no more')
})
