import type { Generated, Kysely } from 'kysely'
import type { ChatBotTables } from './chat/tables.js'

/**
 * The tables, as the data layer sees them on both engines. Booleans are stored as 0/1 integers
 * and times as ISO 8601 text (epoch milliseconds where the worker compares them), so one query
 * reads the same on SQLite and PostgreSQL.
 */
export interface Database extends ChatBotTables {
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
  /** SECRET_KEY's check value: a known text sealed with it (db/sealed-secrets.ts) */
  key_check: { id: number, sealed: string }
  connection_deliveries: ConnectionDeliveriesTable
  connection_delivery_log: ConnectionDeliveryLogTable
  imports: ImportsTable
  hosted_imports: HostedImportsTable
  hosted_ids: HostedIdsTable
  host_identities: HostIdentitiesTable
  identity_permissions: IdentityPermissionsTable
  issue_labels: IssueLabelsTable
  repository_labels: RepositoryLabelsTable
  zenhub_labels: ZenhubLabelsTable
  issue_assignees: IssueAssigneesTable
  host_writes: HostWritesTable
  connection_accounts: ConnectionAccountsTable
  issue_states: IssueStatesTable
  issue_milestones: IssueMilestonesTable
  release_issue_changes: ReleaseIssueChangesTable
  sprint_configs: SprintConfigsTable
  sprints: SprintsTable
  sprint_issues: SprintIssuesTable
  sprint_events: SprintEventsTable
  api_tokens: ApiTokensTable
  sessions: SessionsTable
  sign_in_attempts: SignInAttemptsTable
  oidc_identities: OidcIdentitiesTable
  audit_log: AuditLogTable
  password_failures: PasswordFailuresTable
  account_links: AccountLinksTable
  zenhub_epics: ZenhubEpicsTable
  zenhub_epic_issues: ZenhubEpicIssuesTable
  zenhub_epic_assignees: ZenhubEpicAssigneesTable
  zenhub_epic_labels: ZenhubEpicLabelsTable
  zenhub_epic_key_dates: ZenhubEpicKeyDatesTable
  epic_dates: EpicDatesTable
  workspace_own_repositories: WorkspaceOwnRepositoriesTable
  priorities: PrioritiesTable
  issue_priorities: IssuePrioritiesTable
  issue_pr_connections: IssuePrConnectionsTable
  workspace_favorites: WorkspaceFavoritesTable
  workspace_views: WorkspaceViewsTable
}

