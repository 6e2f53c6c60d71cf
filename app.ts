import cors from '@fastify/cors'
import Fastify, { type FastifyInstance, type FastifyReply, type FastifyRequest, type FastifyPluginAsync, type FastifyServerOptions } from 'fastify'
import fp from 'fastify-plugin'
import { STATUS_CODES, type ServerOptions } from 'node:http'
import type { SignInConfig, SocketLimits, TrustProxy } from './config.js'
import type { Engine } from './db/engine/migrations/index.js'
import type { DomainEvents } from './db/domain-events.js'
import type { SqliteHandle } from './db/engine/sqlite.js'
import type { PlanningStore } from './db/store.js'
import type { Credential } from './db/sign-in/tokens.js'
import type { User } from './db/users.js'
import accountPlugin from './plugins/account.js'
import invitesPlugin from './plugins/invites.js'
import type { HostedImportOptions } from './plugins/admin-hosted-imports.js'
import authPlugin, { type PlanningAuth } from './plugins/core/auth.js'
import boardLivePlugin from './plugins/board-live.js'
import boardReadsPlugin from './plugins/board-reads.js'
import boardsPlugin from './plugins/boards.js'
import conditionalPlugin from './plugins/core/conditional.js'
import databasePlugin, { type DatabasePluginOptions } from './plugins/core/database.js'
import { ServerFront } from './plugins/core/front.js'
import { SecretBox } from './db/engine/secret-box.js'
import dependenciesPlugin from './plugins/dependencies.js'
import domainEventsPlugin from './plugins/core/domain-events.js'
import epicsPlugin from './plugins/epics.js'
import healthPlugin from './plugins/core/health.js'
import hostsPlugin, { type HostOptions } from './plugins/core/hosts.js'
import mailPlugin from './plugins/core/mail.js'
import metricsPlugin from './plugins/core/metrics.js'
import errorsPlugin, { closeAfterUnreadBody, errorReply, notFound } from './plugins/core/errors.js'
import issuesPlugin from './plugins/issues.js'
import { lazyPlugin } from './plugins/core/lazy.js'
import type { AdminPluginOptions } from './plugins/admin.js'
import type { BoardPageOptions } from './plugins/board-page.js'
import type { ChatPluginOptions } from './plugins/chat/index.js'
import type { DocumentationOptions } from './plugins/core/documentation.js'
import type { McpPluginOptions } from './plugins/mcp/index.js'
import type { TwoWaySyncOptions } from './plugins/two-way-sync.js'
import milestonesPlugin from './plugins/milestones.js'
import rateLimitPlugin, { type RateLimitOptions } from './plugins/core/rate-limit.js'
import readCachePlugin from './plugins/core/read-cache.js'
import redisPlugin from './plugins/core/redis.js'
import { nextRequestId } from './plugins/core/request-ids.js'
import releasesPlugin from './plugins/releases.js'
import reportsPlugin from './plugins/reports.js'
import setupLinkPlugin, { type SetupLink, type SetupLinkOptions } from './plugins/setup-link.js'
import seedPlugin, { SEED_TIMEOUT_MS, type DemoToken } from './plugins/core/seed.js'
import signInUpkeepPlugin from './plugins/core/sign-in-upkeep.js'
import sprintsPlugin from './plugins/sprints.js'
import webhooksPlugin, { type WebhooksPluginOptions } from './plugins/webhooks.js'
import { sharedCompilers } from './plugins/core/compilers.js'

// Imported when registered (plugins/core/lazy.ts): importing the package stays quick.
const adminPlugin = lazyPlugin<AdminPluginOptions>(async () => await import('./plugins/admin.js'))
const boardPagePlugin = lazyPlugin<BoardPageOptions>(async () => await import('./plugins/board-page.js'))
const chatPlugin = lazyPlugin<ChatPluginOptions>(async () => await import('./plugins/chat/index.js'))
const graphqlPlugin = lazyPlugin<{ now?: () => number, corsConfigured?: boolean, answerCacheMb?: number, publicUrl?: string, front?: ServerFront }>(async () => await import('./plugins/graphql/index.js'))
const documentationPlugin = lazyPlugin<DocumentationOptions>(async () => await import('./plugins/core/documentation.js'))
const integrationsPlugin = lazyPlugin(async () => await import('./plugins/integrations.js'))
const twoWaySyncPlugin = lazyPlugin<TwoWaySyncOptions>(async () => await import('./plugins/two-way-sync.js'))
const mcpPlugin = lazyPlugin<McpPluginOptions>(async () => await import('./plugins/mcp/index.js'))
const signInPlugin = lazyPlugin<SignInConfig>(async () => await import('./plugins/sign-in/index.js'))

