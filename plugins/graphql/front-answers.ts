import type { FastifyInstance, FastifyReply, FastifyRequest, HookHandlerDoneFunction } from 'fastify'
import type { IncomingMessage, OutgoingHttpHeaders, RequestListener, ServerResponse } from 'node:http'
import { PassThrough, Transform } from 'node:stream'
import type { TLSSocket } from 'node:tls'
import { bearerOf } from '../core/auth.js'
import { FrontRecord, type FrontAnswer, type ServerFront } from '../core/front.js'
import { INTERNAL_HEADER } from '../core/internal-reads.js'

/** A body the front read and handed to the routes: its bytes, and the same as a string of them (latin1, one character a byte). */
interface Read { bytes: Buffer, text: string }
const READ = Symbol('planningGraphqlFrontRead')
const KEPT = Symbol('planningGraphqlKeptKey')
type FrontRequest = IncomingMessage & { [READ]?: Read }
type KeptRequest = FastifyRequest & { [KEPT]?: string }

/** What a request was last answered with through the routes. */
interface Known {
  /** the kept answer's key (answer-cache.ts) */
  key: string
  /** the route's pattern, for the request metrics */
  route: string
  /**
   * the answer's headers in the order the hooks set them (rate limit, type), names and values in
   * one list as `writeHead` takes them, and where in it the rate limit's four values are
   */
  headers: Array<string | number>
  rate: { limit: number, used: number, reset: number, remaining: number }
}

/** The headers as one list of names and values, and where the rate limit's values sit in it (-1: absent). */
function headerList (headers: OutgoingHttpHeaders): Pick<Known, 'headers' | 'rate'> {
  const list: Array<string | number> = []
  const rate = { limit: -1, used: -1, reset: -1, remaining: -1 }
  for (const [name, value] of Object.entries(headers)) {
    if (value === undefined) continue
    for (const one of Array.isArray(value) ? value : [value]) list.push(name, one)
    const slot = RATE_SLOTS[name]
    if (slot !== undefined && !Array.isArray(value)) rate[slot] = list.length - 1
  }
  return { headers: list, rate }
}
const RATE_SLOTS: Record<string, keyof Known['rate'] | undefined> = {
  'x-ratelimit-limit': 'limit', 'x-ratelimit-used': 'used', 'x-ratelimit-reset': 'reset', 'x-ratelimit-remaining': 'remaining'
}

/** Bodies read at most: a longer one takes the routes unread. */
const MAX_BODY = 16 * 1024
/** What the remembered requests may cost at most (their bodies and keys, a byte a character, and a fixed part each); past it the memory starts over. */
const MAX_KNOWN_BYTES = 8 * 1024 * 1024
const KNOWN_OVERHEAD = 512
const LENGTH = /^[1-9]\d{0,5}$/
/** Headers that make a request the routes' to answer: conditions, CORS, an upgrade, a proxy's, a body sent otherwise than plainly. */
const ROUTED_HEADERS = [
  'if-none-match', 'origin', 'upgrade', INTERNAL_HEADER, 'expect', 'transfer-encoding', 'content-encoding',
  'x-forwarded-for', 'x-forwarded-proto', 'x-forwarded-host', 'forwarded', 'cookie'
]

/**
 * The token of a request the front may answer: a POST of one of the door's URLs, without a query
 * string or any of `ROUTED_HEADERS`, with a content type and a body of 1 to 16 KiB declared by its
 * length, carrying its token in X-Authentication-Token or `Authorization: Bearer`.
 */
function plainPost (req: IncomingMessage, urls: ReadonlySet<string>): string | undefined {
  const { headers } = req
  if (req.method !== 'POST' || !urls.has(req.url!)) return undefined
  for (const name of ROUTED_HEADERS) if (headers[name] !== undefined) return undefined
  const length = headers['content-length']
  if (length === undefined || !LENGTH.test(length) || Number(length) > MAX_BODY || headers['content-type'] === undefined) return undefined
  const token = headers['x-authentication-token']
  return typeof token === 'string' && token !== '' ? token : bearerOf(headers)
}

/**
 * What a request's answer is made of besides the change counter and its body's exact bytes (the
 * first key of the front's memory): the viewer and their token's scope, the address links are
 * made on (the socket's protocol and the Host: no proxy's headers reach here), the URL and the
 * content type. Two requests alike in all of these are parsed, validated and keyed alike by the routes.
 */
function requestKey (req: IncomingMessage, userId: number, scope: string): string {
  const secure = (req.socket as TLSSocket).encrypted === true ? 's' : ''
  return `${whoOf(userId, scope)}\0${secure}\0${req.headers.host ?? ''}\0${req.url!}\0${req.headers['content-type']!}`
}

