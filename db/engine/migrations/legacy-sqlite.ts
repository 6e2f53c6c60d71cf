/**
 * The SQLite-only migrations of the first release, tracked by `PRAGMA user_version`: migration N
 * brought a file from version N-1 to N. A file made then is brought to version 6 with these and
 * then converted by the portable schema migration (see `schema.ts` beside this file). Never edit.
 */
export const legacyMigrations: string[] = [
  // 1: the core (users, tokens, repositories, permissions, issues, milestones, workspaces,
  // pipelines), board placements and issue events.
  `
  CREATE TABLE users (
    id INTEGER PRIMARY KEY,
    login TEXT NOT NULL UNIQUE COLLATE NOCASE,
    token_hash TEXT UNIQUE,
    created_at TEXT NOT NULL
  );

  CREATE TABLE repositories (
    id INTEGER PRIMARY KEY,
    owner TEXT NOT NULL,
    name TEXT NOT NULL,
    UNIQUE (owner, name)
  );

  -- level: 1 read, 2 write (push), 3 admin; no row means no access.
  CREATE TABLE permissions (
    user_id INTEGER NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    repo_id INTEGER NOT NULL REFERENCES repositories (id) ON DELETE CASCADE,
    level INTEGER NOT NULL CHECK (level BETWEEN 1 AND 3),
    PRIMARY KEY (user_id, repo_id)
  ) WITHOUT ROWID;

  CREATE TABLE issues (
    id INTEGER PRIMARY KEY,
    repo_id INTEGER NOT NULL REFERENCES repositories (id) ON DELETE CASCADE,
    number INTEGER NOT NULL,
    title TEXT NOT NULL,
    state TEXT NOT NULL DEFAULT 'open' CHECK (state IN ('open', 'closed')),
    estimate REAL,
    is_epic INTEGER NOT NULL DEFAULT 0,
    created_at TEXT NOT NULL,
    UNIQUE (repo_id, number)
  );

  CREATE TABLE plus_ones (
    id INTEGER PRIMARY KEY,
    issue_id INTEGER NOT NULL REFERENCES issues (id) ON DELETE CASCADE,
    created_at TEXT NOT NULL
  );
  CREATE INDEX plus_ones_issue ON plus_ones (issue_id);

  CREATE TABLE milestones (
    repo_id INTEGER NOT NULL REFERENCES repositories (id) ON DELETE CASCADE,
    number INTEGER NOT NULL,
    title TEXT NOT NULL,
    start_date TEXT,
    PRIMARY KEY (repo_id, number)
  ) WITHOUT ROWID;

  -- seq breaks ties between workspaces created in the same millisecond: age is (created_at, seq).
  CREATE TABLE workspaces (
    seq INTEGER PRIMARY KEY,
    id TEXT NOT NULL UNIQUE,
    name TEXT NOT NULL,
    description TEXT,
    created_at TEXT NOT NULL
  );

  CREATE TABLE workspace_repositories (
    workspace_id TEXT NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
    repo_id INTEGER NOT NULL REFERENCES repositories (id) ON DELETE CASCADE,
    PRIMARY KEY (workspace_id, repo_id)
  ) WITHOUT ROWID;
  CREATE INDEX workspace_repositories_repo ON workspace_repositories (repo_id);

  CREATE TABLE pipelines (
    id TEXT PRIMARY KEY,
    workspace_id TEXT NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
    name TEXT NOT NULL,
    sort_order INTEGER NOT NULL
  );
  CREATE INDEX pipelines_workspace ON pipelines (workspace_id, sort_order);

  -- Where an issue sits in each workspace holding its repository. repo_id and number are copied
  -- from issues so that one index serves board order. rank orders a pipeline: the position of a
  -- prioritized issue, else a key derived from the issue number placed above every ordinary
  -- position (2^44 + number * 2^20), so unprioritized issues follow by number and a move can
  -- land between any two issues without renumbering the pipeline.
  CREATE TABLE placements (
    issue_id INTEGER NOT NULL REFERENCES issues (id) ON DELETE CASCADE,
    workspace_id TEXT NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
    pipeline_id TEXT NOT NULL REFERENCES pipelines (id),
    repo_id INTEGER NOT NULL,
    number INTEGER NOT NULL,
    is_open INTEGER NOT NULL DEFAULT 1,
    position INTEGER,
    rank INTEGER GENERATED ALWAYS AS (COALESCE(position, 17592186044416 + number * 1048576)) VIRTUAL,
    PRIMARY KEY (issue_id, workspace_id)
  ) WITHOUT ROWID;
  CREATE INDEX placements_order ON placements (pipeline_id, repo_id, is_open, rank);
  CREATE INDEX placements_workspace ON placements (workspace_id, repo_id);

  CREATE TABLE issue_events (
    id INTEGER PRIMARY KEY,
    issue_id INTEGER NOT NULL REFERENCES issues (id) ON DELETE CASCADE,
    user_id INTEGER REFERENCES users (id) ON DELETE SET NULL,
    type TEXT NOT NULL CHECK (type IN ('estimateIssue', 'transferIssue')),
    created_at TEXT NOT NULL,
    from_estimate REAL,
    to_estimate REAL,
    from_pipeline TEXT,
    to_pipeline TEXT,
    workspace_id TEXT
  );
  CREATE INDEX issue_events_issue ON issue_events (issue_id, id);
  `,

  // 2: epics (which issues belong to which epic) and blocking dependencies.
  `
  CREATE TABLE epic_issues (
    epic_id INTEGER NOT NULL REFERENCES issues (id) ON DELETE CASCADE,
    issue_id INTEGER NOT NULL REFERENCES issues (id) ON DELETE CASCADE,
    PRIMARY KEY (epic_id, issue_id),
    CHECK (epic_id <> issue_id)
  ) WITHOUT ROWID;
  CREATE INDEX epic_issues_issue ON epic_issues (issue_id);

  CREATE TABLE dependencies (
    blocking_id INTEGER NOT NULL REFERENCES issues (id) ON DELETE CASCADE,
    blocked_id INTEGER NOT NULL REFERENCES issues (id) ON DELETE CASCADE,
    created_at TEXT NOT NULL,
    PRIMARY KEY (blocking_id, blocked_id),
    CHECK (blocking_id <> blocked_id)
  ) WITHOUT ROWID;
  CREATE INDEX dependencies_blocked ON dependencies (blocked_id);
  `,

  // 3: release reports, their repositories and issues.
  `
  CREATE TABLE release_reports (
    id TEXT PRIMARY KEY,
    title TEXT NOT NULL,
    description TEXT NOT NULL DEFAULT '',
    start_date TEXT NOT NULL,
    desired_end_date TEXT NOT NULL,
    created_at TEXT NOT NULL,
    closed_at TEXT,
    state TEXT NOT NULL DEFAULT 'open' CHECK (state IN ('open', 'closed'))
  );

  CREATE TABLE release_report_repositories (
    release_id TEXT NOT NULL REFERENCES release_reports (id) ON DELETE CASCADE,
    repo_id INTEGER NOT NULL REFERENCES repositories (id) ON DELETE CASCADE,
    PRIMARY KEY (release_id, repo_id)
  ) WITHOUT ROWID;
  CREATE INDEX release_report_repositories_repo ON release_report_repositories (repo_id);

  CREATE TABLE release_report_issues (
    release_id TEXT NOT NULL REFERENCES release_reports (id) ON DELETE CASCADE,
    issue_id INTEGER NOT NULL REFERENCES issues (id) ON DELETE CASCADE,
    PRIMARY KEY (release_id, issue_id)
  ) WITHOUT ROWID;
  CREATE INDEX release_report_issues_issue ON release_report_issues (issue_id);
  `,

  // 4: webhooks and their durable outbox of deliveries.
  `
  CREATE TABLE webhooks (
    id TEXT PRIMARY KEY,
    repo_id INTEGER NOT NULL REFERENCES repositories (id) ON DELETE CASCADE,
    url TEXT NOT NULL,
    description TEXT,
    secret TEXT,
    created_at TEXT NOT NULL
  );
  CREATE INDEX webhooks_repo ON webhooks (repo_id);

  -- seq orders deliveries per webhook; id is the delivery id sent with every attempt.
  CREATE TABLE webhook_deliveries (
    seq INTEGER PRIMARY KEY,
    id TEXT NOT NULL UNIQUE,
    webhook_id TEXT NOT NULL REFERENCES webhooks (id) ON DELETE CASCADE,
    event_type TEXT NOT NULL,
    body TEXT NOT NULL,
    status TEXT NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'delivered', 'failed')),
    attempts INTEGER NOT NULL DEFAULT 0,
    next_attempt_at INTEGER NOT NULL,
    last_status_code INTEGER,
    last_error TEXT,
    created_at TEXT NOT NULL,
    delivered_at TEXT
  );
  CREATE INDEX webhook_deliveries_pending ON webhook_deliveries (status, webhook_id, seq);
  CREATE INDEX webhook_deliveries_log ON webhook_deliveries (webhook_id, seq);
  `,

  // 5: the chat companion API: roles and sanctions, messages, commands, blocked terms, and the
  // event log the live feed replays from.
  `
  CREATE TABLE chat_members (
    user_id INTEGER PRIMARY KEY REFERENCES users (id) ON DELETE CASCADE,
    role TEXT NOT NULL DEFAULT 'viewer' CHECK (role IN ('viewer', 'moderator', 'broadcaster')),
    banned INTEGER NOT NULL DEFAULT 0,
    ban_reason TEXT,
    timeout_until INTEGER
  );
  CREATE UNIQUE INDEX chat_one_broadcaster ON chat_members (role) WHERE role = 'broadcaster';

  CREATE TABLE chat_messages (
    id INTEGER PRIMARY KEY,
    user_id INTEGER REFERENCES users (id) ON DELETE SET NULL,
    text TEXT NOT NULL,
    source TEXT NOT NULL CHECK (source IN ('user', 'bot', 'command')),
    sent_at TEXT NOT NULL,
    deleted_at TEXT,
    deleted_by INTEGER REFERENCES users (id) ON DELETE SET NULL
  );

  CREATE TABLE chat_commands (
    id INTEGER PRIMARY KEY,
    command TEXT NOT NULL UNIQUE COLLATE NOCASE,
    response TEXT NOT NULL,
    cooldown_seconds INTEGER NOT NULL DEFAULT 30,
    permission TEXT NOT NULL DEFAULT 'everyone' CHECK (permission IN ('everyone', 'moderator', 'broadcaster')),
    enabled INTEGER NOT NULL DEFAULT 1,
    use_count INTEGER NOT NULL DEFAULT 0,
    last_used_at INTEGER,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL
  );

  CREATE TABLE chat_blocked_terms (
    id INTEGER PRIMARY KEY,
    term TEXT NOT NULL UNIQUE COLLATE NOCASE,
    created_by INTEGER REFERENCES users (id) ON DELETE SET NULL,
    created_at TEXT NOT NULL
  );

  CREATE TABLE chat_events (
    seq INTEGER PRIMARY KEY,
    type TEXT NOT NULL,
    data TEXT NOT NULL,
    created_at TEXT NOT NULL
  );
  `,

  // 6: dependencies keep their creation order (seq), which created_at alone cannot tell apart
  // within one millisecond.
  `
  CREATE TABLE dependencies_ordered (
    seq INTEGER PRIMARY KEY,
    blocking_id INTEGER NOT NULL REFERENCES issues (id) ON DELETE CASCADE,
    blocked_id INTEGER NOT NULL REFERENCES issues (id) ON DELETE CASCADE,
    created_at TEXT NOT NULL,
    UNIQUE (blocking_id, blocked_id),
    CHECK (blocking_id <> blocked_id)
  );
  INSERT INTO dependencies_ordered (blocking_id, blocked_id, created_at)
    SELECT blocking_id, blocked_id, created_at FROM dependencies ORDER BY created_at;
  DROP TABLE dependencies;
  ALTER TABLE dependencies_ordered RENAME TO dependencies;
  CREATE INDEX dependencies_blocked ON dependencies (blocked_id);
  `
]
