import { Type, Estimate, ObjectId, PositiveInt } from './common.js'

export const Workspace = Type.Object({
  id: Type.String(),
  name: Type.String(),
  description: Type.Union([Type.String(), Type.Null()]),
  repositories: Type.Array(Type.Integer())
})

export const BoardIssue = Type.Object({
  issue_number: Type.Integer(),
  is_epic: Type.Boolean(),
  estimate: Type.Optional(Estimate),
  position: Type.Optional(Type.Integer({ minimum: 0 }))
})

export const Board = Type.Object({
  pipelines: Type.Array(Type.Object({
    id: Type.String(),
    name: Type.String(),
    issues: Type.Array(BoardIssue),
    issues_total: Type.Optional(Type.Integer({ description: 'a paged read (`limit`): the pipeline\'s open issues of the repository, all pages' })),
    points_total: Type.Optional(Type.Number({ description: 'a paged read: the sum of their estimates' })),
    next_after: Type.Optional(Type.Union([Type.Integer(), Type.Null()], { description: 'a paged read: the `after` of the next page (with this `pipeline_id`), null on the last' }))
  }))
})

export const WorkspaceRepoParams = Type.Object({ workspace_id: ObjectId, repo_id: PositiveInt })
export const WorkspaceIssueParams = Type.Object({ workspace_id: ObjectId, repo_id: PositiveInt, issue_number: PositiveInt })

export const MoveBody = Type.Object({
  pipeline_id: Type.String({ minLength: 1, maxLength: 100 }),
  position: Type.Union([Type.String({ maxLength: 20 }), Type.Integer()], {
    description: '"top", "bottom" or a 0-based index (a number or a numeric string)'
  })
}, { examples: [{ pipeline_id: '5d0a7a9741fd098f6b7f58a3', position: 'top' }] })

// 1 to 20 comma-separated names of 1 to 100 characters; a comma only separates, so it matches in linear time.
const NAME_LIST = '^[^,]{1,100}(,[^,]{1,100}){0,19}$'

export const BoardQuery = Type.Object({
  pipeline_id: Type.Optional(Type.String({ minLength: 1, maxLength: 100, description: 'only this pipeline (an extension)' })),
  format: Type.Optional(Type.Union([Type.Literal('json'), Type.Literal('csv')], { description: 'csv: one row per issue, for spreadsheets (an extension; also Accept: text/csv)' })),
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 1000, description: 'a paged read (an extension): at most this many issues per pipeline, with each pipeline\'s totals and the cursor of its next page' })),
  after: Type.Optional(Type.Integer({ minimum: 1, maximum: Number.MAX_SAFE_INTEGER, description: 'with `limit` and `pipeline_id`: the page after this issue (a `next_after`)' })),
  q: Type.Optional(Type.String({ maxLength: 200, description: 'with `limit`: issues whose title contains this (case-insensitive), or `#12` / `12`: that issue' })),
  label: Type.Optional(Type.String({ maxLength: 2020, pattern: NAME_LIST, description: 'with `limit`: issues with any of these labels (comma-separated, at most 20)' })),
  assignee: Type.Optional(Type.String({ maxLength: 2020, pattern: NAME_LIST, description: 'with `limit`: issues assigned to any of these logins (comma-separated, at most 20)' })),
  estimate: Type.Optional(Type.String({ maxLength: 30, pattern: '^(none|set|[0-9]{1,6}(\\.[0-9]{1,3})?-[0-9]{1,6}(\\.[0-9]{1,3})?)$', description: 'with `limit`: `none`, `set`, or `low-high` (inclusive)' }))
})

/** The filter parameters of a paged board read (docs/api.md, "Paged boards"). */
export const BOARD_FILTERS = ['q', 'label', 'assignee', 'estimate'] as const

/** A workspace with its repositories and pipelines: what the admin API shows, and GET /p2/workspaces. */
export { AdminWorkspace as WorkspaceSummary } from './admin.js'
