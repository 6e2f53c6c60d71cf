import { httpErrors } from '@fastify/sensible'
import type { FastifyRequest } from 'fastify'
import fp from 'fastify-plugin'
import { createRepositoriesRepository, type Repository } from '../db/repositories.js'
import { createUsersRepository, LEVELS, type AccessLevel, type User } from '../db/users.js'

const resolved = Symbol('planningUserResolved')
const readable = Symbol('planningReadable')

declare module 'fastify' {
  interface FastifyRequest {
    /** the user behind the request's token, once `planningAuth.user()` or `requireUser` ran */
    planningUser: User | null
    [resolved]: boolean
    [readable]: Set<number> | null
  }
  interface FastifyInstance {
    planningAuth: PlanningAuth
  }
}

export interface PlanningAuth {
  /** The token the request carries: X-Authentication-Token, `access_token` query or Bearer. */
  tokenOf: (request: FastifyRequest) => string | undefined
  /** The request's user, or null; looked up once per request. */
  user: (request: FastifyRequest) => User | null
  /** onRequest hook for routes that need a user: 401 without a valid token. */
  requireUser: (request: FastifyRequest) => Promise<void>
  /**
   * The repository if the request's user has `level` on it. No read access answers 404 exactly
   * as for a repository that does not exist; read access without the level needed answers 403.
   */
  requireAccess: (request: FastifyRequest, repoId: number, level: AccessLevel) => Repository
  /** Whether the user can read the repository (no error); one query per request, whatever the count. */
  canRead: (request: FastifyRequest, repoId: number) => boolean
}

export function repositoryNotFound (repoId: number): Error {
  return httpErrors.notFound(`repository ${repoId} not found`)
}

export default fp(async (fastify) => {
  const users = createUsersRepository(fastify.planningDb)
  const repos = createRepositoriesRepository(fastify.planningDb)

  fastify.decorateRequest('planningUser', null)
  fastify.decorateRequest(resolved, false)
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

  const user = (request: FastifyRequest): User | null => {
    if (!request[resolved]) {
      request[resolved] = true
      const token = tokenOf(request)
      request.planningUser = token === undefined ? null : users.findByToken(token) ?? null
    }
    return request.planningUser
  }

  const auth: PlanningAuth = {
    tokenOf,
    user,
    async requireUser (request) {
      if (user(request) !== null) return
      throw httpErrors.unauthorized(tokenOf(request) === undefined
        ? 'an API token is required (X-Authentication-Token header or access_token query parameter)'
        : 'the API token is not valid')
    },
    requireAccess (request, repoId, level) {
      const current = user(request)
      if (current === null) throw httpErrors.unauthorized('the API token is not valid')
      const repo = repos.byId(repoId)
      const has = repo === undefined ? 0 : users.level(current.id, repoId)
      if (repo === undefined || has < LEVELS.read) throw repositoryNotFound(repoId)
      if (has < LEVELS[level]) throw httpErrors.forbidden(`${level} permission on repository ${repoId} is required`)
      return repo
    },
    canRead (request, repoId) {
      const current = user(request)
      if (current === null) return false
      request[readable] ??= users.readableRepositories(current.id)
      return request[readable].has(repoId)
    }
  }
  fastify.decorate('planningAuth', auth)
}, { name: 'planning-auth', fastify: '5.x', dependencies: ['planning-database'] })
