import { sql, type Kysely, type Migration } from 'kysely'
import type { Engine } from '../engine.js'

/**
 * Local accounts (docs/sign-in.md, "Passwords"): a user may hold a password (its scrypt hash with
 * salt and parameters), be an administrator, and has the time of the last sign-in; failed password
 * sign-ins are counted per login for the lock-out; invite, reset and first-run setup links are kept
 * as digests, with what they grant and whether they were used.
 */
export function accountsMigration (engine: Engine): Migration {
  const bigint = engine === 'sqlite' ? 'INTEGER' : 'BIGINT'
  return {
    async up (db: Kysely<unknown>) {
      const statements = [
        'ALTER TABLE users ADD COLUMN password_hash TEXT',
        'ALTER TABLE users ADD COLUMN administrator INTEGER NOT NULL DEFAULT 0',
        'ALTER TABLE users ADD COLUMN last_sign_in_at TEXT',
        `CREATE TABLE password_failures (
          login_key TEXT PRIMARY KEY,
          failures INTEGER NOT NULL,
          window_start ${bigint} NOT NULL,
          locked_until ${bigint} NOT NULL
        )`,
        `CREATE TABLE account_links (
          id TEXT PRIMARY KEY,
          kind TEXT NOT NULL CHECK (kind IN ('invite', 'reset', 'setup')),
          token_hash TEXT NOT NULL UNIQUE,
          workspace_id TEXT REFERENCES workspaces (id) ON DELETE CASCADE,
          permission TEXT,
          email TEXT,
          user_id ${bigint} REFERENCES users (id) ON DELETE CASCADE,
          created_by TEXT NOT NULL,
          created_at TEXT NOT NULL,
          expires_at ${bigint} NOT NULL,
          used_at TEXT
        )`,
        'CREATE INDEX account_links_workspace ON account_links (workspace_id)'
      ]
      for (const statement of statements) await sql.raw(statement).execute(db)
    }
  }
}
