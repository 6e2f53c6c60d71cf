import { analyzeAfterBulkLoad } from './analyze.js'
import { sql, type Kysely } from 'kysely'
import type { Database } from '../schema.js'

/** Tables in the order their references need (every table a row points to comes first). */
const TABLES: Array<keyof Database> = [
  'users', 'connections', 'repositories', 'permissions', 'host_identities', 'identity_permissions', 'issues', 'plus_ones', 'milestones', 'workspaces', 'workspace_repositories', 'pipelines',
  'placements', 'issue_events', 'epic_issues', 'dependencies', 'release_reports', 'release_report_repositories', 'release_report_issues',
  'webhooks', 'webhook_deliveries', 'chat_members', 'chat_messages', 'chat_commands', 'chat_blocked_terms', 'chat_events',
  'issue_states', 'issue_milestones', 'release_issue_changes', 'sprint_configs', 'sprints', 'sprint_issues', 'sprint_events', 'hosted_ids', 'api_tokens', 'oidc_identities', 'audit_log', 'account_links',
  'zenhub_epics', 'zenhub_epic_issues', 'workspace_own_repositories', 'priorities', 'issue_priorities', 'issue_pr_connections', 'zenhub_epic_assignees', 'zenhub_epic_labels', 'zenhub_epic_key_dates', 'epic_dates',
  'issue_labels', 'issue_assignees', 'repository_labels', 'zenhub_labels', 'workspace_favorites', 'workspace_views'
]

/** Identity columns whose sequences must continue after the copied ids (PostgreSQL). */
const IDENTITIES: Array<[string, string]> = [
  ['users', 'id'], ['issues', 'id'], ['plus_ones', 'id'], ['workspaces', 'seq'], ['issue_events', 'id'], ['dependencies', 'seq'],
  ['webhook_deliveries', 'seq'], ['chat_messages', 'id'], ['chat_commands', 'id'], ['chat_blocked_terms', 'id'], ['chat_events', 'seq'],
  ['issue_states', 'id'], ['issue_milestones', 'id'], ['release_issue_changes', 'id'], ['sprint_events', 'id'], ['audit_log', 'id'], ['zenhub_epics', 'id'], ['priorities', 'id'],
  ['zenhub_epic_key_dates', 'id']
]

const BATCH = 500

export class CopyRefused extends Error {}

/**
 * Copies every row from one database to another (SQLite to PostgreSQL, say) in one transaction on
 * the target, keeping ids, so that tokens, links and webhook history carry over. Both must be
 * migrated; the target must hold no users and no repositories. Returns the rows copied per table.
 */
export async function copyDatabase (source: Kysely<Database>, target: Kysely<Database>, targetIsPostgres: boolean): Promise<Record<string, number>> {
  const occupied = await target.selectFrom('users').select('id').limit(1).executeTakeFirst() ??
    await target.selectFrom('repositories').select('id').limit(1).executeTakeFirst()
  if (occupied !== undefined) throw new CopyRefused('the target database is not empty (it has users or repositories); copy into a new one')
  const counts: Record<string, number> = {}
  await target.transaction().execute(async (trx) => {
    for (const table of TABLES) {
      const rows = await source.selectFrom(table).selectAll().execute() as Array<Record<string, unknown>>
      for (let i = 0; i < rows.length; i += BATCH) {
        await trx.insertInto(table).values(rows.slice(i, i + BATCH) as never).execute()
      }
      counts[table] = rows.length
    }
    const counter = await source.selectFrom('change_counter').select('value').where('id', '=', 1).executeTakeFirst()
    await trx.updateTable('change_counter').set({ value: Number(counter?.value ?? 0) + 1 }).where('id', '=', 1).execute()
    if (targetIsPostgres) {
      for (const [table, column] of IDENTITIES) {
        await sql`SELECT setval(pg_get_serial_sequence(${table}, ${column}), coalesce((SELECT max(${sql.ref(column)}) FROM ${sql.table(table)}), 0) + 1, false)`.execute(trx)
      }
    }
  })
  await analyzeAfterBulkLoad(target)
  return counts
}
