import { sql, type Kysely, type Migration } from 'kysely'
import type { Engine } from '../engine.js'

/**
 * Sign-in through the issue host's OAuth (docs/sign-in.md, "Sign-in with the issue host"): a
 * connection may carry an OAuth app's client id and its secret (sealed like the token).
 */
export function hostSignInMigration (_engine: Engine): Migration {
  return {
    async up (db: Kysely<unknown>) {
      await sql.raw('ALTER TABLE connections ADD COLUMN oauth_client_id TEXT').execute(db)
      await sql.raw('ALTER TABLE connections ADD COLUMN oauth_client_secret TEXT').execute(db)
    }
  }
}
