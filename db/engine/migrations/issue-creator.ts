import { sql, type Kysely, type Migration } from 'kysely'
import type { Engine } from '../engine.js'

/**
 * Who made an issue here (a native issue of a repository with no issue host, made through the
 * API or the board): null for the issue host's issues, which it names its own author for.
 */
export function issueCreatorMigration (engine: Engine): Migration {
  const bigint = engine === 'sqlite' ? 'INTEGER' : 'BIGINT'
  return {
    async up (db: Kysely<unknown>) {
      await sql.raw(`ALTER TABLE issues ADD COLUMN creator_id ${bigint} REFERENCES users (id) ON DELETE SET NULL`).execute(db)
      // a user's removal sets their issues' creator to null: found by index, not a scan of every issue
      await sql.raw('CREATE INDEX issues_creator ON issues (creator_id)').execute(db)
    }
  }
}
