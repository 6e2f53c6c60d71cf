import { sql, type Kysely, type Migration } from 'kysely'
import type { Engine } from '../engine.js'

/**
 * Labels kept here (docs/graphql.md, "Labels"): a repository's labels made here before any issue
 * wears them (issues keep theirs in issue_labels), the organization's labels (the hosted service's
 * ZenhubLabel; this server has one organization), both with a description, and a milestone's
 * description. Names are unique without regard to case, as the issue hosts' are.
 */
export function labelsMigration (engine: Engine): Migration {
  const bigint = engine === 'sqlite' ? 'INTEGER' : 'BIGINT'
  return {
    async up (db: Kysely<unknown>) {
      const statements = [
        'ALTER TABLE milestones ADD COLUMN description TEXT',
        `CREATE TABLE repository_labels (
          repo_id ${bigint} NOT NULL REFERENCES repositories (id) ON DELETE CASCADE,
          name TEXT NOT NULL,
          color TEXT,
          description TEXT,
          created_at TEXT NOT NULL,
          PRIMARY KEY (repo_id, name)
        )`,
        'CREATE UNIQUE INDEX repository_labels_name ON repository_labels (repo_id, lower(name))',
        `CREATE TABLE zenhub_labels (
          name TEXT PRIMARY KEY,
          color TEXT,
          description TEXT,
          created_at TEXT NOT NULL
        )`,
        'CREATE UNIQUE INDEX zenhub_labels_name ON zenhub_labels (lower(name))'
      ]
      for (const statement of statements) await sql.raw(statement).execute(db)
    }
  }
}
