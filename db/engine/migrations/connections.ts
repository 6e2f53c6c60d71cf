import { sql, type Kysely, type Migration } from 'kysely'
import type { Engine } from '../engine.js'

/**
 * Issue-host connections (GitHub, GitHub Enterprise, Gitea, Forgejo): the connections, the
 * delivery ids already handled, imports and their progress; repositories get their web URL and
 * connection, issues the host's `updated_at` (a stale delivery must not undo newer state).
 */
export function connectionsMigration (engine: Engine): Migration {
  const bigint = engine === 'sqlite' ? 'INTEGER' : 'BIGINT'
  return {
    async up (db: Kysely<unknown>) {
      const statements = [
        `CREATE TABLE connections (
          id TEXT PRIMARY KEY,
          kind TEXT NOT NULL CHECK (kind IN ('github', 'gitea', 'forgejo')),
          web_url TEXT NOT NULL,
          api_url TEXT NOT NULL,
          secret TEXT NOT NULL,
          token TEXT,
          created_at TEXT NOT NULL
        )`,
        `CREATE TABLE connection_deliveries (
          connection_id TEXT NOT NULL REFERENCES connections (id) ON DELETE CASCADE,
          delivery_id TEXT NOT NULL,
          received_at ${bigint} NOT NULL,
          PRIMARY KEY (connection_id, delivery_id)
        )`,
        'CREATE INDEX connection_deliveries_received ON connection_deliveries (received_at)',
        `CREATE TABLE imports (
          id TEXT PRIMARY KEY,
          connection_id TEXT NOT NULL REFERENCES connections (id) ON DELETE CASCADE,
          repository TEXT NOT NULL,
          state TEXT NOT NULL CHECK (state IN ('queued', 'running', 'done', 'failed')),
          stage TEXT NOT NULL DEFAULT 'repository',
          next_page INTEGER NOT NULL DEFAULT 1,
          repo_id ${bigint},
          issues INTEGER NOT NULL DEFAULT 0,
          pull_requests INTEGER NOT NULL DEFAULT 0,
          milestones INTEGER NOT NULL DEFAULT 0,
          collaborators INTEGER NOT NULL DEFAULT 0,
          error TEXT,
          created_at TEXT NOT NULL,
          updated_at TEXT NOT NULL
        )`,
        'ALTER TABLE repositories ADD COLUMN html_url TEXT',
        'ALTER TABLE repositories ADD COLUMN connection_id TEXT',
        'ALTER TABLE issues ADD COLUMN host_updated_at TEXT'
      ]
      for (const statement of statements) await sql.raw(statement).execute(db)
    }
  }
}
