import { sql, type Kysely, type Migration } from 'kysely'

/**
 * What the hosted service's clients read and nothing kept before (docs/graphql.md, "Fields the
 * hosted clients read"): when a pipeline was made and last renamed or moved (pipelines made before
 * take their workspace's creation, the earliest time they can have), and what the issue host says
 * of a repository: when it was made there, whether it is private or archived, and its owner's id
 * and kind. Repositories made before take the creation of their oldest issue (else now); host facts
 * arrive with the next delivery or import naming the repository.
 */
export function hostedFieldsMigration (): Migration {
  return {
    async up (db: Kysely<unknown>) {
      const statements = [
        'ALTER TABLE pipelines ADD COLUMN created_at TEXT',
        'ALTER TABLE pipelines ADD COLUMN updated_at TEXT',
        'UPDATE pipelines SET created_at = (SELECT w.created_at FROM workspaces w WHERE w.id = pipelines.workspace_id)',
        'UPDATE pipelines SET updated_at = created_at',
        'ALTER TABLE repositories ADD COLUMN created_at TEXT',
        'ALTER TABLE repositories ADD COLUMN is_private INTEGER NOT NULL DEFAULT 0',
        'ALTER TABLE repositories ADD COLUMN is_archived INTEGER NOT NULL DEFAULT 0',
        'ALTER TABLE repositories ADD COLUMN owner_platform_id BIGINT',
        'ALTER TABLE repositories ADD COLUMN owner_kind TEXT',
        `UPDATE repositories SET created_at = coalesce((SELECT min(i.created_at) FROM issues i WHERE i.repo_id = repositories.id), '${new Date().toISOString()}')`
      ]
      for (const statement of statements) await sql.raw(statement).execute(db)
    }
  }
}
