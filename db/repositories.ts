import type { Static } from '../schemas/common.js'
import type { AdminMilestone, AdminRepository, AdminRepositoryListed } from '../schemas/admin.js'
import { announce, issueContext } from './announce.js'
import { NOBODY, type DomainEvents } from './domain-events.js'
import { isUniqueViolation } from './engine/engine.js'
import { recordMilestone, recordState } from './history.js'
import { isCalendarDate } from './zoned-time.js'
import { EARLIEST_DAY, isDateTime, LATEST_DAY } from '../schemas/formats.js'
import { Conflict, Invalid, NotFound } from './errors.js'
import { nowIso } from './ids.js'
import { prepared } from './engine/prepared.js'
import { placedEventRow, placementRow } from './first-placement.js'
import { notedEvents, reached, type Executor } from './engine/transaction.js'

export type Repository = Static<typeof AdminRepository>

/**
 * A repository's page on its issue host; null for one this server holds itself (made here, by a
 * fixture or an import that gave no page): a github.com address guessed from its name would be
 * somebody else's repository.
 */
export function webUrl (repo: Repository): string | null {
  return repo.html_url ?? null
}

/** An issue's page on its repository's issue host, or null (webUrl). */
export function issueUrl (repo: Repository, number: number): string | null {
  const web = webUrl(repo)
  return web === null ? null : `${web}/issues/${number}`
}
export type Milestone = Static<typeof AdminMilestone>

export interface IssueRow {
  id: number
  repo_id: number
  number: number
  title: string
  state: 'open' | 'closed'
  estimate: number | null
  is_epic: number
  milestone_number: number | null
}

export interface NewIssue {
  number: number
  title: string
  state?: 'open' | 'closed'
  /** user whose first placement event is recorded; without one the placement has no event */
  authorId?: number
  plusOnes?: string[]
  /** an estimate set from the start (fixtures), with no event */
  estimate?: number
  /** pipeline (id or name) per workspace id, instead of the workspace's first pipeline */
  pipelines?: Record<string, string>
  /** a milestone of the repository */
  milestoneNumber?: number
  /** a pull request (the issue host's: they share the issues' numbers) */
  pullRequest?: boolean
}

export interface IssueChange {
  title?: string
  state?: 'open' | 'closed'
  /** a milestone of the repository; null: none */
  milestone_number?: number | null
}

export interface MilestoneFields {
  title?: string
  /** ISO 8601 date-time or YYYY-MM-DD; null clears it */
  due_on?: string | null
  state?: 'open' | 'closed'
  /** null clears it */
  description?: string | null
}

const ISSUE_COLUMNS = ['id', 'repo_id', 'number', 'title', 'state', 'estimate', 'is_epic', 'milestone_number'] as const

const issueQuery = prepared<{ repoId: number, number: number }>()((db, p) =>
  db.selectFrom('issues').select(ISSUE_COLUMNS).where('repo_id', '=', p.repoId).where('number', '=', p.number))
const repoQuery = prepared<{ id: number }>()((db, p) => db.selectFrom('repositories').select(['id', 'owner', 'name', 'html_url']).where('id', '=', p.id))

/** Notes that these issues' planning data (pipeline, position, estimate, epics, dependencies, releases) changed now. */
export async function touchPlanning (db: Executor, issueIds: number[]): Promise<void> {
  if (issueIds.length === 0) return
  await db.updateTable('issues').set({ planning_changed_at: nowIso() }).where('id', 'in', issueIds).execute()
}

/** A due date as stored: ISO 8601 UTC with milliseconds (a bare date is that day's 00:00 UTC, as the issue hosts send them). */
export function dueDate (value: string): string {
  const ms = isCalendarDate(value) ? Date.parse(`${value}T00:00:00Z`) : isDateTime(value) ? Date.parse(value) : Number.NaN
  if (Number.isNaN(ms)) throw new Invalid(`due_on must be an ISO 8601 date-time or a YYYY-MM-DD date, from ${EARLIEST_DAY} to ${LATEST_DAY}`)
  return new Date(ms).toISOString()
}

/** An issue by repository and number, or undefined. */
export async function issueByNumber (db: Executor, repoId: number, number: number): Promise<IssueRow | undefined> {
  return (await issueQuery(db, { repoId, number })).rows[0]
}

export async function requireIssue (db: Executor, repoId: number, number: number): Promise<IssueRow> {
  const issue = await issueByNumber(db, repoId, number)
  if (issue === undefined) throw new NotFound(`issue ${number} not found in repository ${repoId}`)
  return issue
}

