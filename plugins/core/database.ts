import type { FastifyRequest } from 'fastify'
import fp from 'fastify-plugin'
import { migrate } from '../../db/migrations/index.js'
import { sqliteKysely, type SqliteHandle } from '../../db/sqlite.js'
import { createStore, type PlanningStore } from '../../db/store.js'
import { changeVersion } from '../../db/transaction.js'

const version = Symbol('planningVersion')

export interface DatabasePluginOptions {
  /** a better-sqlite3 handle owned by the caller, or a file path (`:memory:` allowed) we open and close */
  database?: SqliteHandle | string
}

declare module 'fastify' {
  interface FastifyInstance {
    /** the planning API's data layer: one repository per domain over Kysely, built once */
    planningStore: PlanningStore
    /**
     * The database's change counter as this request first saw it (read once per request): caches
     * of what the database holds compare it to know whether anything was written since.
     */
    planningVersion: (request: FastifyRequest) => Promise<number>
  }
  interface FastifyRequest {
    [version]: Promise<number> | null
  }
}

/**
 * The store for the whole API: Kysely over a SQLite file (WAL, foreign keys, IMMEDIATE write
 * transactions), migrations applied at start-up, closed in onClose when it opened the file.
 */
export default fp<DatabasePluginOptions>(async (fastify, opts) => {
  const { db } = sqliteKysely(opts.database ?? ':memory:')
  try {
    await migrate(db, 'sqlite')
  } catch (err) {
    await db.destroy()
    throw err
  }
  fastify.decorate('planningStore', createStore(db, fastify.planningEvents))
  fastify.decorateRequest(version, null)
  fastify.decorate('planningVersion', async (request: FastifyRequest) => await (request[version] ??= changeVersion(db)))
  fastify.addHook('onClose', async () => { await db.destroy() })
}, { name: 'planning-database', fastify: '5.x', dependencies: ['planning-events'] })
