import { Type, Estimate, PipelineRef, IssueState } from './common.js'

export const IssueData = Type.Object({
  estimate: Type.Optional(Estimate),
  plus_ones: Type.Array(Type.Object({ created_at: Type.String() })),
  pipeline: Type.Optional(PipelineRef),
  pipelines: Type.Array(PipelineRef),
  is_epic: Type.Boolean(),
  status: IssueState
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
})

export const EstimateReply = Type.Object({ estimate: Type.Union([Type.Number(), Type.Null()]) })
