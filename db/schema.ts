import type { Generated } from 'kysely'

/**
 * The tables, as the data layer sees them on both engines. Booleans are stored as 0/1 integers
 * and times as ISO 8601 text (epoch milliseconds where the worker compares them), so one query
 * reads the same on SQLite and PostgreSQL.
 */
export interface Database {
  users: UsersTable
  repositories: RepositoriesTable
  permissions: PermissionsTable
  issues: IssuesTable
  plus_ones: PlusOnesTable
  milestones: MilestonesTable
  workspaces: WorkspacesTable
  workspace_repositories: WorkspaceRepositoriesTable
  pipelines: PipelinesTable
  placements: PlacementsTable
  issue_events: IssueEventsTable
  epic_issues: EpicIssuesTable
  dependencies: DependenciesTable
  release_reports: ReleaseReportsTable
  release_report_repositories: ReleaseReportRepositoriesTable
  release_report_issues: ReleaseReportIssuesTable
  webhooks: WebhooksTable
  webhook_deliveries: WebhookDeliveriesTable
  chat_members: ChatMembersTable
  chat_messages: ChatMessagesTable
  chat_commands: ChatCommandsTable
  chat_blocked_terms: ChatBlockedTermsTable
  chat_events: ChatEventsTable
  change_counter: ChangeCounterTable
  connections: ConnectionsTable
  connection_deliveries: ConnectionDeliveriesTable
  imports: ImportsTable
}

export interface UsersTable { id: Generated<number>, login: string, token_hash: string | null, created_at: string }
export interface RepositoriesTable {
  id: number
  owner: string
  name: string
  /** the repository's page on its issue host; null: https://github.com/owner/name */
  html_url: string | null
  connection_id: string | null
}
/** level: 1 read, 2 write (push), 3 admin; no row means no access */
export interface PermissionsTable { user_id: number, repo_id: number, level: number }
export interface IssuesTable {
  id: Generated<number>
  repo_id: number
  number: number
  title: string
  state: 'open' | 'closed'
  estimate: number | null
  is_epic: Generated<number>
  created_at: string
  /** the issue host's updated_at of the state stored (older deliveries are stale) */
  host_updated_at: string | null
  /** when its pipeline, position, estimate, epic membership, dependencies or release reports last changed */
  planning_changed_at: string | null
}
export interface PlusOnesTable { id: Generated<number>, issue_id: number, created_at: string }
export interface MilestonesTable { repo_id: number, number: number, title: string, start_date: string | null }
/** seq breaks ties between workspaces created in the same millisecond: age is (created_at, seq) */
export interface WorkspacesTable { seq: Generated<number>, id: string, name: string, description: string | null, created_at: string }
export interface WorkspaceRepositoriesTable { workspace_id: string, repo_id: number }
export interface PipelinesTable { id: string, workspace_id: string, name: string, sort_order: number }
/**
 * Where an issue sits in each workspace holding its repository. `rank` orders a pipeline: the
 * position of a prioritized issue, else a key derived from the number (see `unprioritizedRank`).
 */
export interface PlacementsTable {
  issue_id: number
  workspace_id: string
  pipeline_id: string
  repo_id: number
  number: number
  is_open: number
  position: number | null
  rank: number
}
export interface IssueEventsTable {
  id: Generated<number>
  issue_id: number
  user_id: number | null
  type: 'estimateIssue' | 'transferIssue'
  created_at: string
  from_estimate: number | null
  to_estimate: number | null
  from_pipeline: string | null
  to_pipeline: string | null
  workspace_id: string | null
  /** the change counter's value when the event's write committed (the events feed's order) */
  version: number | null
}
export interface EpicIssuesTable { epic_id: number, issue_id: number }
export interface DependenciesTable { seq: Generated<number>, blocking_id: number, blocked_id: number, created_at: string }
export interface ReleaseReportsTable {
  seq: Generated<number>
  id: string
  title: string
  description: string
  start_date: string
  desired_end_date: string
  created_at: string
  closed_at: string | null
  state: Generated<'open' | 'closed'>
}
export interface ReleaseReportRepositoriesTable { release_id: string, repo_id: number }
export interface ReleaseReportIssuesTable { release_id: string, issue_id: number }
export interface WebhooksTable {
  seq: Generated<number>
  id: string
  repo_id: number
  url: string
  description: string | null
  secret: string | null
  created_at: string
  /** JSON array of event types; null: the four of the hosted API */
  events: string | null
}
export interface WebhookDeliveriesTable {
  seq: Generated<number>
  id: string
  webhook_id: string
  event_type: string
  body: string
  status: Generated<'pending' | 'delivered' | 'failed'>
  attempts: Generated<number>
  /** epoch ms */
  next_attempt_at: number
  /** epoch ms: an instance is sending this attempt until then */
  lease_until: number | null
  last_status_code: number | null
  last_error: string | null
  created_at: string
  delivered_at: string | null
}
export interface ChatMembersTable {
  user_id: number
  role: Generated<'viewer' | 'moderator' | 'broadcaster'>
  banned: Generated<number>
  ban_reason: string | null
  /** epoch ms */
  timeout_until: number | null
}
export interface ChatMessagesTable {
  id: Generated<number>
  user_id: number | null
  text: string
  source: 'user' | 'bot' | 'command'
  sent_at: string
  deleted_at: string | null
  deleted_by: number | null
}
export interface ChatCommandsTable {
  id: Generated<number>
  command: string
  response: string
  cooldown_seconds: number
  permission: 'everyone' | 'moderator' | 'broadcaster'
  enabled: number
  use_count: Generated<number>
  /** epoch ms */
  last_used_at: number | null
  created_at: string
  updated_at: string
}
export interface ChatBlockedTermsTable { id: Generated<number>, term: string, created_by: number | null, created_at: string }
export interface ChatEventsTable { seq: Generated<number>, type: string, data: string, created_at: string }
/** One row (id 1) whose value every write transaction bumps: the board cache's version. */
export interface ChangeCounterTable { id: number, value: number }
export interface ConnectionsTable {
  id: string
  kind: 'github' | 'gitea' | 'forgejo'
  web_url: string
  api_url: string
  /** signs the host's webhook deliveries; kept as given, as HMAC needs it */
  secret: string
  /** the API token imports use; never shown again */
  token: string | null
  created_at: string
}
export interface ConnectionDeliveriesTable { connection_id: string, delivery_id: string, received_at: number }
export interface ImportsTable {
  id: string
  connection_id: string
  repository: string
  state: 'queued' | 'running' | 'done' | 'failed'
  /** where a resumed import goes on: repository, milestones, issues, collaborators */
  stage: Generated<string>
  next_page: Generated<number>
  repo_id: number | null
  issues: Generated<number>
  pull_requests: Generated<number>
  milestones: Generated<number>
  collaborators: Generated<number>
  error: string | null
  created_at: string
  updated_at: string
}
