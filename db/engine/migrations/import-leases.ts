import { sql, type Kysely, type Migration } from 'kysely'
import type { Engine } from '../engine.js'

/**
 * Imports get a lease, like webhook attempts: the instance running an import holds it until
 * `lease_until` and renews it while it runs, so with several instances an import runs in one only.
 */
export function importLeasesMigration (engine: Engine): Migration {
  const bigint = engine === 'sqlite' ? 'INTEGER' : 'BIGINT'
  return {
    async up (db: Kysely<unknown>) {
      await sql.raw(`ALTER TABLE imports ADD COLUMN lease_until ${bigint}`).execute(db)
      await sql.raw('ALTER TABLE imports ADD COLUMN lease_owner TEXT').execute(db)
    }
  }
}
