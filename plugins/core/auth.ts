import { httpErrors } from '@fastify/sensible'
import { parseCookie } from 'cookie'
import type { FastifyReply, FastifyRequest, HookHandlerDoneFunction } from 'fastify'
import fp from 'fastify-plugin'
import type { IncomingHttpHeaders } from 'node:http'
import { Forbidden, NotFound } from '../../db/errors.js'
import type { Repository } from '../../db/repositories.js'
import { sessionDigest, type SessionLifetimes } from '../../db/sign-in/sessions.js'
import { TOUCH_EVERY_MS, type Credential, type Principal } from '../../db/sign-in/tokens.js'
import { hashToken, LEVELS, type AccessLevel, type User } from '../../db/users.js'
import type { CommittedWrites } from './committed-writes.js'

const resolved = Symbol('planningUserResolved')
const readable = Symbol('planningReadable')
const settled = Symbol('planningUserSettled')
const expired = Symbol('planningCredentialExpired')

/** The browser session's cookie (docs/sign-in.md, "Sessions"). */
export const SESSION_COOKIE = 'planning_session'
const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS'])

export interface AuthPluginOptions {
  /** idle and absolute lifetimes of browser sessions (default 1,440 minutes and 30 days) */
  sessions?: SessionLifetimes
  /** the origin people reach the server at (PUBLIC_URL's): writes with a session cookie must come from it */
  publicOrigin?: string
}

declare module 'fastify' {
  interface FastifyRequest {
    /** the user behind the request's token, once `planningAuth.user()` or `requireUser` ran */
    planningUser: User | null
    /** what the request signed in with (a token, the legacy token or a session), with the user */
    planningCredential: Credential | null
    [resolved]: Promise<User | null> | null
    [settled]: boolean
    [expired]: boolean
    [readable]: Promise<Set<number>> | null
  }
  interface FastifyInstance {
    planningAuth: PlanningAuth
  }
}

export interface PlanningAuth {
  /** The token the request carries: X-Authentication-Token, `access_token` query or Bearer. */
  tokenOf: (request: FastifyRequest) => string | undefined
  /** The session cookie's value, when the request carries no token. */
  sessionOf: (request: FastifyRequest) => string | undefined
  /** The origin this server's pages are served from (PUBLIC_URL's, else the request's): session writes must carry it as Origin. */
  originOf: (request: FastifyRequest) => string
  /** Idle and absolute session lifetimes in force. */
  sessionLifetimes: SessionLifetimes
  /** The request's user, or null; looked up once per request. */
  user: (request: FastifyRequest) => Promise<User | null>
  /** The same when it is known without waiting (the counter read from SQLite, the token cached); else undefined. */
  userNow: (request: FastifyRequest) => User | null | undefined
  /**
   * onRequest hook (callback style) for routes that need a user: 401 without a valid token or
   * session (or with an expired one); on a write, 403 for a read-scoped token and for a session
   * cookie without this server's Origin.
   */
  requireUser: (request: FastifyRequest, reply: FastifyReply, done: HookHandlerDoneFunction) => void
  /**
   * onRequest hook for doors whose POSTs carry reads and writes alike (MCP, GraphQL): 401 without a
   * valid token or session, 403 for a session cookie without this server's Origin; a read-scoped
   * token passes, and each operation that changes something asks `changeRefusal` first.
   */
  requireSignedIn: (request: FastifyRequest, reply: FastifyReply, done: HookHandlerDoneFunction) => void
  /** Why this request's credential may not change anything (read scope, a session from elsewhere), whatever its method; else undefined. */
  changeRefusal: (request: FastifyRequest) => Error | undefined
  /**
   * The 403 for a request that would act with a session cookie alone (no token) without this
   * server's Origin, as writes are refused; `what` names the act. Else undefined. Needs no query.
   */
  cookieOnlyRefusal: (request: FastifyRequest, what: string) => Error | undefined
  /**
   * The repository if the request's user has `level` on it. No read access answers 404 exactly
   * as for a repository that does not exist; read access without the level needed answers 403.
   */
  requireAccess: (request: FastifyRequest, repoId: number, level: AccessLevel) => Promise<Repository>
  /** The same decided without waiting (it throws the same errors), or undefined when it takes a query. */
  accessNow: (request: FastifyRequest, repoId: number, level: AccessLevel) => Repository | undefined
  /**
   * For a read answered before routing: who `token` belongs to, when at
   * counter `version` it is known valid, needs no write of its last use and has read access to
   * `repoId`, all without a query; else undefined (the request then takes the usual way).
   */
  readerNow: (token: string, socket: object | null, repoId: number, version: number) => Principal | undefined
  /** The same without a repository: who `token` belongs to, when at counter `version` it is known valid and needs no write of its last use. */
  signedInNow: (token: string, socket: object | null, version: number) => Principal | undefined
  /**
   * The user's readable repositories, looked up once per request (one query, whatever the count);
   * callers filter with `set.has(repoId)`.
   */
  readable: (request: FastifyRequest) => Promise<Set<number>>
  /** The request's best level over these repositories (0: none), for objects that span several. */
  bestLevel: (request: FastifyRequest, repoIds: number[]) => Promise<number>
}

