import { sql, type Kysely } from 'kysely'
import type { Database } from '../schema.js'
import { engineOf } from './engine.js'

/** What a fixture, an import or a copy writes by the thousand rows (the rest are a few rows each). */
export const BULK_LOADED_TABLES: ReadonlyArray<keyof Database> = [
  'issues', 'placements', 'issue_events', 'issue_states', 'issue_milestones', 'issue_labels', 'issue_assignees', 'plus_ones',
  'dependencies', 'epic_issues', 'zenhub_epic_issues', 'sprint_issues', 'issue_priorities', 'release_report_issues'
]

/**
 * After a bulk load has committed, has PostgreSQL vacuum and analyze what it wrote: until
 * autovacuum gets to the tables (a minute or more, never where it is switched off), the planner
 * plans for empty ones (a count over 50,000 issues took three times as long), and no page is marked
 * all-visible, so a count that an index answers still reads every row's page (GraphQL's filtered
 * pipeline count: 1,500 pages against 180). One `VACUUM (ANALYZE)` of the tables, which cannot run
 * in a transaction (about a second at 50,000 issues). SQLite is left alone: without sqlite_stat1 its
 * planner picks by index shape, which every read here was tuned against; statistics would change
 * those plans unmeasured. Returns the milliseconds taken, or undefined when nothing ran.
 */
export async function analyzeAfterBulkLoad (db: Kysely<Database>, tables: ReadonlyArray<keyof Database> = BULK_LOADED_TABLES): Promise<number | undefined> {
  if (engineOf(db) !== 'postgres' || db.isTransaction || tables.length === 0) return undefined
  const started = performance.now()
  await sql`VACUUM (ANALYZE) ${sql.join(tables.map((t) => sql.table(t)))}`.execute(db)
  return performance.now() - started
}
