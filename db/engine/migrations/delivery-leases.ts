import { sql, type Kysely, type Migration } from 'kysely'
import type { Engine } from '../engine.js'

/**
 * Webhook deliveries get a lease: the instance that sends an attempt claims it until the lease
 * runs out, so with several instances every attempt is made by exactly one of them.
 */
export function deliveryLeasesMigration (engine: Engine): Migration {
  const bigint = engine === 'sqlite' ? 'INTEGER' : 'BIGINT'
  return {
    async up (db: Kysely<unknown>) {
      await sql.raw(`ALTER TABLE webhook_deliveries ADD COLUMN lease_until ${bigint}`).execute(db)
    }
  }
}
