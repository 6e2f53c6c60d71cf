import type { FastifyInstance, FastifyRequest } from 'fastify'
import type { IncomingMessage, OutgoingHttpHeaders, RequestListener, ServerResponse } from 'node:http'
import { bearerOf } from './auth.js'
import { FrontRecord, type FrontAnswer, type ServerFront } from './front.js'
import { INTERNAL_HEADER } from './internal-reads.js'
import type { ReadCache } from './cached-answers.js'

/** What a URL was last answered with through the routes. */
interface Known {
  repoId: number
  key: string
  /** the route's pattern, for the request metrics */
  route: string
  /** the answer's headers in the order Fastify's hooks set them (CORS, rate limit, tag, type, length) */
  headers: OutgoingHttpHeaders
}

export interface FrontReads {
  /** Notes what a plain GET of this URL was answered with through the routes. */
  remember: (request: FastifyRequest, repoId: number, key: string, headers: OutgoingHttpHeaders) => void
}

/** URLs remembered at most; past it the memory starts over. */
const MAX_URLS = 10_000
const MAX_URL_LENGTH = 512

/**
 * The token of a request the direct path may answer: a GET without a query string, a body, a
 * condition, an Origin or an upgrade, carrying its token in X-Authentication-Token or
 * `Authorization: Bearer`. Anything else takes the routes.
 */
function plainToken (req: IncomingMessage): string | undefined {
  const { headers } = req
  if (req.method !== 'GET' || req.url!.includes('?') || req.url!.length > MAX_URL_LENGTH) return undefined
  if (headers['if-none-match'] !== undefined || headers.origin !== undefined || headers.upgrade !== undefined || headers[INTERNAL_HEADER] !== undefined) return undefined
  if (headers['content-length'] !== undefined || headers['transfer-encoding'] !== undefined) return undefined
  const token = headers['x-authentication-token']
  return typeof token === 'string' && token !== '' ? token : bearerOf(headers)
}

/**
 * Reads answered before routing (docs/development.md): an unchanged board or issue-data read of a
 * URL the routes answered before is answered before Fastify routes it, with the same checks
 * made from the same caches at a counter read after the request arrived: the
 * token (valid, not expired, no last-use write due), read access to the repository, the rate
 * limit (within it, in this instance's windows) and the kept bytes. When any of them is not at
 * hand the request goes to the routes as any other. Only when the rate limit is not kept in Redis
 * and the log is not at debug or trace; at info each answer writes the two lines Fastify writes.
 */
export function frontReads (fastify: FastifyInstance, entries: ReadCache, front: ServerFront): FrontReads {
  const known = new Map<string, Known>()
  // Registered after the read cache: looked up once the app is ready.
  let rateNow: FastifyInstance['planningRateLimitNow'] | null = null
  const record = new FrontRecord(fastify, 'a read')

  const answer = (req: IncomingMessage, res: ServerResponse, url: Known, token: string, version: number, at: ReturnType<FrontRecord['start']>): boolean => {
    const principal = fastify.planningAuth.readerNow(token, req.socket, url.repoId, version)
    if (principal === undefined) return false
    const entry = entries.get(url.key, version)
    if (entry === undefined) return false
    const rate = rateNow?.(principal)
    if (rate === undefined && rateNow !== null) return false
    entries.stats.hits++
    entries.stats.beforeRouting++
    const headers: OutgoingHttpHeaders = { ...url.headers, etag: entry.etag, 'content-length': entry.body.length }
    if (rate !== undefined) {
      headers['x-ratelimit-limit'] = rate.limit
      headers['x-ratelimit-used'] = rate.used
      headers['x-ratelimit-reset'] = rate.reset
    }
    record.finishing(req, res, url.route, at)
    res.writeHead(200, headers)
    res.end(entry.body)
    return true
  }

  const direct: FrontAnswer = (req: IncomingMessage, res: ServerResponse, routed: RequestListener) => {
    const url = req.method === 'GET' ? known.get(req.url!) : undefined
    const token = url === undefined ? undefined : plainToken(req)
    if (token === undefined) return false
    // The log names the client's address; behind a proxy that is the routes' to work out.
    if (record.logging && req.headers['x-forwarded-for'] !== undefined) return false
    const at = record.start(req)
    fastify.planningVersionRead().then((version) => {
      if (!answer(req, res, url!, token, version, at)) routed(req, res)
    }, () => { routed(req, res) }).catch((err: unknown) => {
      // Never an unhandled rejection: a request the front could not finish ends here, logged.
      fastify.log.error({ err }, 'a read answered before routing failed')
      if (res.headersSent) res.destroy()
      else routed(req, res)
    })
    return true
  }

  fastify.addHook('onReady', async () => {
    rateNow = fastify.hasDecorator('planningRateLimitNow') ? fastify.planningRateLimitNow : null
    const sharedWindows = rateNow !== null && fastify.hasDecorator('planningRedis') && fastify.planningRedis !== null
    if (record.ready() && !sharedWindows) front.use(direct)
  })
  fastify.addHook('preClose', async () => { front.drop(direct) })

  return {
    remember (request, repoId, key, headers) {
      // An answer that sets a cookie is never repeated to another request.
      if (plainToken(request.raw) === undefined || headers['set-cookie'] !== undefined) return
      if (known.size >= MAX_URLS && !known.has(request.url)) known.clear()
      known.set(request.url, { repoId, key, route: request.routeOptions.url ?? request.url, headers })
    }
  }
}