export interface UsersTable {
  id: Generated<number>
  login: string
  /** the admin-made ("legacy") token's digest */
  token_hash: string | null
  created_at: string
  email: Generated<string | null>
  token_created_at: Generated<string | null>
  token_last_used_at: Generated<string | null>
  /** `scrypt$N$r$p$salt$hash` (base64url parts); null: no password */
  password_hash: Generated<string | null>
  /** 1: may use the admin API and the Administration view */
  administrator: Generated<number>
  last_sign_in_at: Generated<string | null>
}
export interface RepositoriesTable {
  id: number
  owner: string
  name: string
  /** the repository's page on its issue host; null: it has none (made here, by a fixture or an import that gave none) */
  html_url: string | null
  /** the connection it is bound to: only that connection's deliveries and imports change it */
  connection_id: string | null
  /** 1: made by a hosted import for an id not known here (owner `unknown`, name the id); the first connection bringing the id takes it over */
  placeholder: Generated<number>
  /** the repository's id on that connection's host (the binding's key) */
  platform_repo_id: number | null
  /** the host's updated_at of the state stored */
  host_updated_at: string | null
  /** when the issue host made it (here: when it was made here); null only before 029 ran on a row made since by an older instance */
  created_at: Generated<string | null>
  /** 1: private on its issue host (0 when the host never said, and for repositories that live here) */
  is_private: Generated<number>
  /** 1: archived on its issue host */
  is_archived: Generated<number>
  /** the owning account's id on the issue host, and whether it is a `User` or an `Organization` (null: not said) */
  owner_platform_id: Generated<number | null>
  owner_kind: Generated<'User' | 'Organization' | null>
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
  /** the issue's milestone in its repository (null: none) */
  milestone_number: Generated<number | null>
  /** 1: a pull request (the issue host's, same number space) */
  is_pull_request: Generated<number>
  /** the issue host's description (null: none), at most BODY_LIMIT characters (db/issue-host/host-sync.ts) */
  body: Generated<string | null>
  /** who made it here (native issues only): users.id */
  creator_id: Generated<number | null>
}
export interface PlusOnesTable { id: Generated<number>, issue_id: number, created_at: string }
export interface MilestonesTable {
  repo_id: number
  number: number
  title: string
  start_date: string | null
  /** the issue host's due date (ISO 8601 UTC) */
  due_on: Generated<string | null>
  state: Generated<'open' | 'closed'>
  host_updated_at: Generated<string | null>
  description: Generated<string | null>
}
/** seq breaks ties between workspaces created in the same millisecond: age is (created_at, seq) */
export interface WorkspacesTable { seq: Generated<number>, id: string, name: string, description: string | null, created_at: string }
export interface WorkspaceRepositoriesTable { workspace_id: string, repo_id: number }
/** An epic that is not an issue (the hosted service's ZenhubEpic), of one workspace. */
export interface ZenhubEpicsTable {
  id: Generated<number>
  workspace_id: string
  title: string
  body: string | null
  state: 'OPEN' | 'TODO' | 'IN_PROGRESS' | 'CLOSED'
  /** YYYY-MM-DD */
  start_on: string | null
  end_on: string | null
  creator_id: number | null
  created_at: string
  updated_at: string
  /** the epic's own estimate (not its issues' sum) */
  estimate: Generated<number | null>
}
export interface ZenhubEpicIssuesTable { epic_id: number, issue_id: number, added_at: string }
export interface ZenhubEpicAssigneesTable { epic_id: number, user_id: number, added_at: string }
/** A label on an epic, by name (the workspace's labels are its issues' labels, by name). */
export interface ZenhubEpicLabelsTable { epic_id: number, name: string, color: string | null, added_at: string }
/** date: YYYY-MM-DD */
export interface ZenhubEpicKeyDatesTable { id: Generated<number>, epic_id: number, date: string, description: string, created_at: string }
/** A legacy epic's (an issue's) start and end dates, YYYY-MM-DD. */
export interface EpicDatesTable { issue_id: number, start_on: string | null, end_on: string | null }
/** A workspace's own repository: native issues, no issue host (made on first need). */
export interface WorkspaceOwnRepositoriesTable { workspace_id: string, repo_id: number }
/** A workspace's priority (the default set is made with the workspace); `position` orders them. */
export interface PrioritiesTable {
  id: Generated<number>
  workspace_id: string
  name: string
  color: string
  description: string | null
  position: number
  created_at: string
  updated_at: string
}
/** An issue's priority in one workspace (at most one). */
export interface IssuePrioritiesTable { workspace_id: string, issue_id: number, priority_id: number, set_at: string }
/** A pull request connected to an issue (both rows of `issues`). */
export interface IssuePrConnectionsTable { issue_id: number, pull_request_id: number, created_at: string }
/** A workspace a user marked as a favorite (theirs only). */
export interface WorkspaceFavoritesTable { user_id: number, workspace_id: string, created_at: string }
/** When a user last opened a workspace (their most recent ones only: db/workspace-views.ts). */
export interface WorkspaceViewsTable { user_id: number, workspace_id: string, viewed_at: string }
export interface PipelinesTable {
  id: string
  workspace_id: string
  name: string
  sort_order: number
  /** the issue host's label an issue gets when it enters this pipeline (two-way sync) */
  host_label: Generated<string | null>
  /** when it was made and last renamed or moved (null only on a row an older instance made after 029 ran) */
  created_at: Generated<string | null>
  updated_at: Generated<string | null>
}
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
  type: 'estimateIssue' | 'transferIssue' | 'labelIssue' | 'unlabelIssue' | 'assignIssue' | 'unassignIssue'
  created_at: string
  from_estimate: number | null
  to_estimate: number | null
  from_pipeline: string | null
  to_pipeline: string | null
  workspace_id: string | null
  /** the change counter's value when the event's write committed (the events feed's order) */
  version: number | null
  /** the label's name or the assignee's login, for label and assignee events */
  subject: Generated<string | null>
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
  /** signs deliveries; sealed with SECRET_KEY when the server has one (db/engine/secret-box.ts) */
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
  first_seen_at: string | null
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
  user_cooldown_seconds: Generated<number>
  moderators_exempt: Generated<number>
  counter_name: string | null
  counter_add: number | null
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
  /** signs the host's webhook deliveries; sealed with SECRET_KEY (db/engine/secret-box.ts), as HMAC needs it back */
  secret: string
  /** the API token imports use, sealed like the secret; never shown again */
  token: string | null
  /** the host's OAuth app for sign-in (docs/sign-in.md); its secret sealed like the token */
  oauth_client_id: string | null
  oauth_client_secret: string | null
  created_at: string
}
export interface ConnectionDeliveriesTable { connection_id: string, delivery_id: string, received_at: number }
/** A connection's last signed deliveries and what came of each (the newest few are kept). */
export interface ConnectionDeliveryLogTable {
  id: string
  connection_id: string
  received_at: number
  event: string
  action: string | null
  /** pong, handled, ignored, duplicate, stale, or failed */
  result: string
  /** why it was ignored or failed */
  detail: string | null
}
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
  /** epoch ms until which `lease_owner` runs the import; another instance takes it over only after */
  lease_until: number | null
  lease_owner: string | null
  error: string | null
  created_at: string
  updated_at: string
}

