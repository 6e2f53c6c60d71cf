import type { InjectOptions } from 'fastify'
import { sql } from 'kysely'
import pg from 'pg'
import t from 'tap'
import { lockFor } from '../db/engine/engine.js'
import { migrate } from '../db/engine/migrations/index.js'
import { postgresKysely } from '../db/engine/postgres.js'
import { prepared } from '../db/engine/prepared.js'
import { atomic, bumpedByStatement, writeTransaction } from '../db/engine/transaction.js'
import { firstPostgresInstance, P, REPO, TOKENS } from './helper.js'
import { ranOnce } from './once.js'
import { postgresAnswers, recordSent, testSchema } from './pg.js'

/** Every transaction names its isolation level; the counts below read its begin as Kysely's \`begin\` (alone) or \`BEGIN;\` (joined). */
const BEGIN = 'BEGIN ISOLATION LEVEL READ COMMITTED'
const plainBegin = (text: string) => text === BEGIN ? 'begin' : text.startsWith(`${BEGIN}; `) ? `BEGIN; ${text.slice(BEGIN.length + 2)}` : text
const PG = process.env.TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test'
const skip = ranOnce !== false ? ranOnce : await postgresAnswers(PG) ? false : `no PostgreSQL answers at ${PG} (set TEST_DATABASE_URL)`

t.test('on PostgreSQL a write sends its begin with its lock and its counter bump with its commit', { skip }, async (t) => {
  const { schema, drop } = await testSchema(PG)
  // What the connection sends, recorded below the pool's wrappers (installed when it connects).
  const sent = recordSent(t)
  const db = postgresKysely({ url: PG, schema, poolMax: 1, timeoutMs: 5000 })
  const other = new pg.Client({ connectionString: PG, options: `-c search_path=${schema}` })
  t.teardown(async () => {
    await other.end()
    await db.destroy()
    await drop()
  })
  await migrate(db, 'postgres', schema)
  await other.connect()
  const name = async (id: number) => (await other.query('SELECT name FROM repositories WHERE id = $1', [id])).rows[0]?.name as string | undefined
  const counter = async () => Number((await other.query('SELECT value FROM change_counter')).rows[0].value)
  const insert = (id: number) => sql`INSERT INTO repositories (id, owner, name, html_url) VALUES (${id}, 'o', ${`r${id}`}, '')`
  // A committing statement first gives PostgreSQL what is left of the deadline (db/engine/postgres.ts).
  const firstWords = () => sent.map((text) => plainBegin(text).replace(/SET LOCAL statement_timeout = \d+; /, '').split(' ').slice(0, 2).join(' '))

  sent.length = 0
  t.equal(await writeTransaction(db, async (trx) => { await insert(1).execute(trx); return 'done' }), 'done')
  t.same(firstWords(), ['begin', 'INSERT INTO', 'UPDATE change_counter'], 'begin, the write, the bump with the commit: no commit of its own')
  t.match(sent[2], /^SET LOCAL statement_timeout = \d+; UPDATE change_counter .*; COMMIT$/, 'the commit bounded by what is left of the deadline')
  t.equal(await name(1), 'r1', 'committed: seen from another connection')
  t.equal(await counter(), 1, 'the counter moved once')

  sent.length = 0
  await writeTransaction(db, async (trx) => {
    await lockFor(trx, 'repositories:2')
    await insert(2).execute(trx)
  })
  t.same(firstWords(), ['BEGIN; SELECT', 'INSERT INTO', 'UPDATE change_counter'], 'a write that locks first: three round trips')
  t.equal(sent[0], `${BEGIN}; SELECT pg_advisory_xact_lock(hashtext('repositories:2'))`, 'READ COMMITTED, named in the begin')
  t.equal(await name(2), 'r2')

  sent.length = 0
  await writeTransaction(db, async (trx) => { await lockFor(trx, "it's not a key of ours") })
  t.same(firstWords(), ['begin', 'SELECT pg_advisory_xact_lock(hashtext($1))', 'UPDATE change_counter'], 'a key with other characters goes as a parameter, after its own begin')

  sent.length = 0
  await writeTransaction(db, async () => {})
  t.same(firstWords(), ['BEGIN; UPDATE'], 'a write with nothing but the bump: one round trip')
  t.equal(await counter(), 4)

  await t.rejects(writeTransaction(db, async (trx) => {
    await lockFor(trx, 'repositories:3')
    await insert(3).execute(trx)
    throw new Error('refused')
  }), /refused/)
  t.equal(await name(3), undefined, 'a write that throws is rolled back')
  sent.length = 0
  await writeTransaction(db, async (trx) => { await insert(4).execute(trx) })
  t.equal(sent[0], BEGIN, 'the next write opens its own transaction')
  t.equal(await name(4), 'r4')
  t.equal(await counter(), 5)

  sent.length = 0
  t.equal(await atomic(db, async () => 'nothing'), 'nothing')
  t.same(sent, [], 'a transaction that sends nothing costs no round trip')
  await atomic(db, async (trx) => { await insert(5).execute(trx) })
  t.same(firstWords(), ['begin', 'INSERT INTO', 'commit'], 'one without the bump commits as usual')
  t.equal(await name(5), 'r5')
  t.equal(await counter(), 5, 'and leaves the counter alone')

  // The bump refused in the joined query: nothing commits, and the next write is whole.
  await other.query('ALTER TABLE change_counter ADD CONSTRAINT below_six CHECK (value < 6)')
  await t.rejects(writeTransaction(db, async (trx) => { await insert(6).execute(trx) }), { code: '23514' })
  t.equal(await name(6), undefined, 'the write whose bump failed is not committed')
  await t.rejects(writeTransaction(db, async () => {}), { code: '23514' }, 'joined with its begin too')
  await other.query('ALTER TABLE change_counter DROP CONSTRAINT below_six')
  sent.length = 0
  await writeTransaction(db, async (trx) => { await insert(7).execute(trx) })
  t.same(firstWords(), ['begin', 'INSERT INTO', 'UPDATE change_counter'])
  t.equal(await name(7), 'r7')
  t.equal(await counter(), 6)

  // A lock that waits past the statement timeout: the transaction fails whole, the connection serves the next.
  await other.query('BEGIN')
  await other.query('SELECT pg_advisory_xact_lock(hashtext($1))', ['repositories:8'])
  await sql`SET statement_timeout = 200`.execute(db)
  await t.rejects(writeTransaction(db, async (trx) => {
    await lockFor(trx, 'repositories:8')
    await insert(8).execute(trx)
  }), { code: '57014' })
  await other.query('ROLLBACK')
  t.equal(await name(8), undefined)
  await writeTransaction(db, async (trx) => {
    await lockFor(trx, 'repositories:8')
    await insert(8).execute(trx)
  })
  t.equal(await name(8), 'r8', 'the lock free again: the write goes through')
  t.equal(await counter(), 7)
})

