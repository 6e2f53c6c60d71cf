import { Kysely, PostgresDialect } from 'kysely'
import pg from 'pg'
import { joinRoundTrips, type JoinedStatements } from './postgres-round-trips.js'
import { statementName } from './prepared.js'
import type { Database } from '../schema.js'
import { longDeadline } from './long-work.js'

// BIGINT (ids, epoch milliseconds, counts) arrives as text by default; every value we keep fits
// in a double, so take them as numbers, as SQLite gives them.
pg.types.setTypeParser(pg.types.builtins.INT8, (value) => Number(value))

export interface PostgresOptions {
  /** `postgres://user@host:port/database` */
  url: string
  /** pool size (DATABASE_POOL_MAX) */
  poolMax?: number
  /** tables live in this schema (tests give each its own) */
  schema?: string
  /**
   * Connect, query and statement timeout in milliseconds (DATABASE_TIMEOUT_MS): one deadline for
   * each use of a pooled connection (a query, or a whole transaction), the wait for the pool
   * included, so a PostgreSQL that does not answer fails it within this time. Undefined: no timeout
   * (migrations, the CLI's copy).
   */
  timeoutMs?: number
  /** the connect timeout alone (default timeoutMs) */
  connectTimeoutMs?: number
  /** the prepared queries (db/engine/prepared.ts) as named statements (default true; false behind a pooler that does not keep them) */
  preparedStatements?: boolean
  /** told when PostgreSQL drops a connection of the pool (a restart, pg_terminate_backend) */
  onConnectionError?: (err: Error) => void
}

/** `application_name` of the pool's sessions; with a schema, the schema too, so its backends can be found. */
export function applicationName (schema?: string): string {
  return schema === undefined ? 'planning-api' : `planning-api/${schema}`
}

/** A connection of its own (the counter's, the watch's): the pool's settings, timeouts included. */
export function clientConfig (options: PostgresOptions): pg.ClientConfig {
  const { timeoutMs, connectTimeoutMs = timeoutMs } = options
  return {
    connectionString: options.url,
    application_name: applicationName(options.schema),
    ...(connectTimeoutMs === undefined ? {} : { connectionTimeoutMillis: connectTimeoutMs }),
    ...(timeoutMs === undefined ? {} : { query_timeout: timeoutMs, statement_timeout: timeoutMs }),
    ...(options.schema === undefined ? {} : { options: `-c search_path=${options.schema}` })
  }
}

/**
 * Kysely over a pg pool. A connection PostgreSQL drops, idle or in use, is reported and left out
 * of the pool (pg would otherwise throw the error and end the process); a query that timed out
 * closes its connection, which may still be inside the query or its transaction.
 */
export function postgresKysely (options: PostgresOptions): Kysely<Database> {
  const { timeoutMs } = options
  const pool = new pg.Pool({ ...clientConfig(options), max: options.poolMax ?? 10 })
  const deadlines = new WeakMap<pg.PoolClient, number>()
  if (timeoutMs !== undefined) checkOutWithDeadline(pool, timeoutMs, deadlines)
  const left = (client: pg.PoolClient) => (): number | undefined => {
    const deadline = deadlines.get(client)
    return deadline === undefined ? undefined : deadline - performance.now()
  }
  // pg hands an idle client's error to the pool and then to the client's own listener: report each once.
  const reported = new WeakSet<Error>()
  const dropped = (err: Error): void => {
    if (reported.has(err)) return
    reported.add(err)
    options.onConnectionError?.(err)
  }
  pool.on('error', dropped)
  // Ended as it goes back (its transaction rolled back first), so the pool opens a new one instead.
  const stale = new WeakSet<pg.PoolClient>()
  const released = new WeakMap<pg.PoolClient, () => void>()
  pool.on('release', (_err: unknown, client: pg.PoolClient) => {
    deadlines.delete(client)
    released.get(client)?.()
    if (stale.has(client)) client.end().catch(() => {})
  })
  const joined: JoinedStatements = { execute: true }
  pool.on('connect', (client) => {
    client.on('error', dropped)
    if (timeoutMs !== undefined) boundByDeadline(client, left(client))
    released.set(client, joinRoundTrips(client, timeoutMs === undefined ? () => undefined : left(client), joined))
    if (options.preparedStatements !== false) nameStatements(client, () => stale.add(client))
    // Ended as it goes back as well: its socket may not have told pg it closed by then.
    if (timeoutMs !== undefined) closeOnReadTimeout(client, () => stale.add(client))
  })
  return new Kysely<Database>({ dialect: new PostgresDialect({ pool }) })
}

/**
 * Each checkout gets its deadline when it is asked for: the wait for a pooled connection (or a new
 * one) counts against it, and a checkout that has none within it fails as pg's own wait does. A
 * connection that comes after that goes straight back.
 */
