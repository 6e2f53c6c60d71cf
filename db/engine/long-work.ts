import { AsyncLocalStorage } from 'node:async_hooks'

const granted = new AsyncLocalStorage<number>()

/**
 * Runs `work` with each PostgreSQL checkout it makes given `ms` instead of DATABASE_TIMEOUT_MS
 * (db/engine/postgres.ts): loading a fixture is one transaction of many statements (a SEED_FILE
 * or an import of 50,000 issues takes tens of seconds), each statement still bounded on its own.
 */
export async function withLongDeadline<T> (ms: number, work: () => Promise<T>): Promise<T> {
  running++
  try {
    return await granted.run(ms, work)
  } finally {
    // On Node 20 an enabled AsyncLocalStorage puts a hook on every promise the process makes, for
    // good: about 5 times the cost of a bare promise, paid by every request after a SEED_FILE or
    // demo start or an import. Off once no such work runs (the next `run` turns it on again).
    if (--running === 0) granted.disable()
  }
}

let running = 0

/** Whether the storage is on (it puts a hook on every promise while it is), for tests; undefined where Node does not say. */
export function longWorkHooked (): boolean | undefined {
  const { enabled } = granted as unknown as { enabled?: unknown }
  return typeof enabled === 'boolean' ? enabled : undefined
}

/** The deadline granted to the work running now, if any. */
export function longDeadline (): number | undefined {
  return granted.getStore()
}
