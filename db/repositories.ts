import type { Static } from '../schemas/common.js'
import type { AdminMilestone, AdminRepository } from '../schemas/admin.js'
import { announce, issueContext } from './announce.js'
import { NOBODY, type DomainEvents } from './domain-events.js'
import { isUniqueViolation } from './engine.js'
import { Conflict, Invalid, NotFound } from './errors.js'
import { nowIso } from './ids.js'
import { prepared } from './prepared.js'
import { unprioritizedRank } from './ranking.js'
import { notedEvents, type Executor } from './transaction.js'

export type Repository = Static<typeof AdminRepository>

/** A repository's page: its issue host's, or GitHub's for repositories typed in by hand. */
export function webUrl (repo: Repository): string {
  return repo.html_url ?? `https://github.com/${repo.owner}/${repo.name}`
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
}

const ISSUE_COLUMNS = ['id', 'repo_id', 'number', 'title', 'state', 'estimate', 'is_epic'] as const

const issueQuery = prepared<{ repoId: number, number: number }>()((db, p) =>
  db.selectFrom('issues').select(ISSUE_COLUMNS).where('repo_id', '=', p.repoId).where('number', '=', p.number))
const repoQuery = prepared<{ id: number }>()((db, p) => db.selectFrom('repositories').select(['id', 'owner', 'name', 'html_url']).where('id', '=', p.id))

/** Notes that these issues' planning data (pipeline, position, estimate, epics, dependencies, releases) changed now. */
export async function touchPlanning (db: Executor, issueIds: number[]): Promise<void> {
  if (issueIds.length === 0) return
  await db.updateTable('issues').set({ planning_changed_at: nowIso() }).where('id', 'in', issueIds).execute()
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
 * reopening an issue keeps its board placements in step (README, "Conventions").
 */
export function createRepositoriesRepository (db: Executor, events?: DomainEvents) {
  const byId = async (id: number): Promise<Repository | undefined> => (await repoQuery(db, { id })).rows[0]
  const requireRepository = async (id: number): Promise<Repository> => {
    const repo = await byId(id)
    if (repo === undefined) throw new NotFound(`repository ${id} not found`)
    return repo
  }
  const pipelineIn = async (workspaceId: string, wanted: string) =>
    await db.selectFrom('pipelines').select(['id', 'name']).where('workspace_id', '=', workspaceId)
      .where((eb) => eb.or([eb('id', '=', wanted), eb('name', '=', wanted)])).orderBy('sort_order').limit(1).executeTakeFirst()

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
      const rows = await db.selectFrom('milestones').select(['repo_id', 'number', 'title', 'start_date']).where('repo_id', '=', repoId).orderBy('number').execute()
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

    async list (): Promise<Repository[]> {
      return await db.selectFrom('repositories').select(['id', 'owner', 'name', 'html_url']).orderBy('id').execute()
    },

    async create (repo: Repository): Promise<Repository> {
      if (await byId(repo.id) !== undefined) throw new Conflict(`repository ${repo.id} already exists`)
      const taken = await db.selectFrom('repositories').select('id').where('owner', '=', repo.owner).where('name', '=', repo.name).executeTakeFirst()
      if (taken !== undefined) throw new Conflict(`repository ${repo.owner}/${repo.name} already exists`)
      try {
        await db.insertInto('repositories').values(repo).execute()
      } catch (err) {
        if (isUniqueViolation(err)) throw new Conflict(`repository ${repo.id} (${repo.owner}/${repo.name}) already exists`)
        throw err
      }
      return repo
    },

    issue: async (repoId: number, number: number) => await issueByNumber(db, repoId, number),

    /** Creates an issue and lands it, unprioritized, in the first pipeline of each workspace. */
    async createIssue (repoId: number, issue: NewIssue): Promise<IssueRow> {
      await requireRepository(repoId)
      if (await issueByNumber(db, repoId, issue.number) !== undefined) {
        throw new Conflict(`issue ${issue.number} already exists in repository ${repoId}`)
      }
      const state = issue.state ?? 'open'
      const now = nowIso()
      const { id } = await db.insertInto('issues')
        .values({ repo_id: repoId, number: issue.number, title: issue.title, state, estimate: issue.estimate ?? null, created_at: now })
        .returning('id').executeTakeFirstOrThrow()
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
      for (const [workspaceId, target] of chosen) {
        await db.insertInto('placements').values({
          issue_id: id,
          workspace_id: workspaceId,
          pipeline_id: target.id,
          repo_id: repoId,
          number: issue.number,
          is_open: state === 'open' ? 1 : 0,
          position: null,
          rank: unprioritizedRank(issue.number)
        }).execute()
        if (issue.authorId !== undefined) {
          notedEvents(db)
          await db.insertInto('issue_events').values({
            issue_id: id,
            user_id: issue.authorId,
            type: 'transferIssue',
            created_at: now,
            to_pipeline: target.name,
            workspace_id: workspaceId,
            from_estimate: null,
            to_estimate: null,
            from_pipeline: null
          }).execute()
        }
      }
      if (state === 'open') await announce(db, events, { ...await issueContext(db, id), user: NOBODY, type: 'issue_opened' })
      return await requireIssue(db, repoId, issue.number)
    },

    /** Retitles, closes (off every board) or reopens (back to its last pipeline at once). */
    async updateIssue (repoId: number, number: number, change: { title?: string, state?: 'open' | 'closed' }): Promise<IssueRow> {
      const issue = await requireIssue(db, repoId, number)
      if (change.title !== undefined) await db.updateTable('issues').set({ title: change.title }).where('id', '=', issue.id).execute()
      if (change.state !== undefined && change.state !== issue.state) {
        await db.updateTable('issues').set({ state: change.state }).where('id', '=', issue.id).execute()
        await db.updateTable('placements').set({ is_open: change.state === 'open' ? 1 : 0 }).where('issue_id', '=', issue.id).execute()
        await announce(db, events, { ...await issueContext(db, issue.id), user: NOBODY, type: change.state === 'open' ? 'issue_reopened' : 'issue_closed' })
      }
      return await requireIssue(db, repoId, number)
    },

    async createMilestone (repoId: number, number: number, title: string): Promise<Milestone> {
      await requireRepository(repoId)
      const inserted = await db.insertInto('milestones').values({ repo_id: repoId, number, title, start_date: null })
        .onConflict((oc) => oc.columns(['repo_id', 'number']).doNothing()).returning('number').executeTakeFirst()
      if (inserted === undefined) throw new Conflict(`milestone ${number} already exists in repository ${repoId}`)
      return { repo_id: repoId, number, title }
    }
  }
}

export type RepositoriesRepository = ReturnType<typeof createRepositoriesRepository>
