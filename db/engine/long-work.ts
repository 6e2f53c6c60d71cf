import { AsyncLocalStorage } from 'node:async_hooks'

const granted = new AsyncLocalStorage<number>()

/**
 * Runs `work` with each PostgreSQL checkout it makes given `ms` instead of DATABASE_TIMEOUT_MS
 * (db/engine/postgres.ts): loading a fixture is one transaction of many statements (a SEED_FILE
 * or an import of 50,000 issues takes tens of seconds), each statement still bounded on its own.
 */
export async function withLongDeadline<T> (ms: number, work: () => Promise<T>): Promise<T> {
  return await granted.run(ms, work)
}

/** The deadline granted to the work running now, if any. */
export function longDeadline (): number | undefined {
  return granted.getStore()
}
