import { Forbidden, Invalid, NotFound } from '../../../db/errors.js'
import { visibleWorkspace } from '../../../db/workspace-access.js'
import { createAdminOperations } from '../../../services/admin.js'
import { encodeId, pipelineKey, repoOfGhId } from '../ids.js'
import { pipelineObject, repositoryObject, workspaceObject } from './objects.js'
import { echo, mayWrite, type Ctx, type Input } from './write-access.js'

/**
 * Pipelines are changed through the admin API's operations (PATCH and DELETE
 * /admin/workspaces/:id…), so with its permission: administrators only, each write audited.
 */
async function administrator (ctx: Ctx, workspaceId: string, action: string, detail: Record<string, unknown>) {
  mayWrite(ctx)
  await visibleWorkspace(ctx.store.workspaces, workspaceId, ctx.readable)
  if (!await ctx.store.accounts.isAdministrator(ctx.user.id)) throw new Forbidden('pipelines are changed by administrators')
  return async () => await ctx.store.audit.record({
    actor: `user:${ctx.user.login}`, action, target: `workspace:${workspaceId}`, address: ctx.request.ip, detail: { request: `GraphQL ${action}`, ...detail }
  })
}

async function pipelineOf (ctx: Ctx, id: string) {
  const [pipeline] = await ctx.reads.pipelinesByIds([pipelineKey(id)])
  if (pipeline === undefined) throw new NotFound(`pipeline ${id} not found`)
  return pipeline
}

async function reread (ctx: Ctx, id: string) {
  const [pipeline] = await ctx.reads.pipelinesByIds([id])
  return pipelineObject(pipeline)
}

const checkedName = (name: string): string => {
  const trimmed = name.trim()
  if (trimmed.length === 0 || trimmed.length > 100) throw new Invalid('name must have 1 to 100 characters')
  return trimmed
}

/** The list with `entry` put at `position` (0: leftmost; -1 or past the end: rightmost). */
function placed<T> (list: T[], entry: T, position: number | null | undefined): T[] {
  const at = position == null || position < 0 || position > list.length ? list.length : position
  return [...list.slice(0, at), entry, ...list.slice(at)]
}

export const pipelineWrites = {
  async createPipeline (_: unknown, { input }: { input: Input & { workspaceId: string, name: string, position?: number | null } }, ctx: Ctx) {
    const name = checkedName(input.name)
    const audit = await administrator(ctx, input.workspaceId, 'pipeline.created', { name })
    const before = (await ctx.store.workspaces.withPipelines(input.workspaceId)).pipelines.map((p) => ({ id: p.id, name: p.name }))
    const pipelines = placed<{ id?: string, name: string }>(before, { name }, input.position)
    const after = await createAdminOperations(ctx.store).updateWorkspace(input.workspaceId, { pipelines })
    await audit()
    const made = after.pipelines.find((p) => !before.some((b) => b.id === p.id))!
    return { ...echo(input), pipeline: await reread(ctx, made.id) }
  },

  async updatePipeline (_: unknown, { input }: { input: Input & { pipelineId: string, name?: string | null, position?: number | null } }, ctx: Ctx) {
    const pipeline = await pipelineOf(ctx, input.pipelineId)
    const name = input.name == null ? pipeline.name : checkedName(input.name)
    const audit = await administrator(ctx, pipeline.workspace_id, 'pipeline.updated', { pipeline: pipeline.id, name })
    const current = (await ctx.store.workspaces.withPipelines(pipeline.workspace_id)).pipelines
    const list = current.map((p) => ({ id: p.id, name: p.id === pipeline.id ? name : p.name }))
    const at = list.findIndex((p) => p.id === pipeline.id)
    const moved = input.position == null ? list : placed(list.filter((p) => p.id !== pipeline.id), list[at], input.position)
    await createAdminOperations(ctx.store).updateWorkspace(pipeline.workspace_id, { pipelines: moved })
    await audit()
    return { ...echo(input), pipeline: await reread(ctx, pipeline.id) }
  },

  async deletePipeline (_: unknown, { input }: { input: Input & { pipelineId: string, destinationPipelineId: string } }, ctx: Ctx) {
    const pipeline = await pipelineOf(ctx, input.pipelineId)
    const destination = await pipelineOf(ctx, input.destinationPipelineId)
    const audit = await administrator(ctx, pipeline.workspace_id, 'pipeline.deleted', { pipeline: pipeline.id, destination: destination.id })
    await createAdminOperations(ctx.store).deletePipeline(ctx.user, pipeline.workspace_id, pipeline.id, destination.id)
    await audit()
    return { ...echo(input), destinationPipeline: await reread(ctx, destination.id) }
  },

  async addRepositoryToWorkspace (_: unknown, { input }: { input: Input & { workspaceId: string, repositoryGhId: string } }, ctx: Ctx) {
    const repoId = repoOfGhId(Number(input.repositoryGhId))
    if (!Number.isSafeInteger(repoId) || !ctx.readable.has(repoId)) throw new NotFound(`repository ${input.repositoryGhId} not found`)
    const audit = await administrator(ctx, input.workspaceId, 'workspace.repository_added', { repository: repoId })
    await createAdminOperations(ctx.store).updateWorkspace(input.workspaceId, { add_repositories: [repoId] })
    await audit()
    const [[repository], [workspace]] = await Promise.all([ctx.reads.repositoriesByIds([repoId]), ctx.reads.workspacesByIds([input.workspaceId])])
    const at = new Date(ctx.now()).toISOString()
    const workspaceRepository = {
      id: encodeId('WorkspaceRepository', `${input.workspaceId}:${repoId}`), repository: repositoryObject(repository), workspace: workspaceObject(workspace), createdAt: at, updatedAt: at
    }
    return { ...echo(input), workspaceRepository }
  },

  async disconnectWorkspaceRepository (_: unknown, { input }: { input: Input & { workspaceId: string, repositoryGhId: number } }, ctx: Ctx) {
    const repoId = repoOfGhId(input.repositoryGhId)
    const audit = await administrator(ctx, input.workspaceId, 'workspace.repository_removed', { repository: repoId })
    await createAdminOperations(ctx.store).updateWorkspace(input.workspaceId, { remove_repositories: [repoId] })
    await audit()
    const [workspace] = await ctx.reads.workspacesByIds([input.workspaceId])
    return { ...echo(input), workspace: workspaceObject(workspace) }
  }
}
