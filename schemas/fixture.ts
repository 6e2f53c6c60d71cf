import { Email } from './account.js'
import { FeedEventType } from './issues.js'
import { SprintConfig } from './sprints.js'
import { Type, type Static, Login, PositiveInt, IssueState, IssueRef } from './common.js'

export const PermissionName = Type.Union([Type.Literal('read'), Type.Literal('write'), Type.Literal('push'), Type.Literal('admin'), Type.Literal('none')])
const DateTime = Type.String({ format: 'date-time' })
const Rank = Type.Integer({ minimum: 0, maximum: Number.MAX_SAFE_INTEGER })
const PipelineSpec = Type.Union([
  Type.String({ minLength: 1, maxLength: 200 }),
  Type.Object({
    id: Type.Optional(Type.String({ pattern: '^[A-Za-z0-9_-]{1,100}$' })),
    name: Type.String({ minLength: 1, maxLength: 200 }),
    host_label: Type.Optional(Type.String({ minLength: 1, maxLength: 50, description: 'the issue-host label the pipeline writes (two-way sync)' })),
    created_at: Type.Optional(Type.String({ format: 'date-time', description: 'when it was made (GraphQL Pipeline.createdAt); default: the workspace\'s creation' })),
    updated_at: Type.Optional(Type.String({ format: 'date-time', description: 'when it was last renamed or moved (Pipeline.updatedAt); default: its creation' }))
  }, { additionalProperties: false })
])
const CalendarDate = Type.String({ pattern: '^[0-9]{4}-[0-9]{2}-[0-9]{2}$', description: 'YYYY-MM-DD' })
const SprintId = Type.String({ pattern: '^[A-Za-z0-9_-]{1,100}$' })
const FixtureLabel = Type.Object({
  name: Type.String({ minLength: 1, maxLength: 50 }),
  color: Type.String({ pattern: '^#?[0-9A-Fa-f]{6}$' }),
  description: Type.Optional(Type.Union([Type.String({ maxLength: 100 }), Type.Null()]))
}, { additionalProperties: false })

