import { sql, type Kysely } from 'kysely'
import type { Database } from '../schema.js'
import { engineOf } from './engine.js'
import { withLongDeadline } from './long-work.js'

/** What a fixture, an import or a copy writes by the thousand rows (the rest are a few rows each). */
export const BULK_LOADED_TABLES: ReadonlyArray<keyof Database> = [
  'issues', 'placements', 'issue_events', 'issue_states', 'issue_milestones', 'issue_labels', 'issue_assignees', 'plus_ones',
  'dependencies', 'epic_issues', 'zenhub_epic_issues', 'sprint_issues', 'issue_priorities', 'release_report_issues'
]

/** What the vacuum after a load took, and why it stopped when it did not finish (nothing is lost then). */
export interface BulkLoadVacuum { ms: number, error?: Error }

/** Longer than DATABASE_TIMEOUT_MS: the load has committed, and the vacuum grows with the tables. */
const VACUUM_DEADLINE_MS = 2 * 60_000

/**
 * After a bulk load has committed, has PostgreSQL vacuum and analyze what it wrote: until
 * autovacuum gets to the tables (a minute or more, never where it is switched off), the planner
 * plans for empty ones (a count over 50,000 issues took three times as long), and no page is marked
 * all-visible, so a count that an index answers still reads every row's page (GraphQL's filtered
 * pipeline count: 1,500 pages against 180). One `VACUUM (ANALYZE)` of the tables, which cannot run
 * in a transaction (about a second at 50,000 issues). A table another session holds a lock on (its
 * own vacuum, an index being built) is skipped, not waited for; one this role does not own is
 * skipped by PostgreSQL with a warning. It never fails the load: an error (the deadline, the
 * database away) is returned with the time taken, for the caller to log. SQLite is left alone:
 * without sqlite_stat1 its planner picks by index shape, which every read here was tuned against;
 * statistics would change those plans unmeasured. Undefined when nothing ran.
 */
export async function analyzeAfterBulkLoad (
  db: Kysely<Database>, tables: ReadonlyArray<keyof Database> = BULK_LOADED_TABLES
): Promise<BulkLoadVacuum | undefined> {
  if (engineOf(db) !== 'postgres' || db.isTransaction || tables.length === 0) return undefined
  const started = performance.now()
  try {
    await withLongDeadline(VACUUM_DEADLINE_MS, async () => await sql`VACUUM (ANALYZE, SKIP_LOCKED) ${sql.join(tables.map((t) => sql.table(t)))}`.execute(db))
    return { ms: performance.now() - started }
  } catch (err) {
    return { ms: performance.now() - started, error: err as Error }
  }
}
