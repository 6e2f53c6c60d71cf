import { NotFound } from '../../../db/errors.js'
import type { GraphContext } from '../context.js'
import { pipelineKey } from '../ids.js'
import { workspaceObject, type WorkspaceObject } from './objects.js'

type Ctx = GraphContext

/** A visible workspace: it holds a repository the viewer can read. */
export async function workspaceFor (ctx: Ctx, id: string): Promise<{ workspace: WorkspaceObject, repoIds: number[] } | undefined> {
  const [[row], repos] = await Promise.all([ctx.reads.workspacesByIds([id]), ctx.reads.repositoriesOf([id])])
  if (row === undefined) return undefined
  const repoIds = repos.map((r) => r.repo_id)
  if (!repoIds.some((r) => ctx.readable.has(r))) return undefined
  return { workspace: workspaceObject(row), repoIds }
}

/** A pipeline of a visible workspace, or NOT_FOUND. */
export async function pipelineFor (ctx: Ctx, id: string) {
  const found = await ctx.reads.pipelineWithRepositories(pipelineKey(id))
  if (found === undefined || !found.repoIds.some((r) => ctx.readable.has(r))) throw new NotFound(`pipeline ${id} not found`)
  return found
}
