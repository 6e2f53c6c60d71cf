import { Invalid, NotFound } from '../../../db/errors.js'
import type { GraphContext } from '../context.js'
import { listConnection, type PageArgs } from '../connections.js'
import { encodeId, numberKey } from '../ids.js'
import type { IssueObject, PipelineObject, RepositoryObject, WorkspaceObject } from './objects.js'
import { workspaceFor } from './visibility.js'
import type { Query } from '../batched-fields.js'

/**
 * Fields the hosted service's clients (zenhub-mcp, zh) select that this server answers from what
 * it already keeps; where an answer is fixed, subset.json's description says why.
 */
type Ctx = GraphContext
interface AccountUser { login: string, avatar_url: string | null }
type LabelOptionArgs = PageArgs & { repositoryIds?: string[] | null, query?: string | null, name?: { in?: string[] | null, nin?: string[] | null } | null }

/** The workspace's repositories the viewer can read, optionally only `repositoryIds`. */
async function readableOf (ctx: Ctx, workspaceId: string, repositoryIds?: string[] | null): Promise<number[]> {
  const wanted = repositoryIds == null ? undefined : new Set(repositoryIds.map((id) => numberKey(id, 'Repository')))
  return (await ctx.reads.repositoriesOf([workspaceId])).map((r) => r.repo_id)
    .filter((id) => ctx.readable.has(id) && (wanted === undefined || wanted.has(id)))
}

const iso = (text: string | null) => text === null ? null : new Date(text).toISOString()

/** A repository's owner as the host last described it: an Organization when it said so, else a User. */
export const ownerObject = (r: { owner: string, owner_platform_id: number | null, owner_kind: string | null }) =>
  ({ __typename: r.owner_kind === 'Organization' ? 'Organization' as const : 'User' as const, login: r.owner, avatar_url: null, gh_id: r.owner_platform_id })
type OwnerObject = ReturnType<typeof ownerObject>

/** The owner of a repository the viewer can read, or null with no trace of others'. */
async function readableOwner (ctx: Ctx, by: { login: string } | { platformId: number }) {
  const repo = (await ctx.reads.ownedBy(by)).find((r) => ctx.readable.has(r.id))
  return repo === undefined ? null : ownerObject(repo)
}

export const clientQueryResolvers = {
  ownerByGhId: async (_: unknown, args: { ghId: number }, ctx: Ctx) => await readableOwner(ctx, { platformId: args.ghId }),
  ownerByLogin: async (_: unknown, args: { login: string }, ctx: Ctx) => await readableOwner(ctx, { login: args.login })
}

export const clientFieldResolvers = {
  Organization: {
    id: (o: OwnerObject) => encodeId('Organization', o.login),
    avatarUrl: () => '',
    ghId: (o: OwnerObject) => o.gh_id
  },
  User: {
    ghId: (u: { gh_id?: number | null }) => u.gh_id ?? null
  },
  Pipeline: {
    createdAt: (p: PipelineObject) => iso(p.created_at),
    updatedAt: (p: PipelineObject) => iso(p.updated_at)
  },
  Repository: {
    createdAt: (r: RepositoryObject) => iso(r.created_at),
    updatedAt: (r: RepositoryObject) => iso(r.host_updated_at ?? r.created_at),
    isPrivate: (r: RepositoryObject) => r.is_private === 1,
    isArchived: (r: RepositoryObject) => r.is_archived === 1,
    owner: (r: RepositoryObject) => ownerObject(r),
    estimateSet: (r: RepositoryObject) => ({ repository: r, values: [] }),
    githubIssueTypes: (_: RepositoryObject, args: PageArgs) => listConnection([] as Array<{ id: string }>, (t) => t.id, args)
  },
  Workspace: {
    private: () => false,
    assumeEstimates: () => false,
    assumedEstimateValue: () => null,
    hasEstimatedIssues: async (w: WorkspaceObject, _: unknown, ctx: Ctx) => await ctx.reads.anyEstimated(await readableOf(ctx, w.id)),
    issueLabelOptions: async (w: WorkspaceObject, args: LabelOptionArgs, ctx: Ctx) => {
      const needle = args.query?.trim().toLowerCase() ?? ''
      const named = new Map<string, { name: string, color: string | null }>()
      for (const l of await ctx.reads.labelsIn(await readableOf(ctx, w.id, args.repositoryIds))) {
        if (needle !== '' && !l.name.toLowerCase().includes(needle)) continue
        if (args.name?.in != null && !args.name.in.includes(l.name)) continue
        if (args.name?.nin != null && args.name.nin.includes(l.name)) continue
        if (!named.has(l.name)) named.set(l.name, { name: l.name, color: l.color })
      }
      return listConnection([...named.values()], (l) => l.name, args)
    }
  }
}

export const clientFieldLoaders = {
  Issue: {
    /** The users who made the page's native issues: one statement. */
    async creator (queries: Array<Query<IssueObject>>, ctx: Ctx) {
      const ids = [...new Set(queries.flatMap((q) => q.obj.creator_id === null ? [] : [q.obj.creator_id]))]
      const users = new Map((await ctx.reads.usersByIds(ids)).map((u) => [u.id, u]))
      return queries.map((q) => {
        const user = q.obj.creator_id === null ? undefined : users.get(q.obj.creator_id)
        return user === undefined ? null : { __typename: 'ZenhubUser' as const, id: user.id, login: user.login, created_at: user.created_at }
      })
    },
    /** One check per workspace asked for (a page names one), none per issue. */
    async zenhubUrl (queries: Array<Query<IssueObject, { workspaceId: string }>>, ctx: Ctx) {
      const holds = new Map<string, Set<number> | undefined>()
      for (const id of new Set(queries.map((q) => q.params.workspaceId))) {
        const found = await workspaceFor(ctx, id)
        holds.set(id, found === undefined ? undefined : new Set(found.repoIds))
      }
      return queries.map((q) => {
        const repos = holds.get(q.params.workspaceId)
        if (repos === undefined) return new NotFound(`workspace ${q.params.workspaceId} not found`)
        if (!repos.has(q.obj.repo_id)) return new Invalid(`workspace ${q.params.workspaceId} does not hold the repository of issue ${q.obj.number}`)
        const query = new URLSearchParams({ board: q.params.workspaceId, repo: String(q.obj.repo_id), q: `#${q.obj.number}` })
        return ctx.address(`/board?${query.toString()}`)
      })
    }
  },
  User: {
    async zenhubUser (queries: Array<Query<AccountUser>>, ctx: Ctx) {
      const rows = await ctx.reads.usersBehind([...new Set(queries.map((q) => q.obj.login))])
      // Who is linked to which host login is the administrators' to see (the admin API's
      // identities): others learn only their own link; everybody sees the same login here.
      const seesLinks = rows.some((r) => r.linked && r.id !== ctx.user.id) && await ctx.store.accounts.isAdministrator(ctx.user.id)
      const shown = (r: { linked: boolean, id: number }) => !r.linked || r.id === ctx.user.id || seesLinks
      return queries.map((q) => {
        const user = rows.find((r) => r.behind === q.obj.login && r.linked && shown(r)) ?? rows.find((r) => r.behind === q.obj.login && !r.linked)
        return user === undefined ? null : { __typename: 'ZenhubUser' as const, id: user.id, login: user.login, created_at: user.created_at }
      })
    }
  }
}
