import { Type, IssueState, Login, PositiveInt, ObjectId } from './common.js'
import { Email } from './account.js'
import { PermissionName } from './fixture.js'

export { Fixture } from './fixture.js'

const PipelineName = Type.String({ minLength: 1, maxLength: 200 })

export const AdminUser = Type.Object({ id: Type.Integer(), login: Type.String() })
export const AdminUserWithEmail = Type.Object({
  id: Type.Integer(),
  login: Type.String(),
  email: Type.Union([Type.String(), Type.Null()]),
  administrator: Type.Boolean({ description: 'may use /admin/* with a session or token, and the Administration view' }),
  last_sign_in_at: Type.Union([Type.String(), Type.Null()], { description: 'the last browser sign-in (password or provider); null: never' })
})
export const CreateUserBody = Type.Object({
  login: Login,
  id: Type.Optional(PositiveInt),
  email: Type.Optional(Email),
  administrator: Type.Optional(Type.Boolean())
}, { additionalProperties: false })
export const UpdateUserBody = Type.Object({
  email: Type.Optional(Type.Union([Email, Type.Null()], { description: 'null clears it' })),
  administrator: Type.Optional(Type.Boolean({ description: 'false for the last administrator: 409' }))
}, { additionalProperties: false, minProperties: 1 })
export const UserTokenParams = Type.Object({ login: Login, token_id: ObjectId })
export const TokenReply = Type.Object({ token: Type.String() })

export const AdminRepository = Type.Object({
  id: Type.Integer(),
  owner: Type.String(),
  name: Type.String(),
  html_url: Type.Optional(Type.Union([Type.String(), Type.Null()], { description: 'its page on the issue host (null: none, it has no issue host)' }))
})
/** A repository as the admin API lists it: with the issue-host connection it is bound to, if any. */
export const AdminRepositoryListed = Type.Object({
  ...AdminRepository.properties,
  connection_id: Type.Union([Type.String(), Type.Null()], { description: 'the connection (GET /admin/connections) it is bound to; null: it lives here only or came from a fixture or an import without one' })
})
export const CreateRepositoryBody = Type.Object({
  id: Type.Optional(Type.Integer({ minimum: 1, maximum: Number.MAX_SAFE_INTEGER, description: 'the issue host\'s id; without it the repository lives here only and gets an id from 2^40 (1099511627776) up' })),
  owner: Login,
  name: Type.String({ minLength: 1, maxLength: 100, pattern: '^[A-Za-z0-9_.-]+$' })
}, { additionalProperties: false })

export const PermissionParams = Type.Object({ repo_id: PositiveInt, login: Login })
export const PermissionBody = Type.Object({ permission: PermissionName }, { additionalProperties: false })
export const PermissionReply = Type.Object({ repo_id: Type.Integer(), login: Type.String(), permission: Type.String() })

export const AdminIssue = Type.Object({
  repo_id: Type.Integer(),
  number: Type.Integer(),
  title: Type.String(),
  state: Type.String(),
  milestone_number: Type.Optional(Type.Integer({ description: 'the issue\'s milestone (absent: none)' }))
})
export const CreateIssueBody = Type.Object({
  number: PositiveInt,
  title: Type.String({ minLength: 1, maxLength: 1000 }),
  state: Type.Optional(IssueState),
  author: Type.Optional(Login),
  milestone_number: Type.Optional(PositiveInt),
  pull_request: Type.Optional(Type.Boolean({ description: 'a pull request (they share the issues\' numbers)' }))
}, { additionalProperties: false })
export const IssueNumberParams = Type.Object({ repo_id: PositiveInt, number: PositiveInt })
export const UpdateIssueBody = Type.Object({
  title: Type.Optional(Type.String({ minLength: 1, maxLength: 1000 })),
  state: Type.Optional(IssueState),
  milestone_number: Type.Optional(Type.Union([PositiveInt, Type.Null()], { description: 'a milestone of the repository; null: none' }))
}, { additionalProperties: false, minProperties: 1 })

