import { sql, type Kysely, type Migration } from 'kysely'

/**
 * Pull requests share their repository's issue numbers and come from the issue host as issues
 * do; the board marks them (docs/extensions.md, "Issue data of many issues").
 */
export function pullRequestsMigration (): Migration {
  return {
    async up (db: Kysely<unknown>) {
      await sql.raw('ALTER TABLE issues ADD COLUMN is_pull_request INTEGER NOT NULL DEFAULT 0').execute(db)
    }
  }
}