/** The domains of the API; `planningApi({ domains })` registers a subset. */
export const DOMAINS = [
  'issues', 'boards', 'epics', 'milestones', 'dependencies', 'releases', 'sprints', 'reports', 'webhooks', 'chat', 'integrations', 'account', 'admin', 'mcp'
] as const
export type Domain = typeof DOMAINS[number]

export interface PlanningCoreOptions {
  /** a better-sqlite3 handle (the host keeps ownership) or a file path; default `:memory:` */
  database?: SqliteHandle | string
  /** `postgres://…`: PostgreSQL instead of SQLite (docs/scale-out.md) */
  databaseUrl?: string
  /** PostgreSQL pool size (default 10) */
  databasePoolMax?: number
  /** PostgreSQL schema holding the tables (default: the connection's search path) */
  databaseSchema?: string
  /** PostgreSQL connect, query and statement timeout in milliseconds (default 5000; docs/scale-out.md, "When a store goes away") */
  databaseTimeoutMs?: number
  /**
   * PostgreSQL: reads answered from the change counter this instance hears of, with no round trip
   * (default true; false behind a pooler without sessions; docs/scale-out.md, "Reads with no round trip")
   */
  databaseWatch?: DatabasePluginOptions['databaseWatch']
  /**
   * PostgreSQL: the hot paths' queries run as named statements, parsed once per
   * connection (default true; false behind a pooler that does not keep them, DATABASE_PREPARED_STATEMENTS)
   */
  databasePreparedStatements?: boolean
  /**
   * SQLite file: WAL checkpoints from a worker thread, off the requests' path (default true; false:
   * SQLite's automatic checkpoint, in the commit that crosses 1,000 WAL pages)
   */
  sqliteCheckpoints?: DatabasePluginOptions['sqliteCheckpoints']
  /** `redis://…`: rate-limit windows and chat fan-out shared by every instance */
  redisUrl?: string
  /** prefix of Redis keys and channels (default `planning:`) */
  redisPrefix?: string
  /** origins browsers may call the API from (`['*']`: any); none: no CORS headers */
  corsOrigins?: string[]
  /** opens Prometheus metrics at /metrics to `Authorization: Bearer <metricsToken>` */
  metricsToken?: string
  /**
   * SECRET_KEY: 32 bytes as base64 or hex; seals issue-host tokens and webhook secrets at rest
   * (docs/operations.md, "Secrets at rest"). Without it connections to issue hosts are refused.
   */
  secretKey?: string
  /** SECRET_KEY_PREVIOUS: the key being rotated out; values sealed with it are sealed again at start */
  previousSecretKey?: string
  /** requests to issue hosts (private addresses, timeout, size) and imports (docs/connections.md) */
  hosts?: HostOptions
  /** fixture loaded into an empty database */
  seedFile?: string
  /** load the bundled demo into an empty database (default false here; the server turns it on) */
  demo?: boolean
  /** where the API is reachable, prefix included, for the curl line logged with the demo token (default: the address the app listens on) */
  publicUrl?: string
  /** takes the demo token (login, token, the demo board's path) instead of the log */
  onDemoToken?: (demo: DemoToken) => void
  /** per-token request limit; `false` leaves rate limiting to the host */
  rateLimit?: RateLimitOptions | false
  /** the demo fixture itself, instead of the bundled file */
  demoFixture?: unknown
  /**
   * Write unchanged board and issue-data reads straight to the socket, past the app's onSend hooks
   * (default false here; `buildApp` and the server turn it on); docs/plugin.md.
   */
  directReads?: boolean
  /** the bound on board and issue-data answers kept as bytes, in MiB (default 64; README, "Conditional requests"); GraphQL answers get a quarter of it again */
  readCacheMb?: number
  /** sign-in, sessions and the audit log (docs/sign-in.md); defaults as in the configuration table */
  signIn?: Partial<SignInConfig>
}