// Sprints and the history the reports read (docs, "Sprints and reports").

/** Every open/close of an issue from migration 009 on, with its creation state first. */
export interface IssueStatesTable { id: Generated<number>, issue_id: number, state: 'open' | 'closed', at: string }
/** The issue's milestone from `at` on (null: none). */
export interface IssueMilestonesTable { id: Generated<number>, issue_id: number, repo_id: number, milestone_number: number | null, at: string }
export interface ReleaseIssueChangesTable { id: Generated<number>, release_id: string, issue_id: number, change: 'added' | 'removed', at: string }
export interface SprintConfigsTable {
  workspace_id: string
  length_weeks: number
  /** YYYY-MM-DD: the first sprint starts at 00:00 of this day in time_zone */
  starts_on: string
  time_zone: string
  carry_over: number
  updated_at: string
}
export interface SprintsTable {
  id: string
  workspace_id: string
  /** N of "Sprint N": the sprint's index in its plan, from 1 */
  number: number
  name: string
  starts_at: string
  ends_at: string
  /** 1 once sprint_started was announced / once its end was processed (carry-over, sprint_ended) */
  started: Generated<number>
  ended: Generated<number>
}
export interface SprintIssuesTable {
  sprint_id: string
  workspace_id: string
  issue_id: number
  /** 1 while the sprint has not ended: an issue is in at most one open sprint per workspace */
  open: Generated<number>
  added_at: string
  carried_from: string | null
}
export interface SprintEventsTable {
  id: Generated<number>
  workspace_id: string
  sprint_id: string
  type: 'sprint_started' | 'sprint_ended' | 'sprint_issue_added' | 'sprint_issue_removed'
  issue_id: number | null
  user_id: number | null
  carried: Generated<number>
  at: string
}
/** An import from the hosted service; progress, counts and warnings are JSON text. */
export interface HostedImportsTable {
  id: string
  api_url: string
  /** JSON array of repository ids */
  repositories: string
  closed_issues: number
  issue_events: number
  /** the hosted API token, encrypted, while the import runs; null once it ends */
  token: string | null
  state: 'queued' | 'running' | 'waiting' | 'done' | 'failed'
  /** where a resumed run goes on (JSON) */
  progress: Generated<string>
  counts: Generated<string>
  warnings: Generated<string>
  requests: Generated<number>
  estimated_requests: Generated<number>
  waited_seconds: Generated<number>
  error: string | null
  /** the instance running it, until lease_until (epoch ms) */
  lease_owner: string | null
  lease_until: number | null
  created_at: string
  updated_at: string
}
/** Ids a hosted import brought here (kept as the hosted service's). */
export interface HostedIdsTable { kind: 'workspace' | 'pipeline' | 'release_report', id: string }
/** A user of an issue host, as one connection knows them; linked to at most one local user. */
export interface HostIdentitiesTable {
  connection_id: string
  platform_user_id: number
  /** null until the host names them (an identity the admin linked before any delivery) */
  login: string | null
  user_id: number | null
  created_at: string
}
/** The permission the host gives an identity; it applies to the linked user, when there is one. */
export interface IdentityPermissionsTable { connection_id: string, platform_user_id: number, repo_id: number, level: number }
export interface IssueLabelsTable { issue_id: number, name: string, color: string | null }
/** A repository's label made here (issues wear theirs in issue_labels). */
export interface RepositoryLabelsTable { repo_id: number, name: string, color: string | null, description: string | null, created_at: string }
/** The organization's labels (the hosted service's ZenhubLabel). */
export interface ZenhubLabelsTable { name: string, color: string | null, description: string | null, created_at: string }
export interface IssueAssigneesTable { issue_id: number, login: string, avatar_url: string | null }
/** One row per issue whose labels the host should be told: the wanted labels are read when it is sent. */
export interface HostWritesTable {
  issue_id: number
  connection_id: string
  status: 'pending' | 'done' | 'failed'
  /** bumped by every change that wants a write: a send marks done only the generation it read */
  generation: Generated<number>
  attempts: Generated<number>
  /** epoch ms */
  next_attempt_at: number
  /** epoch ms: an instance is writing this issue until then */
  lease_until: number | null
  last_status_code: number | null
  last_error: string | null
  updated_at: string
}
/** The token's own account on the host (read once with GET /user): its deliveries are our writes coming back. */
export interface ConnectionAccountsTable { connection_id: string, account_id: number, login: string }
/** A user's named API tokens (digests only); `last_used_at` moves at most once a minute. */
export interface ApiTokensTable {
  id: string
  user_id: number
  name: string
  scope: 'read' | 'write'
  token_hash: string
  created_at: string
  expires_at: string | null
  last_used_at: string | null
}
/** Browser sessions, by the digest of the cookie's value; times in epoch ms. */
export interface SessionsTable {
  id_hash: string
  user_id: number
  /** how the person signed in: `oidc` or `host:<connection id>` */
  provider: string
  created_at: number
  last_seen_at: number
  /** the absolute end (SESSION_MAX_DAYS after the sign-in) */
  expires_at: number
}
/** A sign-in sent to a provider and not back yet, by the digest of its `state`; epoch ms. */
export interface SignInAttemptsTable {
  state_hash: string
  provider: string
  code_verifier: string
  nonce: string
  return_to: string
  created_at: number
}
/** Who an OpenID provider vouches for (`sub` at `iss`), linked to one local user. */
export interface OidcIdentitiesTable { issuer: string, subject: string, user_id: number, email: string | null, created_at: string }
export interface AuditLogTable {
  id: Generated<number>
  at: string
  /** `admin`, `user:<login>`, `system` or `host:<connection id>` */
  actor: string
  action: string
  target: string | null
  address: string | null
  /** JSON object; never a secret */
  detail: string | null
}

/** Failed password sign-ins per login (lower-cased), for the lock-out; times in epoch ms. */
export interface PasswordFailuresTable {
  login_key: string
  failures: number
  window_start: number
  locked_until: number
}
/** Invite, password-reset and first-run setup links, by the digest of their token; `expires_at` in epoch ms. */
export interface AccountLinksTable {
  id: string
  kind: 'invite' | 'reset' | 'setup'
  token_hash: string
  workspace_id: string | null
  permission: string | null
  email: string | null
  user_id: number | null
  created_by: string
  created_at: string
  expires_at: number
  used_at: string | null
}

/** The Kysely instance or an open transaction: what every data function takes. */
export type Executor = Kysely<Database>
