import { sql, type Kysely, type Migration } from 'kysely'
import type { Engine } from '../engine.js'

/**
 * For the extensions beyond the hosted API: issue events get the commit order of their write
 * (`version`, the change counter's value when it committed) so a feed cursor never skips one
 * committed late; issues get the time their planning data last changed; webhooks the event types
 * they want (null: the four of the hosted API).
 */
export function extensionsMigration (engine: Engine): Migration {
  const bigint = engine === 'sqlite' ? 'INTEGER' : 'BIGINT'
  return {
    async up (db: Kysely<unknown>) {
      const statements = [
        `ALTER TABLE issue_events ADD COLUMN version ${bigint}`,
        'UPDATE issue_events SET version = 0',
        'CREATE INDEX issue_events_feed ON issue_events (version, id)',
        'CREATE INDEX issue_events_unversioned ON issue_events (id) WHERE version IS NULL',
        'ALTER TABLE issues ADD COLUMN planning_changed_at TEXT',
        'CREATE INDEX issues_planning_changed ON issues (repo_id, planning_changed_at)',
        'ALTER TABLE webhooks ADD COLUMN events TEXT'
      ]
      for (const statement of statements) await sql.raw(statement).execute(db)
    }
  }
}
