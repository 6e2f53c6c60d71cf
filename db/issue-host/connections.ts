import type { Selectable } from 'kysely'
import { Conflict, Invalid, NotFound } from '../errors.js'
import { newObjectId, nowIso } from '../ids.js'
import type { ConnectionsTable, ImportsTable } from '../schema.js'
import { SecretBox } from '../engine/secret-box.js'
import { lockFor } from '../engine/engine.js'
import { atomic, writeTransaction, type Executor } from '../engine/transaction.js'

export type Connection = Selectable<ConnectionsTable>
export type ImportRow = Selectable<ImportsTable>
export type NewConnection = Omit<Connection, 'id' | 'created_at'>
export type ImportChange = Partial<Omit<ImportRow, 'id' | 'connection_id' | 'repository' | 'created_at' | 'lease_owner' | 'lease_until'>>

/** What a sealed column is bound to: a value sealed for one row does not open in another. */
export const secretContext = (column: SealedColumn, id: string): string => `connections.${column}:${id}`

/** The columns sealed at rest (docs/operations.md, "Secrets at rest"). */
export const SEALED_COLUMNS = ['secret', 'token', 'oauth_client_secret'] as const
export type SealedColumn = typeof SEALED_COLUMNS[number]

/** Opens a stored row's secret, token and OAuth client secret. */
function opened (box: SecretBox, row: Connection): Connection {
  const open = (column: 'token' | 'oauth_client_secret'): string | null => row[column] === null ? null : box.open(row[column], secretContext(column, row.id))
  return { ...row, secret: box.open(row.secret, secretContext('secret', row.id)), token: open('token'), oauth_client_secret: open('oauth_client_secret') }
}

/** What an admin may change on a connection: null clears; the OAuth id and secret are set or cleared together. */
export interface ConnectionChange { token?: string | null, oauth_client_id?: string | null, oauth_client_secret?: string | null }

/** A connection as listed: no secret, token or OAuth client secret, only whether it has them. */
export type ListedConnection = Omit<Connection, 'secret' | 'token' | 'oauth_client_secret'> & { has_token: boolean, has_oauth: boolean }

const listed = ({ secret: _secret, token, oauth_client_secret: oauthSecret, ...c }: Connection): ListedConnection =>
  ({ ...c, has_token: token !== null, has_oauth: c.oauth_client_id !== null && oauthSecret !== null })

function checkOAuthPair (c: { oauth_client_id: string | null, oauth_client_secret: string | null }): void {
  if ((c.oauth_client_id === null) !== (c.oauth_client_secret === null)) {
    throw new Invalid('body/oauth_client_id and body/oauth_client_secret go together: set both, or clear both with null')
  }
}

/** Delivery ids are remembered this long: hosts redeliver within hours, not weeks. */
const KEPT_DELIVERIES_MS = 30 * 24 * 3600 * 1000
/** How many of a connection's last deliveries the log keeps. */
export const LOGGED_DELIVERIES = 20

export interface LoggedDelivery { event: string, action: string | null, result: string, detail: string | null }

/**
 * Connections to issue hosts, the deliveries they sent, and repository imports. Connections come
 * back with their secret and token decrypted (use them for the signature check and API calls
 * only; never log or return them); `secrets` holds SECRET_KEY, without which a connection
 * cannot be stored (`fastify.planningStore.connections` is built with the server's).
 */
