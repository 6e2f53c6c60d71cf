import './tick-shape.js'
import cors from '@fastify/cors'
import Fastify, { type FastifyInstance, type FastifyReply, type FastifyPluginAsync, type FastifyServerOptions } from 'fastify'
import fp from 'fastify-plugin'
import { STATUS_CODES, type ServerOptions } from 'node:http'
import type { SocketLimits } from './config.js'
import type { SqliteHandle } from './db/sqlite.js'
import adminPlugin from './plugins/admin.js'
import authPlugin from './plugins/core/auth.js'
import boardPagePlugin from './plugins/board-page.js'
import boardsPlugin from './plugins/boards.js'
import chatPlugin, { type ChatPluginOptions } from './plugins/chat/index.js'
import conditionalPlugin from './plugins/core/conditional.js'
import databasePlugin from './plugins/core/database.js'
import dependenciesPlugin from './plugins/dependencies.js'
import documentationPlugin from './plugins/core/documentation.js'
import domainEventsPlugin from './plugins/core/domain-events.js'
import epicsPlugin from './plugins/epics.js'
import healthPlugin from './plugins/core/health.js'
import metricsPlugin from './plugins/core/metrics.js'
import errorsPlugin, { closeAfterUnreadBody, errorReply, notFound } from './plugins/core/errors.js'
import integrationsPlugin from './plugins/integrations.js'
import issuesPlugin from './plugins/issues.js'
import milestonesPlugin from './plugins/milestones.js'
import rateLimitPlugin, { type RateLimitOptions } from './plugins/core/rate-limit.js'
import readCachePlugin from './plugins/core/read-cache.js'
import redisPlugin from './plugins/core/redis.js'
import releasesPlugin from './plugins/releases.js'
import seedPlugin from './plugins/core/seed.js'
import webhooksPlugin, { type WebhooksPluginOptions } from './plugins/webhooks.js'

/** The domains of the API; `planningApi({ domains })` registers a subset. */
export const DOMAINS = ['issues', 'boards', 'epics', 'milestones', 'dependencies', 'releases', 'webhooks', 'chat', 'integrations', 'admin'] as const
export type Domain = typeof DOMAINS[number]

export interface PlanningCoreOptions {
  /** a better-sqlite3 handle (the host keeps ownership) or a file path; default `:memory:` */
  database?: SqliteHandle | string
  /** `postgres://…`: PostgreSQL instead of SQLite (README, "Scale out") */
  databaseUrl?: string
  /** PostgreSQL pool size (default 10) */
  databasePoolMax?: number
  /** PostgreSQL schema holding the tables (default: the connection's search path) */
  databaseSchema?: string
  /** `redis://…`: rate-limit windows and chat fan-out shared by every instance */
  redisUrl?: string
  /** prefix of Redis keys and channels (default `planning:`) */
  redisPrefix?: string
  /** origins browsers may call the API from (`['*']`: any); none: no CORS headers */
  corsOrigins?: string[]
  /** opens Prometheus metrics at /metrics to `Authorization: Bearer <metricsToken>` */
  metricsToken?: string
  /** fixture loaded into an empty database */
  seedFile?: string
  /** load the bundled demo into an empty database (default false here; the server turns it on) */
  demo?: boolean
  /** where the API is reachable, shown in the curl line logged with the demo token */
  publicUrl?: string
  /** per-token request limit; `false` leaves rate limiting to the host */
  rateLimit?: RateLimitOptions | false
  /** the demo fixture itself, instead of the bundled file */
  demoFixture?: unknown
  /**
   * Write unchanged board and issue-data reads straight to the socket, past the app's onSend hooks
   * (default false here; `buildApp` and the server turn it on). README, "Use as a Fastify plugin".
   */
  directReads?: boolean
}

export interface PlanningApiOptions extends PlanningCoreOptions {
  /** enables the admin API under /admin */
  adminToken?: string
  /** register only these domains (default: all) */
  domains?: readonly Domain[]
  /** webhook delivery tuning (timeouts, attempts, private targets); `worker: false` only stores deliveries */
  webhooks?: WebhooksPluginOptions
  /** chat companion API tuning (keepalive, send limit) */
  chat?: ChatPluginOptions
  /** serve the OpenAPI document and Swagger UI under /documentation (default true; `'json'`: the document only) */
  documentation?: boolean | 'json'
  /** a folder holding Swagger UI's static files (the single executable unpacks its own) */
  documentationFiles?: string
  /** serve the board page at `/` and `/board` (default true; README, "The board page") */
  boardPage?: boolean
  /** a folder holding the board page's files (the single executable unpacks its own) */
  boardPageFiles?: string
}

