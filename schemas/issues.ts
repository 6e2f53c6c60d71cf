import { Type, Estimate, PipelineRef, IssueState } from './common.js'

export const IssueData = Type.Object({
  estimate: Type.Optional(Estimate),
  plus_ones: Type.Array(Type.Object({ created_at: Type.String() })),
  pipeline: Type.Optional(PipelineRef),
  pipelines: Type.Array(PipelineRef),
  is_epic: Type.Boolean(),
  status: IssueState
})

/** One issue's data: the hosted shape, and its description when it has one (extension; never in the list reads). */
export const IssueDetail = Type.Object({
  ...IssueData.properties,
  body: Type.Optional(Type.String({ description: 'the issue host\'s description, Markdown (absent: none)' }))
})

export const IssueEvent = Type.Object({
  user_id: Type.Optional(Type.Integer()),
  type: Type.Union([Type.Literal('estimateIssue'), Type.Literal('transferIssue')]),
  created_at: Type.String(),
  from_estimate: Type.Optional(Estimate),
  to_estimate: Type.Optional(Estimate),
  from_pipeline: Type.Optional(Type.Object({ name: Type.String() })),
  to_pipeline: Type.Optional(Type.Object({ name: Type.String() })),
  workspace_id: Type.Optional(Type.String())
})

export const EstimateBody = Type.Object({
  estimate: Type.Union([Type.Number({ minimum: 0, maximum: 1e9 }), Type.Null()], {
    description: 'a non-negative number; null clears the estimate'
  })
}, { examples: [{ estimate: 5 }] })

export const EstimateReply = Type.Object({ estimate: Type.Union([Type.Number(), Type.Null()]) })

// Extensions beyond the hosted API (docs/extensions.md).

export const BulkIssuesQuery = Type.Object({
  issue_numbers: Type.String({ pattern: '^[1-9][0-9]{0,15}(,[1-9][0-9]{0,15})*$', maxLength: 2000, description: 'comma-separated issue numbers, at most 100, e.g. 1,2,3' })
})
export const BulkIssue = Type.Intersect([Type.Object({
  issue_number: Type.Integer(),
  title: Type.String(),
  html_url: Type.Union([Type.String(), Type.Null()], { description: 'the issue\'s page on its issue host; null for a repository with no issue host (made here)' }),
  pull_request: Type.Boolean({ description: 'true for a pull request (the issue host\'s; same number space as issues)' }),
  labels: Type.Array(Type.Object({ name: Type.String(), color: Type.Union([Type.String(), Type.Null()]) }), { description: 'the issue host\'s labels (two-way sync)' }),
  assignees: Type.Array(Type.Object({ login: Type.String(), avatar_url: Type.Union([Type.String(), Type.Null()]) }), { description: 'the issue host\'s assignees' }),
  milestone: Type.Optional(Type.Object({
    number: Type.Integer(),
    title: Type.String(),
    due_on: Type.Union([Type.String(), Type.Null()]),
    state: IssueState
  }, { description: 'the issue\'s milestone (absent: none)' }))
}), IssueData])

const Since = Type.String({ format: 'date-time', description: 'ISO 8601, e.g. 2026-11-01T00:00:00Z' })

export const EventsQuery = Type.Object({
  since: Type.Optional(Since),
  limit: Type.Integer({ minimum: 1, maximum: 100, default: 50 }),
  cursor: Type.Optional(Type.String({ minLength: 1, maxLength: 200, description: 'next_cursor of the previous page' }))
})
/** Every issue event type: the hosted API's two, and the host's label and assignee changes (extension). */
export const FeedEventType = Type.Union([
  Type.Literal('estimateIssue'), Type.Literal('transferIssue'),
  Type.Literal('labelIssue'), Type.Literal('unlabelIssue'), Type.Literal('assignIssue'), Type.Literal('unassignIssue')
])

/** The feed's events: the hosted API's two types, and the host's label and assignee changes (extension). */
export const FeedEvent = Type.Object({
  issue_number: Type.Integer(),
  ...Type.Omit(IssueEvent, ['type']).properties,
  type: FeedEventType,
  label: Type.Optional(Type.Object({ name: Type.String() }, { description: 'labelIssue and unlabelIssue: the label put on or taken off' })),
  assignee: Type.Optional(Type.Object({ login: Type.String() }, { description: 'assignIssue and unassignIssue: the person assigned or unassigned' }))
})
export const EventsPage = Type.Object({
  data: Type.Array(FeedEvent),
  next_cursor: Type.Union([Type.String(), Type.Null()], { description: 'pass as cursor for what comes after this page (also to poll); null when there are no events yet' })
})

export const ChangedQuery = Type.Object({ since: Since })
export const ChangedReply = Type.Object({
  issue_numbers: Type.Array(Type.Integer()),
  as_of: Type.String({ description: 'the server time of this answer: pass it as since next time' })
})

export const PipelineDuration = Type.Object({
  workspace_id: Type.String(),
  pipeline_id: Type.Union([Type.String(), Type.Null()], { description: 'null when the pipeline no longer exists' }),
  pipeline_name: Type.String(),
  seconds: Type.Number(),
  entered_at: Type.String(),
  left_at: Type.Union([Type.String(), Type.Null()])
})
