import { PostgresAdapter, sql } from 'kysely'
import type { Executor } from '../schema.js'

export type Engine = 'sqlite' | 'postgres'

export function engineOf (db: Executor): Engine {
  return db.getExecutor().adapter instanceof PostgresAdapter ? 'postgres' : 'sqlite'
}

/**
 * Serializes write transactions that touch the same thing (a pipeline's order, the dependency
 * graph): on PostgreSQL a transaction-scoped advisory lock on the key, held until commit; on
 * SQLite nothing is needed, as write transactions already run one at a time (BEGIN IMMEDIATE).
 */
export async function lockFor (trx: Executor, key: string, options: { beforeNextStatement?: boolean, beforeLastStatement?: boolean } = {}): Promise<void> {
  if (engineOf(trx) !== 'postgres') return
  if (options.beforeLastStatement === true) await sql`SELECT pg_advisory_xact_lock(hashtext(${key})) AS before_last`.execute(trx)
  else if (options.beforeNextStatement === true) await sql`SELECT pg_advisory_xact_lock(hashtext(${key})) AS before_next`.execute(trx)
  else await sql`SELECT pg_advisory_xact_lock(hashtext(${key}))`.execute(trx)
}

/** The lock's SQL as it is sent (db/engine/postgres-round-trips.ts sends it with the transaction's begin). */
export const LOCK_STATEMENT = 'SELECT pg_advisory_xact_lock(hashtext($1))'
/**
 * The same lock, taken with `beforeNextStatement`: the caller promises that the next thing it does
 * is a statement on the same transaction (no wait for anything else in between), so the lock may be
 * sent with that statement, in one round trip (db/engine/postgres-round-trips.ts).
 */
export const LOCK_BEFORE_NEXT_STATEMENT = 'SELECT pg_advisory_xact_lock(hashtext($1)) AS before_next'
/**
 * The same lock, taken with `beforeLastStatement`: more than `beforeNextStatement`, the statement
 * after it is the transaction's last and bumps the change counter itself (`bumpedByStatement` in
 * db/engine/transaction.ts), so the commit may go with them too: begin, lock, statement and commit
 * in one round trip.
 */
export const LOCK_BEFORE_LAST_STATEMENT = 'SELECT pg_advisory_xact_lock(hashtext($1)) AS before_last'

/** Whether an error is a unique-constraint violation (two writers raced to the same key). */
export function isUniqueViolation (err: unknown): boolean {
  const code = (err as { code?: unknown }).code
  return code === '23505' || code === 'SQLITE_CONSTRAINT_UNIQUE' || code === 'SQLITE_CONSTRAINT_PRIMARYKEY'
}

// PostgreSQL's SQLSTATEs for a server going away or not taking connections (yet), and a statement
// cancelled by statement_timeout.
const UNAVAILABLE_STATES = new Set(['57P01', '57P02', '57P03', '57014', '53300'])
const UNAVAILABLE_SOCKET = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'EHOSTUNREACH', 'ENETUNREACH', 'EAI_AGAIN'])
// What pg itself says when a connection is lost, cannot be had in time (from the pool, or by a
// client of its own: "timeout expired"), or a query timed out.
const UNAVAILABLE_MESSAGE = /^(Connection terminated|timeout exceeded when trying to connect|timeout expired$|Query read timeout|Client has encountered a connection error|Client was closed)/

/**
 * Whether an error means the database is out of reach for now (restarting, stopped, hung, or a
 * connection lost on the way) rather than that the request was wrong: such a request may be retried.
 */
export function isDatabaseUnavailable (err: unknown): boolean {
  if (err === null || typeof err !== 'object') return false
  const { code, message } = err as { code?: unknown, message?: unknown }
  if (typeof code === 'string' && (UNAVAILABLE_STATES.has(code) || code.startsWith('08') || UNAVAILABLE_SOCKET.has(code))) return true
  if (typeof message === 'string' && UNAVAILABLE_MESSAGE.test(message)) return true
  // A connection refused by every address of a name arrives as an AggregateError of socket errors.
  return err instanceof AggregateError && err.errors.some(isDatabaseUnavailable)
}