const DueOn = Type.Union([Type.String({ minLength: 10, maxLength: 40 }), Type.Null()], {
  description: 'ISO 8601 date-time or date (a date is 00:00 UTC, as the issue hosts send them); null: none'
})
/** A milestone's description, as the issue hosts keep it (Markdown). */
export const MilestoneDescription = Type.String({ maxLength: 2000 })
export const CreateMilestoneBody = Type.Object({
  number: PositiveInt,
  title: Type.String({ minLength: 1, maxLength: 500 }),
  description: Type.Optional(Type.Union([MilestoneDescription, Type.Null()])),
  due_on: Type.Optional(DueOn),
  state: Type.Optional(IssueState)
}, { additionalProperties: false })
export const UpdateMilestoneBody = Type.Object({
  title: Type.Optional(Type.String({ minLength: 1, maxLength: 500 })),
  description: Type.Optional(Type.Union([MilestoneDescription, Type.Null()], { description: 'null clears it' })),
  due_on: Type.Optional(DueOn),
  state: Type.Optional(IssueState)
}, { additionalProperties: false, minProperties: 1 })
export const MilestoneNumberParams = Type.Object({ repo_id: PositiveInt, number: PositiveInt })
export const AdminMilestone = Type.Object({
  repo_id: Type.Integer(),
  number: Type.Integer(),
  title: Type.String(),
  description: Type.Optional(Type.Union([Type.String(), Type.Null()])),
  due_on: Type.Optional(Type.Union([Type.String(), Type.Null()])),
  state: Type.Optional(Type.String())
})

export const AdminWorkspace = Type.Object({
  id: Type.String(),
  name: Type.String(),
  description: Type.Union([Type.String(), Type.Null()]),
  repositories: Type.Array(Type.Integer()),
  pipelines: Type.Array(Type.Object({
    id: Type.String(),
    name: Type.String(),
    host_label: Type.Optional(Type.Union([Type.String(), Type.Null()], { description: 'the issue-host label this pipeline writes (two-way sync; GET /p2/workspaces)' }))
  }))
})
export const CreateWorkspaceBody = Type.Object({
  name: Type.String({ minLength: 1, maxLength: 200 }),
  description: Type.Optional(Type.Union([Type.String({ maxLength: 2000 }), Type.Null()])),
  repositories: Type.Array(PositiveInt, { maxItems: 1000 }),
  pipelines: Type.Array(PipelineName, { minItems: 1, maxItems: 100 })
}, { additionalProperties: false })
export const WorkspaceParams = Type.Object({ workspace_id: ObjectId })
export const WorkspacePermissionParams = Type.Object({ workspace_id: ObjectId, login: Login })
export const WorkspacePermissionReply = Type.Object({
  workspace_id: Type.String(),
  login: Type.String(),
  permission: Type.String(),
  repositories: Type.Array(Type.Integer(), { description: 'the workspace\'s repositories, each now with this permission' })
})
export const PipelineParams = Type.Object({ workspace_id: ObjectId, pipeline_id: ObjectId })
export const DeletePipelineQuery = Type.Object({
  destination_pipeline_id: Type.String({ minLength: 1, maxLength: 100, description: 'the pipeline of the same workspace its issues move to (at the end, in their order)' })
}, { additionalProperties: false })
export const UpdateWorkspaceBody = Type.Object({
  name: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
  description: Type.Optional(Type.Union([Type.String({ maxLength: 2000 }), Type.Null()])),
  add_repositories: Type.Optional(Type.Array(PositiveInt, { maxItems: 1000 })),
  remove_repositories: Type.Optional(Type.Array(PositiveInt, { maxItems: 1000 })),
  pipelines: Type.Optional(Type.Array(Type.Object({
    id: Type.Optional(ObjectId),
    name: PipelineName
  }, { additionalProperties: false }), { minItems: 1, maxItems: 100 }))
}, { additionalProperties: false, minProperties: 1 })

export const ChatRoleBody = Type.Object({
  role: Type.Union([Type.Literal('viewer'), Type.Literal('moderator'), Type.Literal('broadcaster')])
}, { additionalProperties: false })
export const ChatRoleReply = Type.Object({ login: Type.String(), role: Type.String() })

export const ImportReply = Type.Object({
  users: Type.Integer(),
  repositories: Type.Integer(),
  milestones: Type.Integer(),
  issues: Type.Integer(),
  workspaces: Type.Integer(),
  issue_events: Type.Integer(),
  epics: Type.Integer(),
  dependencies: Type.Integer(),
  release_reports: Type.Integer(),
  zenhub_epics: Type.Integer()
})

