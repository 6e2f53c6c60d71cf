import { Type, type Static, Login, PositiveInt, IssueState } from './common.js'

export const PermissionName = Type.Union([Type.Literal('read'), Type.Literal('write'), Type.Literal('push'), Type.Literal('admin'), Type.Literal('none')])
const PipelineSpec = Type.Union([
  Type.String({ minLength: 1, maxLength: 200 }),
  Type.Object({ id: Type.Optional(Type.String({ pattern: '^[A-Za-z0-9_-]{1,100}$' })), name: Type.String({ minLength: 1, maxLength: 200 }) }, { additionalProperties: false })
])

/** The fixture format (README, "Fixtures") (SEED_FILE, the demo, POST /admin/import, tests). */
export const Fixture = Type.Object({
  users: Type.Optional(Type.Array(Type.Object({
    id: Type.Optional(PositiveInt),
    login: Login,
    token: Type.Optional(Type.String({ minLength: 8, maxLength: 200 }))
  }, { additionalProperties: false }))),
  repositories: Type.Optional(Type.Array(Type.Object({
    id: PositiveInt,
    owner: Login,
    name: Type.String({ minLength: 1, maxLength: 100, pattern: '^[A-Za-z0-9_.-]+$' }),
    permissions: Type.Optional(Type.Record(Type.String(), PermissionName))
  }, { additionalProperties: false }))),
  milestones: Type.Optional(Type.Array(Type.Object({
    repo_id: PositiveInt,
    number: PositiveInt,
    title: Type.String({ minLength: 1, maxLength: 500 }),
    start_date: Type.Optional(Type.String({ format: 'date-time' }))
  }, { additionalProperties: false }))),
  issues: Type.Optional(Type.Array(Type.Object({
    repo_id: PositiveInt,
    number: PositiveInt,
    title: Type.String({ minLength: 1, maxLength: 1000 }),
    state: Type.Optional(IssueState),
    estimate: Type.Optional(Type.Number({ minimum: 0 })),
    author: Type.Optional(Login),
    plus_ones: Type.Optional(Type.Array(Type.String({ format: 'date-time' }))),
    pipelines: Type.Optional(Type.Record(Type.String(), Type.String({ minLength: 1 }), {
      description: 'pipeline (id or name) per workspace id; default: the workspace\'s first pipeline'
    }))
  }, { additionalProperties: false }))),
  workspaces: Type.Optional(Type.Array(Type.Object({
    id: Type.Optional(Type.String({ pattern: '^[A-Za-z0-9_-]{1,100}$' })),
    name: Type.String({ minLength: 1, maxLength: 200 }),
    description: Type.Optional(Type.Union([Type.String({ maxLength: 2000 }), Type.Null()])),
    created_at: Type.Optional(Type.String({ format: 'date-time' })),
    repositories: Type.Array(PositiveInt),
    pipelines: Type.Array(PipelineSpec, { minItems: 1 })
  }, { additionalProperties: false }))),
  chat: Type.Optional(Type.Object({
    broadcaster: Type.Optional(Login),
    moderators: Type.Optional(Type.Array(Login))
  }, { additionalProperties: false }))
}, { additionalProperties: false })

export type Fixture = Static<typeof Fixture>
