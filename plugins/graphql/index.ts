import { Type } from '@sinclair/typebox'
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import fp from 'fastify-plugin'
import mercurius from 'mercurius'
import { readFileSync } from 'node:fs'
import { createGraphReads } from '../../db/graph-reads.js'
import { requestReads } from './request-reads.js'
import { favoritesStamp } from '../../db/workspace-favorites.js'
import { createHostIssues } from '../../services/host-issues.js'
import { RATE_LIMITED } from '../core/rate-limit.js'
import { errorReply } from '../core/errors.js'
import { absoluteUrl } from '../invites.js'
import { graphqlAnswers, type Miss } from './answer-cache.js'
import type { GraphContext } from './context.js'
import { documentErrors, formatResult } from './errors.js'
import { explorerRoutes, isExplorerRoute } from './explorer.js'
import { graphqlFront } from './front-answers.js'
import type { ServerFront } from '../core/front.js'
import { clientFieldLoaders, clientFieldResolvers, clientQueryResolvers } from './resolvers/client-fields.js'
import { aliasLimit, complexityLimit, MAX_DEPTH, mutationLimit } from './limits.js'
import { loaders, queryResolvers, typeResolvers } from './resolvers/reads.js'
import { planningReads } from './resolvers/reads-planning.js'
import { mutationResolvers } from './resolvers/writes.js'
import { zenhubEpicLoaders, zenhubEpicTypeResolvers } from './resolvers/zenhub-epics.js'
import { pipelineAutomationLoaders, pipelineAutomationResolvers } from './resolvers/pipeline-automations.js'
import { sprintReviewResolvers } from './resolvers/sprint-review.js'
import { workspaceUserLoaders, workspaceUserQueries, workspaceUserResolvers, workspaceUserWrites } from './resolvers/workspace-user.js'
import { dependencyItemLoaders } from './resolvers/dependency-items.js'
import { priorityLoaders, priorityTypeResolvers } from './resolvers/priorities.js'
import { prConnectionLoaders } from './resolvers/pr-connections.js'
import { zenhubEpicMetaLoaders, zenhubEpicMetaQueries, zenhubEpicMetaTypeResolvers } from './resolvers/zenhub-epic-meta.js'
import { epicDateLoaders } from './resolvers/epic-dates.js'
import { batchedFields } from './batched-fields.js'

/** The schema we offer: a compatible subset of the hosted service's (docs/graphql.md); the single executable carries it as an asset. */
async function schemaText (): Promise<string> {
  // undefined in the single executable's bundle (scripts/build-binary.mjs)
  if (import.meta.url === undefined) return (await import('node:sea')).getAsset('schema.graphql', 'utf8')
  return readFileSync(new URL('./schema/schema.graphql', import.meta.url), 'utf8')
}

/** The type resolvers of reads.ts with those kept in files of their own, type by type. */
function withMore (base: Record<string, object>, ...more: Array<Record<string, object>>): Record<string, object> {
  const out: Record<string, object> = { ...base }
  for (const extra of more) for (const [type, fields] of Object.entries(extra)) out[type] = { ...out[type], ...fields }
  return out
}

const NUL_ESCAPE = /\\u(0000|\{0+\})/i

const Body = Type.Object({
  query: Type.String({ minLength: 1, maxLength: 100_000 }),
  variables: Type.Optional(Type.Union([Type.Record(Type.String(), Type.Unknown()), Type.Null()])),
  operationName: Type.Optional(Type.Union([Type.String({ maxLength: 200 }), Type.Null()]))
})
interface BodyType { query: string, variables?: Record<string, unknown> | null, operationName?: string | null }

/**
 * The hosted service's current API: GraphQL at `/public/graphql`, with the tokens, permissions
 * and rate limit of the REST API. Resolvers read through db/graph-reads.ts and write through the
 * same operations as the REST handlers.
 */
interface GraphqlOptions {
  now?: () => number
  corsConfigured?: boolean
  answerCacheMb?: number
  publicUrl?: string
  /** the standalone server's front: kept answers are then sent before routing (front-answers.ts) */
  front?: ServerFront
}

