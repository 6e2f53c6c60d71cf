import { sql } from 'kysely'
import type { Static } from '../schemas/common.js'
import type { AdminWorkspace } from '../schemas/admin.js'
import type { Workspace } from '../schemas/boards.js'
import { createAuditRepository } from './sign-in/audit.js'
import { Conflict, Invalid, NotFound } from './errors.js'
import { newObjectId, nowIso } from './ids.js'
import { prepared } from './engine/prepared.js'
import { isUniqueViolation, lockFor } from './engine/engine.js'
import { writeTransaction, type Executor } from './engine/transaction.js'
import { addDefaultPriorities } from './priorities.js'
import { madeAt, placedAt } from './pipeline-times.js'

export type WorkspaceData = Static<typeof Workspace>
export type WorkspaceWithPipelines = Static<typeof AdminWorkspace>
export interface Pipeline { id: string, name: string, workspace_id: string }

export interface NewWorkspace {
  id?: string
  name: string
  description?: string | null
  created_at?: string
  repositories: number[]
  /** a pipeline's `host_label`: the issue-host label it writes (two-way sync; set by a fixture) */
  pipelines: Array<string | NewPipeline>
}

/** A pipeline of a new workspace; its times (a fixture's) default to the workspace's creation. */
export interface NewPipeline { id?: string, name: string, host_label?: string, created_at?: string, updated_at?: string }

export interface WorkspaceChange {
  name?: string
  description?: string | null
  add_repositories?: number[]
  remove_repositories?: number[]
  /** the full ordered list: entries with an id rename/reorder, entries without one are added */
  pipelines?: Array<{ id?: string, name: string }>
}

const pipelinesQuery = prepared<{ workspaceId: string }>()((db, p) =>
  db.selectFrom('pipelines').select(['id', 'name', 'workspace_id']).where('workspace_id', '=', p.workspaceId).orderBy('sort_order'))
const pipelineQuery = prepared<{ id: string }>()((db, p) =>
  db.selectFrom('pipelines as p').innerJoin('workspaces as w', 'w.id', 'p.workspace_id')
    .select(['p.id', 'p.name', 'p.workspace_id', 'w.name as workspace_name']).where('p.id', '=', p.id))
const holdsQuery = prepared<{ workspaceId: string, repoId: number }>()((db, p) =>
  db.selectFrom('workspace_repositories').select('repo_id').where('workspace_id', '=', p.workspaceId).where('repo_id', '=', p.repoId))
const oldestQuery = prepared<{ repoId: number }>()((db, p) =>
  db.selectFrom('workspaces as w').innerJoin('workspace_repositories as wr', 'wr.workspace_id', 'w.id')
    .select('w.id').where('wr.repo_id', '=', p.repoId).orderBy('w.created_at').orderBy('w.seq').limit(1))

