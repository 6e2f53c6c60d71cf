import pg from 'pg'
import t from 'tap'
import { isDatabaseUnavailable } from '../db/engine.js'
import { applicationName } from '../db/postgres.js'
import { coalescedVersion, counterConnection } from '../db/postgres-version.js'
import { postgresAnswers, testSchema } from './pg.js'

const PG = process.env.TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test'

/** A query whose answers the test gives by hand, one per query sent, in order. */
function manualQuery () {
  const sent: Array<{ answer: (value: number) => void, fail: (err: Error) => void }> = []
  const query = async () => await new Promise<number>((resolve, reject) => sent.push({ answer: resolve, fail: reject }))
  return { sent, query }
}

const tick = async () => await new Promise((resolve) => setImmediate(resolve))

t.test('a read asked while a query is out waits for the next query, which answers everyone that asked meanwhile', async (t) => {
  const { sent, query } = manualQuery()
  const version = coalescedVersion(query)
  const first = version.read()
  t.equal(sent.length, 1, 'the first read sends a query')
  const second = version.read()
  const third = version.read()
  t.equal(sent.length, 1, 'reads asked while it is out send nothing yet')
  sent[0].answer(7)
  t.equal(await first, 7)
  await tick()
  t.equal(sent.length, 2, 'the next query is sent as soon as the first returns')
  const fourth = version.read()
  sent[1].answer(8)
  t.equal(await second, 8, 'not the answer of the query sent before it asked')
  t.equal(await third, 8)
  await tick()
  t.equal(sent.length, 3, 'a read asked while the second query was out waits for a third')
  sent[2].answer(9)
  t.equal(await fourth, 9)
  t.same(version.stats, { asked: 4, queries: 3 })
})

t.test('an idle reader sends one query per read; a failed query fails only its own batch', async (t) => {
  const { sent, query } = manualQuery()
  const version = coalescedVersion(query)
  const first = version.read()
  const second = version.read()
  sent[0].fail(new Error('connection lost'))
  await t.rejects(first, /connection lost/)
  await tick()
  sent[1].answer(3)
  t.equal(await second, 3)
  const third = version.read()
  t.equal(sent.length, 3)
  sent[2].answer(4)
  t.equal(await third, 4)
})

t.test('a query that throws at once rejects its batch and the reader goes on', async (t) => {
  let calls = 0
  const version = coalescedVersion(async () => {
    calls++
    if (calls === 1) throw new Error('pool closed')
    return 5
  })
  await t.rejects(version.read(), /pool closed/)
  t.equal(await version.read(), 5)
})

const skip = await postgresAnswers(PG) ? false : `no PostgreSQL answers at ${PG} (set TEST_DATABASE_URL)`
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