export const ConnectionKind = Type.Union([Type.Literal('github'), Type.Literal('gitea'), Type.Literal('forgejo')])
const OAuthClientId = Type.String({ pattern: '^[\\x21-\\x7e]{1,200}$', description: 'the client id of the host\'s OAuth app (sign-in through the host)' })
const OAuthClientSecret = Type.String({ minLength: 1, maxLength: 500, description: 'its client secret; sealed, never shown again' })
const HttpUrl = Type.String({ pattern: '^https?://[^\\s/]+(/[^\\s]*)?$', maxLength: 500 })
export const CreateConnectionBody = Type.Object({
  kind: ConnectionKind,
  web_url: Type.Optional(HttpUrl),
  api_url: Type.Optional(HttpUrl),
  secret: Type.Optional(Type.String({ minLength: 16, maxLength: 200, description: 'the webhook secret (generated when not given)' })),
  token: Type.Optional(Type.String({ minLength: 1, maxLength: 500, description: 'an API token for imports; never shown again' })),
  oauth_client_id: Type.Optional(OAuthClientId),
  oauth_client_secret: Type.Optional(OAuthClientSecret)
}, { additionalProperties: false })
/** Set (or with null, clear) the token and the OAuth app of a connection; the OAuth id and secret go together. */
export const UpdateConnectionBody = Type.Object({
  token: Type.Optional(Type.Union([Type.String({ minLength: 1, maxLength: 500 }), Type.Null()], { description: 'an API token for imports; never shown again' })),
  oauth_client_id: Type.Optional(Type.Union([OAuthClientId, Type.Null()])),
  oauth_client_secret: Type.Optional(Type.Union([OAuthClientSecret, Type.Null()]))
}, { additionalProperties: false, minProperties: 1 })
export const ConnectionReply = Type.Object({
  id: Type.String(),
  kind: ConnectionKind,
  web_url: Type.String(),
  api_url: Type.String(),
  webhook_path: Type.String({ description: 'append to this server\'s address: the payload URL to paste in the webhook settings' }),
  secret: Type.Optional(Type.String({ description: 'shown in the answer that created the connection only' })),
  has_token: Type.Boolean(),
  has_oauth: Type.Boolean({ description: 'people can sign in through this host (its OAuth app is set)' }),
  oauth_client_id: Type.Union([Type.String(), Type.Null()]),
  sign_in_callback_path: Type.String({ description: 'append to PUBLIC_URL: the callback URL to register in the host\'s OAuth app' }),
  created_at: Type.String()
})
export const ConnectionParams = Type.Object({ id: ObjectId })
/** `owner/name`: exactly one `/`, letters, digits, `-` (and `.`, `_` in the name), no `..`, not `.` alone. */
export const RepositoryFullName = Type.String({
  pattern: '^(?!.*\\.\\.)[A-Za-z0-9][A-Za-z0-9._-]{0,38}/(?!\\.$)[A-Za-z0-9._-]{1,100}$',
  maxLength: 140,
  description: 'owner/name, as the host spells them'
})
export const CreateImportBody = Type.Object({
  repository: RepositoryFullName
}, { additionalProperties: false })
/** One of a connection's last deliveries: the event, when, and what came of it. */
export const LoggedDelivery = Type.Object({
  received_at: Type.String(),
  event: Type.String(),
  action: Type.Union([Type.String(), Type.Null()]),
  result: Type.Union(['pong', 'handled', 'ignored', 'duplicate', 'stale', 'failed'].map((r) => Type.Literal(r))),
  detail: Type.Union([Type.String({ description: 'why it was ignored or failed' }), Type.Null()])
})
export const RepositoryImport = Type.Object({
  id: Type.String(),
  connection_id: Type.String(),
  repository: Type.String(),
  state: Type.Union([Type.Literal('queued'), Type.Literal('running'), Type.Literal('done'), Type.Literal('failed')]),
  repo_id: Type.Union([Type.Integer(), Type.Null()]),
  issues: Type.Integer(),
  pull_requests: Type.Integer(),
  milestones: Type.Integer(),
  collaborators: Type.Integer(),
  error: Type.Union([Type.String(), Type.Null()]),
  created_at: Type.String(),
  updated_at: Type.String()
})
