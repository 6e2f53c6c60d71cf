import { sql, type Kysely, type Migration } from 'kysely'
import type { Engine } from '../engine.js'

/**
 * Each user's own marks on workspaces: the favorites they set, and when they last opened each
 * (only their most recent ones are kept, db/workspace-views.ts). Neither is shown to anybody else.
 */
export function workspaceUserMigration (engine: Engine): Migration {
  const bigint = engine === 'sqlite' ? 'INTEGER' : 'BIGINT'
  return {
    async up (db: Kysely<unknown>) {
      const statements = [
        `CREATE TABLE workspace_favorites (
          user_id ${bigint} NOT NULL REFERENCES users (id) ON DELETE CASCADE,
          workspace_id TEXT NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
          created_at TEXT NOT NULL,
          PRIMARY KEY (user_id, workspace_id)
        )`,
        'CREATE INDEX workspace_favorites_workspace ON workspace_favorites (workspace_id)',
        `CREATE TABLE workspace_views (
          user_id ${bigint} NOT NULL REFERENCES users (id) ON DELETE CASCADE,
          workspace_id TEXT NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
          viewed_at TEXT NOT NULL,
          PRIMARY KEY (user_id, workspace_id)
        )`,
        'CREATE INDEX workspace_views_recent ON workspace_views (user_id, viewed_at)',
        'CREATE INDEX workspace_views_workspace ON workspace_views (workspace_id)'
      ]
      for (const statement of statements) await sql.raw(statement).execute(db)
    }
  }
}