t.test('a lock taken before the next statement goes with it, as EXECUTE of the named statement, and that statement reads what the last holder committed', { skip }, async (t) => {
  const { schema, drop } = await testSchema(PG)
  let failExecute = false
  const sent = recordSent(t, (text) => failExecute && /EXECUTE planning_/.test(text)
    ? Object.assign(new Error('prepared statement does not exist'), { code: '26000', routine: 'FetchPreparedStatement' })
    : undefined)
  const db = postgresKysely({ url: PG, schema, poolMax: 1, timeoutMs: 5000 })
  const other = new pg.Client({ connectionString: PG, options: `-c search_path=${schema}` })
  t.teardown(async () => {
    await other.end()
    await db.destroy()
    await drop()
  })
  await migrate(db, 'postgres', schema)
  await other.connect()
  const named = prepared<{ owner: string, from: number }>()((db, p) => db.selectFrom('repositories').select((eb) => eb.fn.countAll<number>().as('n'))
    .where('owner', '=', p.owner).where('id', '>=', p.from))
  let next = 100
  const write = async (owner: string, from: number) => await writeTransaction(db, async (trx) => {
    await lockFor(trx, 'repositories', { beforeNextStatement: true })
    const { rows } = await named(trx, { owner, from })
    const id = next++
    await sql`INSERT INTO repositories (id, owner, name, html_url) VALUES (${id}, ${owner}, ${`r${id}`}, '')`.execute(trx)
    return Number(rows[0].n)
  })
  const firstWords = () => sent.map((text) => plainBegin(text).replace(/SET LOCAL statement_timeout = \d+; /, '').split(' ').slice(0, 2).join(' '))

  sent.length = 0
  t.equal(await write("o'wn\\er", 1), 0)
  t.same(firstWords(), ['BEGIN; SELECT', 'select count(*)', 'INSERT INTO', 'UPDATE change_counter'], 'the statement not parsed on this connection yet: the lock goes first, on its own')
  sent.length = 0
  t.equal(await write("o'wn\\er", 1), 1, 'a quote and a backslash in a value: the same answer as a parameter gives')
  t.match(sent[0], /^BEGIN ISOLATION LEVEL READ COMMITTED; SELECT pg_advisory_xact_lock\(hashtext\('repositories'\)\); EXECUTE planning_\w+\( ?E'o''wn\\\\er', 1\)$/,
    'parsed: the begin, the lock and the statement in one round trip, values as literals')
  t.same(firstWords().slice(1), ['INSERT INTO', 'UPDATE change_counter'])

  // Another transaction holds the lock and has written a row: the joined statement waits for the
  // lock, then reads the row once it is committed (its snapshot is taken after the lock, not before).
  await other.query('BEGIN')
  await other.query("SELECT pg_advisory_xact_lock(hashtext('repositories'))")
  await other.query("INSERT INTO repositories (id, owner, name, html_url) VALUES (200, 'x', 'r', '')")
  const waiting = write('x', 1)
  await new Promise((resolve) => setTimeout(resolve, 200))
  await other.query('COMMIT')
  t.equal(await waiting, 1, 'the row the last holder committed is counted')

  // Anything but a parsed named statement after the lock: the lock goes first, then it.
  sent.length = 0
  await writeTransaction(db, async (trx) => {
    await lockFor(trx, 'repositories', { beforeNextStatement: true })
    await sql`INSERT INTO repositories (id, owner, name, html_url) VALUES (300, 'y', 'r', '')`.execute(trx)
  })
  t.same(firstWords(), ['BEGIN; SELECT', 'INSERT INTO', 'UPDATE change_counter'])
  sent.length = 0
  await writeTransaction(db, async (trx) => { await lockFor(trx, 'repositories', { beforeNextStatement: true }) })
  t.same(firstWords(), ['BEGIN; SELECT', 'UPDATE change_counter'], 'a lock and nothing after it but the bump: the lock first')
  t.equal(Number((await other.query("SELECT count(*) AS n FROM repositories WHERE owner = 'y'")).rows[0].n), 1)

  // Behind a pooler that renames prepared statements on the server, EXECUTE by our name finds none:
  // the write goes again as it would have, and the pool stops joining.
  failExecute = true
  sent.length = 0
  t.equal(await write('z', 1), 0)
  t.same(firstWords(), ['BEGIN; SELECT', 'ROLLBACK', 'BEGIN; SELECT', 'select count(*)', 'INSERT INTO', 'UPDATE change_counter'], 'tried once, undone, sent again')
  t.match(sent[0], /EXECUTE planning_/)
  sent.length = 0
  t.equal(await write('z', 1), 1, 'the first one committed once')
  t.same(firstWords(), ['BEGIN; SELECT', 'select count(*)', 'INSERT INTO', 'UPDATE change_counter'], 'no EXECUTE any more on this pool')
})

