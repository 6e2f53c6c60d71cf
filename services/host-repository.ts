import type { Connection } from '../db/issue-host/connections.js'
import type { RepositoryLookup } from '../db/issue-host/host-sync.js'
import { hostRequest } from './host-api.js'
import { hostRepository } from './issue-host.js'

/** The host's own word on a repository by its platform id: null when the host has none (404). */

/**
 * Reads a repository from the host with the connection's token (`GET /repositories/{id}`, on
 * GitHub, Gitea and Forgejo alike), so a rename or a delete is what the host says, not what a
 * delivery claims. Without a token there is nothing to ask: undefined.
 */
export function repositoryLookup (connection: Connection, options: { fetch?: typeof fetch, timeoutMs?: number } = {}): RepositoryLookup | undefined {
  if (connection.token === null) return undefined
  return async (platformId) => {
    const answer = await hostRequest({ connection, method: 'GET', path: `/repositories/${platformId}`, fetch: options.fetch, timeoutMs: options.timeoutMs, allow: [404] })
    return answer === undefined ? null : hostRepository(answer, 'the issue host\'s repository')
  }
}
