import t from 'tap'
import { ConfigError, loadConfig } from '../config.js'

t.test('defaults match the README configuration table', async (t) => {
  t.same(loadConfig({}), {
    host: '127.0.0.1',
    port: 8080,
    databasePath: './data/planning.db',
    databaseUrl: undefined,
    databasePoolMax: 10,
    redisUrl: undefined,
    seedFile: undefined,
    demo: true,
    adminToken: undefined,
    rateLimitMax: 100,
    rateLimitWindowMs: 60000,
    basePath: '',
    logLevel: 'info',
    webhookTimeoutMs: 5000,
    webhookMaxAttempts: 8,
    webhookAllowPrivate: false,
    corsOrigins: undefined,
    metricsToken: undefined,
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
    [{ DEMO: 'maybe' }, /DEMO must be boolean/],
    [{ RATE_LIMIT_MAX: '0' }, /RATE_LIMIT_MAX must be >= 1/],
    [{ LOG_LEVEL: 'loud' }, /LOG_LEVEL must be one of fatal, error, warn, info, debug, trace, silent/],
    [{ BASE_PATH: 'api/' }, /BASE_PATH must match pattern/],
    [{ ADMIN_TOKEN: 'short' }, /ADMIN_TOKEN must NOT have fewer than 16 characters/],
    [{ WEBHOOK_MAX_ATTEMPTS: '-2' }, /WEBHOOK_MAX_ATTEMPTS/],
    [{ MAX_CONNECTIONS: '0' }, /MAX_CONNECTIONS must be >= 1/],
    [{ DATABASE_URL: 'mysql://x' }, /DATABASE_URL must match pattern/],
    [{ REDIS_URL: 'localhost:6379' }, /REDIS_URL must match pattern/],
    [{ HEADERS_TIMEOUT_MS: '60000' }, /HEADERS_TIMEOUT_MS must not be longer than REQUEST_TIMEOUT_MS/]
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

t.test('.env.example lists every variable the server reads', async (t) => {
  const { readFileSync } = await import('node:fs')
  const { EnvSchema } = await import('../config.js')
  const listed = readFileSync(new URL('../.env.example', import.meta.url), 'utf8').split('\n')
    .filter((line) => /^[A-Z_]+=/.test(line)).map((line) => line.split('=')[0])
  t.same([...listed].sort(), Object.keys(EnvSchema.properties).sort())
})
