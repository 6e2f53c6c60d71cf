import fp from 'fastify-plugin'
import { createHostFetch, type HostFetch, type HostFetchOptions } from '../../services/host-fetch.js'

/** Requests to issue hosts and the imports that make them (docs/connections.md). */
export interface HostOptions extends HostFetchOptions {
  /** how long an instance holds an import it runs before another may take it over (default 60,000; renewed while it runs) */
  importLeaseMs?: number
}

declare module 'fastify' {
  interface FastifyInstance {
    /** the one `fetch` every request to an issue host goes through, and the import settings */
    planningHosts: { fetch: HostFetch, importLeaseMs?: number }
  }
}

/** Builds the host fetch once from the options (HOST_ALLOW_PRIVATE, HOST_TIMEOUT_MS in the server). */
export default fp<HostOptions>(async (fastify, opts) => {
  const { importLeaseMs, ...fetchOptions } = opts
  fastify.decorate('planningHosts', { fetch: createHostFetch(fetchOptions), importLeaseMs })
}, { name: 'planning-hosts', fastify: '5.x' })
