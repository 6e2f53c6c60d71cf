import { Type, Estimate, ObjectId, PositiveInt } from './common.js'

// Reads the board page needs beyond the hosted API (docs/board-page.md, "Reads for the board page").

export const WorkspaceParams = Type.Object({ workspace_id: ObjectId })

export const NamedRepository = Type.Object({
  id: Type.Integer(),
  owner: Type.String(),
  name: Type.String(),
  html_url: Type.Union([Type.String(), Type.Null()], { description: 'the repository\'s page on its issue host; null for one with no issue host (made here)' })
})

export const ClosedIssuesQuery = Type.Object({
  limit: Type.Integer({ minimum: 1, maximum: 100, default: 50 }),
  before: Type.Optional(Type.Integer({ minimum: 1, maximum: Number.MAX_SAFE_INTEGER, description: 'next_before of the previous page: only issues numbered below it' }))
})

export const ClosedIssue = Type.Object({
  issue_number: Type.Integer(),
  title: Type.String(),
  html_url: Type.Union([Type.String(), Type.Null()], { description: 'the issue\'s page on its issue host; null for a repository with no issue host' }),
  estimate: Type.Optional(Estimate),
  is_epic: Type.Boolean()
})

export const ClosedIssuesPage = Type.Object({
  data: Type.Array(ClosedIssue),
  next_before: Type.Union([PositiveInt, Type.Null()], { description: 'pass as `before` for the next page; null on the last' }),
  total: Type.Integer({ minimum: 0, description: 'how many closed issues the repository holds' })
})

export const SprintParams = Type.Object({ sprint_id: ObjectId })

export const SprintIssues = Type.Object({
  issues: Type.Array(Type.Object({ repo_id: Type.Integer(), issue_number: Type.Integer() }), { description: 'issues of repositories you can read, by repository and number' })
})