/** The token of an `Authorization: Bearer` header, if that is what the headers carry. */
export function bearerOf (headers: IncomingHttpHeaders): string | undefined {
  const authorization = headers.authorization
  if (authorization !== undefined && /^bearer /i.test(authorization)) return authorization.slice(7).trim() || undefined
  return undefined
}

export function repositoryNotFound (repoId: number): Error {
  return new NotFound(`repository ${repoId} not found`)
}

const MAX_CACHED = 10_000

interface Access { repo: Repository | undefined, level: number }

/**
 * Tokens, repositories and permission levels as last read, kept while the change counter stays
 * where it was: every write (a new token, a permission, a deleted user) moves it and empties this,
 * except writes noted here (this process's, or heard from another instance) confined to some
 * repositories' issues (they touch none of these).
 */
class AccessCache {
  version = -1
  constructor (private readonly writes: CommittedWrites) {}
  /** by the digest of the token or session; expiry is checked on every use */
  readonly users = new Map<string, Principal | null>()
  /** by user id, then repository id (numbers all the way: no key string per request) */
  private readonly access = new Map<number, Map<number, Access>>()
  private accessCount = 0
  readonly readable = new Map<number, Set<number>>()

  at (version: number): this {
    if (version !== this.version) {
      const kept = this.writes.confined(this.version, version)
      this.version = version
      if (kept) return this
      this.users.clear()
      this.clearAccess()
      this.readable.clear()
    }
    return this
  }

  accessOf (userId: number, repoId: number): Access | undefined {
    return this.access.get(userId)?.get(repoId)
  }

  rememberAccess (userId: number, repoId: number, access: Access): Access {
    if (this.accessCount >= MAX_CACHED) this.clearAccess()
    let byRepo = this.access.get(userId)
    if (byRepo === undefined) this.access.set(userId, byRepo = new Map())
    byRepo.set(repoId, access)
    this.accessCount++
    return access
  }

  private clearAccess (): void {
    this.access.clear()
    this.accessCount = 0
  }
}

