import type { FastifyRequest } from 'fastify'
import fp from 'fastify-plugin'
import type { Kysely } from 'kysely'
import { migrate, type Engine } from '../../db/migrations/index.js'
import { postgresKysely } from '../../db/postgres.js'
import type { Database } from '../../db/schema.js'
import { sqliteKysely, type SqliteHandle } from '../../db/sqlite.js'
import { sqliteVersionReader } from '../../db/sqlite-version.js'
import { createStore, type PlanningStore } from '../../db/store.js'
import { changeVersion } from '../../db/transaction.js'

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
    /** The same counter when it can be had without waiting (on SQLite); undefined on PostgreSQL. */
    planningVersionNow: (request: FastifyRequest) => number | undefined
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
  const db: Kysely<Database> = sqlite?.db ?? postgresKysely({ url: opts.databaseUrl!, poolMax: opts.databasePoolMax, schema: opts.databaseSchema })
  try {
    await migrate(db, engine, opts.databaseSchema)
  } catch (err) {
    await db.destroy()
    throw err
  }
  fastify.decorate('planningStore', createStore(db, fastify.planningEvents))
  fastify.decorate('planningEngine', engine)
  fastify.decorateRequest(version, null)
  // On SQLite the counter is read straight from the handle: every cached read does this.
  const readSqlite = sqlite === undefined ? undefined : sqliteVersionReader(sqlite.handle)
  const now = (request: FastifyRequest): number | undefined => {
    const known = request[version]
    if (typeof known === 'number') return known
    if (known !== null || readSqlite === undefined) return undefined
    return (request[version] = readSqlite.read())
  }
  fastify.decorate('planningVersionNow', now)
  fastify.decorate('planningVersion', async (request: FastifyRequest) => {
    const known = now(request)
    if (known !== undefined) return known
    request[version] ??= changeVersion(db)
    return await request[version]
  })
  fastify.addHook('onClose', async () => {
    readSqlite?.close()
    await db.destroy()
  })
}, { name: 'planning-database', fastify: '5.x', dependencies: ['planning-events'] })