/** The sign-in settings with the defaults of the configuration table filled in. */
export function signInDefaults (given: Partial<SignInConfig> = {}): SignInConfig {
  return { auditDays: 365, sessionIdleMinutes: 1440, sessionMaxDays: 30, signup: 'closed', oidcLinkByEmail: false, ...given }
}

export interface PlanningApiOptions extends PlanningCoreOptions {
  /** opens the admin API under /admin to `Authorization: Bearer <adminToken>` too (administrators always reach it) */
  adminToken?: string
  /** imports from the hosted service (docs, "Move from the hosted service") */
  hostedImport?: HostedImportOptions
  /** register only these domains (default: all) */
  domains?: readonly Domain[]
  /** webhook delivery tuning (timeouts, attempts, private targets); `worker: false` only stores deliveries */
  webhooks?: WebhooksPluginOptions
  /** two-way sync: label writes to issue hosts (docs/connections.md, "Two-way sync") */
  sync?: TwoWaySyncOptions
  /** chat companion API tuning (keepalive, send limit) */
  chat?: ChatPluginOptions
  /** serve the OpenAPI document and Swagger UI under /documentation (default true; `'json'`: the document only) */
  documentation?: boolean | 'json'
  /** a folder holding Swagger UI's static files (the single executable unpacks its own) */
  documentationFiles?: string
  /** serve the board page at `/` and `/board` (default true; docs/board-page.md) */
  boardPage?: boolean
  /** a folder holding the board page's files (the single executable unpacks its own) */
  boardPageFiles?: string
  /** the time sprints and reports go by, in epoch ms (default Date.now; for tests and simulations) */
  clock?: () => number
  /** how often each instance settles sprint boundaries (default 30000 ms; 0: only when sprints are read or written) */
  sprintTickMs?: number
  /**
   * while no administrator exists, each start makes a first-run setup link and logs
   * `Set up the first administrator: <URL>` (default false here; the server turns it on; docs/sign-in.md, "First start")
   */
  setupLink?: boolean
  /** takes the first-run setup link (token, path) instead of the log; implies `setupLink` */
  onSetupLink?: SetupLinkOptions['onSetupLink']
}

/** Set by `buildApp` only: log hints name the server's environment variables and admin CLI, not the plugin's options. */
interface InternalOptions {
  cliHints?: boolean
  /** the server's front, where unchanged reads are answered before routing */
  front?: ServerFront
  /** validators shared by every app buildApp makes in this process (a host's scope gets its own) */
  sharedValidators?: boolean
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
    database: opts.database,
    databaseUrl: opts.databaseUrl,
    databasePoolMax: opts.databasePoolMax,
    databaseSchema: opts.databaseSchema,
    secrets: SecretBox.fromStrings(opts.secretKey, opts.previousSecretKey),
    databaseTimeoutMs: opts.databaseTimeoutMs,
    databaseWatch: opts.databaseWatch,
    databasePreparedStatements: opts.databasePreparedStatements,
    sqliteCheckpoints: opts.sqliteCheckpoints
  })
  await fastify.register(redisPlugin, { redisUrl: opts.redisUrl, redisPrefix: opts.redisPrefix })
  await fastify.register(hostsPlugin, opts.hosts ?? {})
  await fastify.register(metricsPlugin, { token: opts.metricsToken })
  if (opts.databaseUrl !== undefined && opts.redisUrl === undefined) {
    const redis = (opts as InternalOptions).cliHints === true ? 'REDIS_URL' : 'the redisUrl option'
    fastify.log.warn(`PostgreSQL without ${redis}: rate limits and the chat live feed are per instance; set ${redis} when running several`)
  }
  const signIn = signInDefaults(opts.signIn)
  await fastify.register(authPlugin, {
    sessions: { idleMs: signIn.sessionIdleMinutes * 60_000, maxMs: signIn.sessionMaxDays * 86_400_000 },
    publicOrigin: signIn.publicUrl === undefined ? undefined : new URL(signIn.publicUrl).origin
  })
  await fastify.register(mailPlugin, { url: signIn.mail?.url, from: signIn.mail?.from, publicUrl: signIn.publicUrl })
  await fastify.register(signInUpkeepPlugin, { auditDays: signIn.auditDays, sessionIdleMs: signIn.sessionIdleMinutes * 60_000 })
  await fastify.register(readCachePlugin, { direct: opts.directReads === true, megabytes: opts.readCacheMb, front: (opts as InternalOptions).front })
  // Before the rate limit: its onSend must see a 304 to leave it uncounted.
  await fastify.register(conditionalPlugin)
  if (opts.rateLimit !== false) {
    await fastify.register(rateLimitPlugin, opts.rateLimit ?? { max: 100, timeWindow: 60_000 })
  }
  await fastify.register(errorsPlugin, { sharedValidators: (opts as InternalOptions).sharedValidators === true })
  await fastify.register(seedPlugin, {
    seedFile: opts.seedFile,
    demo: opts.demo,
    demoFixture: opts.demoFixture,
    publicUrl: opts.publicUrl,
    onDemoToken: opts.onDemoToken,
    cliHints: (opts as InternalOptions).cliHints
  })
}, { name: 'planning-core', fastify: '5.x' })

