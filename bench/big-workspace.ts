import autocannon from 'autocannon'
import { randomBytes } from 'node:crypto'
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { performance } from 'node:perf_hooks'
import { BIG_TOKEN, BIG_WORKSPACE, bigWorkspaceFixture } from './big-fixture.js'
import { boardPageFigures, CHROMIUM } from './board-page.js'
import { type Answer, bareFloor, syncFloor, timedRequest } from './client.js'
import { againstFloor, floorLine } from './loaded-floor.js'
import { compare, type HttpRow } from './http.js'
import { admin } from './postgres.js'
import { adminImport, hostedImport } from './big-imports.js'
import { peakMb, rssMb, startProcess, type ServerProcess } from './processes.js'
import { percentile, random } from './stats.js'

const headers = { 'x-authentication-token': BIG_TOKEN, 'content-type': 'application/json' }
/** The first repository of the big workspace: a tenth of its issues (5,000 at full size). */
const REPO = 4700

/**
 * The body of issue 47's GraphQL case: `searchIssuesByPipeline`, the first 50 cards of the fullest
 * pipeline (about a fifth of the workspace) with a label filter, asking for what a client showing a
 * filtered column shows.
 */
export function graphqlPageBody (): string {
  const fields = 'id number title state htmlUrl estimate { value } repository { ghId name } assignees { nodes { login } } labels { nodes { name color } } ' +
    `pipelineIssue(workspaceId: "${BIG_WORKSPACE}") { pipeline { id name } }`
  const query = `{ searchIssuesByPipeline(pipelineId: "big-pipeline-01", filters: { labels: { in: ["bug"] } }, first: 50) { totalCount pageInfo { hasNextPage endCursor } nodes { ${fields} } } }`
  return JSON.stringify({ query })
}

/**
 * Issue 47's GraphQL page (`graphqlPageBody`) at 50 connections for `seconds`. Three lines: with
 * nothing written (every request after the first a kept answer), in `rounds` rounds alternating
 * with the same requests to a bare server answering the same bytes and headers (the floor); the
 * first read after a write (one request at a time: the document run); and 50 connections while an
 * estimate is written every 250 ms (each write makes every client miss at once).
 */
async function graphqlPage (server: ServerProcess, seconds: number, rounds: number): Promise<string[]> {
  const { url } = server
  const body = graphqlPageBody()
  const first = await fetch(`${url}/public/graphql`, { method: 'POST', headers, body })
  const json = await first.json() as { data?: { searchIssuesByPipeline: { totalCount: number, nodes: unknown[] } }, errors?: unknown[] }
  if (first.status !== 200 || json.errors !== undefined) throw new Error(`GraphQL ${first.status}: ${JSON.stringify(json).slice(0, 300)}`)
  const found = json.data!.searchIssuesByPipeline
  const loaded = async () => {
    const result = await autocannon({ url: `${url}/public/graphql`, connections: 50, duration: seconds, headers, method: 'POST', body })
    const failed = result.non2xx + result.errors + result.timeouts
    return `${result.requests.average.toFixed(0)} req/s, p50 ${result.latency.p50.toFixed(1)} ms, p99 ${result.latency.p99.toFixed(1)} ms` +
      `${failed > 0 ? `; ${failed} failed` : ''}`
  }
  const kept = await againstFloor(`${url}/public/graphql`, server.pid, 'POST', headers, body, 50, seconds, rounds)
  const lines = [`50 connections, kept answers (${found.nodes.length} of ${found.totalCount.toLocaleString('en')} labelled cards): ${floorLine(kept)}`]
  const estimate = async (i: number) => await call(`${url}/p1/repositories/${REPO}/issues/${1 + (i % 50)}/estimate`, 'PUT', { estimate: i % 7 })
  const afterWrite: number[] = []
  for (let i = 0; i < 60; i++) {
    await estimate(i)
    const ms = await call(`${url}/public/graphql`, 'POST', JSON.parse(body))
    if (i >= 10) afterWrite.push(ms)
  }
  lines.push(`first read after a write, one at a time: ${stats(afterWrite)} (50 after 10 not counted)`)
  const writing = { on: true }
  let writes = 0
  const writer = (async () => {
    while (writing.on) {
      await estimate(writes++)
      await new Promise((resolve) => setTimeout(resolve, 250))
    }
  })()
  const underWrites = await loaded()
  writing.on = false
  await writer
  lines.push(`50 connections with a write every 250 ms (${writes} writes): ${underWrites}`)
  return lines
}

