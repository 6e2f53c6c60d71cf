import { announce, issueContext } from './announce.js'
import { NOBODY, type DomainEvents } from './domain-events.js'
import { Conflict, DomainError, Invalid, NotFound } from './errors.js'
import { nowIso } from './ids.js'
import { placedEventRow, placementRow } from './first-placement.js'
import type { NewIssue } from './repositories.js'
import { notedEvents, type Executor } from './engine/transaction.js'

/** Rows per multi-row INSERT: well under SQLite's and PostgreSQL's limits on bound values. */
export const BULK_ROWS = 500

export interface BulkIssue extends NewIssue {
  repoId: number
  /** when it was made (a fixture's `created_at`); default now */
  createdAt?: string
  /** the issue host's labels and assignees, as a fixture holds them */
  labels?: Array<{ name: string, color?: string | null }>
  assignees?: Array<{ login: string, avatar_url?: string | null }>
  /** the issue host's description */
  body?: string
  /** who made it here (a native issue): users.id */
  creatorId?: number
  /** the issue host's updated_at of the state held (an export's), kept as written: later deliveries older than it are stale */
  hostUpdatedAt?: string
}

/**
 * Creates many issues as `createIssue` does, one after another (each lands in the first pipeline
 * of every workspace holding its repository, or the one named; an author gets the first-placement
 * event; an opened issue is announced when someone listens), but in a few multi-row statements per
 * `BULK_ROWS` issues instead of several statements per issue. Each chunk is checked before it is
 * written; a refusal names the issue by `where(index)` (the caller's transaction undoes the rest).
 */
