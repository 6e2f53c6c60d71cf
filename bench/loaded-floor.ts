import autocannon from 'autocannon'
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { request } from 'node:http'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { startProcess } from './processes.js'
import { percentile } from './stats.js'

/** What one loaded round gave: throughput, latency and the serving process's CPU time per request. */
export interface Round { rps: number, p50: number, p99: number, cpuMs: number, failed: number }

/** Headers node:http writes itself, or that would make the bare server's answer differ in kind. */
const OWN_HEADERS = new Set(['date', 'connection', 'keep-alive', 'transfer-encoding'])

/** A process's CPU time so far (user and system), in ms, from /proc (Linux; clock ticks of 10 ms). */
export function cpuMs (pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
  // The fields after the command's name, which sits in parentheses and may hold spaces.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
  return (Number(fields[11]) + Number(fields[12])) * 10
}

/** One request's status, headers (in their order, as sent) and bytes. */
interface Sample { status: number, headers: Array<[string, string]>, body: Buffer }

async function sample (url: string, method: string, headers: Record<string, string>, body?: string): Promise<Sample> {
  return await new Promise((resolve, reject) => {
    const req = request(url, { method, headers: body === undefined ? headers : { ...headers, 'content-length': Buffer.byteLength(body) } }, (res) => {
      const chunks: Buffer[] = []
      res.on('data', (chunk: Buffer) => chunks.push(chunk))
      res.on('end', () => {
        const pairs: Array<[string, string]> = []
        for (let i = 0; i < res.rawHeaders.length; i += 2) pairs.push([res.rawHeaders[i].toLowerCase(), res.rawHeaders[i + 1]])
        resolve({ status: res.statusCode ?? 0, headers: pairs, body: Buffer.concat(chunks) })
      })
      res.on('error', reject)
    })
    req.on('error', reject)
    req.end(body)
  })
}

async function round (url: string, pid: number, method: 'GET' | 'POST', headers: Record<string, string>, body: string | undefined, connections: number, seconds: number): Promise<Round> {
  const before = cpuMs(pid)
  const result = await autocannon({ url, connections, duration: seconds, headers, method, ...(body === undefined ? {} : { body }) })
  const used = cpuMs(pid) - before
  return {
    rps: result.requests.average,
    p50: result.latency.p50,
    p99: result.latency.p99,
    cpuMs: used / Math.max(1, result.requests.total),
    failed: result.non2xx + result.errors + result.timeouts
  }
}

export interface FloorComparison {
  bytes: number
  ours: Round[]
  floor: Round[]
}

/**
 * A loaded request against its floor in the same run: `rounds` alternating rounds of `seconds` at
 * `connections` (one of each first, not counted), of this request to the API (process `pid`) and
 * of the same request to a bare node:http server in its own process answering the bytes and
 * headers the API answered it with (bare-process.ts). Each round also gives the serving process's
 * CPU time per request.
 */
export async function againstFloor (apiUrl: string, pid: number, method: 'GET' | 'POST', headers: Record<string, string>, body: string | undefined,
  connections: number, seconds: number, rounds: number): Promise<FloorComparison> {
  const answer = await sample(apiUrl, method, headers, body)
  if (answer.status !== 200) throw new Error(`${method} ${apiUrl}: ${answer.status} ${answer.body.toString().slice(0, 300)}`)
  const folder = mkdtempSync(join(tmpdir(), 'bench-floor-'))
  try {
    writeFileSync(join(folder, 'body'), answer.body)
    writeFileSync(join(folder, 'headers'), JSON.stringify(answer.headers.filter(([name]) => !OWN_HEADERS.has(name))))
    const bare = await startProcess('./bare-process.js', { BENCH_BODY_FILE: join(folder, 'body'), BENCH_HEADERS_FILE: join(folder, 'headers') })
    try {
      const path = new URL(apiUrl).pathname
      const ours: Round[] = []
      const floor: Round[] = []
      for (let i = -1; i < rounds; i++) {
        const a = await round(apiUrl, pid, method, headers, body, connections, seconds)
        const b = await round(`${bare.url}${path}`, bare.pid, method, headers, body, connections, seconds)
        if (i >= 0) { ours.push(a); floor.push(b) }
      }
      return { bytes: answer.body.length, ours, floor }
    } finally {
      await bare.stop()
    }
  } finally {
    rmSync(folder, { recursive: true, force: true })
  }
}

const median = (values: number[]): number => percentile([...values].sort((a, b) => a - b), 0.5)
const ms = (n: number) => n.toFixed(1)

/** The comparison as one line: each side's req/s, p50 / p99 (medians of the rounds), CPU per request, and the p99 ratio. */
export function floorLine (c: FloorComparison): string {
  const side = (rounds: Round[]) => {
    const failed = rounds.reduce((sum, r) => sum + r.failed, 0)
    return `${median(rounds.map((r) => r.rps)).toFixed(0)} req/s, p50 ${ms(median(rounds.map((r) => r.p50)))} / p99 ${ms(median(rounds.map((r) => r.p99)))} ms ` +
      `(p99s ${rounds.map((r) => ms(r.p99)).join(', ')}), CPU ${median(rounds.map((r) => r.cpuMs)).toFixed(3)} ms a request${failed > 0 ? `, ${failed} failed` : ''}`
  }
  const ratios = c.ours.map((r, i) => r.p99 / c.floor[i].p99)
  return `${side(c.ours)}; the same requests to a bare node:http server answering the same ${c.bytes.toLocaleString('en')} bytes and headers (the floor): ${side(c.floor)}; ` +
    `p99 ${median(ratios).toFixed(2)}× the floor's (median of ${ratios.length} rounds, ${Math.min(...ratios).toFixed(2)}-${Math.max(...ratios).toFixed(2)})`
}
