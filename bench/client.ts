import { closeSync, fdatasyncSync, mkdtempSync, openSync, rmSync, writeFileSync, writeSync } from 'node:fs'
import { Agent, request } from 'node:http'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { performance } from 'node:perf_hooks'
import { startProcess } from './processes.js'
import { percentile } from './stats.js'

/**
 * The client of the one-at-a-time timings (writes, the read after a write): node:http's own, over
 * one kept-alive connection. `fetch` costs the client itself 0.5-0.8 ms a request at p50 and 5 ms at
 * p99 against a bare server on a 2-core machine, more than the goals it would time.
 */
const agent = new Agent({ keepAlive: true, maxSockets: 1 })

export interface Answer { status: number, body: Buffer, ms: number }

/** One request, timed from its start to its answer's last byte. */
export async function timedRequest (url: string, method: string, headers: Record<string, string>, body?: unknown): Promise<Answer> {
  const payload = body === undefined ? undefined : JSON.stringify(body)
  const started = performance.now()
  return await new Promise<Answer>((resolve, reject) => {
    const req = request(url, { method, agent, headers: payload === undefined ? headers : { ...headers, 'content-length': Buffer.byteLength(payload) } }, (res) => {
      const chunks: Buffer[] = []
      res.on('data', (chunk: Buffer) => chunks.push(chunk))
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks), ms: performance.now() - started }))
      res.on('error', reject)
    })
    req.on('error', reject)
    req.setTimeout(60_000, () => req.destroy(new Error(`${method} ${url}: no answer within 60 s`)))
    req.end(payload)
  })
}

/** p50, p90, p99 and the largest of a list of times, in ms. */
export function spread (times: number[]): string {
  const sorted = [...times].sort((a, b) => a - b)
  const at = (p: number) => percentile(sorted, p).toFixed(2)
  return `p50 ${at(0.5)} ms, p90 ${at(0.9)} ms, p99 ${at(0.99)} ms, max ${sorted[sorted.length - 1].toFixed(1)} ms`
}

/**
 * The same requests' floor in the same run: a bare node:http server in its own process answering
 * `answer`'s bytes, asked `count` times the same way (after 20 not counted), so a write's figures
 * read against what the machine and the client cost at that moment.
 */
export async function bareFloor (answer: Buffer, method: string, headers: Record<string, string>, body: unknown, count: number): Promise<number[]> {
  const folder = mkdtempSync(join(tmpdir(), 'bench-floor-'))
  try {
    writeFileSync(join(folder, 'body'), answer)
    const bare = await startProcess('./bare-process.js', { BENCH_BODY_FILE: join(folder, 'body') })
    try {
      const times: number[] = []
      for (let i = -20; i < count; i++) {
        const { ms } = await timedRequest(`${bare.url}/`, method, headers, body)
        if (i >= 0) times.push(ms)
      }
      return times
    } finally {
      await bare.stop()
    }
  } finally {
    rmSync(folder, { recursive: true, force: true })
  }
}

/**
 * The disk's part of a durable commit, in the same run: `count` writes of one 4 KB page to a file
 * in the system's temporary folder (where the bench keeps its SQLite files), each followed by
 * fdatasync, as the least a commit waits for before it is acknowledged.
 */
export function syncFloor (count: number): number[] {
  const folder = mkdtempSync(join(tmpdir(), 'bench-sync-'))
  try {
    const fd = openSync(join(folder, 'wal'), 'w')
    try {
      const page = Buffer.alloc(4096, 7)
      const times: number[] = []
      for (let i = -20; i < count; i++) {
        const start = performance.now()
        writeSync(fd, page)
        fdatasyncSync(fd)
        if (i >= 0) times.push(performance.now() - start)
      }
      return times
    } finally {
      closeSync(fd)
    }
  } finally {
    rmSync(folder, { recursive: true, force: true })
  }
}
