import { sql, type Kysely, type Migration } from 'kysely'

/**
 * `dependencies_blocking (blocking_id)` repeated the leading column of the `(blocking_id,
 * blocked_id)` unique index, which answers every read by blocking_id as well: one index page less
 * to write per inserted or deleted edge (docs/development.md, "The big workspace (issue 47)").
 */
export function dependenciesBlockingMigration (): Migration {
  return {
    async up (db: Kysely<unknown>) {
      await sql.raw('DROP INDEX IF EXISTS dependencies_blocking').execute(db)
    }
  }
}
