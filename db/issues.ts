import { sql } from 'kysely'
import type { Static } from '../schemas/common.js'
import type { PipelineRef as PipelineRefSchema } from '../schemas/common.js'
import type { FeedEvent as FeedEventSchema, IssueData as IssueDataSchema, IssueDetail as IssueDetailSchema, IssueEvent as IssueEventSchema, PipelineDuration as PipelineDurationSchema } from '../schemas/issues.js'
import type { DomainEvents } from './domain-events.js'
import { Invalid, NotFound } from './errors.js'
import { nowIso } from './ids.js'
import { requireIssue, type Repository } from './repositories.js'
import { prepared } from './engine/prepared.js'
import { notedEvents, writeTransaction, type Executor } from './engine/transaction.js'
import { noteWebhooks, wantedBy } from './webhooks.js'
import type { User } from './users.js'

export type PipelineRef = Static<typeof PipelineRefSchema>
export type IssueData = Static<typeof IssueDataSchema>
export type IssueDetail = Static<typeof IssueDetailSchema>
export type IssueEvent = Static<typeof IssueEventSchema>
export type PipelineDuration = Static<typeof PipelineDurationSchema>
export type FeedEvent = Static<typeof FeedEventSchema>
export interface BulkMilestone { number: number, title: string, due_on: string | null, state: 'open' | 'closed' }

type EventRow = {
  user_id: number | null,
  type: FeedEvent['type'],
  created_at: string,
  from_estimate: number | null,
  to_estimate: number | null,
  from_pipeline: string | null,
  to_pipeline: string | null,
  workspace_id: string | null
  subject?: string | null
}

/** The hosted API's event types: the only ones an issue's own events list shows. */
const LEGACY_TYPES = ['estimateIssue', 'transferIssue'] as const

function toEvent (row: EventRow): Omit<FeedEvent, 'issue_number'> {
  const event: Omit<FeedEvent, 'issue_number'> = { type: row.type, created_at: row.created_at }
  if (row.user_id !== null) event.user_id = Number(row.user_id)
  if (row.from_estimate !== null) event.from_estimate = { value: row.from_estimate }
  if (row.to_estimate !== null) event.to_estimate = { value: row.to_estimate }
  if (row.from_pipeline !== null) event.from_pipeline = { name: row.from_pipeline }
  if (row.to_pipeline !== null) event.to_pipeline = { name: row.to_pipeline }
  if (row.workspace_id !== null) event.workspace_id = row.workspace_id
  if (row.subject !== undefined && row.subject !== null) {
    if (row.type === 'labelIssue' || row.type === 'unlabelIssue') event.label = { name: row.subject }
    else event.assignee = { login: row.subject }
  }
  return event
}

const EVENT_COLUMNS = ['user_id', 'type', 'created_at', 'from_estimate', 'to_estimate', 'from_pipeline', 'to_pipeline', 'workspace_id', 'subject'] as const

/** A feed position: the commit order of an event's write, then its id. */
export interface FeedCursor { version: number, id: number }

// The issue with its pipeline in each workspace (one row per workspace, oldest first; one row
// with no pipeline when it is on no board).
const issueWithPipelines = prepared<{ repoId: number, number: number }>()((db, p) =>
  db.selectFrom('issues as i')
    .leftJoin('placements as p', 'p.issue_id', 'i.id').leftJoin('pipelines as pl', 'pl.id', 'p.pipeline_id').leftJoin('workspaces as w', 'w.id', 'p.workspace_id')
    .select(['i.id', 'i.state', 'i.estimate', 'i.is_epic', 'i.body', 'pl.name', 'pl.id as pipeline_id', 'p.workspace_id'])
    .where('i.repo_id', '=', p.repoId).where('i.number', '=', p.number).orderBy('w.created_at').orderBy('w.seq'))
const plusOnesOf = prepared<{ issueId: number }>()((db, p) =>
  db.selectFrom('plus_ones').select('created_at').where('issue_id', '=', p.issueId).orderBy('created_at').orderBy('id'))

