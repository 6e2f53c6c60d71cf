import { sql, type Kysely, type Migration } from 'kysely'
import type { Engine } from '../engine.js'

/**
 * Imports from the hosted service (docs, "Move from the hosted service"): each import with its
 * progress (where a resumed run goes on), its counts and warnings, the token while it runs
 * (encrypted) and the lease of the instance running it; the workspace, pipeline and release
 * report ids they brought (an id here that no import brought is something else: a clash). Repositories a hosted import made without
 * knowing them are marked as placeholders, so the first issue-host connection bringing that id
 * takes them over.
 */
export function hostedImportsMigration (engine: Engine): Migration {
  const bigint = engine === 'sqlite' ? 'INTEGER' : 'BIGINT'
  return {
    async up (db: Kysely<unknown>) {
      const statements = [
        'ALTER TABLE repositories ADD COLUMN placeholder INTEGER NOT NULL DEFAULT 0',
        `CREATE TABLE hosted_imports (
          id TEXT PRIMARY KEY,
          api_url TEXT NOT NULL,
          repositories TEXT NOT NULL,
          closed_issues INTEGER NOT NULL DEFAULT 0,
          issue_events INTEGER NOT NULL DEFAULT 0,
          token TEXT,
          state TEXT NOT NULL CHECK (state IN ('queued', 'running', 'waiting', 'done', 'failed')),
          progress TEXT NOT NULL DEFAULT '{}',
          counts TEXT NOT NULL DEFAULT '{}',
          warnings TEXT NOT NULL DEFAULT '[]',
          requests INTEGER NOT NULL DEFAULT 0,
          estimated_requests INTEGER NOT NULL DEFAULT 0,
          waited_seconds INTEGER NOT NULL DEFAULT 0,
          error TEXT,
          lease_owner TEXT,
          lease_until ${bigint},
          created_at TEXT NOT NULL,
          updated_at TEXT NOT NULL
        )`,
        'CREATE INDEX hosted_imports_state ON hosted_imports (state)',
        `CREATE TABLE hosted_ids (
          kind TEXT NOT NULL CHECK (kind IN ('workspace', 'pipeline', 'release_report')),
          id TEXT NOT NULL,
          PRIMARY KEY (kind, id)
        )`
      ]
      for (const statement of statements) await sql.raw(statement).execute(db)
    }
  }
}
