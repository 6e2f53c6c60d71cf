import type { FastifyBaseLogger, FastifyRequest } from 'fastify'
import fp from 'fastify-plugin'
import type { Kysely } from 'kysely'
import { migrate, type Engine } from '../../db/engine/migrations/index.js'
import { postgresKysely, type PostgresOptions } from '../../db/engine/postgres.js'
import type { Database } from '../../db/schema.js'
import { checkSecretKey, requireKeyForSealed, sealStoredSecrets } from '../../db/sealed-secrets.js'
import { SecretBox } from '../../db/engine/secret-box.js'
import { sqliteKysely, type SqliteHandle } from '../../db/engine/sqlite.js'
import { sqliteVersionReader } from '../../db/engine/sqlite-version.js'
import { startCheckpointer, type Checkpointer, type CheckpointerOptions } from '../../db/engine/sqlite-checkpointer.js'
import { coalescedVersion, type VersionStats } from '../../db/engine/coalesced-version.js'
import { counterConnection } from '../../db/engine/postgres-version.js'
import { counterWatch, type WatchStats, type WatchTimings } from '../../db/engine/postgres-watch.js'
import { fenceCommits, listenToCommits } from '../../db/engine/transaction.js'
import { createStore, type PlanningStore } from '../../db/store.js'
import { CommittedWrites } from './committed-writes.js'
import { onceAMinute } from './outage-log.js'

const version = Symbol('planningVersion')

export interface DatabasePluginOptions {
  /** a better-sqlite3 handle owned by the caller, or a file path (`:memory:` allowed) we open and close */
  database?: SqliteHandle | string
  /** `postgres://…`: PostgreSQL instead of SQLite (then `database` is not used) */
  databaseUrl?: string
  /** PostgreSQL pool size (default 10) */
  databasePoolMax?: number
  /** PostgreSQL schema holding the tables (default: the connection's search path) */
  databaseSchema?: string
  /** seals secrets at rest (SECRET_KEY, SECRET_KEY_PREVIOUS); none: connections cannot be stored */
  secrets?: SecretBox
  /** PostgreSQL connect, query and statement timeout in milliseconds (default 5000) */
  databaseTimeoutMs?: number
  /**
   * PostgreSQL: answer reads from the change counter this instance hears of (LISTEN) instead of
   * asking for it (default true; false behind a pooler that does not keep sessions, DATABASE_WATCH);
   * timings for tests.
   */
  databaseWatch?: boolean | Partial<WatchTimings>
  /** PostgreSQL: hot-path queries as named statements (default true; DATABASE_PREPARED_STATEMENTS) */
  databasePreparedStatements?: boolean
  /**
   * SQLite file: WAL checkpoints from a worker thread instead of inside the commit that crosses
   * 1,000 WAL pages (default on; false keeps SQLite's automatic checkpoint; timings for tests)
   */
  sqliteCheckpoints?: boolean | Omit<CheckpointerOptions, 'log'>
}

declare module 'fastify' {
  interface FastifyInstance {
    /** the planning API's data layer: one repository per domain over Kysely, built once */
    planningStore: PlanningStore
    /** which engine the store runs on */
    planningEngine: Engine
    /**
     * The database's change counter as this request first saw it (read once per request): caches
     * of what the database holds compare it to know whether anything was written since.
     */
    planningVersion: (request: FastifyRequest) => Promise<number>
    /** The same counter once it was read for this request; else undefined. */
    planningVersionNow: (request: FastifyRequest) => number | undefined
    /**
     * The writes this process committed (and, on PostgreSQL, those other instances said they made)
     * and the repositories each was confined to: what is kept for one repository, or for no
     * repository, stays good past them (docs/development.md, "Cached reads by repository").
     */
    planningWrites: CommittedWrites
    /** How many requests asked for the counter and how many reads answered them. */
    planningVersionStats: VersionStats
    /** PostgreSQL with the watch on: changes heard, writes that stopped waiting for an instance. */
    planningWatchStats: WatchStats | undefined
    /** The counter as it is now, outside any request (the board page's live stream watches it). */
    planningVersionLatest: () => Promise<number>
    /** The counter as read after this call, in the turn's one read (for reads answered before routing). */
    planningVersionRead: () => Promise<number>
    /**
     * Logs that a request or a probe found the database out of reach: the first time, then at most
     * once a minute for the instance (an outage would otherwise log once per request and poll).
     */
    planningDatabaseUnavailable: (err: unknown) => void
    /** SQLite file: the worker thread that checkpoints the WAL (undefined: SQLite's automatic checkpoint) */
    planningCheckpointer: Checkpointer | undefined
  }
  interface FastifyRequest {
    [version]: number | Promise<number> | null
  }
}

/**
 * The store for the whole API: Kysely over a SQLite file (WAL, foreign keys, IMMEDIATE write
 * transactions) or over a PostgreSQL pool, migrated at start-up (on PostgreSQL under an advisory
 * lock, so instances starting together migrate once), destroyed in onClose.
 */
