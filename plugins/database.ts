import fp from 'fastify-plugin'
import { configure, migrate, openDatabase, type Db } from '../db/connection.js'

export interface DatabasePluginOptions {
  /** a better-sqlite3 handle owned by the caller, or a file path (`:memory:` allowed) we open and close */
  database?: Db | string
}

declare module 'fastify' {
  interface FastifyInstance {
    /** the planning API's SQLite connection (better-sqlite3) */
    planningDb: Db
  }
}

/** One SQLite connection for the whole API: WAL, foreign keys, migrations applied at start-up. */
export default fp<DatabasePluginOptions>(async (fastify, opts) => {
  const given = opts.database ?? ':memory:'
  const db = typeof given === 'string' ? openDatabase(given) : given
  if (typeof given !== 'string') configure(db)
  try {
    migrate(db)
  } catch (err) {
    if (typeof given === 'string') db.close()
    throw err
  }
  fastify.decorate('planningDb', db)
  if (typeof given === 'string') {
    fastify.addHook('onClose', async () => { db.close() })
  }
}, { name: 'planning-database', fastify: '5.x' })
