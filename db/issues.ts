import type { Static } from '../schemas/common.js'
import type { PipelineRef as PipelineRefSchema } from '../schemas/common.js'
import type { IssueData as IssueDataSchema, IssueEvent as IssueEventSchema } from '../schemas/issues.js'
import type { DomainEvents } from './domain-events.js'
import { NotFound } from './errors.js'
import { nowIso } from './ids.js'
import { requireIssue, type Repository } from './repositories.js'
import { prepared } from './prepared.js'
import { notedEvents, writeTransaction, type Executor } from './transaction.js'
import type { User } from './users.js'

export type PipelineRef = Static<typeof PipelineRefSchema>
export type IssueData = Static<typeof IssueDataSchema>
export type IssueEvent = Static<typeof IssueEventSchema>

/** Pipeline references of issues in every workspace holding them, oldest workspace first. */
export async function pipelinesOf (db: Executor, issueIds: number[]): Promise<Map<number, PipelineRef[]>> {
  const out = new Map(issueIds.map((id) => [id, [] as PipelineRef[]]))
  if (issueIds.length === 0) return out
  const rows = await db.selectFrom('placements as p')
    .innerJoin('pipelines as pl', 'pl.id', 'p.pipeline_id')
    .innerJoin('workspaces as w', 'w.id', 'p.workspace_id')
    .select(['p.issue_id', 'pl.name', 'pl.id as pipeline_id', 'p.workspace_id'])
    .where('p.issue_id', 'in', issueIds).orderBy('w.created_at').orderBy('w.seq').execute()
  for (const row of rows) out.get(Number(row.issue_id))!.push({ name: row.name, pipeline_id: row.pipeline_id, workspace_id: row.workspace_id })
  return out
}

// The issue with its pipeline in each workspace (one row per workspace, oldest first; one row
// with no pipeline when it is on no board).
const issueWithPipelines = prepared<{ repoId: number, number: number }>()((db, p) =>
  db.selectFrom('issues as i')
    .leftJoin('placements as p', 'p.issue_id', 'i.id').leftJoin('pipelines as pl', 'pl.id', 'p.pipeline_id').leftJoin('workspaces as w', 'w.id', 'p.workspace_id')
    .select(['i.id', 'i.state', 'i.estimate', 'i.is_epic', 'pl.name', 'pl.id as pipeline_id', 'p.workspace_id'])
    .where('i.repo_id', '=', p.repoId).where('i.number', '=', p.number).orderBy('w.created_at').orderBy('w.seq'))
const plusOnesOf = prepared<{ issueId: number }>()((db, p) =>
  db.selectFrom('plus_ones').select('created_at').where('issue_id', '=', p.issueId).orderBy('created_at').orderBy('id'))

/** Issue data, issue events and estimates. Reads use a fixed number of queries per issue. */
export function createIssuesRepository (db: Executor, events: DomainEvents) {
  return {
    async data (repoId: number, number: number): Promise<IssueData> {
      const rows = (await issueWithPipelines(db, { repoId, number })).rows
      if (rows.length === 0) throw new NotFound(`issue ${number} not found in repository ${repoId}`)
      const issue = rows[0]
      const pipelines = rows.filter((r) => r.pipeline_id !== null).map((r) => ({ name: r.name!, pipeline_id: r.pipeline_id!, workspace_id: r.workspace_id! }))
      const plusOnes = (await plusOnesOf(db, { issueId: issue.id })).rows
      const data: IssueData = {
        plus_ones: plusOnes,
        pipelines,
        is_epic: issue.is_epic === 1,
        status: issue.state
      }
      if (issue.estimate !== null) data.estimate = { value: issue.estimate }
      if (pipelines.length > 0) data.pipeline = pipelines[0]
      return data
    },

    async events (repoId: number, number: number): Promise<IssueEvent[]> {
      const issue = await requireIssue(db, repoId, number)
      const rows = await db.selectFrom('issue_events')
        .select(['user_id', 'type', 'created_at', 'from_estimate', 'to_estimate', 'from_pipeline', 'to_pipeline', 'workspace_id'])
        .where('issue_id', '=', issue.id).orderBy('created_at', 'desc').orderBy('id', 'desc').execute()
      return rows.map((row) => {
        const event: IssueEvent = { type: row.type, created_at: row.created_at }
        if (row.user_id !== null) event.user_id = Number(row.user_id)
        if (row.from_estimate !== null) event.from_estimate = { value: row.from_estimate }
        if (row.to_estimate !== null) event.to_estimate = { value: row.to_estimate }
        if (row.from_pipeline !== null) event.from_pipeline = { name: row.from_pipeline }
        if (row.to_pipeline !== null) event.to_pipeline = { name: row.to_pipeline }
        if (row.workspace_id !== null) event.workspace_id = row.workspace_id
        return event
      })
    },

    /** Sets (a number) or clears (null) the estimate; records the event and announces it. */
    async setEstimate (user: User, repo: Repository, number: number, value: number | null): Promise<void> {
      await writeTransaction(db, async (trx) => {
        const issue = await requireIssue(trx, repo.id, number)
        if (issue.estimate === value) return
        await trx.updateTable('issues').set({ estimate: value, planning_changed_at: nowIso() }).where('id', '=', issue.id).execute()
        notedEvents(trx)
        await trx.insertInto('issue_events').values({
          issue_id: issue.id,
          user_id: user.id,
          type: 'estimateIssue',
          created_at: nowIso(),
          from_estimate: issue.estimate,
          to_estimate: value,
          from_pipeline: null,
          to_pipeline: null,
          workspace_id: null
        }).execute()
        const context = { repo, issue: { id: issue.id, number: issue.number, title: issue.title }, user }
        await events.emit(trx, value === null ? { ...context, type: 'estimate_cleared' } : { ...context, type: 'estimate_set', estimate: value })
      })
    }
  }
}

export type IssuesRepository = ReturnType<typeof createIssuesRepository>