function checkOutWithDeadline (pool: pg.Pool, timeoutMs: number, deadlines: WeakMap<pg.PoolClient, number>): void {
  const connect = pool.connect.bind(pool) as (...args: unknown[]) => unknown
  const bounded = (...args: unknown[]): unknown => {
    if (args.length > 0) return connect(...args)
    const ms = longDeadline() ?? timeoutMs
    const deadline = performance.now() + ms
    return new Promise<pg.PoolClient>((resolve, reject) => {
      let late = false
      const timer = setTimeout(() => {
        late = true
        reject(new Error('timeout exceeded when trying to connect'))
      }, ms)
      ;(connect() as Promise<pg.PoolClient>).then((client) => {
        clearTimeout(timer)
        if (late) {
          client.release()
          return
        }
        deadlines.set(client, deadline)
        resolve(client)
      }, (err: unknown) => {
        clearTimeout(timer)
        reject(err)
      })
    })
  }
  Object.assign(pool, { connect: bounded })
}

/**
 * A query gets what is left of its checkout's deadline as its timeout (a statement that set its own,
 * db/engine/postgres-round-trips.ts, keeps it); past the deadline it fails without being sent, as a
 * timed-out one does (the connection is then closed, ending any transaction on it).
 */
function boundByDeadline (client: pg.PoolClient, left: () => number | undefined): void {
  const query = client.query.bind(client) as (...args: unknown[]) => unknown
  const bounded = (...args: unknown[]): unknown => {
    const ms = left()
    const [first, second] = args
    if (ms === undefined || typeof args.at(-1) === 'function' || !plainQuery(first)) return query(...args)
    if (ms <= 0) return Promise.reject(new Error('Query read timeout'))
    const config = typeof first === 'string'
      ? { text: first, ...(Array.isArray(second) ? { values: second } : {}) }
      : { ...(first as Record<string, unknown>) }
    if (typeof first === 'object' && Array.isArray(second)) Object.assign(config, { values: second })
    return query({ query_timeout: Math.max(1, Math.ceil(ms)), ...config })
  }
  Object.assign(client, { query: bounded })
}

/** Text, or a config object (not a submittable such as a cursor, which keeps its own prototype). */
const plainQuery = (query: unknown): boolean =>
  typeof query === 'string' || (typeof query === 'object' && query !== null && typeof (query as { submit?: unknown }).submit !== 'function')

/** Closes the connection: pg leaves it out of the pool, which opens a new one when needed. */
function destroy (client: pg.PoolClient): void {
  (client as unknown as { connection: { stream: { destroy: () => void } } }).connection.stream.destroy()
}

// A named statement the session no longer has (a pooler between, a pg quirk), or whose cached plan
// a change of a column's type made invalid: the connection is closed, not kept failing.
const isStale = (err: { code?: unknown, routine?: unknown } | undefined): boolean =>
  (err?.code === '26000' && err.routine === 'FetchPreparedStatement') || (err?.code === '0A000' && err.routine === 'RevalidateCachedQuery')

/**
 * Kysely sends SQL and values; a prepared query's SQL (db/engine/prepared.ts) goes as a named statement,
 * which pg parses once per connection, and PostgreSQL keeps it parsed: a hot path's statement
 * skips the parse on every run, and after a few runs the plan as well.
 */
function nameStatements (client: pg.PoolClient, stale: () => void): void {
  const query = client.query.bind(client) as (...args: unknown[]) => unknown
  const named = (...args: unknown[]): unknown => {
    const [text, values] = args
    const name = typeof text === 'string' && Array.isArray(values) && args.length === 2 ? statementName(text) : undefined
    if (name === undefined) return query(...args)
    const result = query({ name, text, values }) as Promise<unknown>
    result.catch((err: unknown) => {
      if (isStale(err as { code?: unknown } | undefined)) stale()
    })
    return result
  }
  Object.assign(client, { query: named })
}

/**
 * pg's query timeout answers the caller but leaves the query running on the connection, which goes
 * back to the pool (inside a transaction whose ROLLBACK also timed out, the next user would run in
 * it). Close such a connection instead: pg then leaves it out of the pool.
 */
function closeOnReadTimeout (client: pg.PoolClient, closed: () => void): void {
  const query = client.query.bind(client) as (...args: unknown[]) => unknown
  const wrapped = (...args: unknown[]): unknown => {
    const result = query(...args)
    if (result instanceof Promise) {
      result.catch((err: unknown) => {
        if ((err as Error | undefined)?.message !== 'Query read timeout') return
        closed()
        destroy(client)
      })
    }
    return result
  }
  Object.assign(client, { query: wrapped })
}