/**
 * What every domain plugin stands on: the database, domain events, auth, rate limit, the error
 * shape and start-up seeding. It shares its decorators with the scope it is registered in, so
 * register it inside a scope of your own, next to the domain plugins you want:
 * `app.register(async (scope) => { await scope.register(planningCore, { database }); await scope.register(boardsPlugin) }, { prefix })`.
 */
export const planningCore = fp<PlanningCoreOptions>(async (fastify, opts) => {
  if (opts.corsOrigins !== undefined && opts.corsOrigins.length > 0) {
    // Preflights are answered before authentication; browsers may read the rate-limit headers.
    await fastify.register(cors, {
      origin: opts.corsOrigins.includes('*') ? true : opts.corsOrigins,
      methods: ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'],
      allowedHeaders: ['X-Authentication-Token', 'Authorization', 'Content-Type', 'If-None-Match'],
      exposedHeaders: ['X-RateLimit-Limit', 'X-RateLimit-Used', 'X-RateLimit-Reset', 'Retry-After', 'Link', 'ETag'],
      maxAge: 600
    })
  }
  await fastify.register(domainEventsPlugin)
  await fastify.register(databasePlugin, {
    database: opts.database, databaseUrl: opts.databaseUrl, databasePoolMax: opts.databasePoolMax, databaseSchema: opts.databaseSchema
  })
  await fastify.register(redisPlugin, { redisUrl: opts.redisUrl, redisPrefix: opts.redisPrefix })
  await fastify.register(metricsPlugin, { token: opts.metricsToken })
  if (opts.databaseUrl !== undefined && opts.redisUrl === undefined) {
    fastify.log.warn('PostgreSQL without REDIS_URL: rate limits and the chat live feed are per instance; set REDIS_URL when running several')
  }
  await fastify.register(authPlugin)
  await fastify.register(readCachePlugin, { direct: opts.directReads === true })
  // Before the rate limit: its onSend must see a 304 to leave it uncounted.
  await fastify.register(conditionalPlugin)
  if (opts.rateLimit !== false) {
    await fastify.register(rateLimitPlugin, opts.rateLimit ?? { max: 100, timeWindow: 60_000 })
  }
  await fastify.register(errorsPlugin)
  await fastify.register(seedPlugin, { seedFile: opts.seedFile, demo: opts.demo, demoFixture: opts.demoFixture, publicUrl: opts.publicUrl })
}, { name: 'planning-core', fastify: '5.x' })

/**
 * The whole API as one encapsulated Fastify plugin: register it in any Fastify 5 app, with a
 * prefix if wanted. Its error handler, not-found handler, hooks and content-type parsers stay
 * inside it; its decorators are named `planning*` (see the README).
 */
export const planningApi: FastifyPluginAsync<PlanningApiOptions> = async (fastify, opts) => {
  await fastify.register(planningCore, opts)
  if (opts.documentation !== false) await fastify.register(documentationPlugin, { ui: opts.documentation !== 'json', uiFiles: opts.documentationFiles })
  await fastify.register(healthPlugin)
  if (opts.boardPage !== false) await fastify.register(boardPagePlugin, { files: opts.boardPageFiles })
  const wanted = new Set<Domain>(opts.domains ?? DOMAINS)
  if (wanted.has('issues')) await fastify.register(issuesPlugin)
  if (wanted.has('boards')) await fastify.register(boardsPlugin)
  if (wanted.has('epics')) await fastify.register(epicsPlugin)
  if (wanted.has('milestones')) await fastify.register(milestonesPlugin)
  if (wanted.has('dependencies')) await fastify.register(dependenciesPlugin)
  if (wanted.has('releases')) await fastify.register(releasesPlugin)
  if (wanted.has('webhooks')) await fastify.register(webhooksPlugin, opts.webhooks ?? {})
  if (wanted.has('chat')) await fastify.register(chatPlugin, { ...opts.chat, prefix: '/api/v1' })
  if (wanted.has('integrations')) await fastify.register(integrationsPlugin)
  if (wanted.has('admin') && opts.adminToken !== undefined) {
    await fastify.register(adminPlugin, { prefix: '/admin', adminToken: opts.adminToken })
  }
}

/** Whether a raw query parameter name decodes to `access_token` (`access%5Ftoken` included). */
function isTokenName (raw: string): boolean {
  let name = raw.replaceAll('+', ' ')
  try {
    name = decodeURIComponent(name)
  } catch {}
  return name.toLowerCase().startsWith('access_token')
}

/** The request URL as logged: the value of any parameter named access_token never reaches the log. */
export function redactUrl (url: string): string {
  const at = url.indexOf('?')
  if (at === -1) return url
  const query = url.slice(at + 1).split('&').map((pair) => {
    const eq = pair.indexOf('=')
    const name = eq === -1 ? pair : pair.slice(0, eq)
    return isTokenName(name) ? `${name}=[REDACTED]` : pair
  })
  return `${url.slice(0, at)}?${query.join('&')}`
}

