import { sql } from 'kysely'
import type { HostedImport } from '../../schemas/hosted-import.js'
import { reaches } from '../graph.js'
import { NotFound } from '../errors.js'
import { newObjectId, nowIso } from '../ids.js'
import { createRepositoriesRepository, touchPlanning } from '../repositories.js'
import { addDefaultPriorities } from '../priorities.js'
import { unprioritizedRank } from '../ranking.js'
import type { HostedImportsTable, IssueEventsTable, PlacementsTable } from '../schema.js'
import { BULK_ROWS, createBulkIssues } from '../bulk-issues.js'
import { notedEvents, type Executor } from '../engine/transaction.js'
import { lockFor } from '../engine/engine.js'
import { madeAt, placedAt } from '../pipeline-times.js'

/** Where a resumed run goes on: the repository (by index), the stage and the item within it. */
export interface HostedProgress {
  repo: number
  stage: string
  item: number
  /** the stage's list (workspaces, epic numbers, report ids, milestone or issue numbers), read once */
  list?: unknown[]
  /** release reports read already in this run (a report spans repositories) */
  reports: string[]
  /** requests counted in the first estimate for lists read from this server (`<repo>:<stage>`), corrected when read */
  lists: Record<string, number>
  /** probing a placeholder repository's milestones: where the probes began in the list, and the misses in a row */
  probe?: { from: number, misses: number }
}

export const COUNTS = ['workspaces', 'pipelines', 'issues_placed', 'estimates', 'epics', 'dependencies', 'release_reports', 'milestone_start_dates', 'issue_events'] as const
export type Counts = Record<typeof COUNTS[number], number>

export interface HostedJob {
  id: string
  api_url: string
  repositories: number[]
  closed_issues: boolean
  issue_events: boolean
  token: string | null
  state: HostedImportsTable['state']
  progress: HostedProgress
  counts: Counts
  warnings: string[]
  requests: number
  estimated_requests: number
  waited_seconds: number
  error: string | null
  created_at: string
  updated_at: string
}

export interface NewHostedJob {
  api_url: string
  repositories: number[]
  closed_issues: boolean
  issue_events: boolean
  /** the sealed token, for the new import's id */
  token: (id: string) => string
  estimated: number
  lists: Record<string, number>
}

/** What a hosted import's sealed token is bound to: a value sealed for one import does not open in another. */
export const hostedTokenContext = (id: string): string => `hosted_imports.token:${id}`

/** Warnings kept at most: each names what was skipped; past this, one line says how many more. */
const MAX_WARNINGS = 200

const parse = <T>(text: string, fallback: T): T => {
  try {
    return JSON.parse(text) as T
  } catch {
    return fallback
  }
}

const emptyCounts = (): Counts => Object.fromEntries(COUNTS.map((c) => [c, 0])) as Counts

