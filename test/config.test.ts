import t from 'tap'
import { ConfigError, loadConfig } from '../config.js'

t.test('defaults match the configuration table (docs/operations.md)', async (t) => {
  t.same(loadConfig({}), {
    host: '127.0.0.1',
    port: 8080,
    databasePath: './data/planning.db',
    databaseUrl: undefined,
    databasePoolMax: 10,
    databaseTimeoutMs: 5000,
    databaseWatch: true,
    databasePreparedStatements: true,
    redisUrl: undefined,
    seedFile: undefined,
    demo: true,
    adminToken: undefined,
    rateLimitMax: 100,
    rateLimitWindowMs: 60000,
    basePath: '',
    logLevel: 'info',
    readCacheMb: 64,
    webhookTimeoutMs: 5000,
    webhookMaxAttempts: 8,
    webhookAllowPrivate: false,
    hostAllowPrivate: false,
    hostTimeoutMs: 30000,
    secretKey: undefined,
    previousSecretKey: undefined,
    corsOrigins: undefined,
    metricsToken: undefined,
    trustProxy: false,
    signIn: { publicUrl: undefined, auditDays: 365, sessionIdleMinutes: 1440, sessionMaxDays: 30, signup: 'closed', oidc: undefined, oidcLinkByEmail: false, mail: undefined },
    limits: { maxConnections: 1000, requestTimeoutMs: 30000, headersTimeoutMs: 10000, keepAliveTimeoutMs: 5000 }
  })
})

t.test('values are parsed and empty strings mean unset', async (t) => {
  const config = loadConfig({ PORT: '9000', DEMO: 'false', BASE_PATH: '/api', WEBHOOK_ALLOW_PRIVATE: 'true', HOST: '' })
  t.equal(config.port, 9000)
  t.equal(config.demo, false)
  t.equal(config.basePath, '/api')
  t.equal(config.webhookAllowPrivate, true)
  t.equal(config.host, '127.0.0.1')
})

t.test('a bad value stops start-up with a message naming the variable', async (t) => {
  const bad: Array<[Record<string, string>, RegExp]> = [
    [{ PORT: 'eighty' }, /PORT must be integer/],
    [{ PORT: '70000' }, /PORT must be <= 65535/],
    [{ READ_CACHE_MB: '0' }, /READ_CACHE_MB must be >= 1/],
    [{ DEMO: 'maybe' }, /DEMO must be boolean/],
    [{ RATE_LIMIT_MAX: '0' }, /RATE_LIMIT_MAX must be >= 1/],
    [{ LOG_LEVEL: 'loud' }, /LOG_LEVEL must be one of fatal, error, warn, info, debug, trace, silent/],
    [{ BASE_PATH: 'api/' }, /BASE_PATH must match pattern/],
    [{ ADMIN_TOKEN: 'short' }, /ADMIN_TOKEN must NOT have fewer than 16 characters/],
    [{ WEBHOOK_MAX_ATTEMPTS: '-2' }, /WEBHOOK_MAX_ATTEMPTS/],
    [{ MAX_CONNECTIONS: '0' }, /MAX_CONNECTIONS must be >= 1/],
    [{ DATABASE_URL: 'mysql://x' }, /DATABASE_URL must match pattern/],
    [{ REDIS_URL: 'localhost:6379' }, /REDIS_URL must match pattern/],
    [{ HEADERS_TIMEOUT_MS: '60000' }, /HEADERS_TIMEOUT_MS must not be longer than REQUEST_TIMEOUT_MS/],
    [{ REQUEST_TIMEOUT_MS: '3000', HEADERS_TIMEOUT_MS: '4000' }, /HEADERS_TIMEOUT_MS must not be longer than REQUEST_TIMEOUT_MS/],
    [{ DATABASE_TIMEOUT_MS: '50' }, /DATABASE_TIMEOUT_MS must be >= 100/],
    [{ DATABASE_TIMEOUT_MS: 'soon' }, /DATABASE_TIMEOUT_MS must be integer/],
    [{ TRUST_PROXY: 'yes' }, /TRUST_PROXY must be false, true, a hop count or a comma-separated list of addresses and CIDRs \(not 'yes'\)/],
    [{ TRUST_PROXY: '10.0.0.0/33' }, /TRUST_PROXY .*not '10\.0\.0\.0\/33'/],
    [{ TRUST_PROXY: '127.0.0.1, 10.1' }, /TRUST_PROXY .*not '10\.1'/],
    [{ TRUST_PROXY: '0' }, /TRUST_PROXY as a hop count must be between 1 and 100/]
  ]
  for (const [env, message] of bad) {
    t.throws(() => loadConfig(env), message, JSON.stringify(env))
    try {
      loadConfig(env)
    } catch (err) {
      t.ok(err instanceof ConfigError, 'a ConfigError')
    }
  }
})

