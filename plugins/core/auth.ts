import { httpErrors } from '@fastify/sensible'
import type { FastifyReply, FastifyRequest, HookHandlerDoneFunction } from 'fastify'
import fp from 'fastify-plugin'
import { Forbidden, NotFound } from '../../db/errors.js'
import type { Repository } from '../../db/repositories.js'
import { hashToken, LEVELS, type AccessLevel, type User } from '../../db/users.js'

const resolved = Symbol('planningUserResolved')
const readable = Symbol('planningReadable')
const settled = Symbol('planningUserSettled')

declare module 'fastify' {
  interface FastifyRequest {
    /** the user behind the request's token, once `planningAuth.user()` or `requireUser` ran */
    planningUser: User | null
    [resolved]: Promise<User | null> | null
    [settled]: boolean
    [readable]: Promise<Set<number>> | null
  }
  interface FastifyInstance {
    planningAuth: PlanningAuth
  }
}

export interface PlanningAuth {
  /** The token the request carries: X-Authentication-Token, `access_token` query or Bearer. */
  tokenOf: (request: FastifyRequest) => string | undefined
  /** The request's user, or null; looked up once per request. */
  user: (request: FastifyRequest) => Promise<User | null>
  /** The same when it is known without waiting (the counter read from SQLite, the token cached); else undefined. */
  userNow: (request: FastifyRequest) => User | null | undefined
  /** onRequest hook (callback style) for routes that need a user: 401 without a valid token. */
  requireUser: (request: FastifyRequest, reply: FastifyReply, done: HookHandlerDoneFunction) => void
  /**
   * The repository if the request's user has `level` on it. No read access answers 404 exactly
   * as for a repository that does not exist; read access without the level needed answers 403.
   */
  requireAccess: (request: FastifyRequest, repoId: number, level: AccessLevel) => Promise<Repository>
  /** The same decided without waiting (it throws the same errors), or undefined when it takes a query. */
  accessNow: (request: FastifyRequest, repoId: number, level: AccessLevel) => Repository | undefined
  /**
   * The user's readable repositories, looked up once per request (one query, whatever the count);
   * callers filter with `set.has(repoId)`.
   */
  readable: (request: FastifyRequest) => Promise<Set<number>>
  /** The request's best level over these repositories (0: none), for objects that span several. */
  bestLevel: (request: FastifyRequest, repoIds: number[]) => Promise<number>
}

export function repositoryNotFound (repoId: number): Error {
  return new NotFound(`repository ${repoId} not found`)
}

const MAX_CACHED = 10_000

interface Access { repo: Repository | undefined, level: number }

/**
 * Tokens, repositories and permission levels as last read, kept while the change counter stays
 * where it was: every write (a new token, a permission, a deleted user) moves it and empties this.
 */
class AccessCache {
  version = -1
  readonly users = new Map<string, User | null>()
  /** by user id, then repository id (numbers all the way: no key string per request) */
  private readonly access = new Map<number, Map<number, Access>>()
  private accessCount = 0
  readonly readable = new Map<number, Set<number>>()

  at (version: number): this {
    if (version !== this.version) {
      this.version = version
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

export default fp(async (fastify) => {
  const { users, repositories } = fastify.planningStore
  const cache = new AccessCache()
  const cached = async (request: FastifyRequest) => cache.at(await fastify.planningVersion(request))
  const remember = <K, V>(map: Map<K, V>, key: K, value: V): V => {
    if (map.size >= MAX_CACHED) map.clear()
    map.set(key, value)
    return value
  }

  fastify.decorateRequest('planningUser', null)
  fastify.decorateRequest(resolved, null)
  fastify.decorateRequest(settled, false)
  fastify.decorateRequest(readable, null)

  const tokenOf = (request: FastifyRequest): string | undefined => {
    const header = request.headers['x-authentication-token']
    if (typeof header === 'string' && header !== '') return header
    const query = request.query as Record<string, unknown> | undefined
    if (typeof query?.access_token === 'string' && query.access_token !== '') return query.access_token
    const authorization = request.headers.authorization
    if (authorization !== undefined && /^bearer /i.test(authorization)) return authorization.slice(7).trim() || undefined
    return undefined
  }

  // A keep-alive connection sends the same token with every request: its digest is kept with the
  // socket (which holds the header anyway) instead of hashing it again each time.
  const digests = new WeakMap<object, { token: string, digest: string }>()
  const digestOf = (request: FastifyRequest, token: string): string => {
    const socket = request.raw.socket
    const known = digests.get(socket)
    if (known !== undefined && known.token === token) return known.digest
    const digest = hashToken(token)
    if (socket !== undefined && socket !== null) digests.set(socket, { token, digest })
    return digest
  }

  const resolve = async (request: FastifyRequest): Promise<User | null> => {
    const token = tokenOf(request)
    if (token === undefined) return null
    // Kept by digest: the cache holds no token.
    const known = await cached(request)
    const digest = digestOf(request, token)
    const hit = known.users.get(digest)
    request.planningUser = hit !== undefined ? hit : remember(known.users, digest, await users.findByToken(token) ?? null)
    request[settled] = true
    return request.planningUser
  }
  const userNow = (request: FastifyRequest): User | null | undefined => {
    if (request[settled]) return request.planningUser
    const token = tokenOf(request)
    if (token !== undefined) {
      const version = fastify.planningVersionNow(request)
      if (version === undefined) return undefined
      const hit = cache.at(version).users.get(digestOf(request, token))
      if (hit === undefined) return undefined
      request.planningUser = hit
    }
    request[settled] = true
    return request.planningUser
  }
  const user = async (request: FastifyRequest): Promise<User | null> => {
    const now = userNow(request)
    return now !== undefined ? now : await (request[resolved] ??= resolve(request))
  }
  const unauthorized = (request: FastifyRequest) => httpErrors.unauthorized(tokenOf(request) === undefined
    ? 'an API token is required (X-Authentication-Token header, access_token query parameter or Authorization: Bearer)'
    : 'the API token is not valid')
  const decide = (access: Access, repoId: number, level: AccessLevel): Repository => {
    const { repo, level: has } = access
    if (repo === undefined || has < LEVELS.read) throw repositoryNotFound(repoId)
    if (has < LEVELS[level]) throw new Forbidden(`${level} permission on repository ${repoId} is required`)
    return repo
  }

  const auth: PlanningAuth = {
    tokenOf,
    user,
    userNow,
    requireUser (request, _reply, done) {
      const now = userNow(request)
      if (now === undefined) {
        user(request).then((found) => { done(found === null ? unauthorized(request) : undefined) }, done)
        return
      }
      done(now === null ? unauthorized(request) : undefined)
    },
    async requireAccess (request, repoId, level) {
      const current = await user(request)
      if (current === null) throw httpErrors.unauthorized('the API token is not valid')
      const known = await cached(request)
      let access = known.accessOf(current.id, repoId)
      if (access === undefined) {
        const repo = await repositories.byId(repoId)
        access = known.rememberAccess(current.id, repoId, { repo, level: repo === undefined ? 0 : await users.level(current.id, repoId) })
      }
      return decide(access, repoId, level)
    },
    accessNow (request, repoId, level) {
      const current = userNow(request)
      if (current === undefined) return undefined
      if (current === null) throw httpErrors.unauthorized('the API token is not valid')
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
