import { performance } from 'node:perf_hooks'
import { openSqliteStore, type PlanningStore } from '../db/store.js'
import { loadFixture } from '../services/fixtures.js'
import { percentile, random } from './stats.js'

type Opened = { store: PlanningStore, close: () => Promise<void> }

/** Edges written straight into the table, many per statement (what is measured is the inserts after). */
async function writeEdges (store: PlanningStore, repo: number, edges: Array<[number, number]>): Promise<void> {
  const ids = new Map((await store.db.selectFrom('issues').select(['id', 'number']).where('repo_id', '=', repo).execute()).map((r) => [Number(r.number), Number(r.id)]))
  const rows = edges.map(([a, b]) => ({ blocking_id: ids.get(a)!, blocked_id: ids.get(b)!, created_at: new Date().toISOString() }))
  await store.transaction(async (tx) => {
    for (let at = 0; at < rows.length; at += 500) await tx.db.insertInto('dependencies').values(rows.slice(at, at + 500)).execute()
  })
}

/**
 * Dependency inserts with their cycle check on a 10,000-edge graph: random edges between 10,000
 * issues (each from a lower to a higher number, so the graph has no cycle), then random pairs in
 * either direction (those that would close a cycle are refused); and the worst case, a cycle
 * closed through a 10,000-edge chain.
 */
export async function dependencyCosts (open: () => Promise<Opened>, edges = 10_000, inserts = 1000, warmUp = 200): Promise<string[]> {
  const { store, close } = await open()
  const issues = edges + 1
  await loadFixture(store, {
    repositories: [{ id: 1, owner: 'bench', name: 'deps' }, { id: 2, owner: 'bench', name: 'chain' }],
    workspaces: [{ name: 'Deps', repositories: [1, 2], pipelines: ['All'] }],
    issues: [1, 2].flatMap((repo) => Array.from({ length: issues }, (_, i) => ({ repo_id: repo, number: i + 1, title: `#${i + 1}` })))
  })
  const deps = store.dependencies
  const ref = (repo: number, n: number) => ({ repo_id: repo, issue_number: n })
  const next = random(7)
  const pick = () => 1 + Math.floor(next() * issues)
  const made: Array<[number, number]> = []
  for (const seen = new Set<string>(); made.length < edges;) {
    const [a, b] = [pick(), pick()]
    const key = `${Math.min(a, b)}:${Math.max(a, b)}`
    if (a === b || seen.has(key)) continue
    seen.add(key)
    made.push([Math.min(a, b), Math.max(a, b)])
  }
  await writeEdges(store, 1, made)
  const times: number[] = []
  let refused = 0
  // A warm-up as the HTTP cases have (not counted): the first searches run before V8 has compiled them.
  for (let i = -warmUp; i < inserts; i++) {
    const [a, b] = [pick(), pick()]
    if (a === b) continue
    const dependency = { blocking: ref(1, a), blocked: ref(1, b) }
    const start = performance.now()
    try {
      await deps.create(dependency, () => true)
      if (i >= 0) times.push(performance.now() - start)
      await deps.remove(dependency)
    } catch (err) {
      if (i >= 0) times.push(performance.now() - start)
      if (!/cycle/.test((err as Error).message)) throw err
      if (i >= 0) refused++
    }
  }
  times.sort((a, b) => a - b)

  await writeEdges(store, 2, Array.from({ length: issues - 1 }, (_, i) => [i + 1, i + 2]))
  const chain: number[] = []
  for (let i = 0; i < 20; i++) {
    const start = performance.now()
    await deps.create({ blocking: ref(2, issues), blocked: ref(2, 1) }, () => true).then(() => { throw new Error('a cycle was accepted') }, () => {})
    chain.push(performance.now() - start)
  }
  await close()
  return [
    `dependency insert with cycle check, ${edges.toLocaleString('en')} random edges: p50 ${percentile(times, 0.5).toFixed(2)} ms, p99 ${percentile(times, 0.99).toFixed(2)} ms (${times.length} inserts after ${warmUp} not counted, ${refused} refused as cycles)`,
    `refusing a cycle through a ${edges.toLocaleString('en')}-edge chain (the whole graph searched): ${(chain.reduce((a, b) => a + b, 0) / chain.length).toFixed(2)} ms`
  ]
}

export async function benchDependencies (): Promise<string[]> {
  return await dependencyCosts(async () => {
    const store = await openSqliteStore(':memory:')
    return { store, close: async () => await store.close() }
  })
}
