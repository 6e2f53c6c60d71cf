import type pg from 'pg'
import { LOCK_BEFORE_LAST_STATEMENT, LOCK_BEFORE_NEXT_STATEMENT, LOCK_STATEMENT } from './engine.js'
import { isCommitting } from './transaction.js'

/**
 * How every transaction begins: READ COMMITTED, named, whatever the server's or the role's default.
 * The writes take their lock in a transaction's first statement and then read what others committed
 * before it (a new dependency's cycle check); a REPEATABLE READ or SERIALIZABLE snapshot would be from
 * before the lock. Named here rather than in the connection's startup options, which poolers such as
 * PgBouncer refuse and a connection string's own options would replace.
 */
const BEGIN = 'BEGIN ISOLATION LEVEL READ COMMITTED'
// Lock keys are ours (a table's name, a kind and an id): only such words go into a literal.
const LOCK_KEY = /^[\w.:-]{1,200}$/
const answered = (command: string): pg.QueryResult => ({ command, rowCount: null, rows: [], fields: [], oid: 0 })

type Send = (...args: unknown[]) => unknown

const lockSql = (key: string): string => LOCK_STATEMENT.replace('$1', `'${key}'`)

/**
 * A value as a literal PostgreSQL reads as it reads the same value sent as a parameter of an
 * untyped statement (a string through pg's own escaping, an integer as digits); undefined for
 * anything else (the statement then goes as a parameterized one).
 */
function literalOf (client: pg.PoolClient, value: unknown): string | undefined {
  if (value === null) return 'NULL'
  if (typeof value === 'number') return Number.isSafeInteger(value) ? String(value) : undefined
  if (typeof value === 'string') return client.escapeLiteral(value)
  return undefined
}

/** `EXECUTE name(literals)` for a named statement this connection has parsed (its plan kept), or undefined. */
function executeOf (client: pg.PoolClient, args: unknown[]): string | undefined {
  const [config] = args
  if (args.length !== 1 || typeof config !== 'object' || config === null) return undefined
  const { name, text, values } = config as { name?: unknown, text?: unknown, values?: unknown }
  if (typeof name !== 'string' || !/^\w{1,63}$/.test(name) || Object.keys(config).some((k) => k !== 'name' && k !== 'text' && k !== 'values')) return undefined
  const parsed = (client as unknown as { connection?: { parsedStatements?: Record<string, string> } }).connection?.parsedStatements
  if (parsed?.[name] !== text) return undefined
  const literals = (Array.isArray(values) ? values : []).map((value) => literalOf(client, value))
  if (literals.some((l) => l === undefined)) return undefined
  return literals.length === 0 ? `EXECUTE ${name}` : `EXECUTE ${name}(${literals.join(', ')})`
}

/**
 * What the connections of one pool share: whether `EXECUTE` of a named statement works there. A
 * pooler that keeps protocol-level prepared statements for its clients (PgBouncer 1.21 and later)
 * names them otherwise on the server, so an `EXECUTE` by our name finds none: the first such
 * failure turns joining off for the pool, and that write goes again as it would have.
 */
export interface JoinedStatements { execute: boolean }

/** How much longer than PostgreSQL's own timeout the client waits for a committing statement. */
const COMMIT_MARGIN_MS = 200

/**
 * A PostgreSQL write makes two round trips fewer (see docs/development.md, "Benchmarks"): the
 * `begin` Kysely sends is held here and goes with the transaction's first statement when that is
 * its lock (db/engine/engine.ts) or its counter bump; a write's last statement carries its commit
 * (db/engine/transaction.ts), and the `commit` Kysely sends after it is answered here. A lock taken
 * `beforeNextStatement` is held too, and goes with its begin and the statement after it when that
 * is a named statement this connection has parsed (db/engine/prepared.ts): as `EXECUTE name(values)`,
 * its values written as literals, so the lock, the statement and the begin cost one round trip. A
 * lock taken `beforeLastStatement` sends the commit with them as well (that statement bumps the
 * counter itself), and the `commit` Kysely sends after it is answered here.
 * Each joined group goes as one simple query; anything else goes as it is, what is held queued
 * first. Returns what to call when the client goes back to the pool (nothing held is carried to
 * its next user).
 */