/**
 * The issue-hosting platform's side: repositories, their issues and milestones. Creating or
 * reopening an issue keeps its board placements in step (docs/api.md, "Conventions").
 */
/**
 * Ids of repositories made here (no issue host): 2^40 and up, far above the hosts' numbering, so a
 * host's repository connected later never meets one of them.
 */
export const LOCAL_REPO_IDS = 2 ** 40

export function createRepositoriesRepository (db: Executor, events?: DomainEvents) {
  const byId = async (id: number): Promise<Repository | undefined> => (await repoQuery(db, { id })).rows[0]
  const requireRepository = async (id: number): Promise<Repository> => {
    const repo = await byId(id)
    if (repo === undefined) throw new NotFound(`repository ${id} not found`)
    return repo
  }
  const requireMilestone = async (repoId: number, number: number): Promise<void> => {
    const row = await db.selectFrom('milestones').select('number').where('repo_id', '=', repoId).where('number', '=', number).executeTakeFirst()
    if (row === undefined) throw new Invalid(`milestone ${number} not found in repository ${repoId}`)
  }
  const pipelineIn = async (workspaceId: string, wanted: string) =>
    await db.selectFrom('pipelines').select(['id', 'name']).where('workspace_id', '=', workspaceId)
      .where((eb) => eb.or([eb('id', '=', wanted), eb('name', '=', wanted)])).orderBy('sort_order').limit(1).executeTakeFirst()

  /** The next local id; a writer taking the same one at the same moment makes this try the one after (no aborted transaction). */
  const createLocal = async (input: Omit<Repository, 'id'>): Promise<Repository> => {
    for (let attempt = 0; attempt < 10; attempt++) {
      const top = await db.selectFrom('repositories').select((eb) => eb.fn.max('id').as('top')).where('id', '>=', LOCAL_REPO_IDS).executeTakeFirst()
      const id = top?.top === null || top?.top === undefined ? LOCAL_REPO_IDS : Number(top.top) + 1
      const inserted = await db.insertInto('repositories').values({ id, owner: input.owner, name: input.name, html_url: input.html_url ?? null, created_at: new Date().toISOString() })
        .onConflict((oc) => oc.column('id').doNothing()).returning('id').executeTakeFirst()
      if (inserted !== undefined) return { id, owner: input.owner, name: input.name, html_url: input.html_url ?? null }
    }
    throw new Conflict('no free repository id now; try again')
  }

  return {
    byId,
    requireRepository,

    /** The repository's issues, by number. */
    async issues (repoId: number): Promise<IssueRow[]> {
      await requireRepository(repoId)
      return await db.selectFrom('issues').select(ISSUE_COLUMNS).where('repo_id', '=', repoId).orderBy('number').execute()
    },

    async milestones (repoId: number): Promise<Array<Milestone & { start_date: string | null }>> {
      await requireRepository(repoId)
      const rows = await db.selectFrom('milestones').select(['repo_id', 'number', 'title', 'description', 'start_date', 'due_on', 'state']).where('repo_id', '=', repoId).orderBy('number').execute()
      return rows.map((m) => ({ ...m, repo_id: Number(m.repo_id), number: Number(m.number) }))
    },

    /** The repository and everything planned on it (issues, placements, epics, webhooks…). */
    async remove (repoId: number): Promise<void> {
      await requireRepository(repoId)
      await db.deleteFrom('repositories').where('id', '=', repoId).execute()
    },

    /** Whether the database holds no user and no repository yet (start-up seeding fills it then). */
    async isEmpty (): Promise<boolean> {
      const user = await db.selectFrom('users').select('id').limit(1).executeTakeFirst()
      const repo = await db.selectFrom('repositories').select('id').limit(1).executeTakeFirst()
      return user === undefined && repo === undefined
    },

    async list (): Promise<Array<Static<typeof AdminRepositoryListed>>> {
      return await db.selectFrom('repositories').select(['id', 'owner', 'name', 'html_url', 'connection_id']).orderBy('id').execute()
    },

    /** Creates a repository; without an id it lives here only and gets the next id from LOCAL_REPO_IDS up. */
    async create (input: Omit<Repository, 'id'> & { id?: number }): Promise<Repository> {
      if (input.id !== undefined && await byId(input.id) !== undefined) throw new Conflict(`repository ${input.id} already exists`)
      const taken = await db.selectFrom('repositories').select('id').where('owner', '=', input.owner).where('name', '=', input.name).executeTakeFirst()
      if (taken !== undefined) throw new Conflict(`repository ${input.owner}/${input.name} already exists`)
      if (input.id === undefined) return await createLocal(input)
      const repo = { ...input, id: input.id }
      try {
        await db.insertInto('repositories').values({ ...repo, created_at: new Date().toISOString() }).execute()
      } catch (err) {
        if (isUniqueViolation(err)) throw new Conflict(`repository ${repo.id} (${repo.owner}/${repo.name}) already exists`)
        throw err
      }
      return repo
    },

    issue: async (repoId: number, number: number) => await issueByNumber(db, repoId, number),

    /** Creates an issue and lands it, unprioritized, in the first pipeline of each workspace. */
    async createIssue (repoId: number, issue: NewIssue): Promise<IssueRow> {
      const created = await this.createIssueIfAbsent(repoId, issue)
      if (created === undefined) throw new Conflict(`issue ${issue.number} already exists in repository ${repoId}`)
      return created
    },

    /**
     * As `createIssue`, but an issue already there (or inserted at the same moment by another
     * transaction: the insert waits for it) is left alone and undefined returned.
     */
    async createIssueIfAbsent (repoId: number, issue: NewIssue): Promise<IssueRow | undefined> {
      await requireRepository(repoId)
      const state = issue.state ?? 'open'
      const now = nowIso()
      if (issue.milestoneNumber !== undefined) await requireMilestone(repoId, issue.milestoneNumber)
      const inserted = await db.insertInto('issues')
        .values({
          repo_id: repoId,
          number: issue.number,
          title: issue.title,
          state,
          estimate: issue.estimate ?? null,
          created_at: now,
          milestone_number: issue.milestoneNumber ?? null,
          is_pull_request: issue.pullRequest === true ? 1 : 0
        })
        .onConflict((oc) => oc.columns(['repo_id', 'number']).doNothing())
        .returning('id').executeTakeFirst()
      if (inserted === undefined) return undefined
      const { id } = inserted
      // Its placements are rows of this repository's boards (open or not: a closed one is on none).
      reached(db, repoId, [id])
      await recordState(db, id, state, now)
      if (issue.milestoneNumber !== undefined) await recordMilestone(db, id, repoId, issue.milestoneNumber, now)
      for (const at of issue.plusOnes ?? []) await db.insertInto('plus_ones').values({ issue_id: id, created_at: at }).execute()
      const holding = await db.selectFrom('workspace_repositories as wr')
        .innerJoin('pipelines as p', 'p.workspace_id', 'wr.workspace_id')
        .select(['wr.workspace_id', 'p.id as pipeline_id', 'p.name', 'p.sort_order'])
        .where('wr.repo_id', '=', repoId).orderBy('wr.workspace_id').orderBy('p.sort_order').execute()
      const firsts = new Map<string, { id: string, name: string }>()
      for (const row of holding) if (!firsts.has(row.workspace_id)) firsts.set(row.workspace_id, { id: row.pipeline_id, name: row.name })
      const chosen = new Map(firsts)
      for (const [workspaceId, wanted] of Object.entries(issue.pipelines ?? {})) {
        if (!firsts.has(workspaceId)) throw new Invalid(`workspace ${workspaceId} does not hold repository ${repoId}`)
        const pipeline = await pipelineIn(workspaceId, wanted)
        if (pipeline === undefined) throw new Invalid(`workspace ${workspaceId} has no pipeline '${wanted}'`)
        chosen.set(workspaceId, pipeline)
      }
      for (const [workspaceId, pipeline] of chosen) {
        const at = { issueId: id, repoId, number: issue.number, open: state === 'open', workspaceId, pipeline }
        await db.insertInto('placements').values(placementRow(at)).execute()
        if (issue.authorId !== undefined) {
          notedEvents(db)
          await db.insertInto('issue_events').values(placedEventRow(at, issue.authorId, now)).execute()
        }
      }
      if (state === 'open') await announce(db, events, { ...await issueContext(db, id), user: NOBODY, type: 'issue_opened' })
      return await requireIssue(db, repoId, issue.number)
    },

    /** Retitles, closes (off every board) or reopens (back to its last pipeline at once). */
    async updateIssue (repoId: number, number: number, change: IssueChange): Promise<IssueRow> {
      const issue = await requireIssue(db, repoId, number)
      // A title and a milestone are on no board row; a close or reopen takes the issue off or puts it back.
      reached(db, repoId, change.state !== undefined && change.state !== issue.state ? [issue.id] : [])
      if (change.title !== undefined) await db.updateTable('issues').set({ title: change.title }).where('id', '=', issue.id).execute()
      const milestone = change.milestone_number
      if (milestone !== undefined && milestone !== (issue.milestone_number === null ? null : Number(issue.milestone_number))) {
        if (milestone !== null) await requireMilestone(repoId, milestone)
        await db.updateTable('issues').set({ milestone_number: milestone }).where('id', '=', issue.id).execute()
        await recordMilestone(db, issue.id, repoId, milestone, nowIso())
      }
      if (change.state !== undefined && change.state !== issue.state) {
        await db.updateTable('issues').set({ state: change.state }).where('id', '=', issue.id).execute()
        await recordState(db, issue.id, change.state, nowIso())
        await db.updateTable('placements').set({ is_open: change.state === 'open' ? 1 : 0 }).where('issue_id', '=', issue.id).execute()
        await announce(db, events, { ...await issueContext(db, issue.id), user: NOBODY, type: change.state === 'open' ? 'issue_reopened' : 'issue_closed' })
      }
      return await requireIssue(db, repoId, number)
    },

    /** The issue-host connection a repository is bound to (its milestones come from there), or null. */
    async hostConnection (repoId: number): Promise<string | null> {
      const row = await db.selectFrom('repositories').select('connection_id').where('id', '=', repoId).executeTakeFirst()
      if (row === undefined) throw new NotFound(`repository ${repoId} not found`)
      return row.connection_id
    },

    /** The number a new milestone of the repository takes: one past its highest. */
    async nextMilestoneNumber (repoId: number): Promise<number> {
      const row = await db.selectFrom('milestones').select((eb) => eb.fn.max('number').as('top')).where('repo_id', '=', repoId).executeTakeFirst()
      return row?.top === null || row?.top === undefined ? 1 : Number(row.top) + 1
    },

    async createMilestone (repoId: number, number: number, title: string, fields: Omit<MilestoneFields, 'title'> = {}): Promise<Milestone> {
      await requireRepository(repoId)
      const dueOn = fields.due_on === undefined || fields.due_on === null ? null : dueDate(fields.due_on)
      const state = fields.state ?? 'open'
      const description = fields.description ?? null
      const inserted = await db.insertInto('milestones').values({ repo_id: repoId, number, title, description, start_date: null, due_on: dueOn, state })
        .onConflict((oc) => oc.columns(['repo_id', 'number']).doNothing()).returning('number').executeTakeFirst()
      if (inserted === undefined) throw new Conflict(`milestone ${number} already exists in repository ${repoId}`)
      return { repo_id: repoId, number, title, description, due_on: dueOn, state }
    },

    /** Retitles a milestone, sets or clears its due date, closes or reopens it. */
    async updateMilestone (repoId: number, number: number, fields: MilestoneFields): Promise<Milestone> {
      await requireRepository(repoId)
      const set: { title?: string, description?: string | null, due_on?: string | null, state?: 'open' | 'closed' } = {}
      if (fields.title !== undefined) set.title = fields.title
      if (fields.description !== undefined) set.description = fields.description
      if (fields.due_on !== undefined) set.due_on = fields.due_on === null ? null : dueDate(fields.due_on)
      if (fields.state !== undefined) set.state = fields.state
      if (Object.keys(set).length > 0) await db.updateTable('milestones').set(set).where('repo_id', '=', repoId).where('number', '=', number).execute()
      const row = await db.selectFrom('milestones').select(['repo_id', 'number', 'title', 'description', 'due_on', 'state']).where('repo_id', '=', repoId).where('number', '=', number).executeTakeFirst()
      if (row === undefined) throw new NotFound(`milestone ${number} not found in repository ${repoId}`)
      return { ...row, repo_id: Number(row.repo_id), number: Number(row.number) }
    },

    /** Deletes a milestone: its issues have none from now on (each change in the milestone history the burndown reads). */
    async deleteMilestone (repoId: number, number: number): Promise<Milestone> {
      await requireRepository(repoId)
      const row = await db.selectFrom('milestones').select(['repo_id', 'number', 'title', 'description', 'due_on', 'state']).where('repo_id', '=', repoId).where('number', '=', number).executeTakeFirst()
      if (row === undefined) throw new NotFound(`milestone ${number} not found in repository ${repoId}`)
      const issues = await db.selectFrom('issues').select('id').where('repo_id', '=', repoId).where('milestone_number', '=', number).execute()
      const now = nowIso()
      for (const issue of issues) await recordMilestone(db, Number(issue.id), repoId, null, now)
      await db.updateTable('issues').set({ milestone_number: null }).where('repo_id', '=', repoId).where('milestone_number', '=', number).execute()
      await db.deleteFrom('milestones').where('repo_id', '=', repoId).where('number', '=', number).execute()
      return { ...row, repo_id: Number(row.repo_id), number: Number(row.number) }
    }
  }
}

export type RepositoriesRepository = ReturnType<typeof createRepositoriesRepository>