t.test('a lock taken before the last statement goes with it and the commit: one round trip, reading what the last holder committed', { skip }, async (t) => {
  const { schema, drop } = await testSchema(PG)
  let failExecute = false
  const sent = recordSent(t, (text) => failExecute && /EXECUTE planning_/.test(text)
    ? Object.assign(new Error('prepared statement does not exist'), { code: '26000', routine: 'FetchPreparedStatement' })
    : undefined)
  const db = postgresKysely({ url: PG, schema, poolMax: 1, timeoutMs: 5000 })
  const other = new pg.Client({ connectionString: PG, options: `-c search_path=${schema}` })
  t.teardown(async () => {
    await other.end()
    await db.destroy()
    await drop()
  })
  await migrate(db, 'postgres', schema)
  await other.connect()
  // The last statement: a row made with the count of the owner's rows before it, and the counter bumped, in one statement.
  const last = prepared<{ id: number, owner: string }>()((db, p) => ({
    compile: () => sql<{ n: string, value: string, listeners: string[] }>`WITH counted AS (SELECT count(*) AS n FROM repositories WHERE owner = ${p.owner}),
      made AS (INSERT INTO repositories (id, owner, name, html_url) SELECT ${p.id}, ${p.owner}, 'r' || ${p.id}, '' RETURNING id),
      bumped AS (UPDATE change_counter SET value = value + 1 WHERE id = 1 AND EXISTS (SELECT 1 FROM made) RETURNING value, listeners)
      SELECT (SELECT n FROM counted) AS n, (SELECT value FROM bumped) AS value, (SELECT listeners FROM bumped) AS listeners`.compile(db)
  }))
  let next = 100
  const write = async (owner: string) => await writeTransaction(db, async (trx) => {
    await lockFor(trx, 'repositories', { beforeLastStatement: true })
    const { rows } = await last(trx, { id: next++, owner })
    bumpedByStatement(trx, Number(rows[0].value), rows[0].listeners)
    return Number(rows[0].n)
  })
  const counter = async () => Number((await other.query('SELECT value FROM change_counter')).rows[0].value)
  const count = async (owner: string) => Number((await other.query('SELECT count(*) AS n FROM repositories WHERE owner = $1', [owner])).rows[0].n)
  const firstWords = () => sent.map((text) => plainBegin(text).replace(/SET LOCAL statement_timeout = \d+; /, '').split(' ').slice(0, 2).join(' '))

  sent.length = 0
  t.equal(await write('a'), 0)
  t.same(firstWords(), ['BEGIN; SELECT', 'WITH counted', 'commit'], 'not parsed on this connection yet: the lock first, the statement, then the commit as Kysely sends it')
  t.equal(await count('a'), 1, 'committed')
  t.equal(await counter(), 1, 'the counter moved once, by the statement')
  sent.length = 0
  t.equal(await write('a'), 1)
  t.equal(sent.length, 1, 'parsed: one round trip')
  t.match(sent[0], /^BEGIN ISOLATION LEVEL READ COMMITTED; SET LOCAL statement_timeout = \d+; SELECT pg_advisory_xact_lock\(hashtext\('repositories'\)\); EXECUTE planning_\w+\('a', \d+, 'a', \d+\); COMMIT$/)
  t.equal(await count('a'), 2, 'committed, seen from another connection')
  t.equal(await counter(), 2)
  const bound = Number(/statement_timeout = (\d+)/.exec(sent[0])![1])
  t.ok(bound > 0 && bound <= 2500, `the lock's wait and the statement get half the 5 s deadline each, never past it together (${bound} ms)`)

  // Nothing may run after the joined commit but Kysely's own commit: it would run outside the transaction.
  sent.length = 0
  await t.rejects(writeTransaction(db, async (trx) => {
    await lockFor(trx, 'repositories', { beforeLastStatement: true })
    const { rows } = await last(trx, { id: next++, owner: 'a' })
    bumpedByStatement(trx, Number(rows[0].value), rows[0].listeners)
    await sql`INSERT INTO repositories (id, owner, name, html_url) VALUES (301, 'late', 'r', '')`.execute(trx)
  }), /after its transaction committed/)
  t.equal(sent.length, 1, 'the late statement was never sent')
  t.equal(await count('late'), 0)
  t.equal(await count('a'), 3, 'the joined statement itself committed')
  t.equal(await write('d'), 0, 'the connection serves the next write')

  // Another transaction holds the lock and has made a row: the joined statement waits, then counts it.
  await other.query('BEGIN')
  await other.query("SELECT pg_advisory_xact_lock(hashtext('repositories'))")
  await other.query("INSERT INTO repositories (id, owner, name, html_url) VALUES (300, 'a', 'r', '')")
  const waiting = write('a')
  await new Promise((resolve) => setTimeout(resolve, 200))
  await other.query('COMMIT')
  t.equal(await waiting, 4, 'the row the last holder committed is counted')

  // A statement that fails: nothing of it commits, and the connection serves the next write.
  sent.length = 0
  await t.rejects(writeTransaction(db, async (trx) => {
    await lockFor(trx, 'repositories', { beforeLastStatement: true })
    await last(trx, { id: 300, owner: 'a' })
  }), { code: '23505' })
  t.match(sent[0], /EXECUTE planning_\w+\('a', 300, 'a', 300\); COMMIT$/)
  t.equal(await counter(), 5, 'the counter where it was')
  t.equal(await write('b'), 0)
  t.equal(await count('b'), 1)

  // Behind a pooler that renames prepared statements: undone, sent again as a parameterized statement, committed by Kysely's commit.
  failExecute = true
  sent.length = 0
  t.equal(await write('c'), 0)
  t.same(firstWords(), ['BEGIN; SELECT', 'ROLLBACK', 'BEGIN; SELECT', 'WITH counted', 'commit'], 'tried once, undone, sent again')
  t.equal(await count('c'), 1, 'committed once')
  t.equal(await counter(), 7)
})

