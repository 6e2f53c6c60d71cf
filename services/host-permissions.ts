import type { Connection } from '../db/issue-host/connections.js'
import { HostUnavailable } from '../db/errors.js'
import type { HostRepository } from '../db/issue-host/host-sync.js'
import { HostAnswer, hostRequest, pathSegment } from './host-api.js'
import { permissionOf, type PermissionReader } from './issue-host.js'

export interface PermissionReaderOptions {
  /** how requests reach the host (tests and the address policy plug in here) */
  fetch?: typeof fetch
  timeoutMs?: number
}

/**
 * Reads an identity's permission on a repository back from the host with the connection's API
 * token (GitHub's and Gitea's `GET /repos/{owner}/{repo}/collaborators/{user}/permission`).
 * Membership deliveries carry no time to order them by, so the host's current answer is what gets
 * stored, whatever order they arrive in. Without a token there is nothing to ask: undefined.
 */
export function permissionReader (connection: Connection, options: PermissionReaderOptions = {}): PermissionReader | undefined {
  if (connection.token === null) return undefined
  return async (repo: HostRepository, login: string) => {
    const path = `/repos/${pathSegment(repo.owner, 'owner')}/${pathSegment(repo.name, 'repository')}/collaborators/${pathSegment(login, 'login')}/permission`
    let body: { permission?: unknown } | undefined
    try {
      // A 404 is no collaborator (any more): no access.
      body = await hostRequest<{ permission?: unknown }>({ connection, method: 'GET', path, fetch: options.fetch, timeoutMs: options.timeoutMs, allow: [404] })
      if (body === undefined) return 'none'
    } catch (err) {
      if (err instanceof HostAnswer) throw new HostUnavailable(`the issue host answered ${err.status} when asked for ${login}'s permission`)
      const timedOut = err instanceof HostUnavailable && err.statusCode === 504
      throw new HostUnavailable(`the issue host could not be asked for ${login}'s permission (${timedOut ? 'timed out' : (err as Error).message})`, timedOut)
    }
    const permission = permissionOf(body.permission)
    if (permission === undefined) throw new HostUnavailable(`the issue host named no permission for ${login}`)
    return permission
  }
}