/**
 * The whole API as one encapsulated Fastify plugin: register it in any Fastify 5 app, with a
 * prefix if wanted. Its error handler, not-found handler, hooks and content-type parsers stay
 * inside it; its decorators are named `planning*` (docs/plugin.md).
 */
export const planningApi: FastifyPluginAsync<PlanningApiOptions> = async (fastify, opts) => {
  await fastify.register(planningCore, opts)
  if (opts.documentation !== false) await fastify.register(documentationPlugin, { ui: opts.documentation !== 'json', uiFiles: opts.documentationFiles })
  await fastify.register(healthPlugin)
  if (opts.boardPage !== false) await fastify.register(boardPagePlugin, { files: opts.boardPageFiles })
  const wanted = new Set<Domain>(opts.domains ?? DOMAINS)
  if (wanted.has('issues')) await fastify.register(issuesPlugin)
  if (wanted.has('boards')) {
    await fastify.register(boardsPlugin)
    await fastify.register(boardReadsPlugin)
    await fastify.register(boardLivePlugin)
  }
  // The hosted service's GraphQL API (docs/graphql.md): a door to the same operations.
  if (wanted.has('issues') && wanted.has('boards')) {
    await fastify.register(graphqlPlugin, {
      now: opts.clock,
      corsConfigured: (opts.corsOrigins?.length ?? 0) > 0,
      answerCacheMb: (opts.readCacheMb ?? 64) / 4,
      publicUrl: opts.signIn?.publicUrl,
      // kept answers sent before routing, as the read cache's (docs/graphql.md, "Kept answers")
      front: opts.directReads === true ? (opts as InternalOptions).front : undefined
    })
  }
  if (wanted.has('epics')) await fastify.register(epicsPlugin, { publicUrl: opts.signIn?.publicUrl })
  if (wanted.has('milestones')) await fastify.register(milestonesPlugin)
  if (wanted.has('dependencies')) await fastify.register(dependenciesPlugin)
  if (wanted.has('releases')) await fastify.register(releasesPlugin)
  if (wanted.has('sprints')) await fastify.register(sprintsPlugin, { now: opts.clock, tickMs: opts.sprintTickMs })
  if (wanted.has('reports')) await fastify.register(reportsPlugin, { now: opts.clock })
  if (wanted.has('webhooks')) await fastify.register(webhooksPlugin, opts.webhooks ?? {})
  if (wanted.has('chat')) await fastify.register(chatPlugin, { ...opts.chat, prefix: '/api/v1' })
  if (wanted.has('mcp')) await fastify.register(mcpPlugin, { now: opts.clock })
  // Authenticated by their own means (a signature, the admin token): outside the per-address budget,
  // so anonymous traffic from a shared address (a proxy, a NAT) never holds up deliveries or the admin.
  await fastify.register(async (unmetered) => {
    unmetered.addHook('onRoute', (route) => { route.config = { ...route.config, rateLimit: false } })
    if (wanted.has('integrations')) await unmetered.register(integrationsPlugin)
    if (wanted.has('admin')) {
      await unmetered.register(adminPlugin, { prefix: '/admin', adminToken: opts.adminToken, hostedImport: opts.hostedImport, publicUrl: opts.signIn?.publicUrl })
    }
  })
  if (wanted.has('integrations')) await fastify.register(twoWaySyncPlugin, opts.sync ?? {})
  if (wanted.has('account')) {
    await fastify.register(accountPlugin)
    await fastify.register(invitesPlugin, { publicUrl: opts.signIn?.publicUrl })
    await fastify.register(signInPlugin, signInDefaults(opts.signIn))
    if (opts.setupLink === true || opts.onSetupLink !== undefined) {
      await fastify.register(setupLinkPlugin, { publicUrl: opts.signIn?.publicUrl, onSetupLink: opts.onSetupLink })
    }
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

/** The one-use links' paths (docs/sign-in.md, "Invites and resets"): their token is the segment after. */
const LINK_TOKEN = /(^|\/)(invite|reset|setup)\/[^/?#]+/g
const redactLinks = (path: string): string => path.replace(LINK_TOKEN, '$1$2/[REDACTED]')

/** A return_to value as logged: its invite, reset or setup token hidden, whether or not it was encoded. */
function redactReturnTo (value: string): string {
  let decoded = value.replaceAll('+', ' ')
  try {
    decoded = decodeURIComponent(decoded)
  } catch {
    return '[REDACTED]'
  }
  const redacted = redactLinks(decoded)
  return redacted === decoded ? value : redacted
}

/**
 * The request URL as logged: the value of any parameter named access_token, the token of an invite,
 * reset or setup link in the path, and such a link's token in a return_to, never reach the log.
 */
export function redactUrl (url: string): string {
  const at = url.indexOf('?')
  if (at === -1) return redactLinks(url)
  const query = url.slice(at + 1).split('&').map((pair) => {
    const eq = pair.indexOf('=')
    const name = eq === -1 ? pair : pair.slice(0, eq)
    if (isTokenName(name)) return `${name}=[REDACTED]`
    return eq !== -1 && name === 'return_to' ? `${name}=${redactReturnTo(pair.slice(eq + 1))}` : pair
  })
  return `${redactLinks(url.slice(0, at))}?${query.join('&')}`
}

/**
 * The server's log redaction for a host's own logger: `Fastify({ logger: { ...planningLogRedaction } })`
 * keeps `access_token` query values and the token headers out of the request log (docs/plugin.md, "Logs").
 */
export const planningLogRedaction = {
  redact: ['req.headers["x-authentication-token"]', 'req.headers.authorization', 'req.headers.cookie'],
  serializers: {
    req: (req: FastifyRequest) => ({ method: req.method, url: redactUrl(req.url), remoteAddress: req.ip })
  }
}

export interface ServerOptionsInput {
  logLevel?: string
  /** where log lines go (default stdout) */
  logStream?: NodeJS.WritableStream
  /** human-readable log lines (pino-pretty) instead of JSON */
  pretty?: boolean
  /** socket limits (docs/operations.md, "Security"); the defaults are the configuration's */
  limits?: Partial<SocketLimits>
  /** Fastify's trustProxy (TRUST_PROXY): which proxies' X-Forwarded-For gives the client address */
  trustProxy?: TrustProxy
}

export const DEFAULT_LIMITS: SocketLimits = { maxConnections: 1000, requestTimeoutMs: 30_000, headersTimeoutMs: 10_000, keepAliveTimeoutMs: 5000 }

/**
 * Fastify server options shared by the server entry and the tests. Requests must arrive within
 * the timeouts, checked every second; a URL Fastify cannot route (bad percent-encoding) gets the
 * one error shape without being echoed.
 */
export function serverOptions (input: ServerOptionsInput = {}): FastifyServerOptions & { http: ServerOptions } {
  const { logLevel = 'info', logStream, pretty = false, trustProxy = false } = input
  const limits = { ...DEFAULT_LIMITS, ...input.limits }
  return {
    logger: logLevel === 'silent'
      ? false
      : {
          level: logLevel,
          ...(logStream === undefined ? {} : { stream: logStream }),
          ...(pretty && logStream === undefined ? { transport: { target: 'pino-pretty', options: { translateTime: 'SYS:HH:MM:ss', ignore: 'pid,hostname' } } } : {}),
          redact: planningLogRedaction.redact,
          serializers: planningLogRedaction.serializers
        },
    bodyLimit: 1024 * 1024,
    genReqId: nextRequestId,
    // A hop count trusts that many proxies whatever their address (Fastify itself takes a number as
    // "trust none"): docs/operations.md, "Behind a proxy".
    trustProxy: typeof trustProxy === 'number' ? (_address: string, hop: number) => hop < trustProxy : trustProxy,
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
  /** socket limits of the server (docs/operations.md, "Security") */
  limits?: Partial<SocketLimits>
  /** Fastify's trustProxy (TRUST_PROXY; default false: the socket's address is the client's) */
  trustProxy?: TrustProxy
}

const START_TIMEOUT_MS = 60_000

/** Builds a standalone server instance (not listening): what `server.ts` and the tests use. */
export async function buildApp (options: BuildOptions = {}): Promise<FastifyInstance> {
  const { basePath, logLevel, logStream, prettyLogs, limits, trustProxy, ...apiOptions } = options
  const app = Fastify({
    ...serverOptions({ logLevel: logLevel ?? 'silent', logStream, pretty: prettyLogs, limits, trustProxy }),
    schemaController: { compilersFactory: sharedCompilers },
    // A large SEED_FILE may take longer to load than Fastify gives a plugin to start, and on
    // PostgreSQL an instance may wait for another one's load of the seed or the demo. Otherwise a
    // minute, not Fastify's 10 s: on a busy machine loading the modules alone has taken longer.
    pluginTimeout: apiOptions.seedFile !== undefined || (apiOptions.demo === true && apiOptions.databaseUrl !== undefined) ? SEED_TIMEOUT_MS : START_TIMEOUT_MS
  })
  app.server.maxConnections = limits?.maxConnections ?? DEFAULT_LIMITS.maxConnections
  if (basePath !== undefined && basePath !== '') {
    // Outside BASE_PATH: the same answers as inside, never echoing the query string.
    app.setNotFoundHandler(notFound)
    app.setErrorHandler(errorReply)
    app.addHook('onSend', closeAfterUnreadBody)
  }
  const front = new ServerFront()
  front.attach(app.server)
  const internal: InternalOptions = { cliHints: true, front, sharedValidators: true }
  await app.register(planningApi, { directReads: true, ...apiOptions, ...internal, prefix: basePath ?? '' })
  return app
}

export {
  accountPlugin, adminPlugin, authPlugin, boardLivePlugin, boardPagePlugin, boardReadsPlugin, boardsPlugin, chatPlugin, conditionalPlugin, databasePlugin,
  dependenciesPlugin, documentationPlugin, domainEventsPlugin, epicsPlugin, errorsPlugin, healthPlugin, hostsPlugin, integrationsPlugin, issuesPlugin,
  mcpPlugin, metricsPlugin, milestonesPlugin, rateLimitPlugin, redisPlugin, readCachePlugin, releasesPlugin, reportsPlugin, seedPlugin, signInPlugin,
  sprintsPlugin, webhooksPlugin
}
export { loadFixture } from './services/fixtures.js'
export { migrate } from './db/engine/migrations/index.js'
export { openSqliteFile } from './db/engine/sqlite.js'
export { openSqliteStore } from './db/store.js'
export type { PlanningStore, DemoToken, SetupLink }

/**
 * The decorators `planningCore` adds to the scope it is registered in (and `planningApi` to its own,
 * encapsulated scope). The published declarations do not add them to Fastify's own types, since a
 * host's other instances do not have them: type the scope with `PlanningInstance` (docs/plugin.md, "Types").
 */
export interface PlanningDecorators {
  /** the data layer: one repository per domain over Kysely */
  planningStore: PlanningStore
  /** which engine the store runs on */
  planningEngine: Engine
  /** synchronous, in-transaction notifications of board and estimate changes */
  planningEvents: DomainEvents
  /** token and permission checks */
  planningAuth: PlanningAuth
  /** the token made for the demo user when the demo was loaded by this start, else null */
  planningDemoToken: DemoToken | null
}
/** A Fastify instance `planningCore` was registered in. */
export type PlanningInstance = FastifyInstance & PlanningDecorators
/** A request inside the plugin's routes (after `planningAuth.user()` or `requireUser`). */
export type PlanningRequest = FastifyRequest & {
  planningUser: User | null
  planningCredential: Credential | null
}
export type { SqliteHandle, ChatPluginOptions, HostOptions, RateLimitOptions, WebhooksPluginOptions }
