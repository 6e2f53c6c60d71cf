import { sql } from 'kysely'
import type { Executor } from './transaction.js'

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
  private readonly next = new Map<number, number[]>()
  private readonly repoOf = new Map<number, number>()

  load (version: number, edges: Array<{ from: number, to: number, toRepo: number }>): void {
    this.next.clear()
    this.repoOf.clear()
    for (const { from, to, toRepo } of edges) this.add(from, to, toRepo)
    this.version = version
  }

  add (from: number, to: number, toRepo: number): void {
    this.repoOf.set(to, toRepo)
    const list = this.next.get(from)
    if (list === undefined) this.next.set(from, [to])
    else list.push(to)
  }

  remove (from: number, to: number): void {
    const list = this.next.get(from)
    const at = list?.indexOf(to) ?? -1
    if (at >= 0) list!.splice(at, 1)
  }

  /**
   * Whether `to` can be reached from `from` (with `through`, only through issues of repositories
   * it accepts): a breadth-first search that stops when it gets there.
   */
  reaches (from: number, to: number, through?: (repoId: number) => boolean): boolean {
    const seen = new Set([from])
    let frontier = [from]
    while (frontier.length > 0) {
      const following: number[] = []
      for (const id of frontier) {
        for (const next of this.next.get(id) ?? []) {
          if (through !== undefined && !through(this.repoOf.get(next)!)) continue
          if (next === to) return true
          if (!seen.has(next)) {
            seen.add(next)
            following.push(next)
          }
        }
      }
      frontier = following
    }
    return false
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
