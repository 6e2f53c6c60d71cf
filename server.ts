import './tick-shape.js'
import closeWithGrace from 'close-with-grace'
import { buildApp, type BuildOptions } from './app.js'
import { ConfigError, loadConfig, type ServerConfig } from './config.js'

/** Builds the app from a validated config (not listening); `extra` is for the single executable. */
export async function createServer (config: ServerConfig, extra: Partial<BuildOptions> = {}) {
  return await buildApp({
    database: config.databasePath,
    databaseUrl: config.databaseUrl,
    databasePoolMax: config.databasePoolMax,
    databaseTimeoutMs: config.databaseTimeoutMs,
    databaseWatch: config.databaseWatch,
    databasePreparedStatements: config.databasePreparedStatements,
    redisUrl: config.redisUrl,
    seedFile: config.seedFile,
    demo: config.demo,
    adminToken: config.adminToken,
    rateLimit: { max: config.rateLimitMax, timeWindow: config.rateLimitWindowMs },
    webhooks: { timeoutMs: config.webhookTimeoutMs, maxAttempts: config.webhookMaxAttempts, allowPrivate: config.webhookAllowPrivate },
    hosts: { allowPrivate: config.hostAllowPrivate, timeoutMs: config.hostTimeoutMs },
    secretKey: config.secretKey,
    previousSecretKey: config.previousSecretKey,
    basePath: config.basePath,
    limits: config.limits,
    trustProxy: config.trustProxy,
    corsOrigins: config.corsOrigins,
    metricsToken: config.metricsToken,
    signIn: config.signIn,
    logLevel: config.logLevel,
    readCacheMb: config.readCacheMb,
    prettyLogs: process.stdout.isTTY,
    setupLink: true,
    ...extra
  })
}

/** Reads the environment, listens, and closes gracefully on SIGINT/SIGTERM. */
export async function start (extra: Partial<BuildOptions> = {}): Promise<void> {
  let config: ServerConfig
  try {
    config = loadConfig(process.env)
  } catch (err) {
    if (err instanceof ConfigError) {
      console.error(err.message)
      process.exit(1)
    }
    throw err
  }
  const app = await createServer(config, extra)
  // In-flight requests finish (Fastify stops accepting new ones), then onClose closes the database.
  closeWithGrace({ delay: 10_000 }, async ({ signal, err }) => {
    if (err !== undefined) app.log.error({ err }, 'closing after an error')
    else app.log.info({ signal }, 'closing')
    await app.close()
  })
  await app.listen({ host: config.host, port: config.port })
  app.log.info({ node: process.version }, `running on Node ${process.version}`)
  const publicUrl = `http://${config.host.includes(':') ? `[${config.host}]` : config.host}:${(app.server.address() as { port: number }).port}${config.basePath}`
  app.log.info(`API documentation: ${publicUrl}/documentation`)
  app.log.info(`board page: ${publicUrl}/ (sign in with a password or an API token)`)
}

// Started directly (`node dist/server.js`), not imported; the single executable calls start() itself.
const entry = process.argv[1]
if (typeof import.meta.url === 'string' && entry !== undefined && import.meta.url === new URL(`file://${entry}`).href) {
  // One clear line for what stops the start (a missing SEED_FILE, a database that does not answer);
  // LOG_LEVEL=debug shows the stack too.
  start().catch((err: Error) => {
    console.error(`the planning API server did not start: ${err.message}`)
    if (process.env.LOG_LEVEL === 'debug' || process.env.LOG_LEVEL === 'trace') console.error(err.stack)
    process.exit(1)
  })
}
