import { sql } from 'kysely'
import type { Executor } from './engine/transaction.js'

/** An edge table between issues: dependencies (blocking → blocked) or epic membership (epic → issue). */
export type Edges = { table: 'dependencies', from: 'blocking_id', to: 'blocked_id' } | { table: 'epic_issues', from: 'epic_id', to: 'issue_id' }

/**
 * Whether `to` can be reached from `from` along the edges; with `repos`, only through issues of
 * those repositories. The search visits only what `from` reaches, by key.
 */
export async function reaches (db: Executor, edges: Edges, from: number, to: number, repos?: number[]): Promise<boolean> {
  const next = sql.ref(`e.${edges.to}`)
  const through = repos === undefined
    ? sql``
    : repos.length === 0
      ? sql`WHERE 1 = 0`
      : sql`WHERE (SELECT i.repo_id FROM issues i WHERE i.id = ${next}) IN (${sql.join(repos)})`
  const { rows } = await sql<{ one: number }>`
    WITH RECURSIVE reach(id) AS (
      SELECT CAST(${from} AS BIGINT) UNION SELECT ${next} FROM ${sql.table(edges.table)} e JOIN reach ON ${sql.ref(`e.${edges.from}`)} = reach.id ${through})
    SELECT 1 AS one FROM reach WHERE id = ${to} LIMIT 1`.execute(db)
  return rows.length > 0
}

/**
 * The dependency graph held in memory as it stood at one change-counter version, for cycle checks
 * that stop at the first path found instead of walking all that the blocked issue reaches in SQL.
 * Good only while the counter stands where it was read: a dependency made or removed here moves
 * it along; any other write (here, in another process or instance) has it read again.
 */
export class GraphSnapshot {
  version = -1
  // Issues by dense index (their ids can be anything); edges as lists of indexes both ways.
  private readonly indexOf = new Map<number, number>()
  private next: number[][] = []
  private previous: number[][] = []
  private repoOf: number[] = []
  // Marks of the last search, by index: a node is seen from an end when its mark equals `search`.
  private ahead: number[] = []
  private behind: number[] = []
  private search = 0

  load (version: number, edges: Array<{ from: number, to: number, toRepo: number }>): void {
    this.indexOf.clear()
    this.next = []
    this.previous = []
    this.repoOf = []
    this.ahead = []
    this.behind = []
    for (const { from, to, toRepo } of edges) this.add(from, to, toRepo)
    this.version = version
  }

  add (from: number, to: number, toRepo: number): void {
    const [a, b] = [this.index(from), this.index(to)]
    this.repoOf[b] = toRepo
    this.next[a].push(b)
    this.previous[b].push(a)
  }

  remove (from: number, to: number): void {
    const [a, b] = [this.indexOf.get(from), this.indexOf.get(to)]
    if (a === undefined || b === undefined) return
    pull(this.next[a], b)
    pull(this.previous[b], a)
  }

  /**
   * Whether `to` can be reached from `from` (with `through`, only through issues of repositories
   * it accepts, `to` included): a breadth-first search from both ends at once, a level of the
   * smaller side at a time, that stops when they meet or either side runs out. A pair whose one
   * end reaches little is settled at once, however much the other end reaches.
   */
  reaches (from: number, to: number, through?: (repoId: number) => boolean): boolean {
    const [start, end] = [this.indexOf.get(from), this.indexOf.get(to)]
    if (start === undefined || end === undefined) return false
    const { next, previous, repoOf, ahead, behind } = this
    const passes = (i: number): boolean => through === undefined || (repoOf[i] !== -1 && through(repoOf[i]))
    if (!passes(end)) return false
    const search = ++this.search
    ahead[start] = search
    behind[end] = search
    let forward = [start]
    let backward = [end]
    while (forward.length > 0 && backward.length > 0) {
      if (forward.length <= backward.length) {
        const following: number[] = []
        for (const i of forward) {
          for (const j of next[i]) {
            if (behind[j] === search) return true
            if (ahead[j] !== search && passes(j)) {
              ahead[j] = search
              following.push(j)
            }
          }
        }
        forward = following
      } else {
        const preceding: number[] = []
        for (const i of backward) {
          for (const j of previous[i]) {
            if (ahead[j] === search) return true
            // Only `from` may lie outside `through`, and it is seen from ahead.
            if (behind[j] !== search && passes(j)) {
              behind[j] = search
              preceding.push(j)
            }
          }
        }
        backward = preceding
      }
    }
    return false
  }

  private index (id: number): number {
    let i = this.indexOf.get(id)
    if (i === undefined) {
      i = this.next.length
      this.indexOf.set(id, i)
      this.next.push([])
      this.previous.push([])
      this.repoOf.push(-1)
      this.ahead.push(0)
      this.behind.push(0)
    }
    return i
  }

  /** After a commit made from this version: the change applied and the new version taken, or the snapshot dropped. */
  committed (from: number, version: number, change: () => void): void {
    if (this.version === from && version === from + 1) {
      change()
      this.version = version
    } else {
      this.version = -1
    }
  }
}

function pull (list: number[], value: number): void {
  const at = list.indexOf(value)
  if (at >= 0) list.splice(at, 1)
}
