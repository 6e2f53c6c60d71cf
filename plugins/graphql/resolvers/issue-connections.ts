import type { IssueNode } from '../../../db/graph-reads.js'
import { listConnection, type PageArgs } from '../connections.js'
import { issueObject } from './objects.js'

/** A connection over issues read whole (a handful: an issue's blockers), with its counts. */
export function smallIssueConnection (rows: IssueNode[], args: PageArgs) {
  const conn = listConnection(rows.map(issueObject), (i) => String(i.id), args)
  const prs = rows.filter((r) => r.is_pull_request === 1).length
  return {
    ...conn,
    pipelineCounts: {
      issuesCount: rows.length - prs,
      pullRequestsCount: prs,
      sumEstimates: rows.reduce((s, r) => s + (r.estimate ?? 0), 0),
      unfilteredIssueCount: null,
      unfilteredSumEstimates: null
    }
  }
}