t.test('no query is sent on a connection while another runs there (pg 8 warns, pg 9 refuses): at start and in writes', { skip }, async (t) => {
  const overlapping: string[] = []
  const send = pg.Client.prototype.query
  pg.Client.prototype.query = function (this: pg.Client & { _activeQuery?: unknown, _queryQueue?: unknown[] }, ...args: unknown[]) {
    if (this._activeQuery != null || (this._queryQueue?.length ?? 0) > 0) {
      const [query] = args
      overlapping.push(typeof query === 'string' ? query : String((query as { text?: string }).text))
    }
    return (send as (...a: unknown[]) => unknown).apply(this, args)
  } as typeof send
  const warnings: string[] = []
  const warned = (warning: Error): void => { if (/already executing a query/.test(warning.message)) warnings.push(warning.message) }
  process.on('warning', warned)
  t.teardown(() => {
    pg.Client.prototype.query = send
    process.off('warning', warned)
  })
  const { a, drop } = await firstPostgresInstance(t, PG)
  t.teardown(async () => {
    await a.close()
    await drop()
  })
  const as = async (login: keyof typeof TOKENS, options: InjectOptions) => await a.inject({ ...options, headers: { 'x-authentication-token': TOKENS[login] } })
  t.equal((await as('bob', { method: 'PUT', url: `/p1/repositories/${REPO}/issues/3/estimate`, payload: { estimate: 2 } })).statusCode, 200)
  t.equal((await as('bob', { method: 'POST', url: `/p1/repositories/${REPO}/issues/3/moves`, payload: { pipeline_id: P.doing, position: 'top' } })).statusCode, 200)
  t.equal((await as('alice', { url: `/p1/repositories/${REPO}/board` })).statusCode, 200)
  t.same(overlapping, [], 'each query waited for the one before')
  t.same(warnings, [], 'pg gave no warning')
})

