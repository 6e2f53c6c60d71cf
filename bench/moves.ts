import { performance } from 'node:perf_hooks'
import type { PlanningStore } from '../db/store.js'
import { openSqliteStore } from '../db/store.js'
import { loadFixture } from '../services/fixtures.js'
import { percentile, random } from './stats.js'

type Opened = { store: PlanningStore, close: () => Promise<void> }

/**
 * Microseconds per move of a random issue to a random index over the whole pipeline, in a
 * 100-issue and a 10,000-issue pipeline, same run: the cost must not grow with the depth.
 */
export async function moveCosts (open: () => Promise<Opened>, moves = 2000): Promise<string[]> {
  const lines: string[] = []
  const means: number[] = []
  for (const size of [100, 10_000]) {
    const { store, close } = await open()
    const workspace = `bench${size}`.padEnd(24, '0')
    await loadFixture(store, {
      users: [{ id: 1, login: 'bench' }],
      repositories: [{ id: 1, owner: 'bench', name: 'bench', permissions: { bench: 'write' } }],
      workspaces: [{ id: workspace, name: 'Bench', repositories: [1], pipelines: [{ id: 'target', name: 'Target' }] }],
      issues: Array.from({ length: size }, (_, i) => ({ repo_id: 1, number: i + 1, title: `#${i + 1}`, pipelines: { [workspace]: 'target' } }))
    })
    const repo = await store.repositories.requireRepository(1)
    const user = { id: 1, login: 'bench' }
    const next = random(size)
    const times: number[] = []
    for (let i = 0; i < moves; i++) {
      const number = 1 + Math.floor(next() * size)
      const index = Math.floor(next() * size)
      const start = performance.now()
      await store.boards.move(user, workspace, repo, number, 'target', index)
      times.push((performance.now() - start) * 1000)
    }
    const mean = times.reduce((a, b) => a + b, 0) / times.length
    times.sort((a, b) => a - b)
    means.push(mean)
    lines.push(`move to a random index of a ${size.toLocaleString('en')}-issue pipeline: mean ${mean.toFixed(0)} µs, p50 ${percentile(times, 0.5).toFixed(0)} µs, p99 ${percentile(times, 0.99).toFixed(0)} µs (${moves} moves)`)
    await close()
  }
  lines.push(`move cost, 10,000-issue vs 100-issue pipeline (mean): ${(means[1] / means[0]).toFixed(2)}×`)
  return lines
}

export async function benchMoves (): Promise<string[]> {
  return await moveCosts(async () => {
    const store = await openSqliteStore(':memory:')
    return { store, close: async () => await store.close() }
  })
}
