import autocannon from 'autocannon'
import { randomBytes } from 'node:crypto'
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { performance } from 'node:perf_hooks'
import pg from 'pg'
import { buildApp } from '../app.js'
import { DomainEvents } from '../db/domain-events.js'
import { postgresKysely } from '../db/postgres.js'
import { createStore } from '../db/store.js'

const TOKEN = 'bench-token-0123456789'
const ADMIN = 'bench-admin-token-0123456789'
const WORKSPACE = 'bench0000000000000000000'
const PIPELINES = ['Backlog', 'Doing', 'Review', 'Done']

async function rate (url: string, seconds: number, connections: number): Promise<number> {
  const result = await autocannon({ url, connections, duration: seconds, headers: { 'x-authentication-token': TOKEN } })
  if (result.non2xx > 0 || result.errors > 0) throw new Error(`${url}: ${result.non2xx} non-2xx, ${result.errors} errors`)
  return result.requests.average
}

async function admin (sql: string, url: string): Promise<void> {
  const client = new pg.Client({ connectionString: url })
  await client.connect()
  await client.query(sql)
  await client.end()
}

/**
 * The board, issue, move and dependency cases on PostgreSQL, and the HTTP cases through two
 * instances sharing the database (each half of the connections); skipped when no server answers.
 */
export async function benchPostgres (url: string | undefined, seconds: number): Promise<string[]> {
  if (url === undefined) return ['PostgreSQL: skipped (set BENCH_DATABASE_URL or TEST_DATABASE_URL)']
  try {
    await admin('SELECT 1', url)
  } catch {
    return [`PostgreSQL: skipped (no server answers at ${url})`]
  }
  const schema = `bench_${randomBytes(4).toString('hex')}`
  await admin(`CREATE SCHEMA ${schema}`, url)
  const options = { databaseUrl: url, databaseSchema: schema, adminToken: ADMIN, rateLimit: { max: 1e9, timeWindow: 60_000 }, documentation: false as const }
  const a = await buildApp(options)
  const b = await buildApp(options)
  const lines: string[] = []
  try {
    await a.ready()
    await a.inject({
      method: 'POST',
      url: '/admin/import',
      headers: { authorization: `Bearer ${ADMIN}` },
      payload: {
        users: [{ login: 'bench', token: TOKEN }],
        repositories: [{ id: 1, owner: 'bench', name: 'bench', permissions: { bench: 'admin' } }],
        workspaces: [{ id: WORKSPACE, name: 'Bench', repositories: [1], pipelines: PIPELINES }],
        issues: Array.from({ length: 1600 }, (_, i) => ({
          repo_id: 1, number: i + 1, title: `Issue ${i + 1}`, ...(i % 3 === 0 ? { estimate: 3 } : {}), pipelines: { [WORKSPACE]: PIPELINES[i % 4] }
        }))
      }
    })
    const addressA = await a.listen({ host: '127.0.0.1', port: 0 })
    const addressB = await b.listen({ host: '127.0.0.1', port: 0 })
    for (const [name, path] of [['GET board', '/p1/repositories/1/board'], ['GET issue data', '/p1/repositories/1/issues/500']]) {
      const sample = await a.inject({ url: path, headers: { 'x-authentication-token': TOKEN } })
      const bare = createServer((_req, res) => res.end(sample.body))
      await new Promise<void>((resolve) => bare.listen(0, '127.0.0.1', resolve))
      const one = await rate(`${addressA}${path}`, seconds, 10)
      const [half, otherHalf] = await Promise.all([rate(`${addressA}${path}`, seconds, 5), rate(`${addressB}${path}`, seconds, 5)])
      const baseline = await rate(`http://127.0.0.1:${(bare.address() as AddressInfo).port}${path}`, seconds, 10)
      bare.close()
      lines.push(`PostgreSQL, ${name}: one instance ${one.toFixed(0)} req/s (ratio ${(one / baseline).toFixed(2)}); two instances ${(half + otherHalf).toFixed(0)} req/s (ratio ${((half + otherHalf) / baseline).toFixed(2)}); bare node:http ${baseline.toFixed(0)} req/s`)
    }
    const db = postgresKysely({ url, schema, poolMax: 2 })
    const store = createStore(db, new DomainEvents())
    const repo = await store.repositories.requireRepository(1)
    const user = { id: 1, login: 'bench' }
    const moves = 400
    const target = (await store.workspaces.pipelines(WORKSPACE))[1].id
    let start = performance.now()
    for (let i = 0; i < moves; i++) await store.boards.move(user, WORKSPACE, repo, 1 + ((i * 4) % 1600), target, i % 2 === 0 ? 'top' : 7)
    lines.push(`PostgreSQL, move: ${((performance.now() - start) * 1000 / moves).toFixed(0)} µs per move (${moves} moves, in process)`)
    const ref = (n: number) => ({ repo_id: 1, issue_number: n })
    start = performance.now()
    const edges = 300
    for (let n = 1; n <= edges; n++) await store.dependencies.create({ blocking: ref(n), blocked: ref(n + 1) }, () => true)
    lines.push(`PostgreSQL, dependency insert with cycle check: ${((performance.now() - start) / edges).toFixed(2)} ms per edge (chain of ${edges})`)
    await db.destroy()
  } finally {
    await Promise.all([a.close(), b.close()])
    await admin(`DROP SCHEMA ${schema} CASCADE`, url)
  }
  return lines
}