/** The imports from the hosted service, their progress and their lease (one instance runs each). */
export function createHostedImportsRepository (db: Executor) {
  const read = async (id: string): Promise<HostedJob | undefined> => {
    const row = await db.selectFrom('hosted_imports').selectAll().where('id', '=', id).executeTakeFirst()
    if (row === undefined) return undefined
    return {
      ...row,
      repositories: parse<number[]>(row.repositories, []),
      closed_issues: Number(row.closed_issues) === 1,
      issue_events: Number(row.issue_events) === 1,
      progress: { repo: 0, stage: 'workspaces', item: 0, reports: [], lists: {}, ...parse<Partial<HostedProgress>>(row.progress, {}) },
      counts: { ...emptyCounts(), ...parse<Partial<Counts>>(row.counts, {}) },
      warnings: parse<string[]>(row.warnings, []),
      requests: Number(row.requests),
      estimated_requests: Number(row.estimated_requests),
      waited_seconds: Number(row.waited_seconds)
    }
  }

  return {
    read,

    async require (id: string): Promise<HostedJob> {
      const job = await read(id)
      if (job === undefined) throw new NotFound(`hosted import ${id} not found`)
      return job
    },

    async create (input: NewHostedJob): Promise<HostedJob> {
      const id = newObjectId()
      const now = nowIso()
      await db.insertInto('hosted_imports').values({
        id,
        api_url: input.api_url,
        repositories: JSON.stringify(input.repositories),
        closed_issues: input.closed_issues ? 1 : 0,
        issue_events: input.issue_events ? 1 : 0,
        token: input.token(id),
        state: 'queued',
        progress: JSON.stringify({ repo: 0, stage: 'workspaces', item: 0, reports: [], lists: input.lists }),
        estimated_requests: input.estimated,
        created_at: now,
        updated_at: now
      }).execute()
      return (await read(id))!
    },

    /** Takes (or renews) the lease when nobody else holds a live one; false: another instance runs it. */
    async lease (id: string, owner: string, ttlMs: number): Promise<boolean> {
      const now = Date.now()
      const result = await db.updateTable('hosted_imports').set({ lease_owner: owner, lease_until: now + ttlMs })
        .where('id', '=', id).where('state', 'in', ['queued', 'running', 'waiting'])
        .where((eb) => eb.or([eb('lease_until', 'is', null), eb('lease_until', '<', now), eb('lease_owner', '=', owner)]))
        .executeTakeFirst()
      return Number(result.numUpdatedRows) === 1
    },

    /** Saves the run's state while this instance holds the lease; false when it lost it (stop). */
    async save (id: string, owner: string, ttlMs: number, change: Partial<Pick<HostedJob, 'state' | 'progress' | 'counts' | 'warnings' | 'requests' | 'estimated_requests' | 'waited_seconds'>>): Promise<boolean> {
      const result = await db.updateTable('hosted_imports').set({
        ...(change.state === undefined ? {} : { state: change.state }),
        ...(change.progress === undefined ? {} : { progress: JSON.stringify(change.progress) }),
        ...(change.counts === undefined ? {} : { counts: JSON.stringify(change.counts) }),
        ...(change.warnings === undefined ? {} : { warnings: JSON.stringify(capWarnings(change.warnings)) }),
        ...(change.requests === undefined ? {} : { requests: change.requests }),
        ...(change.estimated_requests === undefined ? {} : { estimated_requests: change.estimated_requests }),
        ...(change.waited_seconds === undefined ? {} : { waited_seconds: change.waited_seconds }),
        lease_until: Date.now() + ttlMs,
        updated_at: nowIso()
      }).where('id', '=', id).where('lease_owner', '=', owner).where('state', 'in', ['queued', 'running', 'waiting']).executeTakeFirst()
      return Number(result.numUpdatedRows) === 1
    },

    /** Ends the run: done or failed; the token is dropped and the lease released. */
    async finish (id: string, owner: string, state: 'done' | 'failed', error: string | null): Promise<void> {
      await db.updateTable('hosted_imports').set({ state, error, token: null, lease_owner: null, lease_until: null, updated_at: nowIso() })
        .where('id', '=', id).where('lease_owner', '=', owner).execute()
    },

    /** Imports not finished whose lease is free or expired (another instance died running them). */
    async unfinished (): Promise<string[]> {
      const rows = await db.selectFrom('hosted_imports').select('id').where('state', 'in', ['queued', 'running', 'waiting'])
        .where((eb) => eb.or([eb('lease_until', 'is', null), eb('lease_until', '<', Date.now())])).orderBy('created_at').execute()
      return rows.map((r) => r.id)
    }
  }
}

function capWarnings (warnings: string[]): string[] {
  if (warnings.length <= MAX_WARNINGS) return warnings
  return [...warnings.slice(0, MAX_WARNINGS - 1), `… and ${warnings.length - MAX_WARNINGS + 1} more`]
}

/** The shape the admin API shows. */
export function hostedImportShape (job: HostedJob): HostedImport {
  return {
    id: job.id,
    api_url: job.api_url,
    repositories: job.repositories,
    state: job.state,
    requests: job.requests,
    estimated_requests: job.estimated_requests,
    waited_seconds: job.waited_seconds,
    ...job.counts,
    warnings: job.warnings,
    ...(job.error === null ? {} : { error: job.error }),
    created_at: job.created_at,
    updated_at: job.updated_at
  }
}

