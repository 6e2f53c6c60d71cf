import { Type, Estimate, IssueRef, PipelineRef, PositiveInt } from './common.js'

export const EpicList = Type.Object({
  epic_issues: Type.Array(Type.Object({ issue_number: Type.Integer(), repo_id: Type.Integer(), issue_url: Type.String() }))
})

export const EpicData = Type.Object({
  total_epic_estimates: Estimate,
  estimate: Type.Optional(Estimate),
  pipeline: Type.Optional(PipelineRef),
  pipelines: Type.Array(PipelineRef),
  issues: Type.Array(Type.Object({
    issue_number: Type.Integer(),
    is_epic: Type.Boolean(),
    repo_id: Type.Integer(),
    estimate: Type.Optional(Estimate),
    pipelines: Type.Array(PipelineRef),
    pipeline: Type.Optional(PipelineRef)
  }))
})

export const EpicParams = Type.Object({ repo_id: PositiveInt, epic_id: PositiveInt })

const IssueRefs = Type.Array(IssueRef, { maxItems: 1000 })

export const ConvertToEpicBody = Type.Object({ issues: IssueRefs })

export const UpdateEpicIssuesBody = Type.Object({ remove_issues: IssueRefs, add_issues: IssueRefs })

export const UpdateEpicIssuesReply = Type.Object({
  removed_issues: Type.Array(IssueRef),
  added_issues: Type.Array(IssueRef)
})
