import { performance } from 'node:perf_hooks'
import { openSqliteStore } from '../db/store.js'
import { loadFixture } from '../services/fixtures.js'

/**
 * Cycle checks on a 10,000-edge dependency graph: a chain of 10,001 issues (the worst case, where
 * the refused edge closes a cycle through the whole chain) and edges that need no long search.
 */
export async function benchDependencies (edges = 10_000): Promise<string[]> {
  const store = await openSqliteStore(':memory:')
  await loadFixture(store, {
    repositories: [{ id: 1, owner: 'bench', name: 'deps' }],
    workspaces: [{ name: 'Deps', repositories: [1], pipelines: ['All'] }],
    issues: Array.from({ length: edges + 2 }, (_, i) => ({ repo_id: 1, number: i + 1, title: `#${i + 1}` }))
  })
  const deps = store.dependencies
  const ref = (n: number) => ({ repo_id: 1, issue_number: n })
  let start = performance.now()
  for (let n = 1; n <= edges; n++) await deps.create({ blocking: ref(n), blocked: ref(n + 1) }, () => true)
  const buildMicros = ((performance.now() - start) * 1000) / edges

  const runs = 20
  start = performance.now()
  for (let i = 0; i < runs; i++) {
    try {
      await deps.create({ blocking: ref(edges + 1), blocked: ref(1) }, () => true)
      throw new Error('a cycle was accepted')
    } catch (err) {
      if (!/cycle/.test((err as Error).message)) throw err
    }
  }
  const worst = (performance.now() - start) / runs
  start = performance.now()
  for (let i = 0; i < runs; i++) {
    await deps.create({ blocking: ref(1), blocked: ref(edges + 2) }, () => true)
    await deps.remove({ blocking: ref(1), blocked: ref(edges + 2) })
  }
  const fresh = (performance.now() - start) / runs
  await store.close()
  return [
    `dependency graph of ${edges.toLocaleString('en')} edges built at ${buildMicros.toFixed(1)} µs per edge (each one cycle-checked)`,
    `refusing a cycle through the whole ${edges.toLocaleString('en')}-edge chain: ${worst.toFixed(2)} ms`,
    `adding and removing an edge from an issue with nothing downstream: ${fresh.toFixed(3)} ms`
  ]
}
