import { lockFor } from '../engine/engine.js'
import { Conflict, NotFound } from '../errors.js'
import { nowIso } from '../ids.js'
import { writeTransaction, type Executor } from '../engine/transaction.js'
import type { User } from '../users.js'

export interface Identity {
  connection_id: string
  platform_user_id: number
  /** the host's login, null until the host has named them */
  login: string | null
  /** the local user's login it is linked to, or null */
  user: string | null
}

export interface Binding { repo_id: number, platform_repo_id: number, owner: string, name: string, html_url: string | null }

/**
 * Identities (a platform user as one connection knows them) and their links to local users, and
 * the repositories bound to a connection (docs/connections.md, "Identities and bindings"). Host permissions reach a local
 * user only through a link.
 */
export function createIdentitiesRepository (db: Executor) {
  const requireConnection = async (id: string): Promise<void> => {
    const row = await db.selectFrom('connections').select('id').where('id', '=', id).executeTakeFirst()
    if (row === undefined) throw new NotFound(`connection ${id} not found`)
  }
  const listed = (where: { connectionId?: string, userId?: number }, on: Executor = db) => {
    let query = on.selectFrom('host_identities as i').leftJoin('users as u', 'u.id', 'i.user_id')
      .select(['i.connection_id', 'i.platform_user_id', 'i.login', 'u.login as user'])
    if (where.connectionId !== undefined) query = query.where('i.connection_id', '=', where.connectionId)
    if (where.userId !== undefined) query = query.where('i.user_id', '=', where.userId)
    return query.orderBy('i.connection_id').orderBy('i.platform_user_id')
  }
  const shaped = (rows: Array<{ connection_id: string, platform_user_id: number, login: string | null, user: string | null }>): Identity[] =>
    rows.map((r) => ({ ...r, platform_user_id: Number(r.platform_user_id) }))

  return {
    /** The local user the host user is linked to on this connection (a sign-in through the host). */
    async userOf (connectionId: string, platformUserId: number): Promise<User | undefined> {
      const row = await db.selectFrom('host_identities as i').innerJoin('users as u', 'u.id', 'i.user_id').select(['u.id', 'u.login'])
        .where('i.connection_id', '=', connectionId).where('i.platform_user_id', '=', platformUserId).executeTakeFirst()
      return row === undefined ? undefined : { id: Number(row.id), login: row.login }
    },

    /** Whether the host grants the identity any access to a repository bound to the connection (SIGNUP=host). */
    async collaborates (connectionId: string, platformUserId: number): Promise<boolean> {
      const row = await db.selectFrom('identity_permissions as p').innerJoin('repositories as r', 'r.id', 'p.repo_id').select('p.repo_id')
        .where('p.connection_id', '=', connectionId).where('r.connection_id', '=', connectionId)
        .where('p.platform_user_id', '=', platformUserId).where('p.level', '>', 0).limit(1).executeTakeFirst()
      return row !== undefined
    },

    /** Remembers the host's login for the identity (made if new): the host said who signed in. */
    async named (connectionId: string, platformUserId: number, login: string): Promise<void> {
      await db.insertInto('host_identities').values({ connection_id: connectionId, platform_user_id: platformUserId, login, user_id: null, created_at: nowIso() })
        .onConflict((oc) => oc.columns(['connection_id', 'platform_user_id']).doUpdateSet({ login })).execute()
    },

    async ofUser (userId: number): Promise<Identity[]> {
      return shaped(await listed({ userId }).execute())
    },

    async ofConnection (connectionId: string): Promise<Identity[]> {
      await requireConnection(connectionId)
      return shaped(await listed({ connectionId }).execute())
    },

    async bindings (connectionId: string): Promise<Binding[]> {
      await requireConnection(connectionId)
      const rows = await db.selectFrom('repositories').select(['id', 'platform_repo_id', 'owner', 'name', 'html_url'])
        .where('connection_id', '=', connectionId).orderBy('id').execute()
      return rows.map((r) => ({ repo_id: Number(r.id), platform_repo_id: Number(r.platform_repo_id), owner: r.owner, name: r.name, html_url: r.html_url }))
    },

    /**
     * Links the identity (made if the host has not named it yet) to the user: what the host grants
     * it on the connection's repositories becomes the user's. An identity linked to someone else,
     * or a user linked to another identity of the connection, is a conflict.
     */
    async link (userId: number, connectionId: string, platformUserId: number): Promise<Identity> {
      await requireConnection(connectionId)
      return await writeTransaction(db, async (trx) => {
        await lockFor(trx, `identity-link:${connectionId}`)
        await trx.insertInto('host_identities')
          .values({ connection_id: connectionId, platform_user_id: platformUserId, login: null, user_id: null, created_at: nowIso() })
          .onConflict((oc) => oc.columns(['connection_id', 'platform_user_id']).doNothing()).execute()
        const current = await trx.selectFrom('host_identities').select(['user_id']).where('connection_id', '=', connectionId)
          .where('platform_user_id', '=', platformUserId).executeTakeFirstOrThrow()
        if (current.user_id !== null && Number(current.user_id) !== userId) throw new Conflict(`platform user ${platformUserId} of connection ${connectionId} is linked to another user`)
        const other = await trx.selectFrom('host_identities').select('platform_user_id').where('connection_id', '=', connectionId)
          .where('user_id', '=', userId).where('platform_user_id', '!=', platformUserId).executeTakeFirst()
        if (other !== undefined) throw new Conflict(`the user is linked to platform user ${other.platform_user_id} of connection ${connectionId} already`)
        await trx.updateTable('host_identities').set({ user_id: userId })
          .where('connection_id', '=', connectionId).where('platform_user_id', '=', platformUserId).execute()
        const grants = await trx.selectFrom('identity_permissions').select(['repo_id', 'level'])
          .where('connection_id', '=', connectionId).where('platform_user_id', '=', platformUserId).execute()
        for (const grant of grants) {
          await trx.insertInto('permissions').values({ user_id: userId, repo_id: grant.repo_id, level: grant.level })
            .onConflict((oc) => oc.columns(['user_id', 'repo_id']).doUpdateSet({ level: grant.level })).execute()
        }
        return shaped(await listed({ connectionId, userId }, trx).execute())[0]
      })
    },

    /** Unlinks the user's identity of the connection: the access it gave (on the connection's repositories) goes with it. */
    async unlink (userId: number, connectionId: string): Promise<void> {
      await writeTransaction(db, async (trx) => {
        const result = await trx.updateTable('host_identities').set({ user_id: null })
          .where('connection_id', '=', connectionId).where('user_id', '=', userId).executeTakeFirst()
        if (Number(result.numUpdatedRows) === 0) throw new NotFound(`the user has no identity of connection ${connectionId}`)
        await trx.deleteFrom('permissions').where('user_id', '=', userId)
          .where('repo_id', 'in', trx.selectFrom('repositories').select('id').where('connection_id', '=', connectionId)).execute()
      })
    }
  }
}
