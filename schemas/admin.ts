import { Type, IssueState, Login, PositiveInt, ObjectId } from './common.js'
import { PermissionName } from './fixture.js'

export { Fixture } from './fixture.js'

const PipelineName = Type.String({ minLength: 1, maxLength: 200 })

export const AdminUser = Type.Object({ id: Type.Integer(), login: Type.String() })
export const CreateUserBody = Type.Object({ login: Login, id: Type.Optional(PositiveInt) }, { additionalProperties: false })
export const TokenReply = Type.Object({ token: Type.String() })

export const AdminRepository = Type.Object({
  id: Type.Integer(),
  owner: Type.String(),
  name: Type.String(),
  html_url: Type.Optional(Type.Union([Type.String(), Type.Null()], { description: 'its page on the issue host (null: https://github.com/owner/name)' }))
})
export const CreateRepositoryBody = Type.Object({
  id: PositiveInt,
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
  state: Type.String()
})
export const CreateIssueBody = Type.Object({
  number: PositiveInt,
  title: Type.String({ minLength: 1, maxLength: 1000 }),
  state: Type.Optional(IssueState),
  author: Type.Optional(Login)
}, { additionalProperties: false })
export const IssueNumberParams = Type.Object({ repo_id: PositiveInt, number: PositiveInt })
export const UpdateIssueBody = Type.Object({
  title: Type.Optional(Type.String({ minLength: 1, maxLength: 1000 })),
  state: Type.Optional(IssueState)
}, { additionalProperties: false, minProperties: 1 })

export const CreateMilestoneBody = Type.Object({
  number: PositiveInt,
  title: Type.String({ minLength: 1, maxLength: 500 })
}, { additionalProperties: false })
export const AdminMilestone = Type.Object({ repo_id: Type.Integer(), number: Type.Integer(), title: Type.String() })

export const AdminWorkspace = Type.Object({
  id: Type.String(),
  name: Type.String(),
  description: Type.Union([Type.String(), Type.Null()]),
  repositories: Type.Array(Type.Integer()),
  pipelines: Type.Array(Type.Object({ id: Type.String(), name: Type.String() }))
})
export const CreateWorkspaceBody = Type.Object({
  name: Type.String({ minLength: 1, maxLength: 200 }),
  description: Type.Optional(Type.Union([Type.String({ maxLength: 2000 }), Type.Null()])),
  repositories: Type.Array(PositiveInt, { maxItems: 1000 }),
  pipelines: Type.Array(PipelineName, { minItems: 1, maxItems: 100 })
}, { additionalProperties: false })
export const WorkspaceParams = Type.Object({ workspace_id: ObjectId })
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
  workspaces: Type.Integer()
})

export const ConnectionKind = Type.Union([Type.Literal('github'), Type.Literal('gitea'), Type.Literal('forgejo')])
const HttpUrl = Type.String({ pattern: '^https?://[^\\s/]+(/[^\\s]*)?$', maxLength: 500 })
export const CreateConnectionBody = Type.Object({
  kind: ConnectionKind,
  web_url: Type.Optional(HttpUrl),
  api_url: Type.Optional(HttpUrl),
  secret: Type.Optional(Type.String({ minLength: 16, maxLength: 200, description: 'the webhook secret (generated when not given)' })),
  token: Type.Optional(Type.String({ minLength: 1, maxLength: 500, description: 'an API token for imports; never shown again' }))
}, { additionalProperties: false })
export const ConnectionReply = Type.Object({
  id: Type.String(),
  kind: ConnectionKind,
  web_url: Type.String(),
  api_url: Type.String(),
  webhook_path: Type.String({ description: 'append to this server\'s address: the payload URL to paste in the webhook settings' }),
  secret: Type.Optional(Type.String({ description: 'shown in the answer that created the connection only' })),
  has_token: Type.Boolean(),
  created_at: Type.String()
})
export const ConnectionParams = Type.Object({ id: ObjectId })
export const CreateImportBody = Type.Object({
  repository: Type.String({ pattern: '^[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+$', maxLength: 200, description: 'owner/name' })
}, { additionalProperties: false })
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
