import { Type, IssueRef, ObjectId } from './common.js'

// Sprints (docs, "Sprints and reports"): an extension beyond the hosted API.

export const SprintConfig = Type.Object({
  length_weeks: Type.Integer({ minimum: 1, maximum: 4, description: 'sprint length in weeks' }),
  starts_on: Type.String({ pattern: '^\\d{4}-\\d{2}-\\d{2}$', description: 'the first sprint\'s first day (YYYY-MM-DD); sprints start at 00:00 in time_zone' }),
  time_zone: Type.String({ minLength: 1, maxLength: 64, description: 'an IANA time zone, e.g. Europe/Berlin; also the zone of the workspace\'s reports' }),
  carry_over: Type.Boolean({ default: true, description: 'move a sprint\'s open issues to the next one when it ends' })
}, { additionalProperties: false, examples: [{ length_weeks: 2, starts_on: '2026-11-23', time_zone: 'Europe/Berlin', carry_over: true }] })

export const SprintState = Type.Union([Type.Literal('active'), Type.Literal('future'), Type.Literal('closed')])

export const Sprint = Type.Object({
  id: Type.String(),
  workspace_id: Type.String(),
  name: Type.String(),
  starts_at: Type.String(),
  ends_at: Type.String(),
  state: SprintState,
  issues_total: Type.Integer({ description: 'issues of repositories you can read' }),
  issues_closed: Type.Integer({ description: 'closed by now (by the end, for a closed sprint)' }),
  points_total: Type.Number(),
  points_closed: Type.Number()
})

export const WorkspaceParams = Type.Object({ workspace_id: ObjectId })
export const SprintParams = Type.Object({ sprint_id: ObjectId })
export const SprintsQuery = Type.Object({ state: Type.Optional(SprintState) })

export const SprintIssuesBody = Type.Object({
  issues: Type.Array(IssueRef, { minItems: 1, maxItems: 100 })
}, { additionalProperties: false, examples: [{ issues: [{ repo_id: 103707262, issue_number: 3 }] }] })
export const SprintIssuesAdded = Type.Object({ added: Type.Array(IssueRef) })
export const SprintIssuesRemoved = Type.Object({ removed: Type.Array(IssueRef) })

const Tally = Type.Object({ issues: Type.Integer(), points: Type.Number() })
const Moment = Type.Object({ repo_id: Type.Integer(), issue_number: Type.Integer(), at: Type.String(), points: Type.Number() })

export const SprintReview = Type.Object({
  sprint: Sprint,
  committed: Tally,
  completed: Tally,
  added: Type.Array(Type.Intersect([Moment, Type.Object({ carried: Type.Boolean({ description: 'carried over from the sprint before' }) })])),
  removed: Type.Array(Moment),
  carried_over: Type.Array(Type.Object({ repo_id: Type.Integer(), issue_number: Type.Integer(), points: Type.Number(), to_sprint_id: Type.String() })),
  velocity: Type.Object({
    sprints: Type.Array(Type.Object({ id: Type.String(), name: Type.String(), points: Type.Number(), issues: Type.Integer() })),
    average_points: Type.Number(),
    average_issues: Type.Number()
  }, { description: 'the last six closed sprints of the workspace' })
})

export const SprintEvent = Type.Object({
  id: Type.Integer(),
  type: Type.Union(['sprint_started', 'sprint_ended', 'sprint_issue_added', 'sprint_issue_removed'].map((t) => Type.Literal(t))),
  sprint_id: Type.String(),
  at: Type.String(),
  repo_id: Type.Optional(Type.Integer()),
  issue_number: Type.Optional(Type.Integer()),
  user_id: Type.Optional(Type.Integer()),
  carried: Type.Boolean()
})
export const SprintEventsQuery = Type.Object({
  after: Type.Integer({ minimum: 0, default: 0, description: 'the id of the last event seen (0: from the start)' }),
  limit: Type.Integer({ minimum: 1, maximum: 100, default: 50 })
})