export function joinRoundTrips (client: pg.PoolClient, left: () => number | undefined, pool: JoinedStatements = { execute: true }): () => void {
  const query = client.query.bind(client) as Send
  let held = false
  let committed = false
  // The key of a lock taken `beforeNextStatement` and not sent yet (its begin is held with it);
  // `last`: taken `beforeLastStatement`, the commit goes with the statement after it.
  let lock: string | undefined
  let last = false
  // What is left of the checkout's deadline (db/engine/postgres.ts) bounds a joined statement too.
  // A committing one also tells PostgreSQL (PostgreSQL times each statement of a simple query on
  // its own): a statement stuck on a lock is cancelled there, nothing committed, a moment before the
  // client gives up, rather than left to commit after the client answered that it failed.
  const simple = async (text: string, extraMs = 0): Promise<pg.QueryResult[]> => {
    const ms = left()
    const results = await (query(ms === undefined ? text : { text, query_timeout: Math.max(1, Math.ceil(ms + extraMs)) }) as Promise<pg.QueryResult[]>)
    if (!Array.isArray(results)) throw new Error('PostgreSQL answered a joined statement with one result')
    return results
  }
  const commits = async (text: string, begins: boolean): Promise<pg.QueryResult> => {
    const ms = left()
    const bounded = ms === undefined || ms <= 0 ? text : `SET LOCAL statement_timeout = ${Math.ceil(ms)}; ${text}`
    const results = await simple(begins ? `${BEGIN}; ${bounded}` : bounded, ms === undefined ? 0 : COMMIT_MARGIN_MS)
    const [result, commit] = results.slice(-2)
    if (commit?.command !== 'COMMIT') throw new Error('the write was not committed')
    committed = true
    return result
  }
  const sending: Send = (...args) => {
    const [wasHeld, wasCommitted, lockHeld, lockLast] = [held, committed, lock, last]
    held = committed = last = false
    lock = undefined
    if (lockHeld !== undefined) return withLock(lockHeld, args, lockLast)
    return dispatch(args, wasHeld, wasCommitted)
  }
  const dispatch = (args: unknown[], wasHeld: boolean, wasCommitted: boolean): unknown => {
    const [text, values] = args
    const plain = typeof text === 'string' && Array.isArray(values) && args.length === 2
    // A joined statement committed the transaction: anything more would run outside it, on its own.
    if (wasCommitted && !(plain && values.length === 0 && (text === 'commit' || text === 'rollback'))) {
      committed = true // until the commit or rollback that ends it
      return Promise.reject(new Error('a statement after its transaction committed with the statement before it'))
    }
    if (!plain) return wasHeld ? afterBegin(args) : query(...args)
    if (text === 'begin' && values.length === 0) {
      held = true
      return Promise.resolve(answered('BEGIN'))
    }
    // Nothing was sent since the held begin (an empty transaction), or the last statement committed
    // (what the caller did after it cannot undo it: it wrote nothing more).
    if (values.length === 0 && (wasHeld || wasCommitted) && (text === 'commit' || text === 'rollback')) {
      return Promise.resolve(answered(text.toUpperCase()))
    }
    if (isCommitting(text) && values.length === 0) return commits(text, wasHeld)
    const key = values[0]
    if (wasHeld && (text === LOCK_STATEMENT || text === LOCK_BEFORE_NEXT_STATEMENT || text === LOCK_BEFORE_LAST_STATEMENT) && typeof key === 'string' && LOCK_KEY.test(key)) {
      if (text !== LOCK_STATEMENT) {
        lock = key
        last = text === LOCK_BEFORE_LAST_STATEMENT
        return Promise.resolve(answered('SELECT'))
      }
      return simple(`${BEGIN}; ${lockSql(key)}`).then((results) => results[1])
    }
    return wasHeld ? afterBegin(args) : query(...args)
  }
  // The held begin and lock go with the statement after them when it can go as EXECUTE (and the
  // commit after it, for the last statement); else first, on their own, and the statement after
  // them as it would have gone (the commit then comes as Kysely sends it).
  const withLock = async (key: string, args: unknown[], commit: boolean): Promise<unknown> => {
    const [text, values] = args
    if (typeof text === 'string' && Array.isArray(values) && values.length === 0 && (text === 'commit' || text === 'rollback')) return answered(text.toUpperCase())
    const executed = pool.execute ? executeOf(client, args) : undefined
    if (executed !== undefined) {
      try {
        if (!commit) return (await simple(`${BEGIN}; ${lockSql(key)}; ${executed}`))[2]
        // PostgreSQL times each statement of a simple query on its own: the lock's wait and the
        // statement get half of what is left each, so neither can commit after the client gave up.
        const ms = left()
        const bounded = ms === undefined || ms <= 0 ? '' : `SET LOCAL statement_timeout = ${Math.max(1, Math.floor(ms / 2))}; `
        const results = await simple(`${BEGIN}; ${bounded}${lockSql(key)}; ${executed}; COMMIT`, ms === undefined ? 0 : COMMIT_MARGIN_MS)
        const [result, done] = results.slice(-2)
        if (done?.command !== 'COMMIT') throw new Error('the write was not committed')
        committed = true
        return result
      } catch (err) {
        if ((err as { code?: unknown }).code !== '26000') throw err
        // Nothing of the transaction stands (it failed at its statement): undone, then sent again.
        pool.execute = false
        await query('ROLLBACK')
      }
    }
    await simple(`${BEGIN}; ${lockSql(key)}`)
    return await dispatch(args, false, false)
  }
  // One at a time: pg 9 drops its queue for a query sent while another runs (8.x warns). The begin
  // goes out at once, so a statement sent meanwhile still comes after it.
  const afterBegin = async (args: unknown[]): Promise<unknown> => {
    await query(BEGIN)
    return await query(...args)
  }
  Object.assign(client, { query: sending })
  return () => {
    held = committed = last = false
    lock = undefined
  }
}
