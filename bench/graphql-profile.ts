import pg from 'pg'
import { existsSync, mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { performance } from 'node:perf_hooks'
import { buildApp, type BuildOptions } from '../app.js'
import { BIG_TOKEN, BIG_WORKSPACE, bigWorkspaceFixture } from './big-fixture.js'

/**
 * Issue 47's GraphQL document run, in one process: the case's `searchIssuesByPipeline` (first 50
 * of the fullest pipeline, a label filter) after an estimate write, N times (10 more not counted),
 * with every statement timed (as PostgreSQL is sent it, or as SQLite runs it) (statements, sequential waves, time with one in
 * flight) and the process's CPU time per run. Not part of `npm run bench`:
 *
 *   npx tsx bench/graphql-profile.ts <schema> [analyze]
 *
 * PostgreSQL at PROFILE_DATABASE_URL (default postgres://postgres@127.0.0.1:5432/bench_gql), in
 * `schema`: made and loaded with the 50,000-issue fixture when missing, used as stored after.
 * `analyze` runs ANALYZE first. SQLITE_FILE=path runs on SQLite instead (loaded when missing).
 * MISS=vary makes each request miss with a variable nothing reads, no write between. The first
 * answer is written to PROFILE_ANSWER when set (to compare two versions' answers). FULL=1 prints each
 * statement whole (else its first 120 characters).
 */
const url = process.env.PROFILE_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/bench_gql'
const schema = process.argv[2] ?? 'profile'
const sqliteFile = process.env.SQLITE_FILE
const runs = Number(process.env.N ?? 50)
const vary = process.env.MISS === 'vary'

const seed = join(mkdtempSync(join(tmpdir(), 'gql-profile-')), 'big.json')
let fresh = sqliteFile !== undefined && !existsSync(sqliteFile)
if (sqliteFile === undefined) {
  const c = new pg.Client({ connectionString: url })
  await c.connect()
  fresh = (await c.query('SELECT 1 FROM information_schema.schemata WHERE schema_name = $1', [schema])).rowCount === 0
  if (fresh) await c.query(`CREATE SCHEMA ${schema}`)
  await c.end()
}
if (fresh) writeFileSync(seed, JSON.stringify(bigWorkspaceFixture(50_000)))

// Every text a pg client sends, timed to its answer, while `recording`.
const sent: Array<{ text: string, start: number, end: number }> = []
let recording = false
const send = pg.Client.prototype.query
pg.Client.prototype.query = function (this: pg.Client, ...args: unknown[]) {
  const [query] = args
  const out = (send as (...a: unknown[]) => unknown).apply(this, args)
  if (recording && out instanceof Promise) {
    const entry = { text: typeof query === 'string' ? query : String((query as { text?: string }).text), start: performance.now(), end: 0 }
    sent.push(entry)
    const done = () => { entry.end = performance.now() }
    out.then(done, done)
  }
  return out
} as typeof send

// On SQLite every statement runs synchronously in the request: time each one the same way.
if (sqliteFile !== undefined) {
  const Database = (await import('better-sqlite3')).default
  const prepare = Database.prototype.prepare
  Database.prototype.prepare = function (this: InstanceType<typeof Database>, source: string) {
    const stmt = prepare.call(this, source)
    for (const name of ['all', 'get', 'run'] as const) {
      const original = stmt[name] as (...a: unknown[]) => unknown
      ;(stmt as unknown as Record<string, unknown>)[name] = (...a: unknown[]) => {
        if (!recording) return original.apply(stmt, a)
        const entry = { text: source, start: performance.now(), end: 0 }
        try { return original.apply(stmt, a) } finally { entry.end = performance.now(); sent.push(entry) }
      }
    }
    return stmt
  } as typeof prepare
}

const started = performance.now()
const options: BuildOptions = {
  rateLimit: { max: 1e9, timeWindow: 60_000 },
  documentation: false,
  webhooks: { worker: false },
  ...(sqliteFile === undefined ? { databaseUrl: url, databaseSchema: schema } : { database: sqliteFile }),
  ...(fresh ? { seedFile: seed } : {})
}
const app = await buildApp(options)
await app.ready()
console.log(`ready in ${((performance.now() - started) / 1000).toFixed(1)} s (${fresh ? 'loaded' : 'stored'})`)
if (sqliteFile === undefined) {
  const c = new pg.Client({ connectionString: url })
  await c.connect()
  const analyzed = await c.query(`SELECT relname, last_analyze, last_autoanalyze FROM pg_stat_user_tables
    WHERE schemaname = $1 AND relname IN ('placements', 'issues', 'issue_labels')`, [schema])
  console.log(`statistics: ${analyzed.rows.map((r) => `${r.relname} ${r.last_analyze !== null || r.last_autoanalyze !== null ? 'analyzed' : 'none'}`).join(', ')}`)
  if (process.argv.includes('analyze')) {
    await c.query(`SET search_path TO ${schema}`)
    await c.query('ANALYZE')
    console.log('ANALYZE run')
  }
  await c.end()
}

const headers = { 'x-authentication-token': BIG_TOKEN, 'content-type': 'application/json' }
const fields = 'id number title state htmlUrl estimate { value } repository { ghId name } assignees { nodes { login } } labels { nodes { name color } } ' +
  `pipelineIssue(workspaceId: "${BIG_WORKSPACE}") { pipeline { id name } }`
const query = `{ searchIssuesByPipeline(pipelineId: "big-pipeline-01", filters: { labels: { in: ["bug"] } }, first: 50) { totalCount pageInfo { hasNextPage endCursor } nodes { ${fields} } } }`
const times: number[] = []
const cpu: number[] = []
const inFlight: number[] = []
const counts: number[] = []
const waves: number[] = []
const byStatement = new Map<string, number[]>()
for (let i = 0; i < runs + 10; i++) {
  if (!vary) {
    const w = await app.inject({ method: 'PUT', url: `/p1/repositories/4700/issues/${1 + (i % 50)}/estimate`, headers, payload: { estimate: i % 7 } })
    if (w.statusCode !== 200) throw new Error(w.body)
  }
  sent.length = 0
  recording = true
  const cpuBefore = process.cpuUsage()
  const start = performance.now()
  const res = await app.inject({ method: 'POST', url: '/public/graphql', headers, payload: { query, ...(vary ? { variables: { run: i } } : {}) } })
  const end = performance.now()
  const used = process.cpuUsage(cpuBefore)
  recording = false
  // a background statement still unanswered when the document's answer came is not the document's
  const answered = sent.filter((s) => s.end > 0)
  if (res.statusCode !== 200 || res.json().errors !== undefined) throw new Error(res.body.slice(0, 300))
  if (i === 0 && process.env.PROFILE_ANSWER !== undefined) writeFileSync(process.env.PROFILE_ANSWER, res.body)
  if (i < 10) continue
  times.push(end - start)
  cpu.push((used.user + used.system) / 1000)
  counts.push(answered.length)
  // statements overlapping in time are one wave; the time with any in flight is the waves' sum
  let busy = 0
  let from = -1
  let to = -1
  let groups = 0
  for (const s of [...answered].sort((a, b) => a.start - b.start)) {
    if (s.start > to) {
      busy += to - from
      from = s.start
      to = s.end
      groups++
    } else to = Math.max(to, s.end)
  }
  inFlight.push(busy + to - from)
  waves.push(groups)
  for (const s of answered) {
    const key = s.text.replace(/\s+/g, ' ').slice(0, process.env.FULL ? 4000 : 120)
    byStatement.set(key, [...byStatement.get(key) ?? [], s.end - s.start])
  }
}
const at = (list: number[], p: number) => [...list].sort((a, b) => a - b)[Math.min(list.length - 1, Math.floor(p * list.length))]
const spread = (list: number[]) => `p50 ${at(list, 0.5).toFixed(2)} / p90 ${at(list, 0.9).toFixed(2)} / p99 ${at(list, 0.99).toFixed(2)} ms`
console.log(`document run (${vary ? 'a variable nothing reads' : 'after a write'}), ${runs} runs: ${spread(times)}; CPU ${spread(cpu)}`)
console.log(`statements per run ${[...new Set(counts)].sort().join(', ')} (background ones included), waves ${[...new Set(waves)].sort().join(', ')}; a statement in flight ${spread(inFlight)}`)
for (const [text, list] of byStatement) console.log(`  ${spread(list)} in ${list.length} runs: ${text}`)
await app.close()
