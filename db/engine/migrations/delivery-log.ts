import { sql, type Kysely, type Migration } from 'kysely'
import type { Engine } from '../engine.js'

/**
 * The last deliveries of each issue-host connection (event, time, result), for the Administration
 * view: what the host sent lately and what came of it. Only signed deliveries are written, and
 * only the newest few per connection are kept.
 */
export function deliveryLogMigration (engine: Engine): Migration {
  const bigint = engine === 'sqlite' ? 'INTEGER' : 'BIGINT'
  return {
    async up (db: Kysely<unknown>) {
      const statements = [
        `CREATE TABLE connection_delivery_log (
          id TEXT PRIMARY KEY,
          connection_id TEXT NOT NULL REFERENCES connections (id) ON DELETE CASCADE,
          received_at ${bigint} NOT NULL,
          event TEXT NOT NULL,
          action TEXT,
          result TEXT NOT NULL,
          detail TEXT
        )`,
        'CREATE INDEX connection_delivery_log_recent ON connection_delivery_log (connection_id, received_at)'
      ]
      for (const statement of statements) await sql.raw(statement).execute(db)
    }
  }
}
