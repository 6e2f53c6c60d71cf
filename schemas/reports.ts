import { Type, ObjectId, PositiveInt } from './common.js'

// Reports (docs, "Sprints and reports"): extensions beyond the hosted API.

export const Burndown = Type.Object({
  time_zone: Type.String({ description: 'the zone whose days the series counts' }),
  starts_at: Type.String(),
  ends_at: Type.String(),
  days: Type.Array(Type.Object({
    date: Type.String({ description: 'YYYY-MM-DD in time_zone; measured at the end of the day (or now, for today)' }),
    remaining_points: Type.Number(),
    remaining_issues: Type.Integer(),
    closed_points: Type.Number()
  }), { description: 'up to today: days after today are absent' }),
  ideal: Type.Union([Type.Array(Type.Object({ date: Type.String(), remaining_points: Type.Number() })), Type.Null()], {
    description: 'every day of the period, from the points at the start to 0; null for a milestone without a due date (its series runs to today)'
  }),
  scope_changes: Type.Array(Type.Object({
    at: Type.String(),
    repo_id: Type.Integer(),
    issue_number: Type.Integer(),
    change: Type.Union([Type.Literal('added'), Type.Literal('removed'), Type.Literal('estimate')]),
    points: Type.Number({ description: 'the issue\'s estimate (added, removed) or the change of it (estimate)' })
  }))
})

export const Velocity = Type.Object({
  sprints: Type.Array(Type.Object({
    id: Type.String(),
    name: Type.String(),
    starts_at: Type.String(),
    ends_at: Type.String(),
    points_closed: Type.Number(),
    issues_closed: Type.Integer()
  })),
  average_points: Type.Number(),
  average_issues: Type.Number()
})

export const CycleTime = Type.Object({
  from: Type.String(),
  to: Type.String(),
  start_pipeline_id: Type.Union([Type.String(), Type.Null()]),
  issues: Type.Array(Type.Object({
    repo_id: Type.Integer(),
    issue_number: Type.Integer(),
    title: Type.String(),
    started_at: Type.String(),
    closed_at: Type.String(),
    days: Type.Number()
  })),
  count: Type.Integer(),
  p50: Type.Union([Type.Number(), Type.Null()], { description: 'days; null when no issue counts' }),
  p85: Type.Union([Type.Number(), Type.Null()]),
  p95: Type.Union([Type.Number(), Type.Null()])
})

const Format = Type.Optional(Type.Union([Type.Literal('json'), Type.Literal('csv')], { description: 'csv: a header row and one row per item' }))
const Zone = Type.Optional(Type.String({ minLength: 1, maxLength: 64, description: 'an IANA time zone for the days (default: the workspace\'s sprint time zone, else UTC)' }))

export const BurndownQuery = Type.Object({ format: Format, time_zone: Zone })
export const VelocityQuery = Type.Object({ format: Format, sprints: Type.Integer({ minimum: 1, maximum: 50, default: 6, description: 'how many of the last closed sprints' }) })
export const CycleTimeQuery = Type.Object({
  format: Format,
  from: Type.Optional(Type.String({ format: 'date-time', description: 'closed at or after (default: 90 days before to)' })),
  to: Type.Optional(Type.String({ format: 'date-time', description: 'closed before (default: now)' })),
  start_pipeline_id: Type.Optional(ObjectId)
})
export const MilestoneReportParams = Type.Object({ repo_id: PositiveInt, milestone_number: PositiveInt })
export const ReleaseReportParams = Type.Object({ release_id: ObjectId })