t.test('REQUEST_TIMEOUT_MS alone may be shorter than the default header timeout', async (t) => {
  t.same(loadConfig({ REQUEST_TIMEOUT_MS: '3000' }).limits, { maxConnections: 1000, requestTimeoutMs: 3000, headersTimeoutMs: 3000, keepAliveTimeoutMs: 5000 })
  t.equal(loadConfig({ REQUEST_TIMEOUT_MS: '60000' }).limits.headersTimeoutMs, 10000, 'the smaller of 10,000 and the request timeout')
  t.equal(loadConfig({ REQUEST_TIMEOUT_MS: '60000', HEADERS_TIMEOUT_MS: '20000' }).limits.headersTimeoutMs, 20000)
})

t.test('TRUST_PROXY: off, any proxy, a hop count or the proxies\' addresses', async (t) => {
  const cases: Array<[string, unknown]> = [
    ['false', false], ['off', false], ['', false], ['true', true], ['2', 2],
    ['127.0.0.1', ['127.0.0.1']], ['10.0.0.0/8, ::1,fd00::/8', ['10.0.0.0/8', '::1', 'fd00::/8']], ['loopback,uniquelocal', ['loopback', 'uniquelocal']]
  ]
  for (const [value, expected] of cases) t.same(loadConfig({ TRUST_PROXY: value }).trustProxy, expected, value)
  t.equal(loadConfig({ DATABASE_TIMEOUT_MS: '2500' }).databaseTimeoutMs, 2500)
})

t.test('.env.example lists every variable the server reads', async (t) => {
  const { readFileSync } = await import('node:fs')
  const { EnvSchema } = await import('../config.js')
  const listed = readFileSync(new URL('../.env.example', import.meta.url), 'utf8').split('\n')
    .filter((line) => /^[A-Z_]+=/.test(line)).map((line) => line.split('=')[0])
  t.same([...listed].sort(), Object.keys(EnvSchema.properties).sort())
})

t.test('sign-in settings are checked together', async (t) => {
  const oidc = { OIDC_ISSUER: 'https://id.example.com/realms/team', OIDC_CLIENT_ID: 'planning', OIDC_CLIENT_SECRET: 's3cret', PUBLIC_URL: 'https://planning.example.com' }
  t.match(loadConfig(oidc).signIn, { publicUrl: 'https://planning.example.com', oidc: { issuer: oidc.OIDC_ISSUER, clientId: 'planning', scopes: 'openid profile email' } })
  t.throws(() => loadConfig({ ...oidc, OIDC_CLIENT_SECRET: '' }), /go together/)
  t.throws(() => loadConfig({ ...oidc, PUBLIC_URL: '' }), /needs PUBLIC_URL/)
  t.throws(() => loadConfig({ ...oidc, OIDC_ISSUER: 'http://id.example.com' }), /loopback/)
  t.equal(loadConfig({ ...oidc, OIDC_ISSUER: 'http://127.0.0.1:8081' }).signIn.oidc?.issuer, 'http://127.0.0.1:8081')
  t.throws(() => loadConfig({ ...oidc, OIDC_SCOPES: 'profile email' }), /OIDC_SCOPES/)
  t.throws(() => loadConfig({ PUBLIC_URL: 'https://planning.example.com/' }), /PUBLIC_URL/)
  t.throws(() => loadConfig({ SIGNUP: 'everyone' }), /SIGNUP must be one of closed, open/)
  t.equal(loadConfig({ SIGNUP: 'host' }).signIn.signup, 'host', 'SIGNUP=host: collaborators of connected repositories, through the issue host')
  t.throws(() => loadConfig({ AUDIT_DAYS: '0' }), /AUDIT_DAYS/)
  t.same(loadConfig({ SMTP_URL: 'smtps://u:p@mail.example.com:465', SMTP_FROM: 'team@example.com' }).signIn.mail, { url: 'smtps://u:p@mail.example.com:465', from: 'team@example.com' })
  t.throws(() => loadConfig({ SMTP_URL: 'mail.example.com' }), /SMTP_URL must match pattern/)
})