export function createBulkIssues (db: Executor, events: DomainEvents | undefined) {
  const repos = new Map<number, boolean>()
  /** by repository: the first pipeline of each workspace holding it */
  const holdings = new Map<number, Map<string, { id: string, name: string }>>()
  /** by workspace and wanted id or name */
  const named = new Map<string, { id: string, name: string } | undefined>()
  const taken = new Set<string>()
  const announced = new Map<number, boolean>()

  async function repoExists (repoId: number): Promise<boolean> {
    let known = repos.get(repoId)
    if (known === undefined) {
      known = await db.selectFrom('repositories').select('id').where('id', '=', repoId).executeTakeFirst() !== undefined
      repos.set(repoId, known)
    }
    return known
  }

  async function firstPipelines (repoId: number): Promise<Map<string, { id: string, name: string }>> {
    let firsts = holdings.get(repoId)
    if (firsts === undefined) {
      const rows = await db.selectFrom('workspace_repositories as wr')
        .innerJoin('pipelines as p', 'p.workspace_id', 'wr.workspace_id')
        .select(['wr.workspace_id', 'p.id as pipeline_id', 'p.name', 'p.sort_order'])
        .where('wr.repo_id', '=', repoId).orderBy('wr.workspace_id').orderBy('p.sort_order').execute()
      firsts = new Map()
      for (const row of rows) if (!firsts.has(row.workspace_id)) firsts.set(row.workspace_id, { id: row.pipeline_id, name: row.name })
      holdings.set(repoId, firsts)
    }
    return firsts
  }

  async function pipelineIn (workspaceId: string, wanted: string): Promise<{ id: string, name: string } | undefined> {
    const key = `${workspaceId}\u0000${wanted}`
    if (!named.has(key)) {
      named.set(key, await db.selectFrom('pipelines').select(['id', 'name']).where('workspace_id', '=', workspaceId)
        .where((eb) => eb.or([eb('id', '=', wanted), eb('name', '=', wanted)])).orderBy('sort_order').limit(1).executeTakeFirst())
    }
    return named.get(key)
  }

  /** The placements an issue gets, checked; throws what `createIssue` would. */
  async function placementsOf (issue: BulkIssue): Promise<Map<string, { id: string, name: string }>> {
    if (!await repoExists(issue.repoId)) throw new NotFound(`repository ${issue.repoId} not found`)
    const firsts = await firstPipelines(issue.repoId)
    const chosen = new Map(firsts)
    for (const [workspaceId, wanted] of Object.entries(issue.pipelines ?? {})) {
      if (!firsts.has(workspaceId)) throw new Invalid(`workspace ${workspaceId} does not hold repository ${issue.repoId}`)
      const pipeline = await pipelineIn(workspaceId, wanted)
      if (pipeline === undefined) throw new Invalid(`workspace ${workspaceId} has no pipeline '${wanted}'`)
      chosen.set(workspaceId, pipeline)
    }
    return chosen
  }

  /** Issue numbers of this chunk already in the database, as `repo:number`. */
  async function existing (chunk: BulkIssue[]): Promise<Set<string>> {
    const found = new Set<string>()
    const byRepo = new Map<number, number[]>()
    for (const issue of chunk) {
      const numbers = byRepo.get(issue.repoId)
      if (numbers === undefined) byRepo.set(issue.repoId, [issue.number])
      else numbers.push(issue.number)
    }
    for (const [repoId, numbers] of byRepo) {
      const rows = await db.selectFrom('issues').select('number').where('repo_id', '=', repoId).where('number', 'in', numbers).execute()
      for (const row of rows) found.add(`${repoId}:${Number(row.number)}`)
    }
    return found
  }

  const milestonesSeen = new Map<string, boolean>()
  async function milestoneMissing (repoId: number, number: number): Promise<boolean> {
    const key = `${repoId}:${number}`
    if (!milestonesSeen.has(key)) {
      milestonesSeen.set(key, await db.selectFrom('milestones').select('number').where('repo_id', '=', repoId).where('number', '=', number).executeTakeFirst() === undefined)
    }
    return milestonesSeen.get(key)!
  }

  async function wantsOpened (repoId: number): Promise<boolean> {
    let wants = announced.get(repoId)
    if (wants === undefined) {
      wants = events !== undefined && await events.wants(db, 'issue_opened', repoId)
      announced.set(repoId, wants)
    }
    return wants
  }

  return {
    /**
     * Checks then writes one chunk of issues; `offset` is the index of its first issue in the
     * whole list, for `where`. Returns how many were made.
     */
    async create (chunk: BulkIssue[], offset: number, where: (index: number) => string): Promise<number> {
      const inDatabase = await existing(chunk)
      const targets: Array<Map<string, { id: string, name: string }>> = []
      for (const [i, issue] of chunk.entries()) {
        const key = `${issue.repoId}:${issue.number}`
        try {
          if (inDatabase.has(key) || taken.has(key)) throw new Conflict(`issue ${issue.number} already exists in repository ${issue.repoId}`)
          if (issue.labels !== undefined && new Set(issue.labels.map((l) => l.name)).size < issue.labels.length) throw new Invalid('a label is named twice')
          if (issue.assignees !== undefined && new Set(issue.assignees.map((a) => a.login)).size < issue.assignees.length) throw new Invalid('an assignee is named twice')
          targets.push(await placementsOf(issue))
          if (issue.milestoneNumber !== undefined && await milestoneMissing(issue.repoId, issue.milestoneNumber)) {
            throw new Invalid(`milestone ${issue.milestoneNumber} not found in repository ${issue.repoId}`)
          }
        } catch (err) {
          if (err instanceof DomainError) throw new DomainError(`${where(offset + i)}: ${err.message}`, err.statusCode)
          throw err
        }
        taken.add(key)
      }
      if (chunk.length === 0) return 0
      const now = nowIso()
      const ids = new Map<string, number>()
      for (let at = 0; at < chunk.length; at += BULK_ROWS) {
        const inserted = await db.insertInto('issues')
          .values(chunk.slice(at, at + BULK_ROWS).map((issue) => ({
            repo_id: issue.repoId,
            number: issue.number,
            title: issue.title,
            state: issue.state ?? 'open',
            estimate: issue.estimate ?? null,
            created_at: issue.createdAt === undefined ? now : new Date(issue.createdAt).toISOString(),
            milestone_number: issue.milestoneNumber ?? null,
            is_pull_request: issue.pullRequest === true ? 1 : 0,
            body: issue.body === undefined || issue.body === '' ? null : issue.body,
            creator_id: issue.creatorId ?? null,
            host_updated_at: issue.hostUpdatedAt ?? null
          })))
          .returning(['id', 'repo_id', 'number']).execute()
        for (const row of inserted) ids.set(`${Number(row.repo_id)}:${Number(row.number)}`, Number(row.id))
      }
      const idOf = (issue: BulkIssue) => ids.get(`${issue.repoId}:${issue.number}`)!

      const plusOnes = chunk.flatMap((issue) => (issue.plusOnes ?? []).map((at) => ({ issue_id: idOf(issue), created_at: at })))
      const firsts = chunk.flatMap((issue, i) => [...targets[i]].map(([workspaceId, pipeline]) => ({
        issue, at: { issueId: idOf(issue), repoId: issue.repoId, number: issue.number, open: (issue.state ?? 'open') === 'open', workspaceId, pipeline }
      })))
      const placements = firsts.map(({ at }) => placementRow(at))
      const placed = firsts.flatMap(({ issue, at }) => issue.authorId === undefined ? [] : [placedEventRow(at, issue.authorId, now)])
      // The history the reports read: the state each issue was made in, and its milestone.
      const states = chunk.map((issue) => ({ issue_id: idOf(issue), state: issue.state ?? 'open', at: now }))
      for (let at = 0; at < states.length; at += BULK_ROWS) await db.insertInto('issue_states').values(states.slice(at, at + BULK_ROWS)).execute()
      const milestones = chunk.filter((issue) => issue.milestoneNumber !== undefined)
        .map((issue) => ({ issue_id: idOf(issue), repo_id: issue.repoId, milestone_number: issue.milestoneNumber!, at: now }))
      for (let at = 0; at < milestones.length; at += BULK_ROWS) await db.insertInto('issue_milestones').values(milestones.slice(at, at + BULK_ROWS)).execute()
      const labels = chunk.flatMap((issue) => (issue.labels ?? []).map((l) => ({ issue_id: idOf(issue), name: l.name, color: l.color ?? null })))
      for (let at = 0; at < labels.length; at += BULK_ROWS) await db.insertInto('issue_labels').values(labels.slice(at, at + BULK_ROWS)).execute()
      const assignees = chunk.flatMap((issue) => (issue.assignees ?? [])
        .map((a) => ({ issue_id: idOf(issue), login: a.login, avatar_url: a.avatar_url ?? null })))
      for (let at = 0; at < assignees.length; at += BULK_ROWS) await db.insertInto('issue_assignees').values(assignees.slice(at, at + BULK_ROWS)).execute()
      for (let at = 0; at < plusOnes.length; at += BULK_ROWS) await db.insertInto('plus_ones').values(plusOnes.slice(at, at + BULK_ROWS)).execute()
      for (let at = 0; at < placements.length; at += BULK_ROWS) await db.insertInto('placements').values(placements.slice(at, at + BULK_ROWS)).execute()
      if (placed.length > 0) notedEvents(db)
      for (let at = 0; at < placed.length; at += BULK_ROWS) await db.insertInto('issue_events').values(placed.slice(at, at + BULK_ROWS)).execute()
      for (const issue of chunk) {
        if ((issue.state ?? 'open') === 'open' && await wantsOpened(issue.repoId)) {
          await announce(db, events, { ...await issueContext(db, idOf(issue)), user: NOBODY, type: 'issue_opened' })
        }
      }
      return chunk.length
    }
  }
}
