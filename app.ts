import Fastify, { type FastifyInstance, type FastifyPluginAsync, type FastifyServerOptions } from 'fastify'
import fp from 'fastify-plugin'
import type { Db } from './db/connection.js'
import adminPlugin from './plugins/admin.js'
import authPlugin from './plugins/auth.js'
import boardsPlugin from './plugins/boards.js'
import chatPlugin, { type ChatPluginOptions } from './plugins/chat.js'
import databasePlugin from './plugins/database.js'
import dependenciesPlugin from './plugins/dependencies.js'
import documentationPlugin from './plugins/documentation.js'
import domainEventsPlugin from './plugins/domain-events.js'
import epicsPlugin from './plugins/epics.js'
import errorsPlugin from './plugins/errors.js'
import issuesPlugin from './plugins/issues.js'
import milestonesPlugin from './plugins/milestones.js'
import rateLimitPlugin, { type RateLimitOptions } from './plugins/rate-limit.js'
import releasesPlugin from './plugins/releases.js'
import seedPlugin from './plugins/seed.js'
import webhooksPlugin, { type WebhooksPluginOptions } from './plugins/webhooks.js'

/** The domains of the API; `planningApi({ domains })` registers a subset. */
export const DOMAINS = ['issues', 'boards', 'epics', 'milestones', 'dependencies', 'releases', 'webhooks', 'chat', 'admin'] as const
export type Domain = typeof DOMAINS[number]

export interface PlanningCoreOptions {
  /** a better-sqlite3 handle (the host keeps ownership) or a file path; default `:memory:` */
  database?: Db | string
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
}

/**
 * What every domain plugin stands on: the database, domain events, auth, rate limit, the error
 * shape and start-up seeding. It shares its decorators with the scope it is registered in, so
 * register it inside a scope of your own, next to the domain plugins you want:
 * `app.register(async (scope) => { await scope.register(planningCore, { database }); await scope.register(boardsPlugin) }, { prefix })`.
 */
export const planningCore = fp<PlanningCoreOptions>(async (fastify, opts) => {
  await fastify.register(databasePlugin, { database: opts.database })
  await fastify.register(domainEventsPlugin)
  await fastify.register(authPlugin)
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
  if (opts.documentation !== false) await fastify.register(documentationPlugin, { ui: opts.documentation !== 'json' })
  const wanted = new Set<Domain>(opts.domains ?? DOMAINS)
  if (wanted.has('issues')) await fastify.register(issuesPlugin)
  if (wanted.has('boards')) await fastify.register(boardsPlugin)
  if (wanted.has('epics')) await fastify.register(epicsPlugin)
  if (wanted.has('milestones')) await fastify.register(milestonesPlugin)
  if (wanted.has('dependencies')) await fastify.register(dependenciesPlugin)
  if (wanted.has('releases')) await fastify.register(releasesPlugin)
  if (wanted.has('webhooks')) await fastify.register(webhooksPlugin, opts.webhooks ?? {})
  if (wanted.has('chat')) await fastify.register(chatPlugin, { ...opts.chat, prefix: '/api/v1' })
  if (wanted.has('admin') && opts.adminToken !== undefined) {
    await fastify.register(adminPlugin, { prefix: '/admin', adminToken: opts.adminToken })
  }
}

const REDACTED_QUERY = /([?&]access_token=)[^&#]*/gi

/** The request URL as logged: the access_token query parameter never reaches the log. */
export function redactUrl (url: string): string {
  return url.replace(REDACTED_QUERY, '$1[REDACTED]')
}

/**
 * Fastify server options shared by the server entry and the tests. `pretty` formats log lines
 * for a person (the server turns it on when stdout is a terminal); otherwise they are JSON.
 */
export function serverOptions (logLevel = 'info', logStream?: NodeJS.WritableStream, pretty = false): FastifyServerOptions {
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
}

/** Builds a standalone server instance (not listening): what `server.ts` and the tests use. */
export async function buildApp (options: BuildOptions = {}): Promise<FastifyInstance> {
  const app = Fastify(serverOptions(options.logLevel ?? 'silent', options.logStream, options.prettyLogs))
  const { basePath, logLevel, logStream, prettyLogs, ...apiOptions } = options
  await app.register(planningApi, { ...apiOptions, prefix: basePath ?? '' })
  return app
}

export {
  adminPlugin, authPlugin, boardsPlugin, chatPlugin, databasePlugin, dependenciesPlugin, documentationPlugin, domainEventsPlugin,
  epicsPlugin, errorsPlugin, issuesPlugin, milestonesPlugin, rateLimitPlugin, releasesPlugin, seedPlugin, webhooksPlugin
}
export { loadFixture } from './db/fixtures.js'
export { migrate, openDatabase } from './db/connection.js'
export type { Db, ChatPluginOptions, RateLimitOptions, WebhooksPluginOptions }
