import type { Selectable } from 'kysely'
import { Conflict, NotFound } from './errors.js'
import { newObjectId, nowIso } from './ids.js'
import type { ConnectionsTable, ImportsTable } from './schema.js'
import { writeTransaction, type Executor } from './transaction.js'

export type Connection = Selectable<ConnectionsTable>
export type ImportRow = Selectable<ImportsTable>
export type NewConnection = Omit<Connection, 'id' | 'created_at'>

/** Delivery ids are remembered this long: hosts redeliver within hours, not weeks. */
const KEPT_DELIVERIES_MS = 30 * 24 * 3600 * 1000

/** Connections to issue hosts, the deliveries they sent, and repository imports. */
export function createConnectionsRepository (db: Executor) {
  const byId = async (id: string): Promise<Connection | undefined> =>
    await db.selectFrom('connections').selectAll().where('id', '=', id).executeTakeFirst()

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

    async list (): Promise<Connection[]> {
      return await db.selectFrom('connections').selectAll().orderBy('created_at').orderBy('id').execute()
    },

    async create (input: NewConnection): Promise<Connection> {
      const row = { ...input, id: newObjectId(), created_at: nowIso() }
      await writeTransaction(db, async (trx) => { await trx.insertInto('connections').values(row).execute() })
      return row
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

    /** Imports a crash or restart left unfinished, oldest first. */
    async unfinishedImports (): Promise<ImportRow[]> {
      return await db.selectFrom('imports').selectAll().where('state', 'in', ['queued', 'running']).orderBy('created_at').execute()
    },

    async updateImport (id: string, change: Partial<Omit<ImportRow, 'id' | 'connection_id' | 'repository' | 'created_at'>>): Promise<void> {
      await db.updateTable('imports').set({ ...change, updated_at: nowIso() }).where('id', '=', id).execute()
    }
  }
}

export type ConnectionsRepository = ReturnType<typeof createConnectionsRepository>
