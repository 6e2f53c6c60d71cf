import Fastify, { type FastifyInstance, type FastifyPluginAsync, type FastifyServerOptions } from 'fastify'
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

export interface PlanningApiOptions {
  /** a better-sqlite3 handle (the host keeps ownership) or a file path; default `:memory:` */
  database?: Db | string
  /** fixture loaded into an empty database */
  seedFile?: string
  /** load the bundled demo into an empty database (default false here; the server turns it on) */
  demo?: boolean
  /** where the API is reachable, shown in the curl line logged with the demo token */
  publicUrl?: string
  /** enables the admin API under /admin */
  adminToken?: string
  /** per-token request limit; `false` leaves rate limiting to the host */
  rateLimit?: RateLimitOptions | false
  /** webhook delivery tuning (timeouts, attempts, private targets); `worker: false` only stores deliveries */
  webhooks?: WebhooksPluginOptions
  /** chat companion API tuning (keepalive, send limit) */
  chat?: ChatPluginOptions
  /** serve the OpenAPI document and Swagger UI under /documentation (default true) */
  documentation?: boolean
}

/**
 * The whole API as one encapsulated Fastify plugin: register it in any Fastify 5 app, with a
 * prefix if wanted. Its error handler, not-found handler, hooks and content-type parsers stay
 * inside it; its decorators are named `planning*` (see the README).
 */
export const planningApi: FastifyPluginAsync<PlanningApiOptions> = async (fastify, opts) => {
  await fastify.register(databasePlugin, { database: opts.database })
  await fastify.register(domainEventsPlugin)
  await fastify.register(authPlugin)
  if (opts.rateLimit !== false) {
    await fastify.register(rateLimitPlugin, opts.rateLimit ?? { max: 100, timeWindow: 60_000 })
  }
  await fastify.register(errorsPlugin)
  if (opts.documentation !== false) await fastify.register(documentationPlugin)
  await fastify.register(seedPlugin, { seedFile: opts.seedFile, demo: opts.demo, publicUrl: opts.publicUrl })

  await fastify.register(issuesPlugin)
  await fastify.register(boardsPlugin)
  await fastify.register(epicsPlugin)
  await fastify.register(milestonesPlugin)
  await fastify.register(dependenciesPlugin)
  await fastify.register(releasesPlugin)
  await fastify.register(webhooksPlugin, opts.webhooks ?? {})
  await fastify.register(chatPlugin, { ...opts.chat, prefix: '/api/v1' })
  if (opts.adminToken !== undefined) await fastify.register(adminPlugin, { prefix: '/admin', adminToken: opts.adminToken })
}

const REDACTED_QUERY = /([?&]access_token=)[^&#]*/gi

/** The request URL as logged: the access_token query parameter never reaches the log. */
export function redactUrl (url: string): string {
  return url.replace(REDACTED_QUERY, '$1[REDACTED]')
}

/** Fastify server options shared by the server entry and the tests. */
export function serverOptions (logLevel = 'info', logStream?: NodeJS.WritableStream): FastifyServerOptions {
  return {
    logger: logLevel === 'silent'
      ? false
      : {
          level: logLevel,
          ...(logStream === undefined ? {} : { stream: logStream }),
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
}

/** Builds a standalone server instance (not listening): what `server.ts` and the tests use. */
export async function buildApp (options: BuildOptions = {}): Promise<FastifyInstance> {
  const app = Fastify(serverOptions(options.logLevel ?? 'silent', options.logStream))
  const { basePath, logLevel, logStream, ...apiOptions } = options
  await app.register(planningApi, { ...apiOptions, prefix: basePath ?? '' })
  return app
}

export {
  adminPlugin, authPlugin, boardsPlugin, chatPlugin, databasePlugin, dependenciesPlugin, domainEventsPlugin, epicsPlugin, errorsPlugin,
  issuesPlugin, milestonesPlugin, rateLimitPlugin, releasesPlugin, seedPlugin, webhooksPlugin
}
export type { Db }