/** The fixture format (docs/operations.md, "Fixtures") (SEED_FILE, the demo, POST /admin/import, tests). */
export const Fixture = Type.Object({
  users: Type.Optional(Type.Array(Type.Object({
    id: Type.Optional(PositiveInt),
    login: Login,
    token: Type.Optional(Type.String({ minLength: 8, maxLength: 200 })),
    email: Type.Optional(Email)
  }, { additionalProperties: false }))),
  repositories: Type.Optional(Type.Array(Type.Object({
    id: PositiveInt,
    owner: Login,
    name: Type.String({ minLength: 1, maxLength: 100, pattern: '^[A-Za-z0-9_.-]+$' }),
    html_url: Type.Optional(Type.Union([Type.String({ maxLength: 500 }), Type.Null()])),
    placeholder: Type.Optional(Type.Boolean({ description: 'made by a hosted import for an id not known here yet' })),
    created_at: Type.Optional(Type.String({ format: 'date-time', description: 'when the issue host made it; default: now' })),
    is_private: Type.Optional(Type.Boolean({ description: 'private on its issue host' })),
    is_archived: Type.Optional(Type.Boolean({ description: 'archived on its issue host' })),
    owner_platform_id: Type.Optional(PositiveInt),
    owner_kind: Type.Optional(Type.Union([Type.Literal('User'), Type.Literal('Organization')], { description: 'what its owner is on the issue host' })),
    host_updated_at: Type.Optional(Type.String({ format: 'date-time', description: 'the issue host\'s updated_at of what is held: a later delivery older than it is stale' })),
    permissions: Type.Optional(Type.Record(Type.String(), PermissionName)),
    labels: Type.Optional(Type.Array(FixtureLabel, { maxItems: 1000, description: 'labels made here (GraphQL createGithubLabel); issues carry the labels they wear' }))
  }, { additionalProperties: false }))),
  milestones: Type.Optional(Type.Array(Type.Object({
    repo_id: PositiveInt,
    number: PositiveInt,
    title: Type.String({ minLength: 1, maxLength: 500 }),
    description: Type.Optional(Type.Union([Type.String({ maxLength: 2000 }), Type.Null()])),
    start_date: Type.Optional(Type.String({ format: 'date-time' })),
    due_on: Type.Optional(Type.Union([Type.String({ minLength: 10, maxLength: 40, description: 'ISO 8601 date-time or YYYY-MM-DD' }), Type.Null()])),
    state: Type.Optional(IssueState),
    host_updated_at: Type.Optional(Type.String({ format: 'date-time', description: 'the issue host\'s updated_at of what is held: a later delivery older than it is stale' }))
  }, { additionalProperties: false }))),
  issues: Type.Optional(Type.Array(Type.Object({
    repo_id: PositiveInt,
    number: PositiveInt,
    title: Type.String({ minLength: 1, maxLength: 1000 }),
    state: Type.Optional(IssueState),
    created_at: Type.Optional(DateTime),
    estimate: Type.Optional(Type.Number({ minimum: 0 })),
    author: Type.Optional(Login),
    creator: Type.Optional(Type.Union([Login, Type.Null()], { description: 'who made a native issue here (GraphQL Issue.creator); not the issue host\'s author' })),
    milestone_number: Type.Optional(PositiveInt),
    pull_request: Type.Optional(Type.Boolean({ description: 'a pull request (they share the issues\' numbers)' })),
    body: Type.Optional(Type.String({ maxLength: 65_536, description: 'the issue host\'s description (Markdown)' })),
    plus_ones: Type.Optional(Type.Array(DateTime)),
    pipelines: Type.Optional(Type.Record(Type.String(), Type.String({ minLength: 1 }), {
      description: 'pipeline (id or name) per workspace id; default: the workspace\'s first pipeline'
    })),
    planning_changed_at: Type.Optional(DateTime),
    host_updated_at: Type.Optional(Type.String({ format: 'date-time', description: 'the issue host\'s updated_at of what is held: a later delivery older than it is stale' })),
    positions: Type.Optional(Type.Record(Type.String(), Rank, {
      description: 'the position in its pipeline per workspace id (the board\'s `position`); default: unprioritized'
    })),
    labels: Type.Optional(Type.Array(Type.Object({
      name: Type.String({ minLength: 1, maxLength: 100 }),
      color: Type.Optional(Type.Union([Type.String({ maxLength: 20 }), Type.Null()]))
    }, { additionalProperties: false }), { maxItems: 100, description: 'the issue host\'s labels' })),
    assignees: Type.Optional(Type.Array(Type.Object({
      login: Type.String({ minLength: 1, maxLength: 100 }),
      avatar_url: Type.Optional(Type.Union([Type.String({ maxLength: 500 }), Type.Null()]))
    }, { additionalProperties: false }), { maxItems: 100, description: 'the issue host\'s assignees' })),
    state_history: Type.Optional(Type.Array(Type.Object({ state: IssueState, at: DateTime }, { additionalProperties: false }), {
      maxItems: 10_000, description: 'each open and close as the reports read them; default: the state the issue is made in, now'
    })),
    milestone_history: Type.Optional(Type.Array(Type.Object({
      milestone_number: Type.Union([PositiveInt, Type.Null()]),
      at: DateTime
    }, { additionalProperties: false }), {
      maxItems: 10_000, description: 'each change of the issue\'s milestone as the milestone reports read them; default: its milestone, now'
    })),
    priorities: Type.Optional(Type.Record(Type.String(), Type.String({ minLength: 1, maxLength: 200 }), {
      description: 'its priority per workspace id, by name (one of the workspace\'s: High, Medium or Low priority)'
    })),
    connected_prs: Type.Optional(Type.Array(Type.Object({
      ...IssueRef.properties,
      created_at: Type.Optional(DateTime)
    }, { additionalProperties: false }), { maxItems: 1000, description: 'the pull requests connected to it (issues of the fixture with pull_request), oldest connection first; created_at default: now' }))
  }, { additionalProperties: false }))),
  issue_events: Type.Optional(Type.Array(Type.Object({
    repo_id: PositiveInt,
    number: PositiveInt,
    type: FeedEventType,
    created_at: DateTime,
    subject: Type.Optional(Type.Union([Type.String({ maxLength: 200 }), Type.Null()], { description: 'the label or login of a label or assignee event' })),
    user_id: Type.Optional(Type.Union([PositiveInt, Type.Null()])),
    from_estimate: Type.Optional(Type.Union([Type.Number(), Type.Null()])),
    to_estimate: Type.Optional(Type.Union([Type.Number(), Type.Null()])),
    from_pipeline: Type.Optional(Type.Union([Type.String({ maxLength: 200 }), Type.Null()])),
    to_pipeline: Type.Optional(Type.Union([Type.String({ maxLength: 200 }), Type.Null()])),
    workspace_id: Type.Optional(Type.Union([Type.String({ maxLength: 100 }), Type.Null()]))
  }, { additionalProperties: false, description: 'in feed order' }))),
  epics: Type.Optional(Type.Array(Type.Object({
    repo_id: PositiveInt,
    issue_number: PositiveInt,
    start_on: Type.Optional(Type.Union([CalendarDate, Type.Null()])),
    end_on: Type.Optional(Type.Union([CalendarDate, Type.Null()])),
    issues: Type.Array(IssueRef)
  }, { additionalProperties: false }))),
  dependencies: Type.Optional(Type.Array(Type.Object({
    blocking: IssueRef,
    blocked: IssueRef,
    created_at: Type.Optional(DateTime)
  }, { additionalProperties: false }))),
  release_reports: Type.Optional(Type.Array(Type.Object({
    id: Type.Optional(Type.String({ pattern: '^[A-Za-z0-9_-]{1,100}$' })),
    title: Type.String({ minLength: 1, maxLength: 500 }),
    description: Type.Optional(Type.String({ maxLength: 10_000 })),
    start_date: DateTime,
    desired_end_date: DateTime,
    created_at: Type.Optional(DateTime),
    closed_at: Type.Optional(Type.Union([DateTime, Type.Null()])),
    state: Type.Optional(IssueState),
    repositories: Type.Array(PositiveInt, { minItems: 1 }),
    issues: Type.Optional(Type.Array(IssueRef)),
    issue_changes: Type.Optional(Type.Array(Type.Object({
      ...IssueRef.properties,
      change: Type.Union([Type.Literal('added'), Type.Literal('removed')]),
      at: DateTime
    }, { additionalProperties: false }), { maxItems: 100_000, description: 'each issue added to or removed from the report, as its burndown reads them' }))
  }, { additionalProperties: false }))),
  workspaces: Type.Optional(Type.Array(Type.Object({
    id: Type.Optional(Type.String({ pattern: '^[A-Za-z0-9_-]{1,100}$' })),
    name: Type.String({ minLength: 1, maxLength: 200 }),
    description: Type.Optional(Type.Union([Type.String({ maxLength: 2000 }), Type.Null()])),
    created_at: Type.Optional(Type.String({ format: 'date-time' })),
    repositories: Type.Array(PositiveInt),
    pipelines: Type.Array(PipelineSpec, { minItems: 1 }),
    own_repository_id: Type.Optional(Type.Integer({ minimum: 1, maximum: Number.MAX_SAFE_INTEGER, description: 'the workspace\'s own repository (its zenhubRepository), a repository listed before' }))
  }, { additionalProperties: false }))),
  sprints: Type.Optional(Type.Array(Type.Object({
    workspace_id: Type.String({ pattern: '^[A-Za-z0-9_-]{1,100}$' }),
    ...SprintConfig.properties,
    carry_over: Type.Boolean(),
    updated_at: Type.Optional(DateTime),
    sprints: Type.Array(Type.Object({
      id: SprintId,
      number: PositiveInt,
      name: Type.String({ minLength: 1, maxLength: 200 }),
      starts_at: DateTime,
      ends_at: DateTime,
      started: Type.Boolean(),
      ended: Type.Boolean(),
      issues: Type.Array(Type.Object({
        repo_id: PositiveInt,
        issue_number: PositiveInt,
        added_at: DateTime,
        open: Type.Boolean(),
        carried_from: Type.Optional(SprintId)
      }, { additionalProperties: false }))
    }, { additionalProperties: false })),
    events: Type.Array(Type.Object({
      sprint_id: SprintId,
      type: Type.Union([Type.Literal('sprint_started'), Type.Literal('sprint_ended'), Type.Literal('sprint_issue_added'), Type.Literal('sprint_issue_removed')]),
      issue: Type.Optional(IssueRef),
      user_id: Type.Optional(PositiveInt),
      carried: Type.Optional(Type.Boolean()),
      at: DateTime
    }, { additionalProperties: false }), { description: 'in the order they happened' })
  }, { additionalProperties: false, description: 'a workspace\'s sprint configuration, its sprints as settled so far, their issues and events' }))),
  zenhub_epics: Type.Optional(Type.Array(Type.Object({
    id: Type.Optional(Type.Integer({ minimum: 1, maximum: Number.MAX_SAFE_INTEGER, description: 'kept: its global id names it' })),
    workspace_id: Type.String({ pattern: '^[A-Za-z0-9_-]{1,100}$' }),
    title: Type.String({ minLength: 1, maxLength: 256 }),
    body: Type.Optional(Type.Union([Type.String({ maxLength: 65_536 }), Type.Null()])),
    state: Type.Optional(Type.Union([Type.Literal('OPEN'), Type.Literal('TODO'), Type.Literal('IN_PROGRESS'), Type.Literal('CLOSED')])),
    start_on: Type.Optional(Type.Union([CalendarDate, Type.Null()])),
    end_on: Type.Optional(Type.Union([CalendarDate, Type.Null()])),
    creator: Type.Optional(Type.Union([Login, Type.Null()])),
    created_at: Type.Optional(DateTime),
    updated_at: Type.Optional(DateTime),
    estimate: Type.Optional(Type.Union([Type.Number({ minimum: 0, maximum: 1e9 }), Type.Null()])),
    issues: Type.Array(Type.Object({
      ...IssueRef.properties,
      added_at: Type.Optional(DateTime)
    }, { additionalProperties: false }), { maxItems: 100_000 }),
    assignees: Type.Optional(Type.Array(Type.Object({
      login: Login,
      added_at: Type.Optional(DateTime)
    }, { additionalProperties: false }), { maxItems: 10_000 })),
    labels: Type.Optional(Type.Array(Type.Object({
      name: Type.String({ minLength: 1, maxLength: 50 }),
      color: Type.Optional(Type.Union([Type.String({ pattern: '^#?[0-9A-Fa-f]{6}$' }), Type.Null()])),
      added_at: Type.Optional(DateTime)
    }, { additionalProperties: false }), { maxItems: 10_000 })),
    key_dates: Type.Optional(Type.Array(Type.Object({
      id: Type.Optional(Type.Integer({ minimum: 1, maximum: Number.MAX_SAFE_INTEGER, description: 'kept: its global id names it' })),
      date: CalendarDate,
      description: Type.String({ minLength: 1, maxLength: 1_000 }),
      created_at: Type.Optional(DateTime)
    }, { additionalProperties: false }), { maxItems: 10_000 }))
  }, {
    additionalProperties: false,
    description: 'epics that are not issues (ZenhubEpic), each of one workspace, with their issues, assignees, labels and key dates'
  }), { maxItems: 100_000 })),
  zenhub_labels: Type.Optional(Type.Array(FixtureLabel, { maxItems: 10_000, description: 'the organization\'s labels (GraphQL ZenhubLabel)' })),
  chat: Type.Optional(Type.Object({
    broadcaster: Type.Optional(Login),
    moderators: Type.Optional(Type.Array(Login))
  }, { additionalProperties: false }))
}, { additionalProperties: false })

export type Fixture = Static<typeof Fixture>