function whoOf (userId: number, scope: string): string {
  return `${userId}\0${scope}`
}

export interface KeptAnswers {
  /** the kept answer under `key` when it holds at `version` and sending it takes nothing more; not counted */
  plainNow: (key: string, version: number) => Buffer | undefined
  /** counts an answer `plainNow` gave as a hit before routing */
  answeredBeforeRouting: () => void
}

export interface GraphqlFront {
  /** Notes that this request is answered with the kept answer under `key` (undefined: it is not): its answer is remembered for the front. */
  kept: (request: FastifyRequest, key: string | undefined) => void
}

/**
 * GraphQL reads answered before routing (docs/graphql.md, "Kept answers"): a request the routes
 * answered from kept bytes (or kept what they answered) is answered before Fastify routes it the
 * next time it comes byte for byte the same from the same viewer, with the checks the REST reads
 * answered before routing make (plugins/core/front-reads.ts), at a counter read after the request
 * arrived: the token is in the auth cache at that value (valid, not expired, no last-use write
 * due), the kept answer is of that value and needs nothing more (no workspace view to record, no
 * favorites to compare), and the rate limit counts the request within the limit in this
 * instance's windows. The front reads the body of every plain POST to the door (at most 16 KiB);
 * when it cannot answer, the routes get the request with those bytes (a preParsing hook gives
 * them back) as if nothing had been read. Only when the rate limit is not kept in Redis and the log
 * is not at debug or trace; at info each answer writes the two lines Fastify writes.
 */
