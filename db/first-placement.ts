import { unprioritizedRank } from './ranking.js'

/** Where a new issue lands on one workspace's board, and the pipeline it lands in. */
export interface FirstPlacement {
  issueId: number
  repoId: number
  number: number
  open: boolean
  workspaceId: string
  pipeline: { id: string, name: string }
}

/** The placements row of a new issue: unprioritized, so ranked by its number. */
export function placementRow (at: FirstPlacement) {
  return {
    issue_id: at.issueId,
    workspace_id: at.workspaceId,
    pipeline_id: at.pipeline.id,
    repo_id: at.repoId,
    number: at.number,
    is_open: at.open ? 1 : 0,
    position: null,
    rank: unprioritizedRank(at.number)
  }
}

/** The event saying who put a new issue in its first pipeline (a transfer from nowhere). */
export function placedEventRow (at: FirstPlacement, userId: number, now: string) {
  return {
    issue_id: at.issueId,
    user_id: userId,
    type: 'transferIssue' as const,
    created_at: now,
    to_pipeline: at.pipeline.name,
    workspace_id: at.workspaceId,
    from_estimate: null,
    to_estimate: null,
    from_pipeline: null
  }
}