/** Issue 47's board-page goals, on the workspace's board (every repository) as its owner opens it. */
async function boardPage (label: string, url: string, issues: number): Promise<string[]> {
  if (!existsSync(CHROMIUM)) return [`${label}: board page skipped (no Chromium at ${CHROMIUM})`]
  const f = await boardPageFigures(url, BIG_TOKEN)
  const ms = (n: number) => `${Math.round(n).toLocaleString('en')} ms`
  return [
    `${label}: board page, the workspace's ${issues.toLocaleString('en')} cards: "Sign in" to a card in every column ${ms(f.usable)} (goal: 1,500 ms); ` +
      `every read done after ${ms(f.settled)} (${f.requests} requests)`,
    `${label}: board page: longest task while scrolling the fullest column ${ms(f.scroll)} (goal: 50 ms; ${f.scrollReads} reads started meanwhile); ` +
      `a filter keystroke to settled cards, longest ${ms(Math.max(...f.keystrokes))} (${f.keystrokes.map((k) => Math.round(k)).join(', ')} ms; goal: 100 ms); ` +
      `to its next frame painted (Event Timing, < 16 ms shown as 0) ${f.painted.map((k) => Math.round(k)).join(', ')} ms`
  ]
}

/** Starts the API on `options` and times it from spawn to listening (it listens once ready). */
async function timedStart (options: Record<string, unknown>): Promise<{ server: ServerProcess, seconds: number }> {
  const started = performance.now()
  const server = await startProcess('./app-process.js', { BENCH_APP_OPTIONS: JSON.stringify(options) }, 600_000)
  const seconds = (performance.now() - started) / 1000
  const ready = await fetch(`${server.url}/ready`)
  if (ready.status !== 200) throw new Error(`/ready answered ${ready.status}`)
  return { server, seconds }
}

/** One timed request with the bench's one-at-a-time client (`client.ts`); a 4xx other than 409 or a 5xx stops the case. */
async function call (url: string, method: string, body?: unknown): Promise<number> {
  const answer = await timedRequest(url, method, headers, body)
  if (answer.status >= 400 && answer.status !== 409) throw new Error(`${method} ${url}: ${answer.status}`)
  last = answer
  return answer.ms
}
/** The last answer `call` had: the bytes the floor's bare server answers. */
let last: Answer | undefined

const stats = (times: number[]) => {
  const sorted = [...times].sort((a, b) => a - b)
  return `p50 ${percentile(sorted, 0.5).toFixed(1)} ms, p99 ${percentile(sorted, 0.99).toFixed(1)} ms`
}
const mean = (times: number[]) => times.reduce((a, b) => a + b, 0) / times.length

/**
 * Moves of random issues of the first repository to a random index of its fullest pipeline, over
 * HTTP, on the big workspace and on a small one (10 issues a repository) in turns: each round moves
 * once on each, the first of the two alternating, so that what else the machine does falls on both
 * alike. The mean of each in ms.
 */
async function movesSideBySide (bigUrl: string, issuesPerRepo: number, smallUrl: string, count: number): Promise<{ big: number, small: number }> {
  const next = random(11)
  const pipeline = 'big-pipeline-01'
  const times = { big: [] as number[], small: [] as number[] }
  const move = async (url: string, perRepo: number): Promise<number> => {
    const number = 1 + Math.floor(next() * perRepo)
    const position = Math.floor(next() * perRepo / 4)
    return await call(`${url}/p2/workspaces/${BIG_WORKSPACE}/repositories/${REPO}/issues/${number}/moves`, 'POST', { pipeline_id: pipeline, position })
  }
  for (let i = -20; i < count; i++) {
    const order = i % 2 === 0 ? ['big', 'small'] as const : ['small', 'big'] as const
    for (const which of order) {
      const ms = which === 'big' ? await move(bigUrl, issuesPerRepo) : await move(smallUrl, 10)
      if (i >= 0) times[which].push(ms)
    }
  }
  return { big: mean(times.big), small: mean(times.small) }
}

