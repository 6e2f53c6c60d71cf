import { randomBytes } from 'node:crypto'
import { readFileSync } from 'node:fs'
import { performance } from 'node:perf_hooks'
import { BIG_REPOSITORIES, BIG_TOKEN } from './big-fixture.js'
import { peakMb, type ServerProcess } from './processes.js'

const ADMIN = 'bench-admin-token-0123456789'
const admin = { authorization: `Bearer ${ADMIN}`, 'content-type': 'application/json' }
/** The big fixture's repositories (big-fixture.ts numbers them from 4700). */
const REPOSITORIES = Array.from({ length: BIG_REPOSITORIES }, (_, i) => 4700 + i)

export type StartServer = (options: Record<string, unknown>) => Promise<ServerProcess>

/** `POST /admin/import` of the fixture file into an empty server: the request's time and the server's peak memory. */
export async function adminImport (label: string, start: StartServer, seedFile: string): Promise<string> {
  const server = await start({ adminToken: ADMIN })
  try {
    const body = readFileSync(seedFile)
    const started = performance.now()
    const res = await fetch(`${server.url}/admin/import`, { method: 'POST', headers: admin, body })
    const text = await res.text()
    if (res.status !== 200) throw new Error(`admin import: ${res.status} ${text.slice(0, 300)}`)
    const seconds = (performance.now() - started) / 1000
    return `${label}: admin import of the same file (${(body.length / 1e6).toFixed(1)} MB) into an empty server: ${seconds.toFixed(1)} s, peak RSS ${peakMb(server.pid).toFixed(0)} MB`
  } finally {
    await server.stop()
  }
}

/**
 * A hosted import of the big workspace's repositories into an empty server, from `source` (this
 * API on the stored workspace: it answers the hosted service's REST API), its rate limit lifted so
 * what is timed is the import's own work; the request count says what the hosted limit would add.
 */
export async function hostedImport (label: string, start: StartServer, source: string): Promise<string> {
  const server = await start({
    adminToken: ADMIN, secretKey: randomBytes(32).toString('base64'), hosts: { allowPrivate: true }, hostedImport: { requestsPerMinute: 1_000_000, backoffMs: 100 }
  })
  try {
    const started = performance.now()
    const res = await fetch(`${server.url}/admin/hosted-imports`, {
      method: 'POST', headers: admin, body: JSON.stringify({ api_url: source, token: BIG_TOKEN, repositories: REPOSITORIES })
    })
    if (res.status !== 202) throw new Error(`hosted import: ${res.status} ${(await res.text()).slice(0, 300)}`)
    const { id } = await res.json() as { id: string }
    const until = started + 600_000
    // The longest the server took to answer a poll while it imported: what any other request waited.
    let longest = 0
    for (;;) {
      const asked = performance.now()
      const job = await (await fetch(`${server.url}/admin/hosted-imports/${id}`, { headers: { ...admin, connection: 'close' } })).json() as
        { state: string, requests: number, issues_placed: number, epics: number, dependencies: number, warnings: string[], error?: string }
      longest = Math.max(longest, performance.now() - asked)
      if (job.state === 'failed') throw new Error(`hosted import failed: ${job.error ?? ''}`)
      if (job.state === 'done') {
        const seconds = (performance.now() - started) / 1000
        const paced = job.requests * 60 / 100
        return `${label}: hosted import of its ${REPOSITORIES.length} repositories into an empty server, rate limit lifted: ${seconds.toFixed(1)} s ` +
          `(${job.requests} requests, ${paced.toFixed(0)} s more at the hosted 100 a minute; ${job.issues_placed.toLocaleString('en')} issues placed, ` +
          `${job.epics} epics, ${job.dependencies.toLocaleString('en')} dependencies, ${job.warnings.length} warnings), peak RSS ${peakMb(server.pid).toFixed(0)} MB; ` +
          `the longest answer to a poll meanwhile ${longest.toFixed(0)} ms`
      }
      if (performance.now() > until) throw new Error('hosted import: not done within 10 minutes')
      await new Promise((resolve) => setTimeout(resolve, 200))
    }
  } finally {
    await server.stop()
  }
}
