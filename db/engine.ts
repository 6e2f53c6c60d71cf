import { PostgresAdapter, sql } from 'kysely'
import type { Executor } from './transaction.js'

export type Engine = 'sqlite' | 'postgres'

export function engineOf (db: Executor): Engine {
  return db.getExecutor().adapter instanceof PostgresAdapter ? 'postgres' : 'sqlite'
}

/**
 * Serializes write transactions that touch the same thing (a pipeline's order, the dependency
 * graph): on PostgreSQL a transaction-scoped advisory lock on the key, held until commit; on
 * SQLite nothing is needed, as write transactions already run one at a time (BEGIN IMMEDIATE).
 */
export async function lockFor (trx: Executor, key: string): Promise<void> {
  if (engineOf(trx) === 'postgres') await sql`SELECT pg_advisory_xact_lock(hashtext(${key}))`.execute(trx)
}

/** Whether an error is a unique-constraint violation (two writers raced to the same key). */
export function isUniqueViolation (err: unknown): boolean {
  const code = (err as { code?: unknown }).code
  return code === '23505' || code === 'SQLITE_CONSTRAINT_UNIQUE' || code === 'SQLITE_CONSTRAINT_PRIMARYKEY'
}
