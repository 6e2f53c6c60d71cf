import { httpErrors } from '@fastify/sensible'
import type { Db } from './connection.js'
import { newObjectId, nowIso } from './ids.js'

export interface Workspace {
  id: string
  name: string
  description: string | null
  repositories: number[]
}

export interface Pipeline {
  id: string
  name: string
  workspace_id: string
}

export interface NewWorkspace {
  id?: string
  name: string
  description?: string | null
  created_at?: string
  repositories: number[]
  pipelines: Array<string | { id?: string, name: string }>
}

export interface WorkspaceChange {
  name?: string
  description?: string | null
  add_repositories?: number[]
  remove_repositories?: number[]
  /** the full ordered list: entries with an id rename/reorder, entries without one are added */
  pipelines?: Array<{ id?: string, name: string }>
}

interface WorkspaceRow { id: string, name: string, description: string | null, repos: string | null }

const WORKSPACE_SELECT = `
  SELECT w.id, w.name, w.description,
         (SELECT group_concat(repo_id) FROM (
            SELECT repo_id FROM workspace_repositories WHERE workspace_id = w.id ORDER BY repo_id)) AS repos
  FROM workspaces w`

function toWorkspace (row: WorkspaceRow): Workspace {
  return {
    id: row.id,
    name: row.name,
    description: row.description,
    repositories: row.repos === null ? [] : row.repos.split(',').map(Number)
  }
}

