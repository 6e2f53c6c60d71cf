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
