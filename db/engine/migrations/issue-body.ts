import { sql, type Kysely, type Migration } from 'kysely'

/**
 * The issue's description as its issue host last sent it (deliveries, imports, the host's answer
 * to a write): null when it has none or none was sent yet. Kept at most BODY_LIMIT characters.
 */
export function issueBodyMigration (): Migration {
  return {
    async up (db: Kysely<unknown>) {
      await sql.raw('ALTER TABLE issues ADD COLUMN body TEXT').execute(db)
    }
  }
}
