import type { FastifyBaseLogger, FastifyInstance, FastifyRequest } from 'fastify'
import type { IncomingMessage, OutgoingHttpHeaders, RequestListener, ServerResponse } from 'node:http'
import { performance } from 'node:perf_hooks'
import { bearerOf } from './auth.js'
import type { FrontAnswer, ServerFront } from './front.js'
import { INTERNAL_HEADER } from './internal-reads.js'
import type { PlanningMetrics } from './metrics.js'
import type { ReadCache } from './cached-answers.js'
import { nextRequestId } from './request-ids.js'

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
/** Log levels below info, where more than the request's two lines may be written: every read takes the routes. */
const DETAILED_LOG_LEVELS = new Set(['debug', 'trace'])

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
  // Both are registered after the read cache: looked up once the app is ready.
  let rateNow: FastifyInstance['planningRateLimitNow'] | null = null
  let timed: PlanningMetrics['requestTimed'] = null
  // The request log at info: each answer gets Fastify's two lines, with an id from the same count.
  let log: FastifyBaseLogger | null = null

  const logged = (req: IncomingMessage, ip: string | undefined, ms: number): void => {
    const line = log!.child({ reqId: nextRequestId() })
    // What the server's `req` serializer reads: no query string here, and no proxy's address (below).
    line.info({ req: { method: req.method, url: req.url, ip } }, 'incoming request')
    line.info({ res: { statusCode: 200 }, responseTime: ms }, 'request completed')
  }

  /**
   * Times and logs an answer once it is written ('finish', as Fastify does). A throw here (a
   * failing log, say) goes no further: the answer is sent, and there is nothing left to answer.
   */
  const finished = (req: IncomingMessage, ip: string | undefined, route: string, started: number): void => {
    try {
      const ms = performance.now() - started
      timed?.('GET', route, 200, ms / 1000)
      if (log !== null) logged(req, ip, ms)
    } catch (err) {
      try {
        fastify.log.error({ err }, 'logging a read answered before routing failed')
      } catch {
        // The log itself is failing: nowhere left to say so.
      }
    }
  }

  const answer = (req: IncomingMessage, res: ServerResponse, url: Known, token: string, version: number, started: number, ip: string | undefined): boolean => {
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
    if (started !== 0) res.once('finish', () => { finished(req, ip, url.route, started) })
    res.writeHead(200, headers)
    res.end(entry.body)
    return true
  }

  const direct: FrontAnswer = (req: IncomingMessage, res: ServerResponse, routed: RequestListener) => {
    const url = req.method === 'GET' ? known.get(req.url!) : undefined
    const token = url === undefined ? undefined : plainToken(req)
    if (token === undefined) return false
    // The log names the client's address; behind a proxy that is the routes' to work out.
    if (log !== null && req.headers['x-forwarded-for'] !== undefined) return false
    const started = timed === null && log === null ? 0 : performance.now()
    // Read now: by the time the answer is logged the socket may be closed, its address gone.
    const ip = log === null ? undefined : req.socket.remoteAddress
    fastify.planningVersionRead().then((version) => {
      if (!answer(req, res, url!, token, version, started, ip)) routed(req, res)
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
    timed = fastify.hasDecorator('planningMetrics') ? fastify.planningMetrics.requestTimed : null
    const sharedWindows = rateNow !== null && fastify.hasDecorator('planningRedis') && fastify.planningRedis !== null
    const level = (fastify.log as { level?: string }).level ?? 'silent'
    log = level === 'info' ? fastify.log : null
    if (!sharedWindows && !DETAILED_LOG_LEVELS.has(level)) front.answer = direct
  })
  fastify.addHook('preClose', async () => { front.answer = undefined })

  return {
    remember (request, repoId, key, headers) {
      // An answer that sets a cookie is never repeated to another request.
      if (plainToken(request.raw) === undefined || headers['set-cookie'] !== undefined) return
      if (known.size >= MAX_URLS && !known.has(request.url)) known.clear()
      known.set(request.url, { repoId, key, route: request.routeOptions.url ?? request.url, headers })
    }
  }
}