export function graphqlFront (fastify: FastifyInstance, answers: KeptAnswers, front: ServerFront): GraphqlFront {
  const urls = new Set([`${fastify.prefix}/public/graphql`, `${fastify.prefix}/public/graphql/`])
  // By the body's bytes (as a string of them), then by `requestKey`.
  const known = new Map<string, Map<string, Known>>()
  // The viewers and scopes with something in `known`: nobody else's body is read by the front.
  const knownWho = new Set<string>()
  let knownBytes = 0
  let rateNow: FastifyInstance['planningRateLimitNow'] | null = null
  let roomNow: FastifyInstance['planningRateLimitRoom'] | null = null
  // Whether the front answers (not at debug or trace, nor with the windows in Redis): else nothing is recorded or remembered.
  let answering = false
  const record = new FrontRecord(fastify, 'a GraphQL read')

  const answer = (req: FrontRequest, res: ServerResponse, token: string, version: number, read: Read, at: ReturnType<FrontRecord['start']>): boolean => {
    const principal = fastify.planningAuth.signedInNow(token, req.socket, version)
    if (principal === undefined) return false
    const request = known.get(read.text)?.get(requestKey(req, principal.user.id, principal.credential.scope))
    if (request === undefined) return false
    const body = answers.plainNow(request.key, version)
    if (body === undefined) return false
    const rate = rateNow?.(principal)
    if (rate === undefined && rateNow !== null) return false
    answers.answeredBeforeRouting()
    // A copy of the list (an object spread of headers costs several times more), this request's count in it.
    const headers = request.headers.slice()
    const slots = request.rate
    if (rate !== undefined) {
      if (slots.limit >= 0) headers[slots.limit] = rate.limit
      if (slots.used >= 0) headers[slots.used] = rate.used
      if (slots.reset >= 0) headers[slots.reset] = rate.reset
      if (slots.remaining >= 0) headers[slots.remaining] = Math.max(0, rate.limit - rate.used)
    }
    headers.push('content-length', body.length)
    record.finishing(req, res, request.route, at)
    res.writeHead(200, headers)
    res.end(body)
    return true
  }

  // A body is read only for a token signed in at the counter, whose viewer has answers the front
  // knows and whose window has room: any other request goes to the routes unread, as soon as the
  // counter is known, and they refuse or answer it as they would without a front.
  const mayRead = (req: IncomingMessage, token: string, counter: number): boolean => {
    const principal = fastify.planningAuth.signedInNow(token, req.socket, counter)
    return principal !== undefined && knownWho.has(whoOf(principal.user.id, principal.credential.scope)) && (roomNow?.(principal) ?? true)
  }

  const direct: FrontAnswer = (req: FrontRequest, res: ServerResponse, routed: RequestListener) => {
    const token = plainPost(req, urls)
    if (token === undefined) return false
    const at = record.start(req)
    const length = Number(req.headers['content-length'])
    let handedOver = false
    const route = () => {
      if (handedOver) return
      handedOver = true
      routed(req, res)
    }
    const failed = (err: unknown) => {
      fastify.log.error({ err }, 'a GraphQL read answered before routing failed')
      if (res.headersSent) res.destroy()
      else route()
    }
    fastify.planningVersionRead().then((counter) => {
      if (!mayRead(req, token, counter)) {
        route()
        return
      }
      const chunks: Buffer[] = []
      let size = 0
      const onData = (chunk: Buffer) => {
        size += chunk.length
        chunks.push(chunk)
      }
      // A client that goes away mid-body gets no answer, as it would get none from the routes.
      const onError = () => { res.destroy() }
      req.on('data', onData)
      req.once('error', onError)
      req.once('end', () => {
        req.removeListener('data', onData)
        req.removeListener('error', onError)
        const bytes = chunks.length === 1 ? chunks[0] : Buffer.concat(chunks, size)
        req[READ] = { bytes, text: bytes.toString('latin1') }
        try {
          if (size !== length || !answer(req, res, token, counter, req[READ], at)) route()
        } catch (err) {
          failed(err)
        }
      })
    }, route).catch(failed)
    return true
  }

  // The routes read what the front read: the same bytes, as a stream of their own. A plain POST
  // the front did not read (its viewer had no answers the front knows) is recorded as the routes
  // read it, after they checked its token and counted it, so that its answer can be remembered.
  fastify.addHook('preParsing', (request, _reply, payload, done) => {
    const raw = request.raw as FrontRequest
    const read = raw[READ]
    if (read === undefined) {
      if (!answering || request.planningUser === null || plainPost(raw, urls) === undefined) {
        done(null, payload)
        return
      }
      const chunks: Buffer[] = []
      let size = 0
      const recording = new Transform({
        transform (chunk: Buffer, _encoding, next) {
          size += chunk.length
          if (size <= MAX_BODY) chunks.push(chunk)
          next(null, chunk)
        },
        flush (next) {
          if (size <= MAX_BODY) {
            const bytes = Buffer.concat(chunks, size)
            raw[READ] = { bytes, text: bytes.toString('latin1') }
          }
          next()
        }
      })
      payload.once('error', (err) => { recording.destroy(err) })
      done(null, payload.pipe(recording))
      return
    }
    const replayed = new PassThrough()
    replayed.end(read.bytes)
    done(null, replayed)
  })
  // Last of the door's onSend hooks: the headers are those sent, but for the length Fastify adds.
  fastify.addHook('onSend', (request: KeptRequest, reply: FastifyReply, _payload: unknown, done: HookHandlerDoneFunction) => {
    const key = request[KEPT]
    const read = (request.raw as FrontRequest)[READ]
    const user = request.planningUser
    const credential = request.planningCredential
    if (answering && key !== undefined && read !== undefined && user !== null && credential !== null && reply.statusCode === 200 && !reply.hasHeader('set-cookie') &&
      credential.kind !== 'session' && plainPost(request.raw, urls) !== undefined) {
      const who = requestKey(request.raw, user.id, credential.scope)
      knownWho.add(whoOf(user.id, credential.scope))
      let byWho = known.get(read.text)
      if (byWho?.has(who) !== true) {
        const cost = () => (byWho === undefined ? read.text.length : 0) + who.length + KNOWN_OVERHEAD
        if (knownBytes + cost() > MAX_KNOWN_BYTES) {
          known.clear()
          knownWho.clear()
          knownWho.add(whoOf(user.id, credential.scope))
          knownBytes = 0
          byWho = undefined
        }
        knownBytes += cost()
      }
      if (byWho === undefined) known.set(read.text, byWho = new Map())
      byWho.set(who, { key, route: request.routeOptions.url ?? request.url, ...headerList(reply.getHeaders() as OutgoingHttpHeaders) })
    }
    done()
  })
  fastify.addHook('onReady', async () => {
    rateNow = fastify.hasDecorator('planningRateLimitNow') ? fastify.planningRateLimitNow : null
    roomNow = fastify.hasDecorator('planningRateLimitRoom') ? fastify.planningRateLimitRoom : null
    const sharedWindows = rateNow !== null && fastify.hasDecorator('planningRedis') && fastify.planningRedis !== null
    answering = record.ready() && !sharedWindows
    if (answering) front.use(direct)
  })
  fastify.addHook('preClose', async () => {
    answering = false
    front.drop(direct)
  })

  return {
    kept (request, key) {
      if ((request.raw as FrontRequest)[READ] !== undefined) (request as KeptRequest)[KEPT] = key
    }
  }
}