/** Workspaces, their repositories and their ordered pipelines. */
export function createWorkspacesRepository (db: Executor) {
  /** The workspaces' repositories, in repository order, by workspace id (one query for all). */
  async function repositoriesOf (ids: string[]): Promise<Map<string, number[]>> {
    const out = new Map(ids.map((id) => [id, [] as number[]]))
    if (ids.length === 0) return out
    const rows = await db.selectFrom('workspace_repositories').select(['workspace_id', 'repo_id'])
      .where('workspace_id', 'in', ids).orderBy('repo_id').execute()
    for (const row of rows) out.get(row.workspace_id)!.push(Number(row.repo_id))
    return out
  }

  async function byId (id: string): Promise<WorkspaceData | undefined> {
    const row = await db.selectFrom('workspaces').select(['id', 'name', 'description']).where('id', '=', id).executeTakeFirst()
    if (row === undefined) return undefined
    return { ...row, repositories: (await repositoriesOf([id])).get(id)! }
  }

  async function requireWorkspace (id: string): Promise<WorkspaceData> {
    const workspace = await byId(id)
    if (workspace === undefined) throw new NotFound(`workspace ${id} not found`)
    return workspace
  }

  async function pipelines (workspaceId: string): Promise<Pipeline[]> {
    return (await pipelinesQuery(db, { workspaceId })).rows
  }

  /** A pipeline with its workspace's name. */
  async function pipeline (id: string): Promise<(Pipeline & { workspace_name: string }) | undefined> {
    return (await pipelineQuery(db, { id })).rows[0]
  }

  async function holds (workspaceId: string, repoId: number): Promise<boolean> {
    return (await holdsQuery(db, { workspaceId, repoId })).rows.length > 0
  }

  async function addRepository (workspaceId: string, repoId: number, firstPipelineId: string): Promise<void> {
    const exists = await db.selectFrom('repositories').select('id').where('id', '=', repoId).executeTakeFirst()
    if (exists === undefined) throw new Invalid(`repository ${repoId} does not exist`)
    if (await holds(workspaceId, repoId)) throw new Invalid(`repository ${repoId} is already in workspace ${workspaceId}`)
    await db.insertInto('workspace_repositories').values({ workspace_id: workspaceId, repo_id: repoId }).execute()
    await sql`
      INSERT INTO placements (issue_id, workspace_id, pipeline_id, repo_id, number, is_open, position, rank)
      SELECT id, ${workspaceId}, ${firstPipelineId}, repo_id, number, CASE WHEN state = 'open' THEN 1 ELSE 0 END, NULL,
             17592186044416 + number * 1048576
      FROM issues WHERE repo_id = ${repoId}`.execute(db)
  }

  const withPipelines = async (id: string): Promise<WorkspaceWithPipelines> => {
    const workspace = await requireWorkspace(id)
    return { ...workspace, pipelines: (await pipelines(id)).map((p) => ({ id: p.id, name: p.name })) }
  }

  return {
    byId,
    requireWorkspace,
    withPipelines,
    pipelines,
    pipeline,
    holds,

    /** Every workspace, oldest first, with its repositories and pipelines. */
    async list (): Promise<WorkspaceWithPipelines[]> {
      const rows = await db.selectFrom('workspaces').select('id').orderBy('created_at').orderBy('seq').execute()
      return await Promise.all(rows.map(async (r) => await withPipelines(r.id)))
    },

    /** Workspaces holding the repository, oldest first. */
    async forRepository (repoId: number): Promise<WorkspaceData[]> {
      const rows = await db.selectFrom('workspaces as w').innerJoin('workspace_repositories as wr', 'wr.workspace_id', 'w.id')
        .select(['w.id', 'w.name', 'w.description']).where('wr.repo_id', '=', repoId).orderBy('w.created_at').orderBy('w.seq').execute()
      const repos = await repositoriesOf(rows.map((r) => r.id))
      return rows.map((row) => ({ ...row, repositories: repos.get(row.id)! }))
    },

    /** The workspaces holding any of these repositories, oldest first, with those repositories and all pipelines. */
    async holdingAny (repoIds: number[]): Promise<Array<WorkspaceWithPipelines & { pipelines: Array<{ host_label: string | null }> }>> {
      if (repoIds.length === 0) return []
      const rows = await db.selectFrom('workspaces as w').select(['w.id', 'w.name', 'w.description'])
        .where('w.id', 'in', (eb) => eb.selectFrom('workspace_repositories').select('workspace_id').where('repo_id', 'in', repoIds))
        .orderBy('w.created_at').orderBy('w.seq').execute()
      const ids = rows.map((r) => r.id)
      const repos = await repositoriesOf(ids)
      const lanes = ids.length === 0
        ? []
        : await db.selectFrom('pipelines').select(['id', 'name', 'workspace_id', 'host_label']).where('workspace_id', 'in', ids).orderBy('sort_order').execute()
      const wanted = new Set(repoIds)
      return rows.map((row) => ({
        ...row,
        repositories: repos.get(row.id)!.filter((id) => wanted.has(id)),
        pipelines: lanes.filter((p) => p.workspace_id === row.id).map((p) => ({ id: p.id, name: p.name, host_label: p.host_label }))
      }))
    },

    /** The earliest created workspace holding the repository (what p1 operations act on). */
    async oldestFor (repoId: number): Promise<string | undefined> {
      return (await oldestQuery(db, { repoId })).rows[0]?.id
    },

    async create (input: NewWorkspace): Promise<WorkspaceWithPipelines> {
      if (input.pipelines.length === 0) throw new Invalid('a workspace needs at least one pipeline')
      const id = input.id ?? newObjectId()
      if (await byId(id) !== undefined) throw new Conflict(`workspace ${id} already exists`)
      const at = input.created_at ?? nowIso()
      await db.insertInto('workspaces').values({ id, name: input.name, description: input.description ?? null, created_at: at }).execute()
      await addDefaultPriorities(db, id)
      for (const [i, p] of input.pipelines.entries()) {
        const entry: NewPipeline = typeof p === 'string' ? { name: p } : p
        const pid = entry.id ?? newObjectId()
        if (await pipeline(pid) !== undefined) throw new Conflict(`pipeline ${pid} already exists`)
        const label = entry.host_label ?? null
        checkHostLabel(label, `pipelines/${i}/host_label`)
        if (label !== null && input.pipelines.slice(0, i).some((o) => typeof o !== 'string' && o.host_label?.toLowerCase() === label.toLowerCase())) {
          throw new Invalid(`two pipelines name the label '${label}'`)
        }
        const createdAt = entry.created_at === undefined ? at : new Date(entry.created_at).toISOString()
        const updatedAt = entry.updated_at === undefined ? createdAt : new Date(entry.updated_at).toISOString()
        if (updatedAt < createdAt) throw new Invalid(`pipelines/${i}/updated_at is before its created_at`)
        await db.insertInto('pipelines').values({ id: pid, workspace_id: id, name: entry.name, sort_order: i, host_label: label, ...madeAt(createdAt), updated_at: updatedAt }).execute()
      }
      const first = (await pipelines(id))[0]
      for (const repoId of new Set(input.repositories)) await addRepository(id, repoId, first.id)
      return await withPipelines(id)
    },

    async update (id: string, change: WorkspaceChange): Promise<WorkspaceWithPipelines> {
      const current = await requireWorkspace(id)
      await db.updateTable('workspaces').set({
        name: change.name ?? current.name,
        description: change.description === undefined ? current.description : change.description
      }).where('id', '=', id).execute()
      if (change.pipelines !== undefined) {
        const existing = new Set((await pipelines(id)).map((p) => p.id))
        const listed = new Set<string>()
        for (const [i, p] of change.pipelines.entries()) {
          if (p.id === undefined) {
            await db.insertInto('pipelines').values({ id: newObjectId(), workspace_id: id, name: p.name, sort_order: i, ...madeAt(nowIso()) }).execute()
            continue
          }
          if (!existing.has(p.id)) throw new Invalid(`pipeline ${p.id} is not in workspace ${id}`)
          if (listed.has(p.id)) throw new Invalid(`pipeline ${p.id} is listed twice`)
          listed.add(p.id)
          await db.updateTable('pipelines').set(placedAt({ name: p.name, sort_order: i }, nowIso())).where('id', '=', p.id).execute()
        }
        const missing = [...existing].filter((p) => !listed.has(p))
        if (missing.length > 0) {
          throw new Invalid(`pipelines must list every existing pipeline (missing ${missing.join(', ')}); pipelines cannot be removed`)
        }
      }
      const first = (await pipelines(id))[0]
      for (const repoId of change.add_repositories ?? []) await addRepository(id, repoId, first.id)
      if ((change.remove_repositories ?? []).length > 0) await lockFor(db, `workspace-repositories:${id}`)
      for (const repoId of change.remove_repositories ?? []) {
        if (!await holds(id, repoId)) throw new Invalid(`repository ${repoId} is not in workspace ${id}`)
        await db.deleteFrom('placements').where('workspace_id', '=', id).where('repo_id', '=', repoId).execute()
        await db.deleteFrom('issue_priorities').where('workspace_id', '=', id)
          .where('issue_id', 'in', (eb) => eb.selectFrom('issues').select('id').where('repo_id', '=', repoId)).execute()
        await db.deleteFrom('workspace_repositories').where('workspace_id', '=', id).where('repo_id', '=', repoId).execute()
      }
      return await withPipelines(id)
    }
  }
}

