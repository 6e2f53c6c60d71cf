import { sql, type Kysely, type Migration } from 'kysely'

/**
 * Who made an issue here (a native issue of a repository with no issue host, made through the
 * API or the board): null for the issue host's issues, which it names its own author for.
 */
export function issueCreatorMigration (): Migration {
  return {
    async up (db: Kysely<unknown>) {
      await sql.raw('ALTER TABLE issues ADD COLUMN creator_id INTEGER REFERENCES users(id) ON DELETE SET NULL').execute(db)
    }
  }
}
