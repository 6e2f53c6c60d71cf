import { sql, type Kysely } from 'kysely'
import type { Database } from '../schema.js'
import { engineOf } from './engine.js'

/** What a fixture, an import or a copy writes by the thousand rows (the rest are a few rows each). */
export const BULK_LOADED_TABLES: ReadonlyArray<keyof Database> = [
  'issues', 'placements', 'issue_events', 'issue_states', 'issue_milestones', 'issue_labels', 'issue_assignees', 'plus_ones',
  'dependencies', 'epic_issues', 'zenhub_epic_issues', 'sprint_issues', 'issue_priorities', 'release_report_issues'
]

/**
 * After a bulk load has committed, has PostgreSQL's planner count what it wrote: until autovacuum
 * gets to the tables (a minute or more), it plans for empty ones, and a count over 50,000 issues
 * took three times as long. One ANALYZE of the tables (well under a second at that size). SQLite is
 * left alone: without sqlite_stat1 its planner picks by index shape, which every read here was
 * tuned against; statistics would change those plans unmeasured. Returns the milliseconds taken,
 * or undefined when nothing ran.
 */
export async function analyzeAfterBulkLoad (db: Kysely<Database>, tables: ReadonlyArray<keyof Database> = BULK_LOADED_TABLES): Promise<number | undefined> {
  if (engineOf(db) !== 'postgres' || db.isTransaction || tables.length === 0) return undefined
  const started = performance.now()
  await sql`ANALYZE ${sql.join(tables.map((t) => sql.table(t)))}`.execute(db)
  return performance.now() - started
}