export interface ServerOptionsInput {
  logLevel?: string
  /** where log lines go (default stdout) */
  logStream?: NodeJS.WritableStream
  /** human-readable log lines (pino-pretty) instead of JSON */
  pretty?: boolean
  /** socket limits (README, "Security"); the defaults are the configuration's */
  limits?: Partial<SocketLimits>
}

export const DEFAULT_LIMITS: SocketLimits = { maxConnections: 1000, requestTimeoutMs: 30_000, headersTimeoutMs: 10_000, keepAliveTimeoutMs: 5000 }

/**
 * Fastify server options shared by the server entry and the tests. Requests must arrive within
 * the timeouts, checked every second; a URL Fastify cannot route (bad percent-encoding) gets the
 * one error shape without being echoed.
 */
export function serverOptions (input: ServerOptionsInput = {}): FastifyServerOptions & { http: ServerOptions } {
  const { logLevel = 'info', logStream, pretty = false } = input
  const limits = { ...DEFAULT_LIMITS, ...input.limits }
  return {
    logger: logLevel === 'silent'
      ? false
      : {
          level: logLevel,
          ...(logStream === undefined ? {} : { stream: logStream }),
          ...(pretty && logStream === undefined ? { transport: { target: 'pino-pretty', options: { translateTime: 'SYS:HH:MM:ss', ignore: 'pid,hostname' } } } : {}),
          redact: ['req.headers["x-authentication-token"]', 'req.headers.authorization'],
          serializers: {
            req: (req) => ({ method: req.method, url: redactUrl(req.url), remoteAddress: req.ip })
          }
        },
    bodyLimit: 1024 * 1024,
    return503OnClosing: true,
    requestTimeout: limits.requestTimeoutMs,
    keepAliveTimeout: limits.keepAliveTimeoutMs,
    http: { headersTimeout: limits.headersTimeoutMs, connectionsCheckingInterval: 1000 },
    frameworkErrors: (err, request, reply: FastifyReply) => {
      const status = err.code === 'FST_ERR_ASYNC_CONSTRAINT' ? 500 : 400
      request.log.info({ code: err.code }, 'request refused before routing')
      reply.status(status).send({
        statusCode: status,
        error: STATUS_CODES[status],
        message: status === 400 ? 'the request URL is not valid (bad percent-encoding or an over-long parameter)' : `internal error (request ${request.id}); see the server log`
      })
    },
    ajv: { customOptions: { coerceTypes: 'array', removeAdditional: true, useDefaults: true, allErrors: false } }
  }
}

export interface BuildOptions extends PlanningApiOptions {
  /** mount everything under this prefix (e.g. `/api`) */
  basePath?: string
  logLevel?: string
  /** where log lines go (default stdout) */
  logStream?: NodeJS.WritableStream
  /** human-readable log lines (pino-pretty) instead of JSON */
  prettyLogs?: boolean
  /** socket limits of the server (README, "Security") */
  limits?: Partial<SocketLimits>
}

/** Builds a standalone server instance (not listening): what `server.ts` and the tests use. */
export async function buildApp (options: BuildOptions = {}): Promise<FastifyInstance> {
  const { basePath, logLevel, logStream, prettyLogs, limits, ...apiOptions } = options
  const app = Fastify(serverOptions({ logLevel: logLevel ?? 'silent', logStream, pretty: prettyLogs, limits }))
  app.server.maxConnections = limits?.maxConnections ?? DEFAULT_LIMITS.maxConnections
  if (basePath !== undefined && basePath !== '') {
    // Outside BASE_PATH: the same answers as inside, never echoing the query string.
    app.setNotFoundHandler(notFound)
    app.setErrorHandler(errorReply)
    app.addHook('onSend', closeAfterUnreadBody)
  }
  await app.register(planningApi, { directReads: true, ...apiOptions, prefix: basePath ?? '' })
  return app
}

export {
  adminPlugin, authPlugin, boardPagePlugin, boardsPlugin, chatPlugin, conditionalPlugin, databasePlugin, dependenciesPlugin, documentationPlugin,
  domainEventsPlugin, epicsPlugin, errorsPlugin, healthPlugin, integrationsPlugin, issuesPlugin, metricsPlugin, milestonesPlugin, rateLimitPlugin, redisPlugin,
  readCachePlugin, releasesPlugin, seedPlugin, webhooksPlugin
}
export { loadFixture } from './services/fixtures.js'
export { migrate } from './db/migrations/index.js'
export { openSqliteFile } from './db/sqlite.js'
export { openSqliteStore, type PlanningStore } from './db/store.js'
export type { SqliteHandle, ChatPluginOptions, RateLimitOptions, WebhooksPluginOptions }