/** Workspaces, their repositories and their ordered pipelines. */
export function createWorkspacesRepository (db: Db) {
  const byId = db.prepare<[string], WorkspaceRow>(`${WORKSPACE_SELECT} WHERE w.id = ?`)
  const forRepo = db.prepare<[number], WorkspaceRow>(`${WORKSPACE_SELECT}
    JOIN workspace_repositories wr ON wr.workspace_id = w.id
    WHERE wr.repo_id = ? ORDER BY w.created_at, w.seq`)
  const oldest = db.prepare<[number], { id: string }>(`
    SELECT w.id FROM workspaces w JOIN workspace_repositories wr ON wr.workspace_id = w.id
    WHERE wr.repo_id = ? ORDER BY w.created_at, w.seq LIMIT 1`)
  const holds = db.prepare<[string, number], { one: number }>(
    'SELECT 1 AS one FROM workspace_repositories WHERE workspace_id = ? AND repo_id = ?')
  const pipelines = db.prepare<[string], Pipeline>(
    'SELECT id, name, workspace_id FROM pipelines WHERE workspace_id = ? ORDER BY sort_order')
  const pipelineById = db.prepare<[string], Pipeline>('SELECT id, name, workspace_id FROM pipelines WHERE id = ?')
  const insertWorkspace = db.prepare<[string, string, string | null, string]>(
    'INSERT INTO workspaces (id, name, description, created_at) VALUES (?, ?, ?, ?)')
  const updateWorkspace = db.prepare<[string, string | null, string]>(
    'UPDATE workspaces SET name = ?, description = ? WHERE id = ?')
  const insertPipeline = db.prepare<[string, string, string, number]>(
    'INSERT INTO pipelines (id, workspace_id, name, sort_order) VALUES (?, ?, ?, ?)')
  const updatePipeline = db.prepare<[string, number, string]>('UPDATE pipelines SET name = ?, sort_order = ? WHERE id = ?')
  const repoExists = db.prepare<[number], { id: number }>('SELECT id FROM repositories WHERE id = ?')
  const linkRepo = db.prepare<[string, number]>('INSERT INTO workspace_repositories (workspace_id, repo_id) VALUES (?, ?)')
  const unlinkRepo = db.prepare<[string, number]>('DELETE FROM workspace_repositories WHERE workspace_id = ? AND repo_id = ?')
  const placeRepoIssues = db.prepare<[string, string, number]>(`
    INSERT INTO placements (issue_id, workspace_id, pipeline_id, repo_id, number, is_open)
    SELECT id, ?, ?, repo_id, number, state = 'open' FROM issues WHERE repo_id = ?`)
  const removeRepoPlacements = db.prepare<[string, number]>('DELETE FROM placements WHERE workspace_id = ? AND repo_id = ?')

  function requireWorkspace (id: string): Workspace {
    const row = byId.get(id)
    if (row === undefined) throw httpErrors.notFound(`workspace ${id} not found`)
    return toWorkspace(row)
  }

  function addRepository (workspaceId: string, repoId: number, firstPipelineId: string): void {
    if (repoExists.get(repoId) === undefined) throw httpErrors.badRequest(`repository ${repoId} does not exist`)
    if (holds.get(workspaceId, repoId) !== undefined) throw httpErrors.badRequest(`repository ${repoId} is already in workspace ${workspaceId}`)
    linkRepo.run(workspaceId, repoId)
    placeRepoIssues.run(workspaceId, firstPipelineId, repoId)
  }

  return {
    requireWorkspace,

    byId (id: string): Workspace | undefined {
      const row = byId.get(id)
      return row === undefined ? undefined : toWorkspace(row)
    },

    /** Workspaces holding the repository, oldest first. */
    forRepository (repoId: number): Workspace[] {
      return forRepo.all(repoId).map(toWorkspace)
    },

    /** The earliest created workspace holding the repository (what p1 operations act on). */
    oldestFor (repoId: number): string | undefined {
      return oldest.get(repoId)?.id
    },

    holds (workspaceId: string, repoId: number): boolean {
      return holds.get(workspaceId, repoId) !== undefined
    },

    pipelines (workspaceId: string): Pipeline[] {
      return pipelines.all(workspaceId)
    },

    pipeline (id: string): Pipeline | undefined {
      return pipelineById.get(id)
    },

    create (input: NewWorkspace): Workspace & { pipelines: Pipeline[] } {
      if (input.pipelines.length === 0) throw httpErrors.badRequest('a workspace needs at least one pipeline')
      const id = input.id ?? newObjectId()
      if (byId.get(id) !== undefined) throw httpErrors.conflict(`workspace ${id} already exists`)
      insertWorkspace.run(id, input.name, input.description ?? null, input.created_at ?? nowIso())
      input.pipelines.forEach((p, i) => {
        const pipeline = typeof p === 'string' ? { name: p } : p
        const pid = pipeline.id ?? newObjectId()
        if (pipelineById.get(pid) !== undefined) throw httpErrors.conflict(`pipeline ${pid} already exists`)
        insertPipeline.run(pid, id, pipeline.name, i)
      })
      const first = pipelines.all(id)[0]
      for (const repoId of new Set(input.repositories)) addRepository(id, repoId, first.id)
      return { ...requireWorkspace(id), pipelines: pipelines.all(id) }
    },

    update (id: string, change: WorkspaceChange): Workspace & { pipelines: Pipeline[] } {
      const current = requireWorkspace(id)
      updateWorkspace.run(change.name ?? current.name,
        change.description === undefined ? current.description : change.description, id)
      if (change.pipelines !== undefined) {
        const existing = new Set(pipelines.all(id).map((p) => p.id))
        const listed = new Set<string>()
        change.pipelines.forEach((p, i) => {
          if (p.id === undefined) {
            insertPipeline.run(newObjectId(), id, p.name, i)
          } else {
            if (!existing.has(p.id)) throw httpErrors.badRequest(`pipeline ${p.id} is not in workspace ${id}`)
            if (listed.has(p.id)) throw httpErrors.badRequest(`pipeline ${p.id} is listed twice`)
            listed.add(p.id)
            updatePipeline.run(p.name, i, p.id)
          }
        })
        const missing = [...existing].filter((p) => !listed.has(p))
        if (missing.length > 0) {
          throw httpErrors.badRequest(`pipelines must list every existing pipeline (missing ${missing.join(', ')}); pipelines cannot be removed`)
        }
      }
      const first = pipelines.all(id)[0]
      for (const repoId of change.add_repositories ?? []) addRepository(id, repoId, first.id)
      for (const repoId of change.remove_repositories ?? []) {
        if (holds.get(id, repoId) === undefined) throw httpErrors.badRequest(`repository ${repoId} is not in workspace ${id}`)
        removeRepoPlacements.run(id, repoId)
        unlinkRepo.run(id, repoId)
      }
      return { ...requireWorkspace(id), pipelines: pipelines.all(id) }
    }
  }
}

export type WorkspacesRepository = ReturnType<typeof createWorkspacesRepository>