export function createConnectionsRepository (db: Executor, secrets: SecretBox = new SecretBox()) {
  const byId = async (id: string): Promise<Connection | undefined> => {
    // Ids are ours (hex); anything else, a NUL byte included, names no connection.
    if (!/^[0-9a-f]{24}$/.test(id)) return undefined
    const row = await db.selectFrom('connections').selectAll().where('id', '=', id).executeTakeFirst()
    return row === undefined ? undefined : opened(secrets, row)
  }

  const requireImport = async (id: string): Promise<ImportRow> => {
    const row = await db.selectFrom('imports').selectAll().where('id', '=', id).executeTakeFirst()
    if (row === undefined) throw new NotFound(`import ${id} not found`)
    return row
  }

  return {
    byId,
    requireImport,

    async require (id: string): Promise<Connection> {
      const connection = await byId(id)
      if (connection === undefined) throw new NotFound(`connection ${id} not found`)
      return connection
    },

    /** Every connection, without its secrets (whether it has a token and an OAuth app is told). */
    async list (): Promise<ListedConnection[]> {
      const rows = await db.selectFrom('connections').selectAll().orderBy('created_at').orderBy('id').execute()
      return rows.map(listed)
    },

    /** Stores a connection with its secret, token and OAuth client secret sealed; refused (400) without SECRET_KEY. */
    async create (input: NewConnection): Promise<Connection> {
      checkOAuthPair(input)
      const row = { ...input, id: newObjectId(), created_at: nowIso() }
      const seal = (column: 'token' | 'oauth_client_secret'): string | null => row[column] === null ? null : secrets.seal(row[column], secretContext(column, row.id))
      const sealed = { ...row, secret: secrets.seal(row.secret, secretContext('secret', row.id)), token: seal('token'), oauth_client_secret: seal('oauth_client_secret') }
      await writeTransaction(db, async (trx) => { await trx.insertInto('connections').values(sealed).execute() })
      return row
    },

    /** Sets or clears (null) the token and the OAuth app; the new values are sealed. */
    async update (id: string, change: ConnectionChange): Promise<ListedConnection> {
      const current = await byId(id)
      if (current === undefined) throw new NotFound(`connection ${id} not found`)
      const next = { ...current, ...change }
      checkOAuthPair(next)
      const set: Partial<Record<'token' | 'oauth_client_id' | 'oauth_client_secret', string | null>> = {}
      if (change.token !== undefined) set.token = change.token === null ? null : secrets.seal(change.token, secretContext('token', id))
      if (change.oauth_client_id !== undefined) set.oauth_client_id = change.oauth_client_id
      if (change.oauth_client_secret !== undefined) {
        set.oauth_client_secret = change.oauth_client_secret === null ? null : secrets.seal(change.oauth_client_secret, secretContext('oauth_client_secret', id))
      }
      if (Object.keys(set).length > 0) {
        await writeTransaction(db, async (trx) => {
          await lockFor(trx, `connection-token:${id}`)
          await trx.updateTable('connections').set(set).where('id', '=', id).execute()
          // The account kept as "our own" was the old token's: with another token (or none) its
          // changes are a person's again, and the new account's are our echoes.
          if (change.token !== undefined) await trx.deleteFrom('connection_accounts').where('connection_id', '=', id).execute()
        })
      }
      return listed(next)
    },

    /** The host account the connection's token belongs to, as kept (`keepAccount`). */
    async keptAccount (id: string): Promise<number | undefined> {
      const kept = await db.selectFrom('connection_accounts').select('account_id').where('connection_id', '=', id).executeTakeFirst()
      return kept === undefined ? undefined : Number(kept.account_id)
    },

    /**
     * Keeps the account the host named for `connection`'s token, unless the token changed since
     * it was read (an answer for the old token arriving after the change must not be kept).
     */
    async keepAccount (connection: Connection, accountId: number, login: string): Promise<boolean> {
      return await atomic(db, async (trx) => {
        await lockFor(trx, `connection-token:${connection.id}`)
        const row = await trx.selectFrom('connections').selectAll().where('id', '=', connection.id).executeTakeFirst()
        if (row === undefined || connection.token === null || opened(secrets, row).token !== connection.token) return false
        await trx.insertInto('connection_accounts').values({ connection_id: connection.id, account_id: accountId, login })
          .onConflict((oc) => oc.column('connection_id').doNothing()).execute()
        return true
      })
    },

    async remove (id: string): Promise<void> {
      await writeTransaction(db, async (trx) => {
        const result = await trx.deleteFrom('connections').where('id', '=', id).executeTakeFirst()
        if (Number(result.numDeletedRows) === 0) throw new NotFound(`connection ${id} not found`)
        await trx.updateTable('repositories').set({ connection_id: null }).where('connection_id', '=', id).execute()
      })
    },

    /** Records a delivery id; false when it was seen before (the delivery changes nothing then). */
    async firstDelivery (trx: Executor, connectionId: string, deliveryId: string): Promise<boolean> {
      const now = Date.now()
      const inserted = await trx.insertInto('connection_deliveries').values({ connection_id: connectionId, delivery_id: deliveryId, received_at: now })
        .onConflict((oc) => oc.columns(['connection_id', 'delivery_id']).doNothing()).returning('delivery_id').executeTakeFirst()
      if (inserted !== undefined && now % 100 === 0) {
        await trx.deleteFrom('connection_deliveries').where('received_at', '<', now - KEPT_DELIVERIES_MS).execute()
      }
      return inserted !== undefined
    },

    /** Writes a signed delivery's outcome to the connection's log, keeping only the newest LOGGED_DELIVERIES. */
    async logDelivery (connectionId: string, delivery: LoggedDelivery): Promise<void> {
      await writeTransaction(db, async (trx) => {
        await trx.insertInto('connection_delivery_log').values({
          id: newObjectId(), connection_id: connectionId, received_at: Date.now(), ...delivery, detail: delivery.detail?.slice(0, 300) ?? null
        }).execute()
        const kept = trx.selectFrom('connection_delivery_log').select('id').where('connection_id', '=', connectionId)
          .orderBy('received_at', 'desc').orderBy('id', 'desc').limit(LOGGED_DELIVERIES)
        await trx.deleteFrom('connection_delivery_log').where('connection_id', '=', connectionId).where('id', 'not in', kept).execute()
        // No kept answer shows the log: every delivery logs, and none should cost a repository its kept board.
      }, [], [])
    },

    /** The connection's last deliveries, newest first (404 for an unknown connection). */
    async recentDeliveries (connectionId: string): Promise<Array<LoggedDelivery & { received_at: string }>> {
      if (await byId(connectionId) === undefined) throw new NotFound(`connection ${connectionId} not found`)
      const rows = await db.selectFrom('connection_delivery_log').select(['received_at', 'event', 'action', 'result', 'detail'])
        .where('connection_id', '=', connectionId).orderBy('received_at', 'desc').orderBy('id', 'desc').limit(LOGGED_DELIVERIES).execute()
      return rows.map((r) => ({ ...r, received_at: new Date(Number(r.received_at)).toISOString() }))
    },

    /** The connection's latest imports, newest first. */
    async recentImports (connectionId: string): Promise<ImportRow[]> {
      return await db.selectFrom('imports').selectAll().where('connection_id', '=', connectionId)
        .orderBy('created_at', 'desc').orderBy('id', 'desc').limit(5).execute()
    },

    async createImport (connectionId: string, repository: string): Promise<ImportRow> {
      const now = nowIso()
      const id = newObjectId()
      await writeTransaction(db, async (trx) => {
        const running = await trx.selectFrom('imports').select('id').where('connection_id', '=', connectionId)
          .where('repository', '=', repository).where('state', 'in', ['queued', 'running']).executeTakeFirst()
        if (running !== undefined) throw new Conflict(`an import of ${repository} is already under way (${running.id})`)
        await trx.insertInto('imports').values({ id, connection_id: connectionId, repository, state: 'queued', repo_id: null, error: null, created_at: now, updated_at: now }).execute()
      })
      return await requireImport(id)
    },

    /** Imports not finished and not leased (a crash, a restart, or a lease run out), oldest first. */
    async unfinishedImports (now = Date.now()): Promise<ImportRow[]> {
      return await db.selectFrom('imports').selectAll().where('state', 'in', ['queued', 'running'])
        .where((eb) => eb.or([eb('lease_until', 'is', null), eb('lease_until', '<', now)]))
        .orderBy('created_at').execute()
    },

    /**
     * Claims an unfinished import for `owner` until `until` (epoch ms), in one conditional update:
     * of several instances resuming it at once, exactly one gets it (true); a live lease is left alone.
     */
    async claimImport (id: string, owner: string, until: number, now = Date.now()): Promise<boolean> {
      const result = await db.updateTable('imports').set({ state: 'running', lease_owner: owner, lease_until: until, updated_at: nowIso() })
        .where('id', '=', id).where('state', 'in', ['queued', 'running'])
        .where((eb) => eb.or([eb('lease_until', 'is', null), eb('lease_until', '<', now)]))
        .executeTakeFirst()
      return Number(result.numUpdatedRows) === 1
    },

    /** Extends `owner`'s lease; false when the lease is no longer its own (taken over, or finished). */
    async renewImport (id: string, owner: string, until: number): Promise<boolean> {
      const result = await db.updateTable('imports').set({ lease_until: until })
        .where('id', '=', id).where('lease_owner', '=', owner).where('state', '=', 'running').executeTakeFirst()
      return Number(result.numUpdatedRows) === 1
    },

    /** Gives a lease up (the instance stops): another instance may go on with the import at once. */
    async releaseImport (id: string, owner: string): Promise<void> {
      await db.updateTable('imports').set({ lease_until: null, lease_owner: null })
        .where('id', '=', id).where('lease_owner', '=', owner).where('state', '=', 'running').execute()
    },

    /**
     * Records progress; with `owner`, only while that instance holds the lease (false otherwise,
     * and nothing is written: an instance whose lease was taken over must not count pages twice).
     * A finished import (done or failed) gives its lease up.
     */
    async updateImport (id: string, change: ImportChange, owner?: string): Promise<boolean> {
      const finished = change.state === 'done' || change.state === 'failed'
      let query = db.updateTable('imports').set({ ...change, ...(finished ? { lease_until: null, lease_owner: null } : {}), updated_at: nowIso() }).where('id', '=', id)
      if (owner !== undefined) query = query.where('lease_owner', '=', owner).where('state', '=', 'running')
      return Number((await query.executeTakeFirst()).numUpdatedRows) === 1
    }
  }
}

export type ConnectionsRepository = ReturnType<typeof createConnectionsRepository>
