import { Type, IssueRef, ObjectId, PositiveInt, IssueState } from './common.js'

const DateTime = Type.String({ format: 'date-time', description: 'ISO 8601 date-time' })

export const ReleaseReport = Type.Object({
  release_id: Type.String(),
  title: Type.String(),
  description: Type.String(),
  start_date: Type.String(),
  desired_end_date: Type.String(),
  created_at: Type.String(),
  closed_at: Type.Union([Type.String(), Type.Null()]),
  state: IssueState,
  repositories: Type.Array(Type.Integer())
})

export const ReleaseReportSummary = Type.Omit(ReleaseReport, ['repositories'])

export const CreateReleaseBody = Type.Object({
  title: Type.String({ minLength: 1, maxLength: 500 }),
  description: Type.Optional(Type.String({ maxLength: 10_000 })),
  start_date: DateTime,
  desired_end_date: DateTime,
  repositories: Type.Optional(Type.Array(PositiveInt, { maxItems: 100 }))
})

export const UpdateReleaseBody = Type.Object({
  title: Type.String({ minLength: 1, maxLength: 500 }),
  description: Type.Optional(Type.String({ maxLength: 10_000 })),
  start_date: Type.Optional(DateTime),
  desired_end_date: Type.Optional(DateTime),
  state: Type.Optional(IssueState)
})

export const ReleaseParams = Type.Object({ release_id: ObjectId })
export const ReleaseRepoParams = Type.Object({ release_id: ObjectId, repo_id: PositiveInt })

const IssueRefs = Type.Array(IssueRef, { maxItems: 1000 })
export const UpdateReleaseIssuesBody = Type.Object({ add_issues: IssueRefs, remove_issues: IssueRefs })
export const UpdateReleaseIssuesReply = Type.Object({ added: Type.Array(IssueRef), removed: Type.Array(IssueRef) })
