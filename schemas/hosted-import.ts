import { Type, type Static, ObjectId, PositiveInt } from './common.js'

const HttpUrl = Type.String({ pattern: '^https?://[^\\s/]+(/[^\\s]*)?$', maxLength: 500 })

export const CreateHostedImportBody = Type.Object({
  api_url: Type.Optional(HttpUrl),
  token: Type.String({ minLength: 1, maxLength: 500, description: 'a hosted API token; kept (encrypted) only while the import runs' }),
  repositories: Type.Array(PositiveInt, { minItems: 1, maxItems: 500, description: 'repository ids on the hosted service' }),
  closed_issues: Type.Optional(Type.Boolean({ description: 'also read the issue data (estimate, last pipeline) of the closed issues known here' })),
  issue_events: Type.Optional(Type.Boolean({ description: 'also read the events of each issue known here (one request per issue)' }))
}, { additionalProperties: false })

export const HostedImportState = Type.Union(['queued', 'running', 'waiting', 'done', 'failed'].map((s) => Type.Literal(s)))

export const HostedImport = Type.Object({
  id: Type.String(),
  api_url: Type.String(),
  repositories: Type.Array(Type.Integer()),
  state: HostedImportState,
  requests: Type.Integer(),
  estimated_requests: Type.Integer({ description: 'grows as the lists (workspaces, epics, reports) are read' }),
  waited_seconds: Type.Integer({ description: 'time spent waiting for the hosted rate limit' }),
  workspaces: Type.Integer(),
  pipelines: Type.Integer(),
  issues_placed: Type.Integer(),
  estimates: Type.Integer(),
  epics: Type.Integer(),
  dependencies: Type.Integer(),
  release_reports: Type.Integer(),
  milestone_start_dates: Type.Integer(),
  issue_events: Type.Integer(),
  warnings: Type.Array(Type.String()),
  error: Type.Optional(Type.String()),
  created_at: Type.String(),
  updated_at: Type.String()
})
export type HostedImport = Static<typeof HostedImport>

export const HostedImportParams = Type.Object({ id: ObjectId })

// What the hosted API answers, checked before anything is written. Unknown fields are ignored.

const Id = Type.String({ minLength: 1, maxLength: 100, pattern: '^[A-Za-z0-9_-]+$' })
const Name = Type.String({ minLength: 1, maxLength: 200 })
const Number_ = Type.Integer({ minimum: 1, maximum: Number.MAX_SAFE_INTEGER })
const Estimate = Type.Object({ value: Type.Number({ minimum: 0, maximum: 1e9 }) })
const Ref = Type.Object({ repo_id: Number_, issue_number: Number_ })
const Time = Type.String({ format: 'date-time', maxLength: 40 })

export const RemoteWorkspaces = Type.Array(Type.Object({
  id: Id,
  name: Name,
  description: Type.Optional(Type.Union([Type.String({ maxLength: 2000 }), Type.Null()])),
  repositories: Type.Optional(Type.Array(Number_, { maxItems: 10_000 }))
}), { maxItems: 1000 })

export const RemoteBoard = Type.Object({
  pipelines: Type.Array(Type.Object({
    id: Id,
    name: Name,
    issues: Type.Array(Type.Object({
      issue_number: Number_,
      estimate: Type.Optional(Estimate),
      position: Type.Optional(Type.Integer({ minimum: 0, maximum: Number.MAX_SAFE_INTEGER })),
      is_epic: Type.Optional(Type.Boolean())
    }), { maxItems: 100_000 })
  }), { minItems: 1, maxItems: 100 })
})

export const RemoteEpicList = Type.Object({
  epic_issues: Type.Array(Type.Object({ issue_number: Number_, repo_id: Number_ }), { maxItems: 100_000 })
})

export const RemoteEpic = Type.Object({
  estimate: Type.Optional(Estimate),
  issues: Type.Array(Type.Object({ issue_number: Number_, repo_id: Number_ }), { maxItems: 100_000 })
})

export const RemoteDependencies = Type.Object({
  dependencies: Type.Array(Type.Object({ blocking: Ref, blocked: Ref }), { maxItems: 100_000 })
})

const ReportFields = {
  release_id: Id,
  title: Type.String({ minLength: 1, maxLength: 500 }),
  description: Type.Optional(Type.Union([Type.String({ maxLength: 10_000 }), Type.Null()])),
  start_date: Time,
  desired_end_date: Time,
  created_at: Type.Optional(Time),
  closed_at: Type.Optional(Type.Union([Time, Type.Null()])),
  state: Type.Optional(Type.Union([Type.Literal('open'), Type.Literal('closed')]))
}
export const RemoteReportList = Type.Array(Type.Object(ReportFields), { maxItems: 10_000 })
export const RemoteReport = Type.Object({ ...ReportFields, repositories: Type.Array(Number_, { minItems: 1, maxItems: 1000 }) })
export const RemoteReportIssues = Type.Array(Ref, { maxItems: 100_000 })

export const RemoteStartDate = Type.Object({ start_date: Time })

export const RemoteIssueData = Type.Object({
  estimate: Type.Optional(Estimate),
  pipelines: Type.Optional(Type.Array(Type.Object({ pipeline_id: Id, workspace_id: Id }), { maxItems: 1000 }))
})

export const RemoteEvents = Type.Array(Type.Object({
  user_id: Type.Optional(Type.Integer({ minimum: 0, maximum: Number.MAX_SAFE_INTEGER })),
  type: Type.Union([Type.Literal('estimateIssue'), Type.Literal('transferIssue')]),
  created_at: Time,
  from_estimate: Type.Optional(Estimate),
  to_estimate: Type.Optional(Estimate),
  from_pipeline: Type.Optional(Type.Object({ name: Name })),
  to_pipeline: Type.Optional(Type.Object({ name: Name })),
  workspace_id: Type.Optional(Id)
}), { maxItems: 10_000 })
