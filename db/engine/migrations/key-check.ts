import { sql, type Kysely, type Migration } from 'kysely'

/**
 * One row: a known text sealed with SECRET_KEY at the first start that has one. The server and the
 * admin CLI open it before anything else, so a SECRET_KEY that is not the database's is refused at
 * start (docs/operations.md, "Secrets at rest") instead of sealing secrets nothing else can open.
 */
export function keyCheckMigration (): Migration {
  return {
    async up (db: Kysely<unknown>) {
      await sql.raw('CREATE TABLE key_check (id INTEGER PRIMARY KEY CHECK (id = 1), sealed TEXT NOT NULL)').execute(db)
    }
  }
}