async function graphql (fastify: FastifyInstance, opts: GraphqlOptions) {
  const reads = createGraphReads(fastify.planningStore.db)
  const clock = opts.now ?? Date.now
  // A kept answer that opened workspaces records them as viewed again (db/workspace-views.ts bounds the writes).
  const answers = graphqlAnswers(fastify, opts.answerCacheMb ?? 16, async (request, userId, workspaceIds) => {
    for (const id of workspaceIds) await fastify.planningStore.workspaceViews.record(userId, id).catch((err: unknown) => { request.log.warn({ err }, 'a workspace view was not recorded') })
  }, async (userId) => favoritesStamp(await fastify.planningStore.workspaceFavorites.of(userId)))
  if (fastify.hasDecorator('planningMetrics')) fastify.planningMetrics.graphqlCache.stats = () => answers.stats
  // A mutation's fields mark the request: its answer is never kept.
  const mutations = Object.fromEntries(Object.entries({ ...mutationResolvers, ...workspaceUserWrites }).map(([name, resolve]) => [name,
    (root: unknown, args: unknown, ctx: GraphContext, info: unknown) => {
      ctx.wrote = true
      return (resolve as (...a: unknown[]) => unknown)(root, args, ctx, info)
    }]))
  const hostIssues = createHostIssues(fastify.planningStore, { fetch: fastify.planningHosts.fetch })
  await fastify.register(mercurius, {
    schema: await schemaText(),
    resolvers: {
      Query: { ...queryResolvers, ...clientQueryResolvers, ...zenhubEpicMetaQueries, ...workspaceUserQueries },
      Mutation: mutations,
      ...withMore(
        typeResolvers, planningReads, zenhubEpicTypeResolvers, clientFieldResolvers, priorityTypeResolvers,
        pipelineAutomationResolvers, zenhubEpicMetaTypeResolvers, workspaceUserResolvers, sprintReviewResolvers,
        batchedFields(withMore(
          loaders,
          zenhubEpicLoaders, clientFieldLoaders, priorityLoaders,
          prConnectionLoaders, dependencyItemLoaders, pipelineAutomationLoaders, zenhubEpicMetaLoaders, epicDateLoaders, workspaceUserLoaders
        ) as never)
      )
    } as never,
    routes: false,
    graphiql: false,
    queryDepth: MAX_DEPTH,
    validationRules: [aliasLimit, complexityLimit, mutationLimit],
    graphql: { parseOptions: { maxTokens: 20_000 } },
    errorFormatter: (execution) => ({ statusCode: 200, response: { data: execution.data ?? null, errors: [...(execution.errors ?? [])] } }) as never
  })

  // A request past the rate limit gets the GraphQL shape; a missing or bad token keeps the 401.
  fastify.setErrorHandler(async (err: FastifyError, request: FastifyRequest, reply: FastifyReply) => {
    if (err.code === RATE_LIMITED) {
      return await reply.status(200).send({ data: null, errors: [{ message: err.message, extensions: { code: 'RATE_LIMITED' } }] })
    }
    return await errorReply(err, request, reply)
  })
  // Browser clients (the dependency-graph viewer) send a token, never a cookie. Where no CORS
  // origins are configured, this endpoint still lets any origin call it, without credentials,
  // so a browser's ambient session is never usable cross-origin.
  const openCors = opts.corsConfigured !== true
  // The hosted API's clients read what is left of the budget; REST gives limit and used only.
  fastify.addHook('onSend', async (_, reply) => {
    const limit = Number(reply.getHeader('x-ratelimit-limit'))
    const used = Number(reply.getHeader('x-ratelimit-used'))
    if (Number.isFinite(limit) && Number.isFinite(used)) reply.header('x-ratelimit-remaining', Math.max(0, limit - used))
  })
  fastify.addHook('onRequest', (request, reply, done) => {
    if (request.method === 'OPTIONS' || isExplorerRoute(request.routeOptions.config)) { done(); return }
    fastify.planningAuth.requireSignedIn(request, reply, done)
  })
  if (openCors) {
    fastify.addHook('onSend', async (request, reply) => {
      if (request.headers.origin === undefined) return
      reply.header('access-control-allow-origin', '*').header('vary', 'Origin')
        .header('access-control-expose-headers', 'X-RateLimit-Limit, X-RateLimit-Used, X-RateLimit-Remaining, X-RateLimit-Reset, Retry-After')
    })
    const preflight = async (_: FastifyRequest, reply: FastifyReply) => await reply.status(204)
      .header('access-control-allow-methods', 'POST')
      .header('access-control-allow-headers', 'Authorization, X-Authentication-Token, Content-Type')
      .header('access-control-max-age', '600').send()
    fastify.options('/public/graphql', { schema: { hide: true } }, preflight)
    fastify.options('/public/graphql/', { schema: { hide: true } }, preflight)
  }

  const handler = async (request: FastifyRequest<{ Body: BodyType }>, reply: FastifyReply) => {
    const { query, variables, operationName } = request.body
    // JSON bodies with U+0000 are refused before this; a string literal's escape is decoded later, past that check.
    if (NUL_ESCAPE.test(query)) {
      return await reply.status(200).send({ data: null, errors: [{ message: 'a string in the document holds U+0000, which nothing here stores', extensions: { code: 'BAD_USER_INPUT' } }] })
    }
    const user = request.planningUser!
    // Links (zenhubUrl, a local issue's htmlUrl) are made on PUBLIC_URL, else on the request's own address: part of the key.
    const origin = absoluteUrl(request, opts.publicUrl, '')
    const key = answers.keyOf({ userId: user.id, scope: request.planningCredential?.scope ?? '', query, variables, operationName, origin })
    // A kept answer is sent within lookup: the front's note goes first, and is taken back on a miss.
    early?.kept(request, key)
    const kept = await answers.lookup(request, reply, user.id, key)
    if (kept === undefined) return reply
    early?.kept(request, undefined)
    try {
      return await run(request, reply, kept)
    } finally {
      answers.finish(kept)
    }
  }
  const run = async (request: FastifyRequest<{ Body: BodyType }>, reply: FastifyReply, kept: Miss) => {
    const { query, variables, operationName } = request.body
    const context: GraphContext = {
      request,
      user: request.planningUser!,
      readable: await fastify.planningAuth.readable(request),
      store: fastify.planningStore,
      reads: requestReads(reads, () => context.wrote !== true),
      auth: fastify.planningAuth,
      hostIssues,
      now: () => {
        context.clockRead = true
        return clock()
      },
      address: (path) => absoluteUrl(request, opts.publicUrl, `${fastify.prefix}${path}`)
    }
    try {
      const result = await reply.graphql(query, context as never, variables ?? undefined, operationName ?? undefined)
      const body = JSON.stringify(formatResult(result, request))
      const keepable = context.wrote !== true && context.clockRead !== true && context.unkept !== true
      if (result.errors === undefined && keepable) {
        answers.keep(kept, body, context.viewed, context.favorites)
        early?.kept(request, kept.key)
      }
      return await reply.status(200).type('application/json; charset=utf-8').send(body)
    } catch (err) {
      const errors = (err as { errors?: Error[] }).errors
      if (Array.isArray(errors)) return await reply.status(200).send(documentErrors(errors))
      throw err
    }
  }
  // Registered after the door's other hooks: its onSend sees their headers.
  const early = opts.front === undefined ? undefined : graphqlFront(fastify, answers, opts.front)
  explorerRoutes(fastify)
  const schema = { hide: true, body: Body }
  fastify.post('/public/graphql', { schema }, handler)
  fastify.post('/public/graphql/', { schema }, handler)
}

export default fp(graphql, { name: 'planning-graphql', fastify: '5.x', encapsulate: true, dependencies: ['planning-auth', 'planning-database'] })
