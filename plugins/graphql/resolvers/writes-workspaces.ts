import { Invalid, NotFound } from '../../../db/errors.js'
import { repoOfGhId } from '../ids.js'
import { recordAudit, requireAdministrator } from './admin-writes.js'
import { ORGANIZATION, workspaceObject } from './objects.js'
import { echo, type Ctx, type Input } from './write-access.js'

export interface NewWorkspaceInput {
  name: string
  description?: string | null
  zenhubOrganizationId?: string | null
  repositoryGhIds?: number[] | null
  defaultRepositoryGhId?: number | null
}

/** The pipelines a workspace starts with, as Administration's "New workspace" offers them. */
const FIRST_PIPELINES = ['New Issues', 'In Progress', 'Done']

/** Workspaces made as POST /admin/workspaces makes them: administrators only, audited. */
export const workspaceWrites = {
  async createWorkspace (_: unknown, { input }: { input: Input & NewWorkspaceInput }, ctx: Ctx) {
    await requireAdministrator(ctx, 'workspaces')
    if (input.zenhubOrganizationId != null && input.zenhubOrganizationId !== ORGANIZATION.id) throw new NotFound(`zenhub organization ${input.zenhubOrganizationId} not found`)
    const name = input.name.trim()
    if (name.length === 0 || name.length > 200) throw new Invalid('name must have 1 to 200 characters')
    const description = input.description == null || input.description.trim() === '' ? null : input.description.trim()
    if (description !== null && description.length > 2000) throw new Invalid('description must have at most 2000 characters')
    const ghIds = [...new Set(input.repositoryGhIds ?? [])]
    if (ghIds.length > 1000) throw new Invalid('repositoryGhIds must not list more than 1000 repositories')
    if (input.defaultRepositoryGhId != null && !ghIds.includes(input.defaultRepositoryGhId)) throw new Invalid('defaultRepositoryGhId must be one of repositoryGhIds')
    const repositories = ghIds.map(repoOfGhId)
    for (const [i, repoId] of repositories.entries()) if (!Number.isSafeInteger(repoId) || !ctx.readable.has(repoId)) throw new NotFound(`repository ${ghIds[i]} not found`)
    const made = await ctx.store.transaction(async (s) => {
      const workspace = await s.workspaces.create({ name, description, repositories, pipelines: FIRST_PIPELINES })
      await recordAudit(s, ctx, 'workspace.created', `workspace:${workspace.id}`, { name, repositories })
      return workspace
    })
    const [row] = await ctx.reads.workspacesByIds([made.id])
    return { ...echo(input), workspace: workspaceObject(row) }
  }
}