t.test('on PostgreSQL every transaction is READ COMMITTED, whatever the server\'s default', { skip }, async (t) => {
  // A role whose own default is REPEATABLE READ, as a database administrator may set one.
  const role = `planning_rr_${process.pid}`
  const admin = new pg.Client({ connectionString: PG })
  await admin.connect()
  await admin.query(`CREATE ROLE ${role} LOGIN`)
  await admin.query(`ALTER ROLE ${role} SET default_transaction_isolation = 'repeatable read'`)
  const url = new URL(PG)
  url.username = role
  t.teardown(async () => {
    await admin.query(`DROP ROLE IF EXISTS ${role}`)
    await admin.end()
  })
  const bare = new pg.Client({ connectionString: url.href })
  await bare.connect()
  t.equal((await bare.query('SHOW transaction_isolation')).rows[0].transaction_isolation, 'repeatable read', 'the role\'s default, on a connection of its own')
  await bare.end()
  const db = postgresKysely({ url: url.href, poolMax: 1 })
  t.teardown(async () => { await db.destroy() })
  const level = await db.transaction().execute(async (trx) => (await sql<{ level: string }>`SELECT current_setting('transaction_isolation') AS level`.execute(trx)).rows[0].level)
  t.equal(level, 'read committed', 'the pool\'s transactions')
})
