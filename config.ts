import { Type, type Static } from '@sinclair/typebox'
import { envSchema } from 'env-schema'
import ipaddr from 'ipaddr.js'
import { parseSecretKey } from './db/engine/secret-box.js'

/** Every environment variable the server reads (docs/operations.md, "Configuration"); `.env.example` lists the same. */
export const EnvSchema = Type.Object({
  HOST: Type.String({ minLength: 1, default: '127.0.0.1' }),
  PORT: Type.Integer({ minimum: 0, maximum: 65535, default: 8080 }),
  DATABASE_PATH: Type.String({ minLength: 1, default: './data/planning.db' }),
  DATABASE_URL: Type.Optional(Type.String({ pattern: '^postgres(ql)?://' })),
  DATABASE_POOL_MAX: Type.Integer({ minimum: 1, maximum: 1000, default: 10 }),
  DATABASE_TIMEOUT_MS: Type.Integer({ minimum: 100, maximum: 600_000, default: 5000 }),
  DATABASE_WATCH: Type.Boolean({ default: true }),
  DATABASE_PREPARED_STATEMENTS: Type.Boolean({ default: true }),
  REDIS_URL: Type.Optional(Type.String({ pattern: '^rediss?://' })),
  SEED_FILE: Type.Optional(Type.String({ minLength: 1 })),
  DEMO: Type.Boolean({ default: true }),
  ADMIN_TOKEN: Type.Optional(Type.String({ minLength: 16 })),
  RATE_LIMIT_MAX: Type.Integer({ minimum: 1, default: 100 }),
  RATE_LIMIT_WINDOW_MS: Type.Integer({ minimum: 1000, default: 60000 }),
  BASE_PATH: Type.String({ pattern: '^(/[A-Za-z0-9._~-]+)*$', default: '' }),
  LOG_LEVEL: Type.String({ enum: ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'], default: 'info' }),
  READ_CACHE_MB: Type.Number({ minimum: 1, maximum: 1_048_576, default: 64 }),
  WEBHOOK_TIMEOUT_MS: Type.Integer({ minimum: 100, maximum: 600000, default: 5000 }),
  WEBHOOK_MAX_ATTEMPTS: Type.Integer({ minimum: 1, maximum: 100, default: 8 }),
  WEBHOOK_ALLOW_PRIVATE: Type.Boolean({ default: false }),
  HOST_ALLOW_PRIVATE: Type.Boolean({ default: false }),
  HOST_TIMEOUT_MS: Type.Integer({ minimum: 1000, maximum: 600000, default: 30000 }),
  SECRET_KEY: Type.Optional(Type.String({ minLength: 1 })),
  SECRET_KEY_PREVIOUS: Type.Optional(Type.String({ minLength: 1 })),
  MAX_CONNECTIONS: Type.Integer({ minimum: 1, maximum: 1_000_000, default: 1000 }),
  REQUEST_TIMEOUT_MS: Type.Integer({ minimum: 1000, maximum: 3_600_000, default: 30000 }),
  // Default: the smaller of 10,000 and REQUEST_TIMEOUT_MS.
  HEADERS_TIMEOUT_MS: Type.Optional(Type.Integer({ minimum: 1000, maximum: 3_600_000 })),
  KEEP_ALIVE_TIMEOUT_MS: Type.Integer({ minimum: 1, maximum: 3_600_000, default: 5000 }),
  TRUST_PROXY: Type.Optional(Type.String({ minLength: 1 })),
  METRICS_TOKEN: Type.Optional(Type.String({ minLength: 16 })),
  CORS_ORIGINS: Type.Optional(Type.String({ pattern: '^(\\*|https?://[^,\\s]+)(,\\s*https?://[^,\\s]+)*$' })),
  PUBLIC_URL: Type.Optional(Type.String({ pattern: '^https?://[^/\\s?#]+(/[^\\s?#]*[^/\\s?#])?$' })),
  AUDIT_DAYS: Type.Integer({ minimum: 1, maximum: 36500, default: 365 }),
  SESSION_IDLE_MINUTES: Type.Integer({ minimum: 1, maximum: 525600, default: 1440 }),
  SESSION_MAX_DAYS: Type.Integer({ minimum: 1, maximum: 3650, default: 30 }),
  SIGNUP: Type.String({ enum: ['closed', 'open', 'host'], default: 'closed' }),
  OIDC_ISSUER: Type.Optional(Type.String({ pattern: '^https?://[^\\s]+$', maxLength: 500 })),
  OIDC_CLIENT_ID: Type.Optional(Type.String({ minLength: 1, maxLength: 500 })),
  OIDC_CLIENT_SECRET: Type.Optional(Type.String({ minLength: 1, maxLength: 500 })),
  OIDC_SCOPES: Type.String({ pattern: '(^|\\s)openid(\\s|$)', maxLength: 500, default: 'openid profile email' }),
  OIDC_LINK_BY_EMAIL: Type.Boolean({ default: false }),
  SMTP_URL: Type.Optional(Type.String({ pattern: '^smtps?://[^\\s]+$', maxLength: 1000 })),
  SMTP_FROM: Type.Optional(Type.String({ minLength: 3, maxLength: 300 }))
})

export type Env = Static<typeof EnvSchema>

/**
 * Fastify's `trustProxy`: false (the socket's address is the client's), true (the left-most
 * X-Forwarded-For address, whoever sent it), a number of proxy hops to trust, or the addresses and
 * CIDR ranges of the proxies to trust (`loopback`, `linklocal` and `uniquelocal` name their ranges).
 */
export type TrustProxy = boolean | number | string[]

export interface ServerConfig {
  host: string
  port: number
  databasePath: string
  /** PostgreSQL instead of the SQLite file */
  databaseUrl?: string
  databasePoolMax: number
  /** PostgreSQL connect, query and statement timeout */
  databaseTimeoutMs: number
  /** PostgreSQL: reads answered from the change counter heard of (LISTEN), not asked for */
  databaseWatch: boolean
  /** PostgreSQL: the hot paths' queries as named statements, parsed once per connection */
  databasePreparedStatements: boolean
  /** shared rate-limit windows and chat fan-out across instances */
  redisUrl?: string
  seedFile?: string
  demo: boolean
  adminToken?: string
  rateLimitMax: number
  rateLimitWindowMs: number
  basePath: string
  logLevel: string
  /** the bound on answers kept as bytes, in MiB */
  readCacheMb: number
  webhookTimeoutMs: number
  webhookMaxAttempts: number
  webhookAllowPrivate: boolean
  /** issue hosts on loopback or private addresses (a Gitea on the LAN) */
  hostAllowPrivate: boolean
  /** one request to an issue host, redirects and body included */
  hostTimeoutMs: number
  /** seals issue-host tokens and webhook secrets at rest (32 bytes, base64 or hex) */
  secretKey?: string
  /** the key being rotated out: still opens what it sealed */
  previousSecretKey?: string
  limits: SocketLimits
  /** which proxies may tell the client's address (TRUST_PROXY) */
  trustProxy: TrustProxy
  /** origins allowed by CORS (`*` for any); none: CORS off */
  corsOrigins?: string[]
  /** opens /metrics (Bearer); none: no metrics endpoint */
  metricsToken?: string
  /** sign-in, sessions and the audit log (docs/sign-in.md) */
  signIn: SignInConfig
}

/** Sign-in, sessions and the audit log (docs/sign-in.md, "Configuration"). */
export interface SignInConfig {
  /** the address people use, BASE_PATH not included; the OpenID callback and the session cookie's Secure flag follow it */
  publicUrl?: string
  auditDays: number
  sessionIdleMinutes: number
  sessionMaxDays: number
  /**
   * who gets in on a first sign-in with an unknown identity: nobody (closed), anyone the provider
   * vouches for (open), or through the issue host only its collaborators on a connected repository (host)
   */
  signup: 'closed' | 'open' | 'host'
  /** OpenID Connect; none: no OpenID sign-in */
  oidc?: { issuer: string, clientId: string, clientSecret: string, scopes: string }
  oidcLinkByEmail: boolean
  /** SMTP_URL and SMTP_FROM: invites with an email and reset links are mailed too; none: no mail */
  mail?: { url: string, from?: string }
}

/** Socket limits of the HTTP server (docs/operations.md, "Security"). */
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
  const headersTimeoutMs = parsed.HEADERS_TIMEOUT_MS ?? Math.min(10_000, parsed.REQUEST_TIMEOUT_MS)
  if (headersTimeoutMs > parsed.REQUEST_TIMEOUT_MS) {
    throw new ConfigError('invalid configuration: HEADERS_TIMEOUT_MS must not be longer than REQUEST_TIMEOUT_MS')
  }
  for (const name of ['SECRET_KEY', 'SECRET_KEY_PREVIOUS'] as const) {
    const value = parsed[name]
    if (value === undefined) continue
    try {
      parseSecretKey(value, name)
    } catch (err) {
      throw new ConfigError(`invalid configuration: ${(err as Error).message}`)
    }
  }
  if (parsed.SECRET_KEY_PREVIOUS !== undefined && parsed.SECRET_KEY === undefined) {
    throw new ConfigError('invalid configuration: SECRET_KEY_PREVIOUS needs SECRET_KEY (the new key) too')
  }
  const oidcSet = [parsed.OIDC_ISSUER, parsed.OIDC_CLIENT_ID, parsed.OIDC_CLIENT_SECRET].filter((v) => v !== undefined).length
  if (oidcSet !== 0 && oidcSet !== 3) {
    throw new ConfigError('invalid configuration: OIDC_ISSUER, OIDC_CLIENT_ID and OIDC_CLIENT_SECRET go together (set all three or none)')
  }
  if (oidcSet === 3 && parsed.PUBLIC_URL === undefined) {
    throw new ConfigError('invalid configuration: OIDC_ISSUER needs PUBLIC_URL (the callback is PUBLIC_URL + BASE_PATH + /auth/oidc/callback)')
  }
  if (parsed.OIDC_ISSUER?.startsWith('http://') === true && !isLoopbackUrl(parsed.OIDC_ISSUER)) {
    throw new ConfigError('invalid configuration: OIDC_ISSUER must be https:// (http:// only on a loopback address such as 127.0.0.1)')
  }
  return {
    host: parsed.HOST,
    port: parsed.PORT,
    databasePath: parsed.DATABASE_PATH,
    databaseUrl: parsed.DATABASE_URL,
    databasePoolMax: parsed.DATABASE_POOL_MAX,
    databaseTimeoutMs: parsed.DATABASE_TIMEOUT_MS,
    databaseWatch: parsed.DATABASE_WATCH,
    databasePreparedStatements: parsed.DATABASE_PREPARED_STATEMENTS,
    redisUrl: parsed.REDIS_URL,
    seedFile: parsed.SEED_FILE,
    demo: parsed.DEMO,
    adminToken: parsed.ADMIN_TOKEN,
    rateLimitMax: parsed.RATE_LIMIT_MAX,
    rateLimitWindowMs: parsed.RATE_LIMIT_WINDOW_MS,
    basePath: parsed.BASE_PATH,
    logLevel: parsed.LOG_LEVEL,
    readCacheMb: parsed.READ_CACHE_MB,
    webhookTimeoutMs: parsed.WEBHOOK_TIMEOUT_MS,
    webhookMaxAttempts: parsed.WEBHOOK_MAX_ATTEMPTS,
    webhookAllowPrivate: parsed.WEBHOOK_ALLOW_PRIVATE,
    hostAllowPrivate: parsed.HOST_ALLOW_PRIVATE,
    hostTimeoutMs: parsed.HOST_TIMEOUT_MS,
    secretKey: parsed.SECRET_KEY,
    previousSecretKey: parsed.SECRET_KEY_PREVIOUS,
    corsOrigins: parsed.CORS_ORIGINS?.split(',').map((o) => o.trim()),
    metricsToken: parsed.METRICS_TOKEN,
    trustProxy: trustProxy(parsed.TRUST_PROXY),
    signIn: {
      publicUrl: parsed.PUBLIC_URL,
      auditDays: parsed.AUDIT_DAYS,
      sessionIdleMinutes: parsed.SESSION_IDLE_MINUTES,
      sessionMaxDays: parsed.SESSION_MAX_DAYS,
      signup: parsed.SIGNUP as SignInConfig['signup'],
      oidc: parsed.OIDC_ISSUER === undefined
        ? undefined
        : { issuer: parsed.OIDC_ISSUER, clientId: parsed.OIDC_CLIENT_ID!, clientSecret: parsed.OIDC_CLIENT_SECRET!, scopes: parsed.OIDC_SCOPES },
      oidcLinkByEmail: parsed.OIDC_LINK_BY_EMAIL,
      mail: parsed.SMTP_URL === undefined ? undefined : { url: parsed.SMTP_URL, from: parsed.SMTP_FROM }
    },
    limits: {
      maxConnections: parsed.MAX_CONNECTIONS,
      requestTimeoutMs: parsed.REQUEST_TIMEOUT_MS,
      headersTimeoutMs,
      keepAliveTimeoutMs: parsed.KEEP_ALIVE_TIMEOUT_MS
    }
  }
}

const PROXY_RANGES = new Set(['loopback', 'linklocal', 'uniquelocal'])

/** TRUST_PROXY: `false`/`off` (the default), `true`, a hop count, or a comma-separated list of addresses and CIDRs. */
function trustProxy (value: string | undefined): TrustProxy {
  if (value === undefined || /^(false|off)$/i.test(value)) return false
  if (/^true$/i.test(value)) return true
  if (/^\d+$/.test(value)) {
    const hops = Number(value)
    if (hops >= 1 && hops <= 100) return hops
    throw new ConfigError('invalid configuration: TRUST_PROXY as a hop count must be between 1 and 100')
  }
  const entries = value.split(',').map((entry) => entry.trim())
  for (const entry of entries) {
    const valid = PROXY_RANGES.has(entry) || ipaddr.IPv4.isValidFourPartDecimal(entry) || ipaddr.IPv6.isValid(entry) ||
      ipaddr.IPv4.isValidCIDRFourPartDecimal(entry) || ipaddr.IPv6.isValidCIDR(entry)
    if (!valid) {
      throw new ConfigError(`invalid configuration: TRUST_PROXY must be false, true, a hop count or a comma-separated list of addresses and CIDRs (not '${entry.slice(0, 64)}')`)
    }
  }
  return entries
}

/** Whether the URL's host is a loopback address (127.0.0.0/8, ::1, localhost). */
export function isLoopbackUrl (url: string): boolean {
  let host: string
  try {
    host = new URL(url).hostname
  } catch {
    return false
  }
  return host === 'localhost' || host === '[::1]' || /^127\.\d+\.\d+\.\d+$/.test(host)
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
