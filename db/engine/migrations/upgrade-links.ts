import { sql, type Kysely, type Migration } from 'kysely'

/**
 * Undoes the links `005-identities` made on an upgraded install: it linked every local user
 * holding a permission on a bound repository to the host user with the same numeric id. With
 * sign-in through the host, host user N would then sign in as local user N, whoever they are. Those
 * links (identity and user with equal ids, made before that migration was recorded) are cleared;
 * each is in the audit log (`identity.unlinked`, actor `system`) for an administrator to confirm
 * again with `PUT /admin/users/:login/identities` (docs/operations.md, "Upgrading").
 */
export function upgradeLinksMigration (): Migration {
  return {
    async up (db: Kysely<unknown>) {
      const done = await sql<{ timestamp: string }>`SELECT "timestamp" FROM kysely_migration WHERE name = '005-identities'`.execute(db)
      const ranAt = done.rows[0]?.timestamp
      if (ranAt === undefined) return
      const links = await sql<{ connection_id: string, platform_user_id: number | string, login: string | null, user_login: string }>`
        SELECT h.connection_id, h.platform_user_id, h.login, u.login AS user_login
        FROM host_identities h JOIN users u ON u.id = h.user_id
        WHERE h.user_id = h.platform_user_id AND h.created_at <= ${ranAt}`.execute(db)
      const at = new Date().toISOString()
      for (const link of links.rows) {
        await sql`UPDATE host_identities SET user_id = NULL WHERE connection_id = ${link.connection_id} AND platform_user_id = ${link.platform_user_id}`.execute(db)
        const detail = JSON.stringify({
          connection_id: link.connection_id,
          platform_user_id: Number(link.platform_user_id),
          login: link.login,
          reason: 'linked on upgrade only because the ids were equal; link again with PUT /admin/users/:login/identities if this is the same person'
        })
        await sql`INSERT INTO audit_log (at, actor, action, target, address, detail)
          VALUES (${at}, 'system', 'identity.unlinked', ${`user:${link.user_login}`}, NULL, ${detail})`.execute(db)
      }
    }
  }
}
