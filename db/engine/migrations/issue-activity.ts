import { sql, type Kysely, type Migration } from 'kysely'
import type { Engine } from '../engine.js'

/** Every type an issue event may have: the hosted API's two, then the host's label and assignee changes. */
export const ISSUE_EVENT_TYPES = ['estimateIssue', 'transferIssue', 'labelIssue', 'unlabelIssue', 'assignIssue', 'unassignIssue'] as const

/**
 * Label and assignee changes join the issue events (docs/extensions.md, "Repository events feed"):
 * four more types, and `subject` (the label's name or the assignee's login). SQLite cannot change a
 * CHECK constraint in place, so there the table is rebuilt, keeping ids, versions and indexes.
 */
export function issueActivityMigration (engine: Engine): Migration {
  const allowed = ISSUE_EVENT_TYPES.map((t) => `'${t}'`).join(', ')
  return {
    async up (db: Kysely<unknown>) {
      const statements = engine === 'postgres'
        ? [
            'ALTER TABLE issue_events DROP CONSTRAINT IF EXISTS issue_events_type_check',
            `ALTER TABLE issue_events ADD CONSTRAINT issue_events_type_check CHECK (type IN (${allowed}))`,
            'ALTER TABLE issue_events ADD COLUMN subject TEXT'
          ]
        : [
            `CREATE TABLE issue_events_next (
              id INTEGER PRIMARY KEY,
              issue_id INTEGER NOT NULL REFERENCES issues (id) ON DELETE CASCADE,
              user_id INTEGER REFERENCES users (id) ON DELETE SET NULL,
              type TEXT NOT NULL CHECK (type IN (${allowed})),
              created_at TEXT NOT NULL,
              from_estimate REAL,
              to_estimate REAL,
              from_pipeline TEXT,
              to_pipeline TEXT,
              workspace_id TEXT,
              version INTEGER,
              subject TEXT
            )`,
            `INSERT INTO issue_events_next (id, issue_id, user_id, type, created_at, from_estimate, to_estimate, from_pipeline, to_pipeline, workspace_id, version)
              SELECT id, issue_id, user_id, type, created_at, from_estimate, to_estimate, from_pipeline, to_pipeline, workspace_id, version FROM issue_events`,
            'DROP TABLE issue_events',
            'ALTER TABLE issue_events_next RENAME TO issue_events',
            'CREATE INDEX issue_events_issue ON issue_events (issue_id, id)',
            'CREATE INDEX issue_events_feed ON issue_events (version, id)',
            'CREATE INDEX issue_events_unversioned ON issue_events (id) WHERE version IS NULL'
          ]
      for (const statement of statements) await sql.raw(statement).execute(db)
    }
  }
}
