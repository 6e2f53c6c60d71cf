import { NotFound } from '../../../db/errors.js'
import { favoritesStamp, type WorkspaceFavorite } from '../../../db/workspace-favorites.js'
import type { GraphContext } from '../context.js'
import { listConnection, type PageArgs } from '../connections.js'
import { encodeId, repoOfGhId } from '../ids.js'
import { ORGANIZATION, workspaceObject, type WorkspaceObject } from './objects.js'
import { workspaceFor } from './visibility.js'
import { echo, mayWrite, type Input } from './write-access.js'
import type { Query } from '../batched-fields.js'

type Ctx = GraphContext
const iso = (text: string) => new Date(text).toISOString()

const favoriteObject = (row: WorkspaceFavorite, workspace: WorkspaceObject) => ({ __typename: 'WorkspaceFavorite' as const, ...row, workspace })
type FavoriteObject = ReturnType<typeof favoriteObject>

/**
 * Records that the viewer opened a workspace (db/workspace-views.ts: noted in memory, written after
 * the read, at most once a minute, outside the change counter), and notes it on the context so an
 * answer kept for this document records it again each time it is sent (answer-cache.ts). A
 * failure never fails the read.
 */
export async function viewed (ctx: Ctx, workspaceId: string): Promise<void> {
  ctx.viewed = [...(ctx.viewed ?? []), workspaceId]
  try {
    await ctx.store.workspaceViews.record(ctx.user.id, workspaceId)
  } catch (err) {
    ctx.request.log.warn({ err }, 'a workspace view was not recorded')
  }
}

/** The viewer's favorites, noted on the context: a kept answer showing them is sent again only while they stay the same. */
async function myFavorites (ctx: Ctx): Promise<WorkspaceFavorite[]> {
  const rows = await ctx.store.workspaceFavorites.of(ctx.user.id)
  const stamp = favoritesStamp(rows)
  // Read twice in one document and changed between: the answer mixes both, so it is not kept.
  if (ctx.favorites !== undefined && ctx.favorites !== stamp) ctx.unkept = true
  ctx.favorites ??= stamp
  return rows
}

/** The viewer's visible workspaces by id, in one read. */
async function visibleById (ctx: Ctx): Promise<Map<string, WorkspaceObject>> {
  return new Map((await ctx.reads.workspacesHolding([...ctx.readable])).map((w) => [w.id, workspaceObject(w)]))
}

async function visibleWorkspace (ctx: Ctx, id: string): Promise<WorkspaceObject> {
  const found = await workspaceFor(ctx, id)
  if (found === undefined) throw new NotFound(`workspace ${id} not found`)
  return found.workspace
}

export const workspaceUserQueries = {
  /**
   * The viewer's recently opened workspaces they can still see, most recent first. Views are
   * written outside the change counter, so this answer is never kept.
   */
  async recentlyViewedWorkspaces (_: unknown, args: PageArgs & { repositoryGhIds?: string[] | null, zenhubOrganizationId?: string | null }, ctx: Ctx) {
    ctx.unkept = true
    if (args.zenhubOrganizationId != null && args.zenhubOrganizationId !== ORGANIZATION.id) return listConnection([], () => '', args)
    const [views, visible] = await Promise.all([ctx.store.workspaceViews.of(ctx.user.id), visibleById(ctx)])
    let list = views.map((v) => visible.get(v.workspace_id)).filter((w): w is WorkspaceObject => w !== undefined)
    if (args.repositoryGhIds != null) {
      const wanted = new Set(args.repositoryGhIds.map((id) => repoOfGhId(Number(id))))
      const links = await ctx.reads.repositoriesOf(list.map((w) => w.id))
      const holding = new Set(links.filter((l) => wanted.has(l.repo_id) && ctx.readable.has(l.repo_id)).map((l) => l.workspace_id))
      list = list.filter((w) => holding.has(w.id))
    }
    return listConnection(list, (w) => w.id, args)
  }
}

export const workspaceUserWrites = {
  async setFavoriteWorkspace (_: unknown, { input }: { input: Input & { workspaceId: string } }, ctx: Ctx) {
    mayWrite(ctx)
    const workspace = await visibleWorkspace(ctx, input.workspaceId)
    const row = await ctx.store.workspaceFavorites.add(ctx.user.id, workspace.id)
    return { ...echo(input), workspaceFavorite: favoriteObject(row, workspace) }
  },
  async deleteWorkspaceFavorite (_: unknown, { input }: { input: Input & { workspaceId: string } }, ctx: Ctx) {
    mayWrite(ctx)
    const workspace = await visibleWorkspace(ctx, input.workspaceId)
    await ctx.store.workspaceFavorites.remove(ctx.user.id, workspace.id)
    return { ...echo(input), workspace }
  },
  async setWorkspaceViewedNow (_: unknown, { input }: { input: Input & { workspaceId: string } }, ctx: Ctx) {
    mayWrite(ctx)
    const workspace = await visibleWorkspace(ctx, input.workspaceId)
    await viewed(ctx, workspace.id)
    return { ...echo(input), workspace }
  }
}

export const workspaceUserResolvers = {
  ZenhubUser: {
    /** The viewer's own favorites among the workspaces they can see; nobody else's are ever shown. */
    workspaceFavorites: async (u: { id: number }, args: PageArgs, ctx: Ctx) => {
      if (u.id !== ctx.user.id) return listConnection([], () => '', args)
      const [rows, visible] = await Promise.all([myFavorites(ctx), visibleById(ctx)])
      const list = rows.flatMap((r) => {
        const w = visible.get(r.workspace_id)
        return w === undefined ? [] : [favoriteObject(r, w)]
      })
      return listConnection(list, (f) => f.workspace_id, args)
    }
  },
  WorkspaceFavorite: {
    id: (f: FavoriteObject) => encodeId('WorkspaceFavorite', f.workspace_id),
    createdAt: (f: FavoriteObject) => iso(f.created_at),
    updatedAt: (f: FavoriteObject) => iso(f.created_at)
  }
}

export const workspaceUserLoaders = {
  Workspace: {
    /** One read of the viewer's favorites for a whole page of workspaces. */
    async isFavorite (queries: Array<Query<WorkspaceObject>>, ctx: Ctx) {
      const mine = new Set((await myFavorites(ctx)).map((f) => f.workspace_id))
      return queries.map((q) => mine.has(q.obj.id))
    }
  }
}
