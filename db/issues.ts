import { httpErrors } from '@fastify/sensible'
import { transactional, type Db } from './connection.js'
import type { DomainEvents } from './domain-events.js'
import { nowIso } from './ids.js'
import type { IssueRow, Repository } from './repositories.js'
import type { User } from './users.js'

export interface PipelineRef { name: string, pipeline_id: string, workspace_id: string }

export interface IssueData {
  estimate?: { value: number }
  plus_ones: Array<{ created_at: string }>
  pipeline?: PipelineRef
  pipelines: PipelineRef[]
  is_epic: boolean
  status: 'open' | 'closed'
}

export interface IssueEvent {
  user_id?: number
  type: 'estimateIssue' | 'transferIssue'
  created_at: string
  from_estimate?: { value: number }
  to_estimate?: { value: number }
  from_pipeline?: { name: string }
  to_pipeline?: { name: string }
  workspace_id?: string
}

interface EventRow {
  user_id: number | null
  type: 'estimateIssue' | 'transferIssue'
  created_at: string
  from_estimate: number | null
  to_estimate: number | null
  from_pipeline: string | null
  to_pipeline: string | null
  workspace_id: string | null
}

const PIPELINES_OF = `
  SELECT pl.name, pl.id AS pipeline_id, p.workspace_id
  FROM placements p
  JOIN pipelines pl ON pl.id = p.pipeline_id
  JOIN workspaces w ON w.id = p.workspace_id
  WHERE p.issue_id = ?
  ORDER BY w.created_at, w.seq`

/** Issue data, issue events and estimates. Reads use a fixed number of queries per issue. */
export function createIssuesRepository (db: Db, events: DomainEvents) {
  const issueByNumber = db.prepare<[number, number], IssueRow>(
    'SELECT id, repo_id, number, title, state, estimate, is_epic FROM issues WHERE repo_id = ? AND number = ?')
  const pipelinesOf = db.prepare<[number], PipelineRef>(PIPELINES_OF)
  const plusOnes = db.prepare<[number], { created_at: string }>(
    'SELECT created_at FROM plus_ones WHERE issue_id = ? ORDER BY created_at, id')
  const eventRows = db.prepare<[number], EventRow>(`
    SELECT user_id, type, created_at, from_estimate, to_estimate, from_pipeline, to_pipeline, workspace_id
    FROM issue_events WHERE issue_id = ? ORDER BY created_at DESC, id DESC`)
  const setEstimate = db.prepare<[number | null, number]>('UPDATE issues SET estimate = ? WHERE id = ?')
  const insertEstimateEvent = db.prepare<[number, number, string, number | null, number | null]>(`
    INSERT INTO issue_events (issue_id, user_id, type, created_at, from_estimate, to_estimate)
    VALUES (?, ?, 'estimateIssue', ?, ?, ?)`)

  function requireIssue (repoId: number, number: number): IssueRow {
    const issue = issueByNumber.get(repoId, number)
    if (issue === undefined) throw httpErrors.notFound(`issue ${number} not found in repository ${repoId}`)
    return issue
  }

  return {
    requireIssue,

    /** Pipeline references of an issue in every workspace holding it, oldest workspace first. */
    pipelinesOf (issueId: number): PipelineRef[] {
      return pipelinesOf.all(issueId)
    },

    data (repoId: number, number: number): IssueData {
      const issue = requireIssue(repoId, number)
      const pipelines = pipelinesOf.all(issue.id)
      const data: IssueData = {
        plus_ones: plusOnes.all(issue.id),
        pipelines,
        is_epic: issue.is_epic === 1,
        status: issue.state
      }
      if (issue.estimate !== null) data.estimate = { value: issue.estimate }
      if (pipelines.length > 0) data.pipeline = pipelines[0]
      return data
    },

    events (repoId: number, number: number): IssueEvent[] {
      const issue = requireIssue(repoId, number)
      return eventRows.all(issue.id).map((row) => {
        const event: IssueEvent = { type: row.type, created_at: row.created_at }
        if (row.user_id !== null) event.user_id = row.user_id
        if (row.from_estimate !== null) event.from_estimate = { value: row.from_estimate }
        if (row.to_estimate !== null) event.to_estimate = { value: row.to_estimate }
        if (row.from_pipeline !== null) event.from_pipeline = { name: row.from_pipeline }
        if (row.to_pipeline !== null) event.to_pipeline = { name: row.to_pipeline }
        if (row.workspace_id !== null) event.workspace_id = row.workspace_id
        return event
      })
    },

    /** Sets (a number) or clears (null) the estimate; records the event and announces it. */
    setEstimate: transactional(db, (user: User, repo: Repository, number: number, value: number | null): void => {
      const issue = requireIssue(repo.id, number)
      if (issue.estimate === value) return
      setEstimate.run(value, issue.id)
      insertEstimateEvent.run(issue.id, user.id, nowIso(), issue.estimate, value)
      const context = { repo, issue: { id: issue.id, number: issue.number, title: issue.title }, user }
      events.emit(value === null ? { ...context, type: 'estimate_cleared' } : { ...context, type: 'estimate_set', estimate: value })
    })
  }
}

export type IssuesRepository = ReturnType<typeof createIssuesRepository>
