import type { Connection } from '../db/issue-host/connections.js'
import type { PlanningStore } from '../db/store.js'
import { hostRequest } from './host-api.js'

/**
 * The platform id of the account the connection's token belongs to, read once from the host
 * (`GET /user`) and kept: deliveries it sent are our own writes coming back. Undefined without a
 * token, or while the host cannot say (deliveries are then taken as anyone's).
 */
export function ownAccount (
  store: PlanningStore, connection: Connection, options: { fetch?: typeof fetch, timeoutMs?: number } = {}
): (() => Promise<number | undefined>) | undefined {
  if (connection.token === null) return undefined
  return async () => {
    const kept = await store.connections.keptAccount(connection.id)
    if (kept !== undefined) return kept
    let me: { id?: unknown, login?: unknown } | undefined
    try {
      me = await hostRequest<{ id?: unknown, login?: unknown }>({ connection, method: 'GET', path: '/user', fetch: options.fetch, timeoutMs: options.timeoutMs })
    } catch {
      return undefined
    }
    const id = me?.id
    if (typeof id !== 'number' || !Number.isSafeInteger(id) || id < 1) return undefined
    // Kept for the admin's eyes only; control characters (a NUL PostgreSQL cannot store) are dropped.
    // eslint-disable-next-line no-control-regex
    const login = typeof me?.login === 'string' ? me.login.replace(/[\u0000-\u001f\u007f]/g, '').slice(0, 100) : ''
    // Not kept when the token changed meanwhile; the id is still this token's account.
    await store.connections.keepAccount(connection, id, login)
    return id
  }
}
