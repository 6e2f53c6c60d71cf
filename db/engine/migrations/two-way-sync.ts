import { sql, type Kysely, type Migration } from 'kysely'
import type { Engine } from '../engine.js'

/**
 * Two-way sync (docs/connections.md, "Two-way sync"): issues keep the host's labels and
 * assignees; a pipeline may name a host label; label writes to the host wait in an outbox with one
 * row per issue (a later move bumps `generation`, so only the latest wanted labels are written);
 * a connection remembers its token's own account, whose deliveries are our writes coming back.
 */
export function twoWaySyncMigration (engine: Engine): Migration {
  const bigint = engine === 'sqlite' ? 'INTEGER' : 'BIGINT'
  return {
    async up (db: Kysely<unknown>) {
      const statements = [
        `CREATE TABLE issue_labels (
          issue_id ${bigint} NOT NULL REFERENCES issues (id) ON DELETE CASCADE,
          name TEXT NOT NULL,
          color TEXT,
          PRIMARY KEY (issue_id, name)
        )`,
        `CREATE TABLE issue_assignees (
          issue_id ${bigint} NOT NULL REFERENCES issues (id) ON DELETE CASCADE,
          login TEXT NOT NULL,
          avatar_url TEXT,
          PRIMARY KEY (issue_id, login)
        )`,
        'ALTER TABLE pipelines ADD COLUMN host_label TEXT',
        'CREATE UNIQUE INDEX pipelines_host_label ON pipelines (workspace_id, lower(host_label)) WHERE host_label IS NOT NULL',
        `CREATE TABLE connection_accounts (
          connection_id TEXT PRIMARY KEY REFERENCES connections (id) ON DELETE CASCADE,
          account_id ${bigint} NOT NULL,
          login TEXT NOT NULL
        )`,
        `CREATE TABLE host_writes (
          issue_id ${bigint} PRIMARY KEY REFERENCES issues (id) ON DELETE CASCADE,
          connection_id TEXT NOT NULL REFERENCES connections (id) ON DELETE CASCADE,
          status TEXT NOT NULL CHECK (status IN ('pending', 'done', 'failed')),
          generation INTEGER NOT NULL DEFAULT 1,
          attempts INTEGER NOT NULL DEFAULT 0,
          next_attempt_at ${bigint} NOT NULL,
          lease_until ${bigint},
          last_status_code INTEGER,
          last_error TEXT,
          updated_at TEXT NOT NULL
        )`,
        'CREATE INDEX host_writes_due ON host_writes (status, next_attempt_at)',
        'CREATE INDEX host_writes_connection ON host_writes (connection_id, status)'
      ]
      for (const statement of statements) await sql.raw(statement).execute(db)
    }
  }
}