/** An estimate's issue, and whether its repository has a webhook wanting the event (`wantedBy`): one statement. */
const estimatedQuery = prepared<{ repoId: number, number: number, pattern: string, legacy: number }>()((db, p) => db.selectFrom('issues')
  .select(['id', 'number', 'title', 'estimate'])
  .select((eb) => eb.exists(eb.selectFrom('webhooks as w').select('w.id').where('w.repo_id', '=', p.repoId)
    .where(sql<boolean>`(w.events LIKE ${p.pattern} OR (w.events IS NULL AND ${p.legacy} = 1))`)).as('hooked'))
  .where('repo_id', '=', p.repoId).where('number', '=', p.number))

/** Issue data, issue events and estimates. Reads use a fixed number of queries per issue. */
export type BulkData = IssueData & {
  title: string
  labels: Array<{ name: string, color: string | null }>
  assignees: Array<{ login: string, avatar_url: string | null }>
  milestone?: BulkMilestone
  pull_request: boolean
}

export function createIssuesRepository (db: Executor, events: DomainEvents) {
  return {
    async data (repoId: number, number: number): Promise<IssueDetail> {
      const rows = (await issueWithPipelines(db, { repoId, number })).rows
      if (rows.length === 0) throw new NotFound(`issue ${number} not found in repository ${repoId}`)
      const issue = rows[0]
      const pipelines = rows.filter((r) => r.pipeline_id !== null).map((r) => ({ name: r.name!, pipeline_id: r.pipeline_id!, workspace_id: r.workspace_id! }))
      const plusOnes = (await plusOnesOf(db, { issueId: issue.id })).rows
      const data: IssueDetail = {
        plus_ones: plusOnes,
        pipelines,
        is_epic: issue.is_epic === 1,
        status: issue.state
      }
      if (issue.estimate !== null) data.estimate = { value: issue.estimate }
      if (pipelines.length > 0) data.pipeline = pipelines[0]
      if (issue.body !== null) data.body = issue.body
      return data
    },

    async events (repoId: number, number: number): Promise<IssueEvent[]> {
      const issue = await requireIssue(db, repoId, number)
      const rows = await db.selectFrom('issue_events')
        .select(['user_id', 'type', 'created_at', 'from_estimate', 'to_estimate', 'from_pipeline', 'to_pipeline', 'workspace_id'])
        .where('issue_id', '=', issue.id).where('type', 'in', LEGACY_TYPES).orderBy('created_at', 'desc').orderBy('id', 'desc').execute()
      return rows.map(toEvent) as IssueEvent[]
    },

    /**
     * Issue data (and titles, milestones, host labels and assignees) of many issues at once, by
     * number (unknown numbers are left out): a fixed number of queries.
     */
    async dataOf (repoId: number, numbers: number[]): Promise<Map<number, BulkData>> {
      const out = new Map<number, BulkData>()
      if (numbers.length === 0) return out
      const rows = await db.selectFrom('issues as i')
        .leftJoin('placements as p', 'p.issue_id', 'i.id').leftJoin('pipelines as pl', 'pl.id', 'p.pipeline_id').leftJoin('workspaces as w', 'w.id', 'p.workspace_id')
        .leftJoin('milestones as m', (join) => join.onRef('m.repo_id', '=', 'i.repo_id').onRef('m.number', '=', 'i.milestone_number'))
        .select(['i.id', 'i.number', 'i.title', 'i.state', 'i.estimate', 'i.is_epic', 'i.is_pull_request', 'pl.name', 'pl.id as pipeline_id', 'p.workspace_id',
          'm.number as milestone_number', 'm.title as milestone_title', 'm.due_on as milestone_due_on', 'm.state as milestone_state'])
        .where('i.repo_id', '=', repoId).where('i.number', 'in', numbers).orderBy('i.number').orderBy('w.created_at').orderBy('w.seq').execute()
      const ids = new Map<number, number>()
      for (const row of rows) {
        const number = Number(row.number)
        let data = out.get(number)
        if (data === undefined) {
          const milestone = row.milestone_number === null
            ? null
            : { number: Number(row.milestone_number), title: row.milestone_title!, due_on: row.milestone_due_on ?? null, state: row.milestone_state! }
          const flags = { is_epic: row.is_epic === 1, pull_request: Number(row.is_pull_request) === 1 }
          data = { title: row.title, plus_ones: [], pipelines: [], status: row.state, labels: [], assignees: [], ...flags }
          if (milestone !== null) data.milestone = milestone
          if (row.estimate !== null) data.estimate = { value: row.estimate }
          out.set(number, data)
          ids.set(Number(row.id), number)
        }
        if (row.pipeline_id !== null) data.pipelines.push({ name: row.name!, pipeline_id: row.pipeline_id, workspace_id: row.workspace_id! })
      }
      for (const data of out.values()) if (data.pipelines.length > 0) data.pipeline = data.pipelines[0]
      if (ids.size > 0) {
        const plusOnes = await db.selectFrom('plus_ones').select(['issue_id', 'created_at']).where('issue_id', 'in', [...ids.keys()]).orderBy('created_at').orderBy('id').execute()
        for (const row of plusOnes) out.get(ids.get(Number(row.issue_id))!)!.plus_ones.push({ created_at: row.created_at })
        // The issue host's labels and assignees (two-way sync): two more statements, whatever the count.
        const labels = await db.selectFrom('issue_labels').select(['issue_id', 'name', 'color']).where('issue_id', 'in', [...ids.keys()]).orderBy('name').execute()
        for (const row of labels) out.get(ids.get(Number(row.issue_id))!)!.labels.push({ name: row.name, color: row.color })
        const people = await db.selectFrom('issue_assignees').select(['issue_id', 'login', 'avatar_url']).where('issue_id', 'in', [...ids.keys()]).orderBy('login').execute()
        for (const row of people) out.get(ids.get(Number(row.issue_id))!)!.assignees.push({ login: row.login, avatar_url: row.avatar_url })
      }
      return out
    },

    /**
     * Every issue event of the repository in commit order, after `cursor` (or since a time), a page
     * at a time. Events carry the order their write committed in, so one committed late is still
     * after every cursor handed out before it: a client that keeps the cursor misses none.
     */
    async feed (repoId: number, options: { cursor?: FeedCursor, since?: string, limit: number }): Promise<{ data: FeedEvent[], last?: FeedCursor }> {
      let query = db.selectFrom('issue_events as e').innerJoin('issues as i', 'i.id', 'e.issue_id')
        .select([...EVENT_COLUMNS.map((c) => `e.${c}` as const), 'e.id', 'e.version', 'i.number'])
        .where('i.repo_id', '=', repoId).where('e.version', 'is not', null)
      const cursor = options.cursor
      if (cursor !== undefined) {
        query = query.where((eb) => eb.or([eb('e.version', '>', cursor.version), eb.and([eb('e.version', '=', cursor.version), eb('e.id', '>', cursor.id)])]))
      } else if (options.since !== undefined) {
        query = query.where('e.created_at', '>=', new Date(options.since).toISOString())
      }
      const rows = await query.orderBy('e.version').orderBy('e.id').limit(options.limit).execute()
      const last = rows.at(-1)
      return {
        data: rows.map((row) => ({ issue_number: Number(row.number), ...toEvent(row) })),
        ...(last === undefined ? {} : { last: { version: Number(last.version), id: Number(last.id) } })
      }
    },

    /** Numbers of the issues whose planning data changed at or after `since`. */
    async changedSince (repoId: number, since: string): Promise<number[]> {
      const rows = await db.selectFrom('issues').select('number').where('repo_id', '=', repoId)
        .where('planning_changed_at', '>=', new Date(since).toISOString()).orderBy('number').execute()
      return rows.map((r) => Number(r.number))
    },

    /**
     * How long the issue stayed in each pipeline, per workspace, from its transfer events: a stay
     * begins when it entered (or when the issue was created, for the pipeline it started in) and
     * ends when it left (null: it is still there).
     */
    async pipelineDurations (repoId: number, number: number, now = Date.now()): Promise<PipelineDuration[]> {
      const issue = await requireIssue(db, repoId, number)
      const created = await db.selectFrom('issues').select('created_at').where('id', '=', issue.id).executeTakeFirstOrThrow()
      const moves = await db.selectFrom('issue_events').select(['created_at', 'from_pipeline', 'to_pipeline', 'workspace_id'])
        .where('issue_id', '=', issue.id).where('type', '=', 'transferIssue').where('workspace_id', 'is not', null).orderBy('created_at').orderBy('id').execute()
      const pipelines = await db.selectFrom('pipelines').select(['id', 'name', 'workspace_id'])
        .where('workspace_id', 'in', [...new Set(moves.map((m) => m.workspace_id!)), '']).execute()
      const idOf = (workspaceId: string, name: string) => pipelines.find((p) => p.workspace_id === workspaceId && p.name === name)?.id ?? null
      const stayIn = (workspaceId: string, name: string, at: string): PipelineDuration =>
        ({ workspace_id: workspaceId, pipeline_id: idOf(workspaceId, name), pipeline_name: name, seconds: 0, entered_at: at, left_at: null })
      const stays: PipelineDuration[] = []
      const open = new Map<string, PipelineDuration>()
      const close = (workspaceId: string, at: string): void => {
        const stay = open.get(workspaceId)
        if (stay === undefined) return
        stay.left_at = at
        stay.seconds = (Date.parse(at) - Date.parse(stay.entered_at)) / 1000
        open.delete(workspaceId)
      }
      for (const move of moves) {
        const workspaceId = move.workspace_id!
        if (!open.has(workspaceId) && move.from_pipeline !== null) {
          // Before its first recorded move the issue sat, since it was created, in the pipeline it left.
          const first = stayIn(workspaceId, move.from_pipeline, created.created_at)
          stays.push(first)
          open.set(workspaceId, first)
        }
        close(workspaceId, move.created_at)
        const stay = stayIn(workspaceId, move.to_pipeline!, move.created_at)
        stays.push(stay)
        open.set(workspaceId, stay)
      }
      for (const stay of open.values()) stay.seconds = Math.max(0, (now - Date.parse(stay.entered_at)) / 1000)
      return stays
    },

    /** Sets (a number) or clears (null) the estimate; records the event and announces it. */
    /** Records who made a native issue (GraphQL Issue.creator). */
    async setCreator (repoId: number, number: number, userId: number): Promise<void> {
      await db.updateTable('issues').set({ creator_id: userId }).where('repo_id', '=', repoId).where('number', '=', number).execute()
    },

    async setEstimate (user: User, repo: Repository, number: number, value: number | null): Promise<void> {
      if (value !== null && !(value >= 0 && value <= 1e9)) throw new Invalid('estimate must be from 0 to 1e9, or null to clear it')
      // The board row the estimate changes (none when it was already so).
      const boardRows: number[] = []
      await writeTransaction(db, async (trx) => {
        const type = value === null ? 'estimate_cleared' : 'estimate_set'
        const issue = (await estimatedQuery(trx, { repoId: repo.id, number, ...wantedBy(type) })).rows[0]
        if (issue === undefined) throw new NotFound(`issue ${number} not found in repository ${repo.id}`)
        if (issue.estimate === value) return
        // The webhooks to tell came with the issue: announcing asks no more.
        noteWebhooks(trx, repo.id, type, Boolean(issue.hooked))
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
        const context = { repo, issue: { id: issue.id, number: Number(issue.number), title: issue.title }, user }
        await events.emit(trx, value === null ? { ...context, type: 'estimate_cleared' } : { ...context, type: 'estimate_set', estimate: value })
        boardRows.push(issue.id)
      }, [repo.id], boardRows)
    }
  }
}

export type IssuesRepository = ReturnType<typeof createIssuesRepository>
