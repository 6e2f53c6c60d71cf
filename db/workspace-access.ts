import { Forbidden, NotFound } from './errors.js'
import type { SprintRow, SprintsRepository } from './sprints.js'
import { LEVELS, type UsersRepository } from './users.js'
import type { WorkspacesRepository } from './workspaces.js'

/** A workspace as one caller sees it: its repositories, and which of them they can read. */
export interface VisibleWorkspace { repositories: number[], name: string, canRead: (repoId: number) => boolean }

/**
 * Who may see a workspace: anyone who can read one of its repositories (`readable`, from the
 * caller's credential). Otherwise the same NotFound as for an unknown workspace.
 */
export async function visibleWorkspace (workspaces: Pick<WorkspacesRepository, 'byId'>, workspaceId: string, readable: ReadonlySet<number>): Promise<VisibleWorkspace> {
  const workspace = await workspaces.byId(workspaceId)
  if (workspace === undefined || !workspace.repositories.some((id) => readable.has(id))) throw new NotFound(`workspace ${workspaceId} not found`)
  return { repositories: workspace.repositories, name: workspace.name, canRead: (repoId) => readable.has(repoId) }
}

/** Forbidden unless the user is admin on every repository of the workspace (its sprint plan, its pipelines). */
export async function requireAdminOfAll (users: Pick<UsersRepository, 'levels'>, userId: number, repositories: number[]): Promise<void> {
  const levels = await users.levels(userId, repositories)
  if (repositories.some((id) => (levels.get(id) ?? 0) < LEVELS.admin)) throw new Forbidden('admin permission on every repository of the workspace is required')
}

/** A sprint and its workspace as the caller may see them (NotFound as for an unknown id otherwise), boundaries settled up to `now`. */
export async function visibleSprint (
  store: { sprints: SprintsRepository, workspaces: Pick<WorkspacesRepository, 'byId'> }, id: string, readable: ReadonlySet<number>, now: number
): Promise<{ row: SprintRow, workspace: VisibleWorkspace }> {
  const row = await store.sprints.row(id)
  let workspace
  try {
    workspace = await visibleWorkspace(store.workspaces, row.workspace_id, readable)
  } catch {
    throw new NotFound(`sprint ${id} not found`)
  }
  await store.sprints.settle(row.workspace_id, now)
  return { row, workspace }
}