export type WorkspacesRepository = ReturnType<typeof createWorkspacesRepository>

/**
 * A label made only of dots is refused: it becomes a path segment of the host's API (`…/labels/..`),
 * which URL parsing collapses even when escaped (docs/connections.md, "Two-way sync").
 */
export function checkHostLabel (label: string | null, field = 'host_label'): void {
  if (label !== null && /^\.+$/.test(label)) throw new Invalid(`${field} must not be made only of dots`)
}

/**
 * Names (or with null, clears) the issue-host label of a pipeline; two pipelines of a workspace
 * cannot share one. The change and who made it go to the audit log in the same transaction.
 */
export async function setPipelineLabel (
  db: Executor, workspaceId: string, pipelineId: string, label: string | null, by: { actor: string, address?: string }
): Promise<void> {
  checkHostLabel(label)
  await writeTransaction(db, async (trx) => {
    const found = await trx.selectFrom('pipelines').select(['id', 'host_label']).where('id', '=', pipelineId).where('workspace_id', '=', workspaceId).executeTakeFirst()
    if (found === undefined) throw new NotFound(`pipeline ${pipelineId} not found in workspace ${workspaceId}`)
    try {
      await trx.updateTable('pipelines').set({ host_label: label }).where('id', '=', pipelineId).execute()
    } catch (err) {
      if (isUniqueViolation(err)) throw new Conflict(`another pipeline of workspace ${workspaceId} names the label '${label ?? ''}'`)
      throw err
    }
    if (found.host_label === label) return
    await createAuditRepository(trx).record({
      actor: by.actor,
      action: 'pipeline.label_set',
      target: `workspace:${workspaceId}`,
      address: by.address ?? null,
      detail: { pipeline_id: pipelineId, host_label: label, previous: found.host_label }
    })
  })
}
