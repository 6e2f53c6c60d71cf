import { sql, type Kysely, type Migration } from 'kysely'
import type { Engine } from '../engine.js'

/**
 * The trust boundary between issue-host connections (docs/connections.md, "Identities and bindings"): a platform user is an
 * identity of one connection, linked to at most one local user; a repository is bound to the
 * connection that first brought it, by the platform's own id. Repositories and milestones keep
 * the host's `updated_at` so an older delivery cannot undo newer state.
 *
 * Earlier releases took platform ids as ours: a bound repository's id was the platform's, and a
 * user a delivery created had the platform user's id. Both are carried over as they were, so
 * nothing changes for existing data: every user holding a permission on a bound repository
 * becomes a linked identity of its connection with their permissions (the admin can unlink one
 * that was wrongly merged with a local user).
 */
export function identitiesMigration (engine: Engine): Migration {
  const bigint = engine === 'sqlite' ? 'INTEGER' : 'BIGINT'
  return {
    async up (db: Kysely<unknown>) {
      const now = new Date().toISOString()
      const statements = [
        `CREATE TABLE host_identities (
          connection_id TEXT NOT NULL REFERENCES connections (id) ON DELETE CASCADE,
          platform_user_id ${bigint} NOT NULL,
          login TEXT,
          user_id ${bigint} REFERENCES users (id) ON DELETE SET NULL,
          created_at TEXT NOT NULL,
          PRIMARY KEY (connection_id, platform_user_id)
        )`,
        'CREATE UNIQUE INDEX host_identities_user ON host_identities (connection_id, user_id) WHERE user_id IS NOT NULL',
        'CREATE INDEX host_identities_linked ON host_identities (user_id)',
        `CREATE TABLE identity_permissions (
          connection_id TEXT NOT NULL,
          platform_user_id ${bigint} NOT NULL,
          repo_id ${bigint} NOT NULL REFERENCES repositories (id) ON DELETE CASCADE,
          level INTEGER NOT NULL,
          PRIMARY KEY (connection_id, platform_user_id, repo_id),
          FOREIGN KEY (connection_id, platform_user_id) REFERENCES host_identities (connection_id, platform_user_id) ON DELETE CASCADE
        )`,
        'CREATE INDEX identity_permissions_repo ON identity_permissions (repo_id)',
        `ALTER TABLE repositories ADD COLUMN platform_repo_id ${bigint}`,
        'ALTER TABLE repositories ADD COLUMN host_updated_at TEXT',
        'ALTER TABLE milestones ADD COLUMN host_updated_at TEXT',
        'UPDATE repositories SET platform_repo_id = id WHERE connection_id IS NOT NULL',
        'CREATE UNIQUE INDEX repositories_binding ON repositories (connection_id, platform_repo_id)',
        `INSERT INTO host_identities (connection_id, platform_user_id, login, user_id, created_at)
          SELECT DISTINCT r.connection_id, u.id, u.login, u.id, '${now}'
          FROM users u JOIN permissions p ON p.user_id = u.id JOIN repositories r ON r.id = p.repo_id
          WHERE r.connection_id IS NOT NULL`,
        `INSERT INTO identity_permissions (connection_id, platform_user_id, repo_id, level)
          SELECT r.connection_id, p.user_id, p.repo_id, p.level
          FROM permissions p JOIN repositories r ON r.id = p.repo_id
          WHERE r.connection_id IS NOT NULL`
      ]
      for (const statement of statements) await sql.raw(statement).execute(db)
    }
  }
}
