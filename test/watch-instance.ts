import { buildApp } from '../app.js'
import { ADMIN_TOKEN } from './helper.js'

// One instance in a process of its own, for tests that stop and kill it (test/counter-watch.test.ts):
// it prints its address once listening.
const app = await buildApp({
  databaseUrl: process.env.WATCH_DATABASE_URL,
  databaseSchema: process.env.WATCH_SCHEMA,
  databaseWatch: JSON.parse(process.env.WATCH_TIMINGS ?? '{}'),
  adminToken: ADMIN_TOKEN,
  metricsToken: process.env.WATCH_METRICS_TOKEN,
  documentation: false,
  rateLimit: false
})
process.stdout.write(`listening ${await app.listen({ host: '127.0.0.1', port: 0 })}\n`)
