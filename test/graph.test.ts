import t from 'tap'
import { GraphSnapshot } from '../db/graph.js'

/** A seeded generator, so a failure can be run again. */
function random (seed: number): () => number {
  let state = seed
  return () => {
    state = (state * 1_103_515_245 + 12_345) % 2 ** 31
    return state / 2 ** 31
  }
}

/** The plain search the snapshot's two-ended one must agree with. */
function modelReaches (edges: Array<[number, number]>, repoOf: (id: number) => number, from: number, to: number, through?: (repo: number) => boolean): boolean {
  const seen = new Set([from])
  const queue = [from]
  while (queue.length > 0) {
    const id = queue.shift()!
    for (const [a, b] of edges) {
      if (a !== id || (through !== undefined && !through(repoOf(b)))) continue
      if (b === to) return true
      if (!seen.has(b)) {
        seen.add(b)
        queue.push(b)
      }
    }
  }
  return false
}

t.test('reaches agrees with a plain search, through any repositories, as edges come and go', async (t) => {
  const next = random(11)
  const repoOf = (id: number) => id % 3
  let disagreements = 0
  let reachable = 0
  let asked = 0
  for (let round = 0; round < 40; round++) {
    const nodes = 5 + Math.floor(next() * 40)
    const edges: Array<[number, number]> = []
    for (let i = 0; i < nodes * 1.5; i++) {
      const a = 1 + Math.floor(next() * nodes)
      const b = 1 + Math.floor(next() * nodes)
      if (a !== b && !edges.some(([x, y]) => x === a && y === b)) edges.push([a, b])
    }
    const graph = new GraphSnapshot()
    graph.load(1, edges.map(([from, to]) => ({ from, to, toRepo: repoOf(to) })))
    // Some edges removed and others added after the load, as commits do.
    for (let i = 0; i < 5 && edges.length > 0; i++) {
      const [a, b] = edges.splice(Math.floor(next() * edges.length), 1)[0]
      graph.remove(a, b)
    }
    for (let i = 0; i < 5; i++) {
      const a = 1 + Math.floor(next() * nodes)
      const b = 1 + Math.floor(next() * nodes)
      if (a === b || edges.some(([x, y]) => x === a && y === b)) continue
      edges.push([a, b])
      graph.add(a, b, repoOf(b))
    }
    for (let i = 0; i < 30; i++) {
      const from = 1 + Math.floor(next() * nodes)
      const to = 1 + Math.floor(next() * nodes)
      if (from === to) continue
      const allowed = new Set([0, 1, 2].filter(() => next() < 0.7))
      for (const through of [undefined, (repo: number) => allowed.has(repo)]) {
        const expected = modelReaches(edges, repoOf, from, to, through)
        asked++
        if (expected) reachable++
        if (graph.reaches(from, to, through) !== expected) disagreements++
      }
    }
  }
  t.equal(disagreements, 0, `no disagreement in ${asked} questions`)
  t.ok(reachable > asked / 5 && reachable < asked * 0.9, `both answers asked about (${reachable} reachable)`)
})

t.test('a long chain is searched from both ends; a cycle through it is found, a gap is not crossed', async (t) => {
  const graph = new GraphSnapshot()
  graph.load(1, Array.from({ length: 10_000 }, (_, i) => ({ from: i + 1, to: i + 2, toRepo: 1 })))
  t.ok(graph.reaches(1, 10_001))
  t.notOk(graph.reaches(10_001, 1))
  graph.remove(5000, 5001)
  t.notOk(graph.reaches(1, 10_001), 'not across a removed edge')
  t.notOk(graph.reaches(1, 10_001, (repo) => repo !== 1), 'not through a repository left out')
})
