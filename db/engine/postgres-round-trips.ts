import type pg from 'pg'
import { LOCK_STATEMENT } from './engine.js'
import { COMMITTING_STATEMENTS } from './transaction.js'

const COMMITTING = new Set(COMMITTING_STATEMENTS)
// Lock keys are ours (a table's name, a kind and an id): only such words go into a literal.
const LOCK_KEY = /^[\w.:-]{1,200}$/
const answered = (command: string): pg.QueryResult => ({ command, rowCount: null, rows: [], fields: [], oid: 0 })

type Send = (...args: unknown[]) => unknown

/** How much longer than PostgreSQL's own timeout the client waits for a committing statement. */
const COMMIT_MARGIN_MS = 200

/**
 * A PostgreSQL write makes two round trips fewer (see docs/development.md, "Benchmarks"): the
 * `begin` Kysely sends is held here and goes with the transaction's first statement when that is
 * its lock (db/engine/engine.ts) or its counter bump; a write's last statement carries its commit
 * (db/engine/transaction.ts), and the `commit` Kysely sends after it is answered here. Each joined pair
 * goes as one simple query; anything else goes as it is, a held `begin` queued first. Returns what
 * to call when the client goes back to the pool (nothing held is carried to its next user).
 */
export function joinRoundTrips (client: pg.PoolClient, left: () => number | undefined): () => void {
  const query = client.query.bind(client) as Send
  let held = false
  let committed = false
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
    const results = await simple(begins ? `BEGIN; ${bounded}` : bounded, ms === undefined ? 0 : COMMIT_MARGIN_MS)
    const [result, commit] = results.slice(-2)
    if (commit?.command !== 'COMMIT') throw new Error('the write was not committed')
    committed = true
    return result
  }
  const sending: Send = (...args) => {
    const [text, values] = args
    const [wasHeld, wasCommitted] = [held, committed]
    held = committed = false
    const plain = typeof text === 'string' && Array.isArray(values) && args.length === 2
    if (!plain) return wasHeld ? afterBegin(args) : query(...args)
    if (text === 'begin' && values.length === 0) {
      held = true
      return Promise.resolve(answered('BEGIN'))
    }
    // Nothing was sent since the held begin (an empty transaction), or the last statement committed.
    if (values.length === 0 && ((wasHeld && (text === 'commit' || text === 'rollback')) || (wasCommitted && text === 'commit'))) {
      return Promise.resolve(answered(text.toUpperCase()))
    }
    if (COMMITTING.has(text) && values.length === 0) return commits(text, wasHeld)
    if (wasHeld && text === LOCK_STATEMENT && typeof values[0] === 'string' && LOCK_KEY.test(values[0])) {
      return simple(`BEGIN; ${LOCK_STATEMENT.replace('$1', `'${values[0]}'`)}`).then((results) => results[1])
    }
    return wasHeld ? afterBegin(args) : query(...args)
  }
  // One at a time: pg 9 drops its queue for a query sent while another runs (8.x warns). The begin
  // goes out at once, so a statement sent meanwhile still comes after it.
  const afterBegin = async (args: unknown[]): Promise<unknown> => {
    await query('begin')
    return await query(...args)
  }
  Object.assign(client, { query: sending })
  return () => { held = committed = false }
}