export default fp<AuthPluginOptions>(async (fastify, opts) => {
  const { users, repositories, tokens, sessions } = fastify.planningStore
  const lifetimes: SessionLifetimes = opts.sessions ?? { idleMs: 1440 * 60_000, maxMs: 30 * 86_400_000 }
  const cache = new AccessCache(fastify.planningWrites)
  const cached = async (request: FastifyRequest) => cache.at(await fastify.planningVersion(request))
  const remember = <K, V>(map: Map<K, V>, key: K, value: V): V => {
    if (map.size >= MAX_CACHED) map.clear()
    map.set(key, value)
    return value
  }

  fastify.decorateRequest('planningUser', null)
  fastify.decorateRequest('planningCredential', null)
  fastify.decorateRequest(resolved, null)
  fastify.decorateRequest(settled, false)
  fastify.decorateRequest(expired, false)
  fastify.decorateRequest(readable, null)

  const tokenOf = (request: FastifyRequest): string | undefined => {
    const header = request.headers['x-authentication-token']
    if (typeof header === 'string' && header !== '') return header
    const query = request.query as Record<string, unknown> | undefined
    if (typeof query?.access_token === 'string' && query.access_token !== '') return query.access_token
    return bearerOf(request.headers)
  }

  // A keep-alive connection sends the same token with every request: its digest is kept with the
  // socket (which holds the header anyway) instead of hashing it again each time.
  const digests = new WeakMap<object, { token: string, digest: string }>()
  const digestOf = (request: FastifyRequest, token: string): string => socketDigest(request.raw.socket, token)
  const socketDigest = (socket: object | null | undefined, token: string): string => {
    const known = socket === undefined || socket === null ? undefined : digests.get(socket)
    if (known !== undefined && known.token === token) return known.digest
    const digest = hashToken(token)
    if (socket !== undefined && socket !== null) digests.set(socket, { token, digest })
    return digest
  }

  // Only a request without a token reads the cookie header, and only then is it parsed.
  const sessionOf = (request: FastifyRequest): string | undefined => {
    const header = request.headers.cookie
    if (header === undefined || !header.includes(SESSION_COOKIE)) return undefined
    const value = parseCookie(header)[SESSION_COOKIE]
    return value === undefined || value === '' ? undefined : value
  }
  /** The cache key of what the request presents: the token's digest, or the session's. */
  const keyOf = (request: FastifyRequest): { key: string, session: boolean } | undefined => {
    const token = tokenOf(request)
    if (token !== undefined) return { key: digestOf(request, token), session: false }
    const session = sessionOf(request)
    return session === undefined ? undefined : { key: sessionDigest(session), session: true }
  }
  const lookup = async (key: { key: string, session: boolean }): Promise<Principal | null> =>
    (key.session ? await sessions.principalByDigest(key.key, lifetimes) : await tokens.principalByDigest(key.key)) ?? null

  const touch = (request: FastifyRequest, principal: Principal, now: number) => {
    const { credential } = principal
    credential.usedMs = now
    if (credential.kind === 'session') credential.expiresMs = Math.min(credential.expiresMs, now + lifetimes.idleMs)
    const written = credential.kind === 'session' ? sessions.touch(credential.id, now) : tokens.touch(principal.user.id, credential, now)
    written.catch((err: unknown) => { request.log.warn({ err }, 'could not write down when a token or session was last used') })
  }
  /**
   * The request's user from what the cache or the database gave: null for nothing, an unknown
   * credential or an expired one. A session that looks idle in this instance's cache may have been
   * used on another instance since: `stale` says to look again before refusing.
   */
  const settle = (request: FastifyRequest, principal: Principal | null, fromCache: boolean): User | null | 'stale' => {
    if (principal !== null) {
      const now = Date.now()
      const { credential } = principal
      if (credential.expiresMs <= now) {
        if (fromCache && credential.kind === 'session') return 'stale'
        request[expired] = true
        principal = null
      } else if (now - credential.usedMs >= TOUCH_EVERY_MS) {
        touch(request, principal, now)
      }
    }
    request.planningUser = principal?.user ?? null
    request.planningCredential = principal?.credential ?? null
    request[settled] = true
    return request.planningUser
  }

  const resolve = async (request: FastifyRequest): Promise<User | null> => {
    const key = keyOf(request)
    if (key === undefined) return settle(request, null, false) as null
    // Kept by digest: the cache holds no token.
    const known = await cached(request)
    const hit = known.users.get(key.key)
    if (hit !== undefined) {
      const user = settle(request, hit, true)
      if (user !== 'stale') return user
    }
    return settle(request, remember(known.users, key.key, await lookup(key)), false) as User | null
  }
  const userNow = (request: FastifyRequest): User | null | undefined => {
    if (request[settled]) return request.planningUser
    const token = tokenOf(request)
    if (token === undefined) {
      if (request.headers.cookie !== undefined) return undefined
      return settle(request, null, false) as null
    }
    const version = fastify.planningVersionNow(request)
    if (version === undefined) return undefined
    const hit = cache.at(version).users.get(digestOf(request, token))
    if (hit === undefined) return undefined
    const user = settle(request, hit, true)
    return user === 'stale' ? undefined : user
  }
  const user = async (request: FastifyRequest): Promise<User | null> => {
    const now = userNow(request)
    return now !== undefined ? now : await (request[resolved] ??= resolve(request))
  }
  const unauthorized = (request: FastifyRequest) => {
    if (request[expired]) {
      return httpErrors.unauthorized(request.planningCredential === null && tokenOf(request) === undefined
        ? 'the session has ended (idle too long or too old); sign in again'
        : 'the API token has expired')
    }
    if (tokenOf(request) !== undefined) return httpErrors.unauthorized('the API token is not valid')
    if (sessionOf(request) !== undefined) return httpErrors.unauthorized('the session is not valid (signed out or ended); sign in again')
    return httpErrors.unauthorized('an API token is required (X-Authentication-Token header, access_token query parameter or Authorization: Bearer), or a session')
  }
  const originOf = (request: FastifyRequest): string => opts.publicOrigin ?? `${request.protocol}://${request.host}`
  /** Why a write is refused with this credential (403), or undefined. */
  const writeRefusal = (request: FastifyRequest): Error | undefined =>
    SAFE_METHODS.has(request.method) ? undefined : changeRefusal(request)
  const foreignSession = (request: FastifyRequest): Error | undefined =>
    request.planningCredential?.kind === 'session' && request.headers.origin !== originOf(request)
      ? new Forbidden(`a change made with a session cookie must come from this server's pages (Origin ${originOf(request)})`)
      : undefined
  const changeRefusal = (request: FastifyRequest): Error | undefined => {
    const credential = request.planningCredential
    if (credential === null) return undefined
    if (credential.scope === 'read') return new Forbidden('this token has scope read: it cannot make changes (make a token with scope write)')
    return foreignSession(request)
  }
  const decide = (access: Access, repoId: number, level: AccessLevel): Repository => {
    const { repo, level: has } = access
    if (repo === undefined || has < LEVELS.read) throw repositoryNotFound(repoId)
    if (has < LEVELS[level]) throw new Forbidden(`${level} permission on repository ${repoId} is required`)
    return repo
  }

  const auth: PlanningAuth = {
    tokenOf,
    sessionOf,
    originOf,
    sessionLifetimes: lifetimes,
    user,
    userNow,
    cookieOnlyRefusal (request, what) {
      if (tokenOf(request) !== undefined || sessionOf(request) === undefined || request.headers.origin === originOf(request)) return undefined
      return new Forbidden(`${what} with a session cookie must come from this server's pages (Origin ${originOf(request)})`)
    },
    requireUser (request, _reply, done) {
      const now = userNow(request)
      if (now === undefined) {
        user(request).then((found) => { done(found === null ? unauthorized(request) : writeRefusal(request)) }, done)
        return
      }
      done(now === null ? unauthorized(request) : writeRefusal(request))
    },
    requireSignedIn (request, _reply, done) {
      user(request).then((found) => { done(found === null ? unauthorized(request) : foreignSession(request)) }, done)
    },
    changeRefusal,
    async requireAccess (request, repoId, level) {
      const current = await user(request)
      if (current === null) throw unauthorized(request)
      const known = await cached(request)
      let access = known.accessOf(current.id, repoId)
      if (access === undefined) {
        const repo = await repositories.byId(repoId)
        access = known.rememberAccess(current.id, repoId, { repo, level: repo === undefined ? 0 : await users.level(current.id, repoId) })
      }
      return decide(access, repoId, level)
    },
    readerNow (token, socket, repoId, version) {
      const principal = auth.signedInNow(token, socket, version)
      if (principal === undefined) return undefined
      const access = cache.at(version).accessOf(principal.user.id, repoId)
      return access?.repo !== undefined && access.level >= LEVELS.read ? principal : undefined
    },
    signedInNow (token, socket, version) {
      const principal = cache.at(version).users.get(socketDigest(socket, token))
      if (principal === undefined || principal === null) return undefined
      const now = Date.now()
      const { credential } = principal
      return credential.expiresMs <= now || now - credential.usedMs >= TOUCH_EVERY_MS ? undefined : principal
    },
    accessNow (request, repoId, level) {
      const current = userNow(request)
      if (current === undefined) return undefined
      if (current === null) throw unauthorized(request)
      const version = fastify.planningVersionNow(request)
      const access = version === undefined ? undefined : cache.at(version).accessOf(current.id, repoId)
      return access === undefined ? undefined : decide(access, repoId, level)
    },
    async readable (request) {
      const current = await user(request)
      if (current === null) return new Set()
      request[readable] ??= (async () => {
        const known = await cached(request)
        return known.readable.get(current.id) ?? remember(known.readable, current.id, await users.readableRepositories(current.id))
      })()
      return await request[readable]
    },
    async bestLevel (request, repoIds) {
      const current = await user(request)
      if (current === null) return 0
      return Math.max(0, ...(await users.levels(current.id, repoIds)).values())
    }
  }
  fastify.decorate('planningAuth', auth)
}, { name: 'planning-auth', fastify: '5.x', dependencies: ['planning-database'] })