/** The reads and writes measured on a started big workspace. */
async function measure (label: string, server: ServerProcess, issues: number, seconds: number, rounds: number,
  secondInstance?: () => Promise<ServerProcess>): Promise<{ lines: string[], rows: HttpRow[] }> {
  const lines: string[] = []
  const board = `/p1/repositories/${REPO}/board`
  const rows = [await compare(`${label}, big workspace: GET board of a ${(issues / 10).toLocaleString('en')}-issue repository, cached`, [server.url], board, seconds, rounds)]
  const page = await call(`${server.url}${board}?limit=50`, 'GET')
  lines.push(`${label}: GET that board's first page (?limit=50, uncached) ${page.toFixed(1)} ms`)
  // Each write moves the change counter: the next read builds the board again.
  const afterWrite: number[] = []
  for (let i = 0; i < 100; i++) {
    await call(`${server.url}/p1/repositories/${REPO}/issues/${1 + (i % 50)}/estimate`, 'PUT', { estimate: i % 7 })
    afterWrite.push(await call(`${server.url}${board}`, 'GET'))
  }
  lines.push(`${label}: GET the ${(issues / 10).toLocaleString('en')}-issue board, first read after a write: ${stats(afterWrite)} (100 writes)`)
  // A write to another repository of the workspace leaves this board's kept answer standing.
  const afterOther: number[] = []
  for (let i = 0; i < 100; i++) {
    await call(`${server.url}/p1/repositories/${REPO + 2}/issues/${1 + (i % 50)}/estimate`, 'PUT', { estimate: i % 7 })
    afterOther.push(await call(`${server.url}${board}`, 'GET'))
  }
  lines.push(`${label}: GET the same board, first read after a write to another repository: ${stats(afterOther)} (100 writes)`)
  if (secondInstance !== undefined) {
    // Two instances on one database: each write on the first, then the board read on the second (which hears what the write reached).
    const second = await secondInstance()
    try {
      await call(`${second.url}${board}`, 'GET')
      const onSecond: number[] = []
      for (let i = 0; i < 100; i++) {
        await call(`${server.url}/p1/repositories/${REPO}/issues/${1 + (i % 50)}/estimate`, 'PUT', { estimate: (i + 3) % 7 })
        onSecond.push(await call(`${second.url}${board}`, 'GET'))
      }
      lines.push(`${label}: GET the same board on a second instance, first read after a write on the first: ${stats(onSecond)} (100 writes)`)
    } finally {
      await second.stop()
    }
  }
  // Dependencies from a lower to a higher number of repository 4701: every stored edge runs that way too, so none closes a cycle.
  const inserts: number[] = []
  const pairs = Math.floor((issues / 10 - 1) / 2)
  for (let i = 0; i < 200; i++) {
    const blocking = { repo_id: REPO + 1, issue_number: 2 + 2 * (i % pairs) }
    const blocked = { repo_id: REPO + 1, issue_number: 3 + 2 * (i % pairs) }
    const ms = await call(`${server.url}/p1/dependencies`, 'POST', { blocking, blocked })
    if (i >= 20) inserts.push(ms)
  }
  lines.push(`${label}: POST /p1/dependencies with ${Math.min(2000, Math.floor(issues / 25)).toLocaleString('en')} edges stored, timed over HTTP: ${stats(inserts)} (180 after 20 not counted)`)
  const floor = await bareFloor(last!.body, 'POST', headers, { blocking: { repo_id: REPO + 1, issue_number: 2 }, blocked: { repo_id: REPO + 1, issue_number: 3 } }, inserts.length)
  lines.push(`${label}: the same requests to a bare node:http server answering the same bytes (the floor): ${stats(floor)}`)
  lines.push(`${label}: a 4 KB write and fdatasync, the disk's least part of a durable commit, as often: ${stats(syncFloor(inserts.length))}`)
  for (const line of await graphqlPage(server, seconds, rounds)) lines.push(`${label}: GraphQL searchIssuesByPipeline, first 50 with a label filter, ${line}`)
  lines.push(...await boardPage(label, server.url, issues))
  lines.push(`${label}: server RSS after these reads and writes ${rssMb(server.pid).toFixed(0)} MB, peak ${peakMb(server.pid).toFixed(0)} MB`)
  return { lines, rows }
}

