import { performance } from 'node:perf_hooks'
import { openSqliteStore } from '../db/store.js'
import { loadFixture } from '../services/fixtures.js'

/**
 * Microseconds per move into a pipeline holding 100 and one holding 10,000 issues (half of them
 * prioritized), same run: the cost must not grow with the pipeline's size.
 */
export async function benchMoves (movesPerCase = 2000): Promise<string[]> {
  const lines: string[] = []
  const results: number[] = []
  for (const size of [100, 10_000]) {
    const store = await openSqliteStore(':memory:')
    const workspace = `bench${size}`.padEnd(24, '0')
    await loadFixture(store, {
      users: [{ id: 1, login: 'bench' }],
      repositories: [{ id: 1, owner: 'bench', name: 'bench', permissions: { bench: 'write' } }],
      workspaces: [{ id: workspace, name: 'Bench', repositories: [1], pipelines: [{ id: 'source', name: 'Source' }, { id: 'target', name: 'Target' }] }],
      issues: Array.from({ length: size + movesPerCase }, (_, i) => ({
        repo_id: 1, number: i + 1, title: `#${i + 1}`, pipelines: { [workspace]: i < size ? 'target' : 'source' }
      }))
    })
    const boards = store.boards
    const repo = await store.repositories.requireRepository(1)
    const user = { id: 1, login: 'bench' }
    // Prioritize half of the target pipeline so moves land among positions and number keys.
    for (let n = 1; n <= size / 2; n++) await boards.move(user, workspace, repo, n, 'target', 'bottom')
    const positions: Array<'top' | 'bottom' | number> = ['top', 'bottom', 1, 7, 25, 60]
    const start = performance.now()
    for (let i = 0; i < movesPerCase; i++) {
      await boards.move(user, workspace, repo, size + i + 1, 'target', positions[i % positions.length])
    }
    const micros = ((performance.now() - start) * 1000) / movesPerCase
    results.push(micros)
    lines.push(`move into a ${size.toLocaleString('en')}-issue pipeline: ${micros.toFixed(1)} µs per move (${movesPerCase} moves: top, bottom, indexes 1-60)`)
    await store.close()
  }
  lines.push(`move cost ratio 10,000 vs 100 issues: ${(results[1] / results[0]).toFixed(2)}`)
  return lines
}