export default fp<DatabasePluginOptions>(async (fastify, opts) => {
  const engine: Engine = opts.databaseUrl === undefined ? 'sqlite' : 'postgres'
  const sqlite = opts.databaseUrl === undefined ? sqliteKysely(opts.database ?? ':memory:') : undefined
  const postgres: PostgresOptions | undefined = opts.databaseUrl === undefined
    ? undefined
    : {
        url: opts.databaseUrl,
        poolMax: opts.databasePoolMax,
        schema: opts.databaseSchema,
        timeoutMs: opts.databaseTimeoutMs ?? 5000,
        preparedStatements: opts.databasePreparedStatements,
        onConnectionError: droppedConnectionLog(fastify.log)
      }
  const db: Kysely<Database> = sqlite?.db ?? postgresKysely(postgres!)
  const secrets = opts.secrets ?? new SecretBox()
  try {
    await migrateOutsideTimeouts(db, engine, opts)
    await requireKeyForSealed(db, secrets)
    await checkSecretKey(db, secrets)
    const sealed = await sealStoredSecrets(db, secrets)
    if (sealed > 0) fastify.log.info({ sealed }, 'stored secrets encrypted with SECRET_KEY')
  } catch (err) {
    await db.destroy()
    throw err
  }
  fastify.decorate('planningStore', createStore(db, fastify.planningEvents, secrets))
  fastify.planningStore.workspaceViews.reportTo((err) => { fastify.log.warn({ err }, 'workspace views were not recorded') })
  const writes = new CommittedWrites()
  listenToCommits(db, (committed, repositories, boardRows) => { writes.note(committed, repositories, boardRows) })
  fastify.decorate('planningWrites', writes)
  fastify.decorate('planningEngine', engine)
  const checkpoints = opts.sqliteCheckpoints ?? true
  const checkpointer = sqlite === undefined || checkpoints === false
    ? undefined
    : startCheckpointer(sqlite.handle, { ...(checkpoints === true ? {} : checkpoints), log: fastify.log })
  fastify.decorate('planningCheckpointer', checkpointer)
  fastify.decorate('planningDatabaseUnavailable', onceAMinute(fastify.log, 'the database is unavailable; requests answer 503 until it is back'))
  fastify.decorateRequest(version, null)
  // On SQLite the counter is read straight from the handle (the WAL-index header), on PostgreSQL on
  // a connection of its own; on both, one read answers every request of a turn that asked before it.
  const readSqlite = sqlite === undefined ? undefined : sqliteVersionReader(sqlite.handle)
  const counter = postgres === undefined ? undefined : counterConnection(postgres)
  const watch = postgres === undefined || opts.databaseWatch === false
    ? undefined
    : counterWatch(postgres, typeof opts.databaseWatch === 'object' ? opts.databaseWatch : {}, {
      reached: (committed, repositories, boardRows) => { writes.heard(committed, repositories, boardRows) },
      setBack: () => { writes.forget() }
    })
  // A value read by a query is one the watch may take too: no later read answers from an older one.
  const queried = watch === undefined
    ? counter?.read
    : async () => {
      const read = await counter!.read()
      watch.observed(read)
      return read
    }
  const coalesced = coalescedVersion(readSqlite?.read ?? queried!)
  if (watch !== undefined) {
    fenceCommits(db, watch)
    fastify.addHook('onReady', async () => { watch.start() })
  }
  const watched = (): number | undefined => {
    const known = watch?.trusted()
    if (known === undefined) return undefined
    coalesced.stats.asked++
    coalesced.stats.watched++
    return known
  }
  const read = (): Promise<number> => {
    const known = watched()
    return known === undefined ? coalesced.read() : Promise.resolve(known)
  }
  const now = (request: FastifyRequest): number | undefined => {
    const known = request[version]
    return typeof known === 'number' ? known : undefined
  }
  fastify.decorate('planningVersionStats', coalesced.stats)
  fastify.decorate('planningWatchStats', watch?.stats)
  fastify.decorate('planningVersionNow', now)
  fastify.decorate('planningVersionLatest', async () => readSqlite?.read() ?? watch?.trusted() ?? await counter!.read())
  fastify.decorate('planningVersionRead', read)
  fastify.decorate('planningVersion', (request: FastifyRequest) => {
    const known = request[version]
    if (typeof known === 'number') return Promise.resolve(known)
    if (known !== null) return known
    const heard = watched()
    if (heard !== undefined) {
      request[version] = heard
      return Promise.resolve(heard)
    }
    const waiting = coalesced.read().then((value) => (request[version] = value))
    request[version] = waiting
    return waiting
  })
  fastify.addHook('onClose', async () => {
    // Views wait in memory a moment (db/workspace-views.ts): a normal shutdown writes them.
    await fastify.planningStore.workspaceViews.close().catch((err: unknown) => { fastify.log.warn({ err }, 'workspace views were not recorded at shutdown') })
    readSqlite?.close()
    await checkpointer?.close()
    await watch?.close()
    await counter?.close()
    await db.destroy()
  })
}, { name: 'planning-database', fastify: '5.x', dependencies: ['planning-events'] })

/**
 * Migrations may wait for another instance's (under its lock) and may rewrite big tables: on
 * PostgreSQL they run on a connection of their own without the query and statement timeouts.
 */
async function migrateOutsideTimeouts (db: Kysely<Database>, engine: Engine, opts: DatabasePluginOptions): Promise<void> {
  if (engine === 'sqlite') {
    await migrate(db, engine)
    return
  }
  const unbounded = postgresKysely({ url: opts.databaseUrl!, poolMax: 1, schema: opts.databaseSchema, connectTimeoutMs: opts.databaseTimeoutMs ?? 5000 })
  try {
    await migrate(unbounded, engine, opts.databaseSchema)
  } finally {
    await unbounded.destroy()
  }
}

/**
 * PostgreSQL dropping the pool's connections (a restart drops them all at once): one warning, then
 * at most one a minute saying how many more; each is replaced on next use.
 */
function droppedConnectionLog (log: FastifyBaseLogger): (err: Error) => void {
  let quietUntil = 0
  let unreported = 0
  return (err) => {
    const now = Date.now()
    if (now < quietUntil) {
      unreported++
      return
    }
    log.warn({ err: { message: err.message, code: (err as { code?: string }).code }, alsoDropped: unreported },
      'PostgreSQL closed a pooled connection; it is left out and replaced on next use')
    unreported = 0
    quietUntil = now + 60_000
  }
}