/**
 * Issue 47's big workspace (`BENCH_BIG_ISSUES`, default 50,000) on SQLite and, when `postgresUrl`
 * answers, PostgreSQL: loading it from SEED_FILE, restarting to ready, loading it through the admin
 * import and a hosted import (bench/big-imports.ts), the cached 5,000-issue
 * board against bare node:http, the first read after a write (on PostgreSQL also on a second
 * instance, after a write on the first), moves at 50,000 vs 100 issues,
 * dependency inserts over HTTP, a GraphQL page with a label filter, the board page in Chromium
 * (sign-in, scrolling, filtering: bench/board-page.ts), and the server's memory.
 */
export async function benchBigWorkspace (seconds: number, rounds: number, postgresUrl?: string): Promise<{ lines: string[], rows: HttpRow[] }> {
  const issues = Number(process.env.BENCH_BIG_ISSUES ?? 50_000)
  const folder = mkdtempSync(join(tmpdir(), 'bench-big-'))
  const lines: string[] = []
  const rows: HttpRow[] = []
  try {
    const seed = join(folder, 'big.json')
    writeFileSync(seed, JSON.stringify(bigWorkspaceFixture(issues)))
    const small = join(folder, 'small.json')
    writeFileSync(small, JSON.stringify(bigWorkspaceFixture(100)))
    const engines: Array<{ label: string, options: () => Promise<{ options: Record<string, unknown>, drop: () => Promise<void> }> }> = [
      { label: 'SQLite', options: async () => ({ options: { database: join(folder, `${randomBytes(4).toString('hex')}.db`) }, drop: async () => {} }) }
    ]
    if (postgresUrl !== undefined) {
      engines.push({
        label: 'PostgreSQL',
        options: async () => {
          const schema = `bench_${randomBytes(4).toString('hex')}`
          await admin(`CREATE SCHEMA ${schema}`, postgresUrl)
          return { options: { databaseUrl: postgresUrl, databaseSchema: schema }, drop: async () => await admin(`DROP SCHEMA ${schema} CASCADE`, postgresUrl) }
        }
      })
    }
    for (const engine of engines) {
      const { options, drop } = await engine.options()
      try {
        const loaded = await timedStart({ ...options, seedFile: seed })
        lines.push(`${engine.label}: start loading the ${issues.toLocaleString('en')}-issue SEED_FILE, to ready: ${loaded.seconds.toFixed(1)} s, peak RSS ${peakMb(loaded.server.pid).toFixed(0)} MB`)
        await loaded.server.stop()
        const { server, seconds: start } = await timedStart(options)
        lines.push(`${engine.label}: start with it stored, to ready: ${start.toFixed(1)} s`)
        try {
          const second = engine.label === 'PostgreSQL' ? async () => (await timedStart(options)).server : undefined
          const measured = await measure(engine.label, server, issues, seconds, rounds, second)
          lines.push(...measured.lines)
          rows.push(...measured.rows)
          const smallOptions = await engine.options()
          try {
            const other = await timedStart({ ...smallOptions.options, seedFile: small })
            try {
              const { big, small: few } = await movesSideBySide(server.url, issues / 10, other.server.url, 200)
              lines.push(`${engine.label}: move to a random index over HTTP, ${issues.toLocaleString('en')} vs 100 issues in turns (mean): ${big.toFixed(2)} ms vs ${few.toFixed(2)} ms, ${(big / few).toFixed(2)}×`)
            } finally {
              await other.server.stop()
            }
          } finally {
            await smallOptions.drop()
          }
          // The other two ways in, after the measures (the source's reads would count in its memory), each into an
          // empty database of its own: the same file through the admin API, and a hosted import reading this server.
          const empty = async (extra: Record<string, unknown>): Promise<ServerProcess> => {
            const fresh = await engine.options()
            const started = await timedStart({ ...fresh.options, ...extra })
            return { ...started.server, stop: async () => { await started.server.stop(); await fresh.drop() } }
          }
          lines.push(await adminImport(engine.label, empty, seed))
          lines.push(await hostedImport(engine.label, empty, server.url))
          await server.stop()
        } finally {
          await server.stop()
        }
      } finally {
        await drop()
      }
    }
  } finally {
    rmSync(folder, { recursive: true, force: true })
  }
  return { lines, rows }
}
