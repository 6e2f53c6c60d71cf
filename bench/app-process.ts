import '../tick-shape.js'
import { buildApp, type BuildOptions } from '../app.js'

// One instance of the API for the benchmark, loaded after tick-shape as the server is: options from BENCH_APP_OPTIONS (JSON), no rate
// limit worth the name, no request logging (what is measured is the API, not the log).
const options = JSON.parse(process.env.BENCH_APP_OPTIONS ?? '{}') as BuildOptions
const app = await buildApp({ rateLimit: { max: 1e9, timeWindow: 60_000 }, documentation: false, webhooks: { worker: false }, ...options })
const url = await app.listen({ host: '127.0.0.1', port: 0 })
console.log(`listening ${url}`)
process.on('SIGTERM', () => { app.close().then(() => process.exit(0), () => process.exit(1)) })
