import { Type, type Static } from '@sinclair/typebox'

export { Type, type Static }

/** Positive integer ids used in paths and bodies (repo_id, issue_number, milestone_number). */
export const PositiveInt = Type.Integer({ minimum: 1, maximum: Number.MAX_SAFE_INTEGER })

/** A user or repository-owner login, as the hosting platform allows them. */
export const Login = Type.String({ minLength: 1, maxLength: 100, pattern: '^[A-Za-z0-9][A-Za-z0-9_.-]*$' })

export const ObjectId = Type.String({ minLength: 1, maxLength: 100 })

export const Timestamp = Type.String({ format: 'date-time' })

export const ErrorBody = Type.Object({
  statusCode: Type.Integer(),
  error: Type.String(),
  message: Type.String()
}, { description: 'Every error has this shape' })

export const Estimate = Type.Object({ value: Type.Number() })

export const PipelineRef = Type.Object({
  name: Type.String(),
  pipeline_id: Type.String(),
  workspace_id: Type.String()
})

export const IssueRef = Type.Object({
  repo_id: PositiveInt,
  issue_number: PositiveInt
})
export type IssueRef = Static<typeof IssueRef>

// Examples from the demo data, so "Try it out" works on a fresh start.
const RepoId = Type.Integer({ minimum: 1, maximum: Number.MAX_SAFE_INTEGER, examples: [103707262] })
const IssueNumber = Type.Integer({ minimum: 1, maximum: Number.MAX_SAFE_INTEGER, examples: [3] })

export const RepoParams = Type.Object({ repo_id: RepoId })
export const LoginParams = Type.Object({ login: Login })

/** An issue's open/closed state, as the issue-hosting platforms have it. */
export const IssueState = Type.Union([Type.Literal('open'), Type.Literal('closed')])
export const IssueParams = Type.Object({ repo_id: RepoId, issue_number: IssueNumber })

/** Responses of the usual error statuses, for the route schemas. */
export const errorResponses = {
  400: ErrorBody,
  401: ErrorBody,
  403: ErrorBody,
  404: ErrorBody
}

/** Documented "200, empty body" responses. */
export const EmptyBody = Type.Unsafe<undefined>({ description: 'empty body' })
