import autocannon from 'autocannon'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { openSqliteStore } from '../db/store.js'
import { loadFixture } from '../services/fixtures.js'
import { startProcess, type ServerProcess } from './processes.js'
import { percentile } from './stats.js'

export const TOKEN = 'bench-token-0123456789'
export const WORKSPACE = 'bench0000000000000000000'
const PIPELINES = ['Backlog', 'Doing', 'Review', 'Done']
export const CONNECTIONS = 50

/** The HTTP cases: a 1,000-issue board and one issue's data, both unchanged while measured. */
export const CASES = [
  { name: 'GET board, 1,000 issues', path: '/p1/repositories/1/board' },
  { name: 'GET issue data', path: '/p1/repositories/1/issues/500' }
]

/** The benchmark's data: one user, one repository, 1,000 issues over four pipelines. */
export function benchFixture (issues = 1000) {
  return {
    users: [{ login: 'bench', token: TOKEN }],
    repositories: [{ id: 1, owner: 'bench', name: 'bench', permissions: { bench: 'admin' } }],
    workspaces: [{ id: WORKSPACE, name: 'Bench', repositories: [1], pipelines: PIPELINES }],
    issues: Array.from({ length: issues }, (_, i) => ({
      repo_id: 1,
      number: i + 1,
      title: `Issue ${i + 1}: a title of ordinary length`,
      ...(i % 3 === 0 ? { estimate: 3 } : {}),
      pipelines: { [WORKSPACE]: PIPELINES[i % 4] }
    }))
  }
}

interface Load { rps: number, p50: number, p99: number }

async function load (url: string, connections: number, seconds: number): Promise<Load> {
  const result = await autocannon({ url, connections, duration: seconds, headers: { 'x-authentication-token': TOKEN } })
  if (result.non2xx > 0 || result.errors > 0 || result.timeouts > 0) {
    throw new Error(`${url}: ${result.non2xx} non-2xx, ${result.errors} errors, ${result.timeouts} timeouts`)
  }
  return { rps: result.requests.average, p50: result.latency.p50, p99: result.latency.p99 }
}

/** All connections at once, spread evenly over the instances. */
async function loadAll (urls: string[], path: string, seconds: number): Promise<Load> {
  const parts = await Promise.all(urls.map(async (url) => await load(`${url}${path}`, CONNECTIONS / urls.length, seconds)))
  return { rps: parts.reduce((sum, p) => sum + p.rps, 0), p50: Math.max(...parts.map((p) => p.p50)), p99: Math.max(...parts.map((p) => p.p99)) }
}

const mean = (values: number[]) => values.reduce((a, b) => a + b, 0) / values.length

/**
 * One case, measured in alternating rounds against a bare node:http server (its own process)
 * answering the same bytes, so both see the same machine at the same time.
 */
/** One HTTP case against the bare server: a row of the table `npm run bench` prints. */
export interface HttpRow { label: string, bytes: number, rps: number, bareRps: number, ratio: number, low: number, high: number, p50: number, p99: number }

/** The HTTP rows as one Markdown table, every engine and instance count together. */
export function httpTable (rows: HttpRow[], rounds: number): string[] {
  return [
    `| case (${CONNECTIONS} connections) | API req/s | bare node:http req/s | ratio (median of ${rounds} rounds) | range over rounds | API p50 / p99 |`,
    '|---|---|---|---|---|---|',
    ...rows.map((r) => `| ${r.label} (${r.bytes.toLocaleString('en')} bytes) | ${r.rps.toFixed(0)} | ${r.bareRps.toFixed(0)} | **${r.ratio.toFixed(2)}** | ${r.low.toFixed(2)}-${r.high.toFixed(2)} | ${r.p50.toFixed(1)} / ${r.p99.toFixed(1)} ms |`)
  ]
}

export async function compare (label: string, urls: string[], path: string, seconds: number, rounds: number): Promise<HttpRow> {
  const sample = await fetch(`${urls[0]}${path}`, { headers: { 'x-authentication-token': TOKEN } })
  const body = Buffer.from(await sample.arrayBuffer())
  if (sample.status !== 200) throw new Error(`${path}: ${sample.status} ${body.toString()}`)
  const folder = mkdtempSync(join(tmpdir(), 'bench-'))
  writeFileSync(join(folder, 'body'), body)
  const bare = await startProcess('./bare-process.js', { BENCH_BODY_FILE: join(folder, 'body') })
  const ours: Load[] = []
  const theirs: Load[] = []
  try {
    // One round each first, not counted: both reach steady state (JIT tiers, socket buffers) before timing.
    await loadAll(urls, path, seconds)
    await loadAll([bare.url], path, seconds)
    for (let round = 0; round < rounds; round++) {
      ours.push(await loadAll(urls, path, seconds))
      theirs.push(await loadAll([bare.url], path, seconds))
    }
  } finally {
    await bare.stop()
    rmSync(folder, { recursive: true, force: true })
  }
  const [a, b] = [mean(ours.map((l) => l.rps)), mean(theirs.map((l) => l.rps))]
  // Each round is compared with the bare round right after it, and the median taken: the machine's
  // speed drifts between rounds, and a ratio of means would mix rounds run at different speeds.
  if (process.env.BENCH_VERBOSE !== undefined) console.log(`  ${label}: rounds ${ours.map((l, i) => (l.rps / theirs[i].rps).toFixed(2)).join(' ')}`)
  const ratios = ours.map((l, i) => l.rps / theirs[i].rps).sort((x, y) => x - y)
  const ratio = percentile(ratios, 0.5)
  const [low, high] = [ratios[0], ratios[ratios.length - 1]]
  return { label, bytes: body.length, rps: a, bareRps: b, ratio, low, high, p50: mean(ours.map((l) => l.p50)), p99: mean(ours.map((l) => l.p99)) }
}

/** Starts `count` API instances with these options, each its own process. */
export async function startInstances (count: number, options: Record<string, unknown>): Promise<ServerProcess[]> {
  return await Promise.all(Array.from({ length: count }, async () => await startProcess('./app-process.js', { BENCH_APP_OPTIONS: JSON.stringify(options) })))
}

/**
 * What Fastify alone reaches for issue data: a route answering the same bytes and headers (ETag,
 * rate limit) with no hooks of ours, against the same bare server. What our hooks can gain is the
 * distance between this row and the API's.
 */
async function fastifyCeiling (sourceUrl: string, seconds: number, rounds: number): Promise<HttpRow> {
  const fastify = await startProcess('./fastify-process.js', { BENCH_SOURCE_URL: sourceUrl, BENCH_TOKEN: TOKEN })
  try {
    return await compare('Fastify alone: a route answering issue data\'s bytes and headers', [fastify.url], CASES[1].path, seconds, rounds)
  } finally {
    await fastify.stop()
  }
}

/** The board and issue cases on a SQLite file. */
export async function benchHttp (seconds: number, rounds: number): Promise<HttpRow[]> {
  const folder = mkdtempSync(join(tmpdir(), 'bench-db-'))
  const file = join(folder, 'bench.db')
  const store = await openSqliteStore(file)
  await loadFixture(store, benchFixture())
  await store.close()
  const [instance] = await startInstances(1, { database: file })
  try {
    const rows: HttpRow[] = []
    for (const { name, path } of CASES) rows.push(await compare(`SQLite, ${name}`, [instance.url], path, seconds, rounds))
    rows.push(await fastifyCeiling(`${instance.url}${CASES[1].path}`, seconds, rounds))
    return rows
  } finally {
    await instance.stop()
    rmSync(folder, { recursive: true, force: true })
  }
}
