import { Type, type Static } from '@sinclair/typebox'
import { envSchema } from 'env-schema'

/** Every environment variable the server reads (README, "Configuration"); `.env.example` lists the same. */
export const EnvSchema = Type.Object({
  HOST: Type.String({ minLength: 1, default: '127.0.0.1' }),
  PORT: Type.Integer({ minimum: 0, maximum: 65535, default: 8080 }),
  DATABASE_PATH: Type.String({ minLength: 1, default: './data/planning.db' }),
  DATABASE_URL: Type.Optional(Type.String({ pattern: '^postgres(ql)?://' })),
  DATABASE_POOL_MAX: Type.Integer({ minimum: 1, maximum: 1000, default: 10 }),
  REDIS_URL: Type.Optional(Type.String({ pattern: '^rediss?://' })),
  SEED_FILE: Type.Optional(Type.String({ minLength: 1 })),
  DEMO: Type.Boolean({ default: true }),
  ADMIN_TOKEN: Type.Optional(Type.String({ minLength: 16 })),
  RATE_LIMIT_MAX: Type.Integer({ minimum: 1, default: 100 }),
  RATE_LIMIT_WINDOW_MS: Type.Integer({ minimum: 1000, default: 60000 }),
  BASE_PATH: Type.String({ pattern: '^(/[A-Za-z0-9._~-]+)*$', default: '' }),
  LOG_LEVEL: Type.String({ enum: ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'], default: 'info' }),
  WEBHOOK_TIMEOUT_MS: Type.Integer({ minimum: 100, maximum: 600000, default: 5000 }),
  WEBHOOK_MAX_ATTEMPTS: Type.Integer({ minimum: 1, maximum: 100, default: 8 }),
  WEBHOOK_ALLOW_PRIVATE: Type.Boolean({ default: false }),
  MAX_CONNECTIONS: Type.Integer({ minimum: 1, maximum: 1_000_000, default: 1000 }),
  REQUEST_TIMEOUT_MS: Type.Integer({ minimum: 1000, maximum: 3_600_000, default: 30000 }),
  HEADERS_TIMEOUT_MS: Type.Integer({ minimum: 1000, maximum: 3_600_000, default: 10000 }),
  KEEP_ALIVE_TIMEOUT_MS: Type.Integer({ minimum: 1, maximum: 3_600_000, default: 5000 }),
  METRICS_TOKEN: Type.Optional(Type.String({ minLength: 16 })),
  CORS_ORIGINS: Type.Optional(Type.String({ pattern: '^(\\*|https?://[^,\\s]+)(,\\s*https?://[^,\\s]+)*$' }))
})

export type Env = Static<typeof EnvSchema>

export interface ServerConfig {
  host: string
  port: number
  databasePath: string
  /** PostgreSQL instead of the SQLite file */
  databaseUrl?: string
  databasePoolMax: number
  /** shared rate-limit windows and chat fan-out across instances */
  redisUrl?: string
  seedFile?: string
  demo: boolean
  adminToken?: string
  rateLimitMax: number
  rateLimitWindowMs: number
  basePath: string
  logLevel: string
  webhookTimeoutMs: number
  webhookMaxAttempts: number
  webhookAllowPrivate: boolean
  limits: SocketLimits
  /** origins allowed by CORS (`*` for any); none: CORS off */
  corsOrigins?: string[]
  /** opens /metrics (Bearer); none: no metrics endpoint */
  metricsToken?: string
}

/** Socket limits of the HTTP server (README, "Security"). */
export interface SocketLimits {
  /** open connections at most; more are closed at once */
  maxConnections: number
  /** a whole request (headers and body) must arrive within this */
  requestTimeoutMs: number
  /** the request headers must arrive within this */
  headersTimeoutMs: number
  /** an idle keep-alive connection is closed after this */
  keepAliveTimeoutMs: number
}

export class ConfigError extends Error {}

/**
 * Validates the environment once at boot. A bad value stops start-up with a message that names
 * the variable, e.g. `invalid configuration: PORT must be <= 65535`.
 */
export function loadConfig (env: Record<string, string | undefined> = process.env): ServerConfig {
  let parsed: Env
  try {
    parsed = envSchema<Env>({ schema: EnvSchema, data: pickKnown(env), dotenv: false, env: false })
  } catch (err) {
    let message = (err as Error).message.replace(/env\/?/g, '').replace(/^\s*/, '')
    // Name the values an enumerated variable takes (LOG_LEVEL).
    for (const [name, property] of Object.entries(EnvSchema.properties) as Array<[string, { enum?: string[] }]>) {
      if (property.enum !== undefined && message.includes(`${name} must be equal to one of the allowed values`)) {
        message = message.replace(`${name} must be equal to one of the allowed values`, `${name} must be one of ${property.enum.join(', ')}`)
      }
    }
    throw new ConfigError(`invalid configuration: ${message}`)
  }
  if (parsed.HEADERS_TIMEOUT_MS > parsed.REQUEST_TIMEOUT_MS) {
    throw new ConfigError('invalid configuration: HEADERS_TIMEOUT_MS must not be longer than REQUEST_TIMEOUT_MS')
  }
  return {
    host: parsed.HOST,
    port: parsed.PORT,
    databasePath: parsed.DATABASE_PATH,
    databaseUrl: parsed.DATABASE_URL,
    databasePoolMax: parsed.DATABASE_POOL_MAX,
    redisUrl: parsed.REDIS_URL,
    seedFile: parsed.SEED_FILE,
    demo: parsed.DEMO,
    adminToken: parsed.ADMIN_TOKEN,
    rateLimitMax: parsed.RATE_LIMIT_MAX,
    rateLimitWindowMs: parsed.RATE_LIMIT_WINDOW_MS,
    basePath: parsed.BASE_PATH,
    logLevel: parsed.LOG_LEVEL,
    webhookTimeoutMs: parsed.WEBHOOK_TIMEOUT_MS,
    webhookMaxAttempts: parsed.WEBHOOK_MAX_ATTEMPTS,
    webhookAllowPrivate: parsed.WEBHOOK_ALLOW_PRIVATE,
    corsOrigins: parsed.CORS_ORIGINS?.split(',').map((o) => o.trim()),
    metricsToken: parsed.METRICS_TOKEN,
    limits: {
      maxConnections: parsed.MAX_CONNECTIONS,
      requestTimeoutMs: parsed.REQUEST_TIMEOUT_MS,
      headersTimeoutMs: parsed.HEADERS_TIMEOUT_MS,
      keepAliveTimeoutMs: parsed.KEEP_ALIVE_TIMEOUT_MS
    }
  }
}

// env-schema validates the whole object it is given; hand it only our variables, with empty
// strings treated as unset so `PORT=` in a shell falls back to the default.
function pickKnown (env: Record<string, string | undefined>): Record<string, string> {
  const out: Record<string, string> = {}
  for (const key of Object.keys(EnvSchema.properties)) {
    const value = env[key]
    if (value !== undefined && value !== '') out[key] = value
  }
  return out
}