type Ref = { repo_id: number, issue_number: number }
type EventRow = Pick<IssueEventsTable, 'type' | 'created_at' | 'from_estimate' | 'to_estimate' | 'from_pipeline' | 'to_pipeline' | 'workspace_id'>
export interface RemotePipeline {
  id: string
  name: string
  issues: Array<{ issue_number: number, estimate?: { value: number }, position?: number }>
}

/** A list in slices of `BULK_ROWS`: each a statement's worth of bound values. */
function chunks<T> (list: T[]): T[][] {
  const out: T[][] = []
  for (let i = 0; i < list.length; i += BULK_ROWS) out.push(list.slice(i, i + BULK_ROWS))
  return out
}

/**
 * The writes of a hosted import, inside one transaction each: they keep the hosted service's ids,
 * make placeholders for what is not here yet, and change only what differs (a second run of an
 * unchanged source writes nothing).
 */
export function createHostedSync (db: Executor) {
  const repositories = createRepositoriesRepository(db)

  const brought = async (kind: 'workspace' | 'pipeline' | 'release_report', id: string): Promise<boolean> =>
    await db.selectFrom('hosted_ids').select('id').where('kind', '=', kind).where('id', '=', id).executeTakeFirst() !== undefined
  const bring = async (kind: 'workspace' | 'pipeline' | 'release_report', id: string): Promise<void> => {
    await db.insertInto('hosted_ids').values({ kind, id }).onConflict((oc) => oc.columns(['kind', 'id']).doNothing()).execute()
  }

  /** A repository by id; one not here is made a placeholder (`unknown/<id>`) that a connection takes over. */
  const ensureRepository = async (repoId: number): Promise<void> => {
    if (await repositories.byId(repoId) !== undefined) return
    await db.insertInto('repositories').values({ id: repoId, owner: 'unknown', name: String(repoId), html_url: null, connection_id: null, placeholder: 1, created_at: new Date().toISOString() })
      .onConflict((oc) => oc.column('id').doNothing()).execute()
  }

  /** An issue's id; one not here is made with its number only (the issue host fills the rest in). */
  const ensureIssue = async (repoId: number, number: number): Promise<number> => {
    const found = await repositories.issue(repoId, number)
    if (found !== undefined) return Number(found.id)
    await ensureRepository(repoId)
    return Number((await repositories.createIssue(repoId, { number, title: '' })).id)
  }

  /** Issue ids by number in one repository, made where missing (number only, as `ensureIssue`): a few statements per `BULK_ROWS`. */
  const ensureIssues = async (repoId: number, numbers: number[]): Promise<Map<number, number>> => {
    const ids = new Map<number, number>()
    const read = async (wanted: number[]) => {
      for (const chunk of chunks(wanted)) {
        const rows = await db.selectFrom('issues').select(['id', 'number']).where('repo_id', '=', repoId).where('number', 'in', chunk).execute()
        for (const row of rows) ids.set(Number(row.number), Number(row.id))
      }
    }
    await read(numbers)
    const missing = numbers.filter((n) => !ids.has(n))
    if (missing.length === 0) return ids
    await ensureRepository(repoId)
    const bulk = createBulkIssues(db, undefined)
    for (const [i, chunk] of chunks(missing).entries()) {
      await bulk.create(chunk.map((number) => ({ repoId, number, title: '' })), i * BULK_ROWS, (k) => `issue ${repoId}#${missing[k]}`)
    }
    await read(missing)
    return ids
  }

  /** Issue ids of references over any repositories, made where missing: `ensureIssues` per repository. */
  const ensureRefs = async (refs: Ref[]): Promise<(ref: Ref) => number> => {
    const byRepo = new Map<number, number[]>()
    for (const ref of refs) {
      const numbers = byRepo.get(ref.repo_id)
      if (numbers === undefined) byRepo.set(ref.repo_id, [ref.issue_number]); else numbers.push(ref.issue_number)
    }
    const ids = new Map<number, Map<number, number>>()
    for (const [repoId, numbers] of byRepo) ids.set(repoId, await ensureIssues(repoId, [...new Set(numbers)]))
    return (ref) => ids.get(ref.repo_id)!.get(ref.issue_number)!
  }

  const setEstimate = async (issueId: number, value: number | null): Promise<boolean> => {
    const result = await db.updateTable('issues').set({ estimate: value, planning_changed_at: nowIso() }).where('id', '=', issueId)
      .where((eb) => value === null ? eb('estimate', 'is not', null) : eb.or([eb('estimate', 'is', null), eb('estimate', '<>', value)])).executeTakeFirst()
    return Number(result.numUpdatedRows) > 0
  }

  return {
    ensureRepository,
    ensureIssue,
    setEstimate,

    /**
     * The workspace with its pipelines in the board's order, holding the repository. A clash (the
     * workspace or a pipeline id used here by something no import brought) is returned, not written.
     */
    async workspace (
      ws: { id: string, name: string, description?: string | null }, repoId: number, pipelines: Array<{ id: string, name: string }>, order: number
    ): Promise<{ clash?: string, created: boolean, pipelines: number }> {
      const existing = await db.selectFrom('workspaces').select(['id', 'name', 'description']).where('id', '=', ws.id).executeTakeFirst()
      if (existing !== undefined && !await brought('workspace', ws.id)) return { clash: `workspace ${ws.id} (${ws.name}): the id is used here by workspace '${existing.name}'; skipped`, created: false, pipelines: 0 }
      const lanes = await db.selectFrom('pipelines').select(['id', 'workspace_id', 'name', 'sort_order']).where('id', 'in', pipelines.map((p) => p.id)).execute()
      for (const lane of lanes) {
        if (lane.workspace_id !== ws.id || !await brought('pipeline', lane.id)) {
          return { clash: `workspace ${ws.id} (${ws.name}): pipeline id ${lane.id} is used here by something else; skipped`, created: false, pipelines: 0 }
        }
      }
      let changedPipelines = 0
      if (existing === undefined) {
        // Oldest first as the hosted service lists them: p1 operations act on the oldest.
        await db.insertInto('workspaces').values({ id: ws.id, name: ws.name, description: ws.description ?? null, created_at: new Date(Date.now() + order).toISOString() }).execute()
        await addDefaultPriorities(db, ws.id)
        await bring('workspace', ws.id)
      } else if (existing.name !== ws.name || (existing.description ?? null) !== (ws.description ?? null)) {
        await db.updateTable('workspaces').set({ name: ws.name, description: ws.description ?? null }).where('id', '=', ws.id).execute()
      }
      const others = await db.selectFrom('pipelines').select('id').where('workspace_id', '=', ws.id).where('id', 'not in', [...pipelines.map((p) => p.id), '']).orderBy('sort_order').execute()
      // The board's pipelines first, in its order; any kept here only (never removed) after them.
      for (const [i, p] of pipelines.entries()) {
        const lane = lanes.find((l) => l.id === p.id)
        if (lane === undefined) {
          await db.insertInto('pipelines').values({ id: p.id, workspace_id: ws.id, name: p.name, sort_order: i, ...madeAt(new Date().toISOString()) }).execute()
          await bring('pipeline', p.id)
          changedPipelines++
        } else if (lane.name !== p.name || Number(lane.sort_order) !== i) {
          await db.updateTable('pipelines').set(placedAt({ name: p.name, sort_order: i }, new Date().toISOString())).where('id', '=', p.id).execute()
          changedPipelines++
        }
      }
      for (const [i, other] of others.entries()) await db.updateTable('pipelines').set(placedAt({ sort_order: pipelines.length + i }, new Date().toISOString())).where('id', '=', other.id).execute()
      await ensureRepository(repoId)
      const holds = await db.selectFrom('workspace_repositories').select('repo_id').where('workspace_id', '=', ws.id).where('repo_id', '=', repoId).executeTakeFirst()
      if (holds === undefined) {
        await db.insertInto('workspace_repositories').values({ workspace_id: ws.id, repo_id: repoId }).execute()
        const first = pipelines[0].id
        await sql`
          INSERT INTO placements (issue_id, workspace_id, pipeline_id, repo_id, number, is_open, position, rank)
          SELECT id, ${ws.id}, ${first}, repo_id, number, CASE WHEN state = 'open' THEN 1 ELSE 0 END, NULL, 17592186044416 + number * 1048576
          FROM issues WHERE repo_id = ${repoId}`.execute(db)
      }
      return { created: existing === undefined, pipelines: changedPipelines }
    },

    /**
     * Places the board's issues: pipeline, position (rank) and estimate; returns what changed (epics
     * come with the epics). A board of thousands of issues is a few statements per `BULK_ROWS`: the
     * issues and their placements read, the missing issues made, the changed placements upserted and
     * the changed estimates set by value. An issue listed twice takes its last place, as in the list.
     */
    async board (workspaceId: string, repoId: number, pipelines: RemotePipeline[]): Promise<{ placed: number, estimates: number }> {
      const listed = new Map<number, { pipeline: string, position: number | null, rank: number, estimate: number | null }>()
      for (const pipeline of pipelines) {
        for (const issue of pipeline.issues) {
          listed.set(issue.issue_number, {
            pipeline: pipeline.id,
            position: issue.position ?? null,
            rank: issue.position ?? unprioritizedRank(issue.issue_number),
            estimate: issue.estimate?.value ?? null
          })
        }
      }
      const ids = await ensureIssues(repoId, [...listed.keys()])
      const byId = new Map([...listed].map(([number, wanted]) => [ids.get(number)!, wanted]))
      const moved: PlacementsTable[] = []
      const estimated = new Map<number | null, number[]>()
      for (const chunk of chunks([...byId.keys()])) {
        const rows = await db.selectFrom('issues as i').leftJoin('placements as p', (join) => join.onRef('p.issue_id', '=', 'i.id').on('p.workspace_id', '=', workspaceId))
          .select(['i.id', 'i.estimate', 'p.pipeline_id', 'p.repo_id', 'p.number', 'p.is_open', 'p.position', 'p.rank'])
          .where('i.id', 'in', chunk).execute()
        for (const row of rows) {
          const id = Number(row.id)
          const wanted = byId.get(id)!
          const position = row.position === null ? null : Number(row.position)
          if (row.pipeline_id !== null && (row.pipeline_id !== wanted.pipeline || Number(row.rank) !== wanted.rank || position !== wanted.position)) {
            moved.push({
              issue_id: id,
              workspace_id: workspaceId,
              pipeline_id: wanted.pipeline,
              repo_id: Number(row.repo_id),
              number: Number(row.number),
              is_open: Number(row.is_open),
              position: wanted.position,
              rank: wanted.rank
            })
          }
          if ((row.estimate === null ? null : Number(row.estimate)) !== wanted.estimate) {
            const same = estimated.get(wanted.estimate)
            if (same === undefined) estimated.set(wanted.estimate, [id]); else same.push(id)
          }
        }
      }
      for (const chunk of chunks(moved)) {
        await db.insertInto('placements').values(chunk).onConflict((oc) => oc.columns(['issue_id', 'workspace_id']).doUpdateSet((eb) => ({
          pipeline_id: eb.ref('excluded.pipeline_id'), position: eb.ref('excluded.position'), rank: eb.ref('excluded.rank')
        }))).execute()
        await touchPlanning(db, chunk.map((row) => row.issue_id))
      }
      for (const [value, issueIds] of estimated) {
        for (const chunk of chunks(issueIds)) await db.updateTable('issues').set({ estimate: value, planning_changed_at: nowIso() }).where('id', 'in', chunk).execute()
      }
      return { placed: moved.length, estimates: [...estimated.values()].reduce((n, list) => n + list.length, 0) }
    },

    /** An issue's pipeline in a workspace (a closed issue: off the board, kept for when it reopens). */
    async placeClosed (issueId: number, workspaceId: string, pipelineId: string): Promise<boolean> {
      const lane = await db.selectFrom('pipelines').select('id').where('id', '=', pipelineId).where('workspace_id', '=', workspaceId).executeTakeFirst()
      if (lane === undefined) return false
      const result = await db.updateTable('placements').set({ pipeline_id: pipelineId }).where('issue_id', '=', issueId).where('workspace_id', '=', workspaceId)
        .where('pipeline_id', '<>', pipelineId).executeTakeFirst()
      return Number(result.numUpdatedRows) > 0
    },

    /** The epic holds exactly these children (made where missing); returns whether anything changed and the children refused. */
    async epic (repoId: number, number: number, estimate: number | null, children: Ref[]): Promise<{ changed: boolean, refused: string[] }> {
      const epicId = await ensureIssue(repoId, number)
      let changed = Number((await db.updateTable('issues').set({ is_epic: 1 }).where('id', '=', epicId).where('is_epic', '=', 0).executeTakeFirst()).numUpdatedRows) > 0
      if (await setEstimate(epicId, estimate)) changed = true
      const wanted = new Set<number>()
      const refused: string[] = []
      const idOf = await ensureRefs(children)
      for (const child of children) {
        const childId = idOf(child)
        if (childId === epicId || await reaches(db, { table: 'epic_issues', from: 'epic_id', to: 'issue_id' }, childId, epicId)) {
          refused.push(`${child.repo_id}#${child.issue_number}`)
          continue
        }
        wanted.add(childId)
        const inserted = await db.insertInto('epic_issues').values({ epic_id: epicId, issue_id: childId })
          .onConflict((oc) => oc.columns(['epic_id', 'issue_id']).doNothing()).returning('issue_id').executeTakeFirst()
        if (inserted !== undefined) {
          changed = true
          await touchPlanning(db, [epicId, childId])
        }
      }
      const gone = await db.deleteFrom('epic_issues').where('epic_id', '=', epicId).where('issue_id', 'not in', [...wanted, 0]).executeTakeFirst()
      if (Number(gone.numDeletedRows) > 0) changed = true
      return { changed, refused }
    },

    /**
     * The repository's dependencies as the hosted service lists them: missing ones added (a cycle
     * is refused and named), and ones between the import's repositories it no longer lists removed.
     */
    async dependencies (
      repoId: number, listed: Array<{ blocking: Ref, blocked: Ref }>, importRepos: number[]
    ): Promise<{ changed: number, refused: string[] }> {
      let changed = 0
      const refused: string[] = []
      const keep = new Set<string>()
      // The lock the API's dependency inserts take (db/dependencies.ts): each cycle check below must
      // see every edge committed before it, and none made meanwhile that it cannot see.
      await lockFor(db, 'dependencies')
      const idOf = await ensureRefs(listed.flatMap((d) => [d.blocking, d.blocked]))
      const stored = new Set<string>()
      for (const chunk of chunks([...new Set(listed.map((d) => idOf(d.blocking)))])) {
        const rows = await db.selectFrom('dependencies').select(['blocking_id', 'blocked_id']).where('blocking_id', 'in', chunk).execute()
        for (const row of rows) stored.add(`${Number(row.blocking_id)}:${Number(row.blocked_id)}`)
      }
      for (const d of listed) {
        const blocking = idOf(d.blocking)
        const blocked = idOf(d.blocked)
        const key = `${blocking}:${blocked}`
        keep.add(key)
        if (stored.has(key)) continue
        if (blocking === blocked || await reaches(db, { table: 'dependencies', from: 'blocking_id', to: 'blocked_id' }, blocked, blocking)) {
          refused.push(`${d.blocking.repo_id}#${d.blocking.issue_number} blocks ${d.blocked.repo_id}#${d.blocked.issue_number}`)
          continue
        }
        await db.insertInto('dependencies').values({ blocking_id: blocking, blocked_id: blocked, created_at: nowIso() }).execute()
        await touchPlanning(db, [blocking, blocked])
        stored.add(key)
        changed++
      }
      const here = await db.selectFrom('dependencies as d').innerJoin('issues as a', 'a.id', 'd.blocking_id').innerJoin('issues as b', 'b.id', 'd.blocked_id')
        .select(['d.blocking_id', 'd.blocked_id', 'a.repo_id as a_repo', 'b.repo_id as b_repo'])
        .where((eb) => eb.or([eb('a.repo_id', '=', repoId), eb('b.repo_id', '=', repoId)])).execute()
      for (const d of here) {
        if (keep.has(`${d.blocking_id}:${d.blocked_id}`) || !importRepos.includes(Number(d.a_repo)) || !importRepos.includes(Number(d.b_repo))) continue
        await db.deleteFrom('dependencies').where('blocking_id', '=', d.blocking_id).where('blocked_id', '=', d.blocked_id).execute()
        await touchPlanning(db, [Number(d.blocking_id), Number(d.blocked_id)])
        changed++
      }
      return { changed, refused }
    },

    /** A release report with the hosted id and every field; a clash is returned, not written. */
    async releaseReport (report: { release_id: string, title: string, description?: string | null, start_date: string, desired_end_date: string, created_at?: string, closed_at?: string | null, state?: 'open' | 'closed', repositories: number[] }, issues: Array<{ repo_id: number, issue_number: number }>): Promise<{ clash?: string, changed: boolean }> {
      const id = report.release_id
      const iso = (v: string) => new Date(v).toISOString()
      const existing = await db.selectFrom('release_reports').selectAll().where('id', '=', id).executeTakeFirst()
      if (existing !== undefined && !await brought('release_report', id)) return { clash: `release report ${id} (${report.title}): the id is used here by report '${existing.title}'; skipped`, changed: false }
      const state = report.state ?? (report.closed_at === undefined || report.closed_at === null ? 'open' : 'closed')
      const fields = {
        title: report.title,
        description: report.description ?? '',
        start_date: iso(report.start_date),
        desired_end_date: iso(report.desired_end_date),
        created_at: report.created_at === undefined ? existing?.created_at ?? nowIso() : iso(report.created_at),
        closed_at: report.closed_at === undefined || report.closed_at === null ? null : iso(report.closed_at),
        state
      }
      let changed = false
      if (existing === undefined) {
        await db.insertInto('release_reports').values({ id, seq: sql<number>`(SELECT coalesce(max(seq), 0) + 1 FROM release_reports)`, ...fields }).execute()
        await bring('release_report', id)
        changed = true
      } else if (Object.entries(fields).some(([k, v]) => (existing as Record<string, unknown>)[k] !== v)) {
        await db.updateTable('release_reports').set(fields).where('id', '=', id).execute()
        changed = true
      }
      for (const repoId of report.repositories) await ensureRepository(repoId)
      const repos = await db.selectFrom('release_report_repositories').select('repo_id').where('release_id', '=', id).execute()
      const have = new Set(repos.map((r) => Number(r.repo_id)))
      for (const repoId of report.repositories) {
        if (have.has(repoId)) continue
        await db.insertInto('release_report_repositories').values({ release_id: id, repo_id: repoId }).execute()
        changed = true
      }
      const gone = await db.deleteFrom('release_report_repositories').where('release_id', '=', id).where('repo_id', 'not in', [...report.repositories, 0]).executeTakeFirst()
      if (Number(gone.numDeletedRows) > 0) changed = true
      const ids: number[] = []
      for (const ref of issues) {
        if (!report.repositories.includes(ref.repo_id)) continue
        const issueId = await ensureIssue(ref.repo_id, ref.issue_number)
        ids.push(issueId)
        const inserted = await db.insertInto('release_report_issues').values({ release_id: id, issue_id: issueId })
          .onConflict((oc) => oc.columns(['release_id', 'issue_id']).doNothing()).returning('issue_id').executeTakeFirst()
        if (inserted !== undefined) {
          changed = true
          await touchPlanning(db, [issueId])
        }
      }
      const left = await db.deleteFrom('release_report_issues').where('release_id', '=', id).where('issue_id', 'not in', [...ids, 0]).executeTakeFirst()
      if (Number(left.numDeletedRows) > 0) changed = true
      return { changed }
    },

    /** Sets a milestone's start date; false when it was already that. */
    /** Sets a milestone's start date; with `make`, a milestone not here is made with its number only (a placeholder's). */
    async startDate (repoId: number, number: number, startDate: string, make = false): Promise<boolean> {
      const value = new Date(startDate).toISOString()
      if (make) {
        await ensureRepository(repoId)
        const inserted = await db.insertInto('milestones').values({ repo_id: repoId, number, title: '', start_date: value })
          .onConflict((oc) => oc.columns(['repo_id', 'number']).doNothing()).executeTakeFirst()
        if (Number(inserted.numInsertedOrUpdatedRows ?? 0) > 0) return true
      }
      const result = await db.updateTable('milestones').set({ start_date: value }).where('repo_id', '=', repoId).where('number', '=', number)
        .where((eb) => eb.or([eb('start_date', 'is', null), eb('start_date', '<>', value)])).executeTakeFirst()
      return Number(result.numUpdatedRows) > 0
    },

    /**
     * The milestones of the repository known here, and whether the issue host has yet to bring them
     * (the repository is not here, or a placeholder).
     */
    async milestones (repoId: number): Promise<{ numbers: number[], placeholder: boolean }> {
      const repository = await db.selectFrom('repositories').select('placeholder').where('id', '=', repoId).executeTakeFirst()
      const numbers = (await db.selectFrom('milestones').select('number').where('repo_id', '=', repoId).orderBy('number').execute()).map((m) => Number(m.number))
      return { numbers, placeholder: repository === undefined || Boolean(repository.placeholder) }
    },

    /** Issue numbers of the repository, by state (or all), in number order. */
    async issueNumbers (repoId: number, state?: 'closed'): Promise<number[]> {
      let query = db.selectFrom('issues').select('number').where('repo_id', '=', repoId)
      if (state !== undefined) query = query.where('state', '=', state)
      return (await query.orderBy('number').execute()).map((r) => Number(r.number))
    },

    /** Adds the events not here yet (the same type, time and values); users not known here are left out. */
    async events (issueId: number, events: Array<{ user_id?: number, type: 'estimateIssue' | 'transferIssue', created_at: string, from_estimate?: { value: number }, to_estimate?: { value: number }, from_pipeline?: { name: string }, to_pipeline?: { name: string }, workspace_id?: string }>): Promise<number> {
      const have = await db.selectFrom('issue_events').select(['type', 'created_at', 'from_estimate', 'to_estimate', 'from_pipeline', 'to_pipeline', 'workspace_id']).where('issue_id', '=', issueId).execute()
      const key = (e: EventRow) => JSON.stringify([e.type, e.created_at, e.from_estimate, e.to_estimate, e.from_pipeline, e.to_pipeline, e.workspace_id])
      const num = (v: number | null) => v === null ? null : Number(v)
      const known = new Set(have.map((e) => key({ ...e, from_estimate: num(e.from_estimate), to_estimate: num(e.to_estimate) })))
      const users = new Set((await db.selectFrom('users').select('id').where('id', 'in', [...events.map((e) => e.user_id ?? 0), 0]).execute()).map((u) => Number(u.id)))
      let added = 0
      // Oldest first (the hosted list is newest first), so the feed lists them in the order they happened.
      for (const e of [...events].reverse().sort((a, b) => Date.parse(a.created_at) - Date.parse(b.created_at))) {
        const row = {
          type: e.type,
          created_at: new Date(e.created_at).toISOString(),
          from_estimate: e.from_estimate?.value ?? null,
          to_estimate: e.to_estimate?.value ?? null,
          from_pipeline: e.from_pipeline?.name ?? null,
          to_pipeline: e.to_pipeline?.name ?? null,
          workspace_id: e.workspace_id ?? null
        }
        if (known.has(key(row))) continue
        known.add(key(row))
        notedEvents(db)
        await db.insertInto('issue_events').values({ ...row, issue_id: issueId, user_id: e.user_id !== undefined && users.has(e.user_id) ? e.user_id : null }).execute()
        added++
      }
      return added
    }
  }
}
