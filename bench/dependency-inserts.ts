import { randomBytes } from 'node:crypto'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { type Answer, bareFloor, spread, timedRequest } from './client.js'
import { BIG_TOKEN, bigWorkspaceFixture } from './big-fixture.js'
import { admin } from './postgres.js'
import { startProcess } from './processes.js'

const headers = { 'x-authentication-token': BIG_TOKEN, 'content-type': 'application/json' }
/** The second repository of the big workspace, as bench/big-workspace.ts inserts into. */
const REPO = 4701

/**
 * Issue 47's dependency insert alone (`BENCH_ONLY=dependency-inserts`): the big workspace loaded
 * (2,000 edges at 50,000 issues), then `count` inserts over HTTP one at a time, each from an even
 * to the next odd number (no cycle: every stored edge runs from a lower to a higher number),
 * after 50 not counted. More samples than the big-workspace case, so its p99 means something.
 * `BENCH_INSERTS` sets the count, `BENCH_DEPS_ENGINES=sqlite` or `=postgres` runs one engine,
 * `BENCH_CHECKPOINTS=automatic` leaves SQLite's checkpoints in the commits (no worker).
 */
export async function benchDependencyInserts (postgresUrl?: string, count = Number(process.env.BENCH_INSERTS ?? 1000)): Promise<string[]> {
  const issues = Number(process.env.BENCH_BIG_ISSUES ?? 50_000)
  const folder = mkdtempSync(join(tmpdir(), 'bench-deps-'))
  const lines: string[] = []
  try {
    const seed = join(folder, 'big.json')
    writeFileSync(seed, JSON.stringify(bigWorkspaceFixture(issues)))
    const engines: Array<{ label: string, options: () => Promise<{ options: Record<string, unknown>, drop: () => Promise<void> }> }> = [
      // BENCH_CHECKPOINTS=automatic: SQLite's own checkpoint, in the commit, instead of the worker's
      { label: 'SQLite', options: async () => ({ options: { database: join(folder, 'deps.db'), sqliteCheckpoints: process.env.BENCH_CHECKPOINTS !== 'automatic' }, drop: async () => {} }) }
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
    const only = process.env.BENCH_DEPS_ENGINES
    for (const engine of engines.filter((e) => only === undefined || only.split(',').some((name) => e.label.toLowerCase().startsWith(name)))) {
      const { options, drop } = await engine.options()
      try {
        const server = await startProcess('./app-process.js', { BENCH_APP_OPTIONS: JSON.stringify({ ...options, seedFile: seed }) }, 600_000)
        try {
          const pairs = Math.floor((issues / 10 - 1) / 2)
          const times: number[] = []
          let last: Answer | undefined
          const body = (k: number) => ({ blocking: { repo_id: REPO, issue_number: 2 + 2 * k }, blocked: { repo_id: REPO, issue_number: 3 + 2 * k } })
          for (let i = -50; i < Math.min(count, pairs - 50); i++) {
            last = await timedRequest(`${server.url}/p1/dependencies`, 'POST', headers, body(i + 50))
            if (last.status !== 200) throw new Error(`POST /p1/dependencies: ${last.status}`)
            if (i >= 0) times.push(last.ms)
          }
          lines.push(`${engine.label}: POST /p1/dependencies, 2,000 edges stored, over HTTP one at a time: ${spread(times)} (${times.length} after 50 not counted)`)
          const floor = await bareFloor(last!.body, 'POST', headers, body(0), times.length)
          lines.push(`${engine.label}: the same requests to a bare node:http server answering the same bytes: ${spread(floor)}`)
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
  return lines
}
