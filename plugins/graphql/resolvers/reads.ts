import { Invalid, NotFound } from '../../../db/errors.js'
import { LOCAL_REPO_IDS } from '../../../db/repositories.js'
import { ISSUE_ORDER_FIELDS, type IssueFilter, type IssueKey, type IssueNode, type IssueOrder, type IssueScope, type PlacementNode } from '../../../db/graph-reads.js'

import type { GraphContext } from '../context.js'
import type { GraphQLResolveInfo } from 'graphql'
import { asks, connectionOf, issueCursor, issueKeyOf, listConnection, nodeFields, pageOf, type PageArgs } from '../connections.js'
import { encodeId, ghIdOf, milestoneKey, nodeKey, numberKey, pipelineIssueId, pipelineKey, repoOfGhId, textKey } from '../ids.js'
import {
  ORGANIZATION, issueObject, pipelineObject, repositoryObject, sprintObject, workspaceObject,
  type IssueObject, type PipelineObject, type RepositoryObject, type SprintObject, type WorkspaceObject
} from './objects.js'
import { pipelineFor, workspaceFor } from './visibility.js'
import { smallIssueConnection } from './issue-connections.js'
import { workspaceZenhubFields, zenhubEpicNode } from './zenhub-epics.js'
import { keyDateNode } from './zenhub-epic-meta.js'
import { viewed } from './workspace-user.js'
import type { Query } from '../batched-fields.js'

type Ctx = GraphContext

interface SearchFilters {
  repositoryIds?: string[] | null
  matchType?: 'any' | 'all' | null
  displayType?: 'all' | 'issues' | 'prs' | null
  labels?: { in?: string[] | null, nin?: string[] | null, notInAny?: boolean | null } | null
  assignees?: { in?: string[] | null, nin?: string[] | null, notInAny?: boolean | null } | null
  sprints?: { in?: string[] | null, nin?: string[] | null } | null
  milestones?: { in?: string[] | null } | null
}

/** The readable repositories among `repoIds`, further narrowed by a filter's `repositoryIds`. */
function filterOf (ctx: Ctx, repoIds: number[], filters: SearchFilters | null | undefined, query?: string | null): IssueFilter {
  let repos = repoIds.filter((id) => ctx.readable.has(id))
  if (filters?.repositoryIds != null) {
    const wanted = new Set(filters.repositoryIds.map((id) => numberKey(id, 'Repository')))
    repos = repos.filter((id) => wanted.has(id))
  }
  const f: IssueFilter = { repoIds: repos, query: query ?? undefined }
  if (filters?.labels?.in != null) f.labels = filters.labels.in
  if (filters?.labels?.nin != null) f.notLabels = filters.labels.nin
  f.labelsMatch = filters?.matchType === 'all' ? 'all' : 'any'
  if (filters?.assignees?.in != null) f.assignees = filters.assignees.in
  if (filters?.assignees?.nin != null) f.notAssignees = filters.assignees.nin
  if (filters?.displayType === 'issues') f.pullRequests = false
  if (filters?.displayType === 'prs') f.pullRequests = true
  if (filters?.sprints?.in != null) f.sprintIds = filters.sprints.in.map((id) => textKey(id, 'Sprint'))
  if (filters?.milestones?.in != null) f.milestoneTitles = filters.milestones.in
  return f
}

type Maybe<T> = T | null | undefined
interface Counts { issues: number, pullRequests: number, estimates: number }

async function pipelineIssues (
  ctx: Ctx, pipelineId: string, repoIds: number[], filters: Maybe<SearchFilters>, query: Maybe<string>, args: PageArgs, info: GraphQLResolveInfo
) {
  const f = filterOf(ctx, repoIds, filters, query)
  const page = pageOf(args, issueKeyOf)
  // Without pipelineCounts (or the deprecated fields it replaced) asked, only totalCount: no issue row is read for the count (its sums are not sent).
  const counted = asks(info, ['pipelineCounts', 'sumEstimates', 'splitCounts'])
    ? ctx.reads.pipelineCounts(pipelineId, f)
    : ctx.reads.pipelineCount(pipelineId, f).then((issues) => ({ issues, pullRequests: 0, estimates: 0 }))
  const asked = nodeFields(info)
  // The cards' repositories (and their boards, for htmlUrl) read alongside the page, when no more than a page's worth.
  if (f.repoIds.length <= page.limit) {
    if (asked.has('repository') || asked.has('htmlUrl')) ctx.reads.repositoriesByIds(f.repoIds).catch(() => {})
    if (asked.has('htmlUrl')) ctx.reads.firstWorkspacesOf(f.repoIds).catch(() => {})
  }
  const carry = { labels: asked.has('labels'), assignees: asked.has('assignees') }
  const [rows, counts] = await Promise.all([ctx.reads.pipelinePage(pipelineId, f, page, carry), counted])
  return issueConnection(rows.rows, page, rows.hasMore, counts)
}

function issueConnection (rows: Array<IssueNode & { key: IssueKey }>, page: ReturnType<typeof pageOf>, more: boolean, counts: Counts) {
  const nodes = rows.map((r) => Object.assign(issueObject(r), { cursor: issueCursor(r.key) }))
  return {
    ...connectionOf(nodes, (n) => n.cursor, page, more, counts.issues),
    pipelineCounts: {
      issuesCount: counts.issues - counts.pullRequests,
      pullRequestsCount: counts.pullRequests,
      sumEstimates: counts.estimates,
      unfilteredIssueCount: null,
      unfilteredSumEstimates: null
    }
  }
}

/** Issues of the workspace's readable repositories, newest first, open (and with `includeClosed` closed). */
async function repoIssues (ctx: Ctx, f: IssueFilter, scope: IssueScope, args: PageArgs, order?: IssueOrder) {
  const page = pageOf(args, issueKeyOf)
  const [rows, counts] = await Promise.all([ctx.reads.issuesPage(f, scope, page, order), ctx.reads.issuesCounts(f, scope)])
  return issueConnection(rows.rows, page, rows.hasMore, counts)
}

interface OrderArg { field: string, direction: 'ASC' | 'DESC' }

/** An IssueOrderInput as the store's order; the orders with nothing stored behind them are refused. */
function issueOrder (order: OrderArg | null | undefined): IssueOrder | undefined {
  if (order == null) return undefined
  const field = ISSUE_ORDER_FIELDS.find((f) => f === order.field)
  if (field === undefined) throw new Invalid(`orderBy.field: ${order.field} is not offered here; use one of ${ISSUE_ORDER_FIELDS.join(', ')}`)
  return { field, direction: order.direction === 'DESC' ? 'desc' : 'asc' }
}

interface SearchIssuesArgs extends PageArgs {
  workspaceId: string
  filters: { repositoryIds: string[], pipelineIds: string[] }
  query?: string | null
  includeClosed?: boolean | null
}

/** The workspace's repositories the viewer can read, optionally only those of `ghIds`. */
async function readableIn (ctx: Ctx, workspaceId: string, ghIds?: number[] | null): Promise<number[]> {
  const wanted = ghIds?.map(repoOfGhId)
  return (await ctx.reads.repositoriesOf([workspaceId])).map((r) => r.repo_id).filter((r) => ctx.readable.has(r) && (wanted == null || wanted.includes(r)))
}

const byName = <T extends { name: string }>(rows: T[]): T[] => [...new Map(rows.map((r) => [r.name, r])).values()]
const contains = (text: string, query: string | null | undefined) => query == null || query.trim() === '' || text.toLowerCase().includes(query.trim().toLowerCase())

/** Logins that can be assigned on the repositories: writers, and logins already assigned there. */
async function assignableOn (ctx: Ctx, repoIds: number[]) {
  const [writers, assigned] = await Promise.all([ctx.reads.usersOn(repoIds, 2), ctx.reads.assigneesIn(repoIds)])
  const out = new Map<string, { repo_id: number, login: string, avatar_url: string | null }>()
  for (const a of assigned) out.set(`${a.repo_id}:${a.login}`, a)
  for (const w of writers) if (!out.has(`${w.repo_id}:${w.login}`)) out.set(`${w.repo_id}:${w.login}`, { repo_id: w.repo_id, login: w.login, avatar_url: null })
  return [...out.values()].sort((a, b) => a.login < b.login ? -1 : a.login > b.login ? 1 : 0)
}

const epicObject = (row: IssueNode) => ({ __typename: 'Epic' as const, issue: issueObject(row) })
type EpicObject = ReturnType<typeof epicObject>
const labelObject = (row: { name: string, color: string | null, description?: string | null }) => ({ __typename: 'ZenhubLabel' as const, name: row.name, color: row.color, description: row.description ?? null })

/** The labels a workspace view shows: the organization's, then those of the repositories not among them (by name, any case). */
async function zenhubLabelsOf (ctx: Ctx, repoIds: number[]) {
  const [own, worn] = await Promise.all([ctx.reads.organizationLabels(), ctx.reads.labelsIn(repoIds)])
  const taken = new Set(own.map((l) => l.name.toLowerCase()))
  const all = [...own, ...byName(worn).filter((l) => !taken.has(l.name.toLowerCase()))]
  return all.sort((a, b) => a.name < b.name ? -1 : a.name > b.name ? 1 : 0).map(labelObject)
}
type ReleaseRow = Awaited<ReturnType<Ctx['reads']['releasesOf']>>[number]
const releaseObject = (row: ReleaseRow) => ({ __typename: 'Release' as const, ...row })

async function visibleWorkspaces (ctx: Ctx, query?: string | null) {
  const rows = await ctx.reads.workspacesHolding([...ctx.readable])
  const needle = query?.trim().toLowerCase() ?? ''
  return rows.filter((w) => needle === '' || w.name.toLowerCase().includes(needle)).map(workspaceObject)
}

export async function sprintsOf (ctx: Ctx, workspaceId: string) {
  // As the REST reads do: sprint boundaries passed by now are settled first.
  await ctx.store.sprints.settle(workspaceId, ctx.now())
  return (await ctx.store.sprints.list(workspaceId, (r) => ctx.readable.has(r), ctx.now())).map(sprintObject)
}

async function issueFor (ctx: Ctx, row: IssueNode | undefined, what: string): Promise<IssueObject> {
  if (row === undefined || !ctx.readable.has(row.repo_id)) throw new NotFound(`${what} not found`)
  return issueObject(row)
}

async function nodeOf (ctx: Ctx, id: string): Promise<unknown> {
  const parsed = nodeKey(id)
  if (parsed === undefined) return null
  const { type, key } = parsed
  switch (type) {
    case 'Issue': {
      const [row] = await ctx.reads.issuesByIds([key as number])
      return row !== undefined && ctx.readable.has(row.repo_id) ? issueObject(row) : null
    }
    case 'Repository': {
      const [row] = await ctx.reads.repositoriesByIds([key as number])
      return row !== undefined && ctx.readable.has(row.id) ? repositoryObject(row) : null
    }
    case 'Pipeline': {
      const [row] = await ctx.reads.pipelinesByIds([key as string])
      return row !== undefined && await workspaceFor(ctx, row.workspace_id) !== undefined ? pipelineObject(row) : null
    }
    case 'Sprint': {
      const [row] = await ctx.reads.sprintRowsByIds([key as string])
      if (row === undefined || await workspaceFor(ctx, row.workspace_id) === undefined) return null
      return (await sprintsOf(ctx, row.workspace_id)).find((s) => s.id === key) ?? null
    }
    case 'Milestone': {
      const { repoId, number } = /^[0-9]{1,15}:[0-9]{1,15}$/.test(String(key)) ? milestoneKey(id) : { repoId: 0, number: 0 }
      const [row] = ctx.readable.has(repoId) ? await ctx.reads.milestonesOf([{ repo_id: repoId, number }]) : []
      return row === undefined ? null : { ...row, __typename: 'Milestone' as const }
    }
    case 'Epic': {
      const [row] = await ctx.reads.issuesByIds([key as number])
      return row !== undefined && row.is_epic === 1 && ctx.readable.has(row.repo_id) ? epicObject(row) : null
    }
    case 'ZenhubLabel': {
      return (await zenhubLabelsOf(ctx, [...ctx.readable])).find((l) => l.name === key) ?? null
    }
    case 'ZenhubUser': return key === ctx.user.id ? viewerObject(ctx) : null
    case 'ZenhubOrganization': return key === 1 ? ORGANIZATION : null
    case 'ZenhubEpic': return await zenhubEpicNode(ctx, key as number)
    case 'KeyDate': return await keyDateNode(ctx, key as number)
    default: return null
  }
}

interface SprintIssueObject { sprint: SprintObject, issue: IssueObject, added_at: string }

const viewerObject = (ctx: Ctx) => ({ __typename: 'ZenhubUser' as const, ...ctx.user })

export const queryResolvers = {
  viewer: (_: unknown, __: unknown, ctx: Ctx) => viewerObject(ctx),
  async workspace (_: unknown, args: { id: string }, ctx: Ctx) {
    const found = await workspaceFor(ctx, args.id)
    if (found === undefined) return null
    await viewed(ctx, found.workspace.id)
    return found.workspace
  },
  async searchIssuesByPipeline (_: unknown, args: PageArgs & { pipelineId: string, filters: SearchFilters, query?: string | null }, ctx: Ctx,
    info: GraphQLResolveInfo) {
    const { pipeline, repoIds } = await pipelineFor(ctx, args.pipelineId)
    return await pipelineIssues(ctx, pipeline.id, repoIds, args.filters, args.query, args, info)
  },
  async searchClosedIssues (_: unknown, args: PageArgs & { workspaceId: string, filters: SearchFilters, query?: string | null }, ctx: Ctx) {
    const found = await workspaceFor(ctx, args.workspaceId)
    if (found === undefined) throw new NotFound(`workspace ${args.workspaceId} not found`)
    const f = filterOf(ctx, found.repoIds, args.filters, args.query)
    const page = pageOf(args, issueKeyOf)
    const [rows, counts] = await Promise.all([ctx.reads.closedPage(args.workspaceId, f, page), ctx.reads.closedCounts(args.workspaceId, f)])
    return issueConnection(rows.rows, page, rows.hasMore, counts)
  },
  async searchIssues (_: unknown, args: SearchIssuesArgs, ctx: Ctx) {
    const found = await workspaceFor(ctx, args.workspaceId)
    if (found === undefined) throw new NotFound(`workspace ${args.workspaceId} not found`)
    const f = filterOf(ctx, found.repoIds, args.filters.repositoryIds.length === 0 ? undefined : { repositoryIds: args.filters.repositoryIds }, args.query)
    const scope = { includeClosed: args.includeClosed === true, workspaceId: args.workspaceId, pipelineIds: args.filters.pipelineIds.map(pipelineKey) }
    return await repoIssues(ctx, f, scope, args)
  },
  async issueByInfo (_: unknown, args: { repositoryGhId?: number | null, repositoryId?: string | null, issueNumber: number }, ctx: Ctx) {
    const repoId = (args.repositoryGhId == null ? undefined : repoOfGhId(args.repositoryGhId)) ?? (args.repositoryId == null ? undefined : numberKey(args.repositoryId, 'Repository'))
    if (repoId === undefined) throw new Invalid('give repositoryGhId or repositoryId')
    return await issueFor(ctx, ctx.readable.has(repoId) ? await ctx.reads.issueByNumber(repoId, args.issueNumber) : undefined, `issue ${args.issueNumber} of repository ${repoId}`)
  },
  async issues (_: unknown, args: { ids: string[] }, ctx: Ctx) {
    if (args.ids.length > 100) throw new Invalid('ids must not list more than 100 issues')
    const keys = args.ids.map((id) => numberKey(id, 'Issue'))
    const rows = new Map((await ctx.reads.issuesByIds(keys)).map((r) => [r.id, r]))
    return await Promise.all(keys.map(async (k, i) => await issueFor(ctx, rows.get(k), `issue ${args.ids[i]}`)))
  },
  node: async (_: unknown, args: { id: string }, ctx: Ctx) => await nodeOf(ctx, args.id),
  async nodes (_: unknown, args: { ids: string[] }, ctx: Ctx) {
    if (args.ids.length > 100) throw new Invalid('ids must not list more than 100 ids')
    return await Promise.all(args.ids.map(async (id) => await nodeOf(ctx, id)))
  },
  async repositoriesByGhId (_: unknown, args: { ghIds: number[] }, ctx: Ctx) {
    if (args.ghIds.length > 100) throw new Invalid('ghIds must not list more than 100 repositories')
    const ids = args.ghIds.map(repoOfGhId)
    const rows = await ctx.reads.repositoriesByIds(ids.filter((id) => ctx.readable.has(id)))
    const byId = new Map(rows.map((r) => [r.id, r]))
    return ids.flatMap((id) => byId.has(id) ? [repositoryObject(byId.get(id)!)] : [])
  }
}

const iso = (text: string | null | undefined) => text == null ? null : new Date(text).toISOString()

export const typeResolvers = {
  ZenhubUser: {
    id: (u: Ctx['user']) => encodeId('ZenhubUser', u.id),
    name: (u: Ctx['user']) => u.login,
    email: async (u: Ctx['user'], _: unknown, ctx: Ctx) => u.id === ctx.user.id ? await ctx.store.users.emailOf(u.id) : null,
    imageUrl: () => null,
    githubUser: (u: Ctx['user']) => ({ login: u.login, avatar_url: null }),
    searchWorkspaces: async (_: unknown, args: PageArgs & { query: string }, ctx: Ctx) =>
      listConnection(await visibleWorkspaces(ctx, args.query), (w) => w.id, args),
    zenhubOrganizations: (_: unknown, args: PageArgs & { query?: string | null }) =>
      listConnection(args.query == null || ORGANIZATION.name.toLowerCase().includes(args.query.toLowerCase()) ? [ORGANIZATION] : [], (o) => o.id, args),
    createdAt: async (u: Ctx['user'] & { created_at?: string }, _: unknown, ctx: Ctx) => iso(u.created_at ?? (await ctx.reads.usersByIds([u.id]))[0]?.created_at) ?? new Date(0).toISOString(),
    updatedAt: async (u: Ctx['user'] & { created_at?: string }, _: unknown, ctx: Ctx) => iso(u.created_at ?? (await ctx.reads.usersByIds([u.id]))[0]?.created_at) ?? new Date(0).toISOString()
  },
  User: {
    id: (u: { login: string }) => encodeId('User', u.login),
    name: () => null,
    avatarUrl: (u: { avatar_url: string | null }) => u.avatar_url ?? '',
    ghId: () => null
  },
  ZenhubOrganization: {
    workspaces: async (_: unknown, args: PageArgs & { query?: string | null }, ctx: Ctx) =>
      listConnection(await visibleWorkspaces(ctx, args.query), (w) => w.id, args)
  },
  Workspace: {
    displayName: (w: WorkspaceObject) => w.name,
    createdAt: (w: WorkspaceObject) => iso(w.created_at),
    updatedAt: (w: WorkspaceObject) => iso(w.created_at),
    zenhubOrganization: () => ORGANIZATION,
    sprints: async (w: WorkspaceObject, args: PageArgs & { query?: string | null, filters?: { state?: { eq: 'OPEN' | 'CLOSED' } | null, id?: { in?: string[] | null, nin?: string[] | null } | null } | null, orderBy?: { field?: 'END_AT' | 'START_AT' | null, direction?: 'ASC' | 'DESC' | null } | null }, ctx: Ctx) => {
      let list = await sprintsOf(ctx, w.id)
      const state = args.filters?.state?.eq
      if (state !== undefined) list = list.filter((s) => (s.state === 'closed' ? 'CLOSED' : 'OPEN') === state)
      const ids = args.filters?.id?.in
      if (ids != null) { const keep = new Set(ids.map((id) => textKey(id, 'Sprint'))); list = list.filter((s) => keep.has(s.id)) }
      const nin = args.filters?.id?.nin
      if (nin != null) { const drop = new Set(nin.map((id) => textKey(id, 'Sprint'))); list = list.filter((s) => !drop.has(s.id)) }
      const needle = args.query?.trim().toLowerCase()
      if (needle !== undefined && needle !== '') list = list.filter((s) => s.name.toLowerCase().includes(needle))
      const field = args.orderBy?.field === 'END_AT' ? 'ends_at' : 'starts_at'
      const sign = args.orderBy?.direction === 'DESC' ? -1 : 1
      list.sort((a, b) => sign * (Date.parse(a[field]) - Date.parse(b[field])))
      return listConnection(list, (s) => s.id, args)
    },
    issues: async (w: WorkspaceObject, args: PageArgs & { repositoryIds?: string[] | null, query?: string | null, filters?: { labels?: SearchFilters['labels'] } | null, orderBy?: OrderArg | null }, ctx: Ctx) => {
      const repoIds = (await ctx.reads.repositoriesOf([w.id])).map((r) => r.repo_id)
      const f = filterOf(ctx, repoIds, { repositoryIds: args.repositoryIds, labels: args.filters?.labels }, args.query)
      return await repoIssues(ctx, f, { includeClosed: true }, args, issueOrder(args.orderBy))
    },
    epics: async (w: WorkspaceObject, args: PageArgs & { ids?: string[] | null, repositoryGhIds?: number[] | null, state?: { eq: 'OPEN' | 'CLOSED' } | null, query?: string | null }, ctx: Ctx) => {
      const repoIds = await readableIn(ctx, w.id, args.repositoryGhIds)
      const ids = args.ids == null ? undefined : new Set(args.ids.map((id) => numberKey(id, 'Epic')))
      const rows = (await ctx.reads.epicsIn(repoIds)).filter((r) => (ids === undefined || ids.has(r.id)) &&
        (args.state == null || (r.state === 'closed' ? 'CLOSED' : 'OPEN') === args.state.eq) && contains(r.title, args.query))
      return listConnection(rows.map(epicObject), (e) => String(e.issue.id), args)
    },
    zenhubLabels: async (w: WorkspaceObject, args: PageArgs & { query?: string | null }, ctx: Ctx) => {
      const repoIds = await readableIn(ctx, w.id)
      const labels = (await zenhubLabelsOf(ctx, repoIds)).filter((l) => contains(l.name, args.query))
      return listConnection(labels, (l) => l.name, args)
    },
    zenhubUsers: async (w: WorkspaceObject, args: PageArgs & { query?: string | null }, ctx: Ctx) => {
      const repoIds = await readableIn(ctx, w.id)
      const users = [...new Map((await ctx.reads.usersOn(repoIds, 2)).map((u) => [u.id, u])).values()].filter((u) => contains(u.login, args.query))
      return listConnection(users.map((u) => ({ __typename: 'ZenhubUser' as const, id: u.id, login: u.login, created_at: u.created_at })), (u) => String(u.id), args)
    },
    assignees: async (w: WorkspaceObject, args: PageArgs & { login?: SearchFilters['labels'], repositoryGhIds?: number[] | null, query?: string | null }, ctx: Ctx) => {
      const repoIds = await readableIn(ctx, w.id, args.repositoryGhIds)
      const logins = [...new Map((await assignableOn(ctx, repoIds)).map((a) => [a.login, a])).values()]
        .filter((a) => contains(a.login, args.query) && (args.login?.in == null || args.login.in.includes(a.login)))
        .filter((a) => args.login?.nin == null || !args.login.nin.includes(a.login))
      return listConnection(logins, (a) => a.login, args)
    },
    upcomingSprint: async (w: WorkspaceObject, _: unknown, ctx: Ctx) =>
      (await sprintsOf(ctx, w.id)).filter((s) => s.state === 'future').sort((a, b) => Date.parse(a.starts_at) - Date.parse(b.starts_at))[0] ?? null,
    previousSprint: async (w: WorkspaceObject, _: unknown, ctx: Ctx) =>
      (await sprintsOf(ctx, w.id)).filter((s) => s.state === 'closed').sort((a, b) => Date.parse(b.ends_at) - Date.parse(a.ends_at))[0] ?? null,
    averageSprintVelocity: async (w: WorkspaceObject, _: unknown, ctx: Ctx) => {
      const ended = (await sprintsOf(ctx, w.id)).filter((s) => s.state === 'closed').sort((a, b) => Date.parse(b.ends_at) - Date.parse(a.ends_at)).slice(0, 3)
      return ended.length === 0 ? null : ended.reduce((sum, s) => sum + s.points_closed, 0) / ended.length
    },
    viewerPermission: async (w: WorkspaceObject, _: unknown, ctx: Ctx) => {
      const levels = await ctx.store.users.levels(ctx.user.id, await readableIn(ctx, w.id))
      return ['NONE', 'READ', 'WRITE', 'ADMIN'][Math.max(0, ...levels.values())] ?? 'ADMIN'
    },
    activeSprint: async (w: WorkspaceObject, _: unknown, ctx: Ctx) => (await sprintsOf(ctx, w.id)).find((s) => s.state === 'active') ?? null,
    ...workspaceZenhubFields
  },
  Pipeline: {
    id: (p: PipelineObject) => encodeId('Pipeline', p.id),
    description: () => null,
    stage: () => null,
    isDefaultPRPipeline: () => false,
    issues: async (p: PipelineObject, args: PageArgs & { repositoryId?: string | null, state?: 'OPEN' | 'CLOSED' | null }, ctx: Ctx, info: GraphQLResolveInfo) => {
      const repoIds = (await ctx.reads.repositoriesOf([p.workspace_id])).map((r) => r.repo_id)
      return await pipelineIssues(ctx, p.id, repoIds, args.repositoryId == null ? undefined : { repositoryIds: [args.repositoryId] }, undefined, args, info)
    }
  },
  PipelineIssue: {
    id: (pi: PlacementNode) => pipelineIssueId(pi.issue_id, pi.workspace_id),
    relativePosition: (pi: PlacementNode) => String(pi.rank),
    latestTransferTime: () => null
  },
  Issue: {
    id: (i: IssueObject) => encodeId('Issue', i.id),
    state: (i: IssueObject) => i.state === 'closed' ? 'CLOSED' : 'OPEN',
    // An issue of a repository that lives here only (no issue host) is the hosted service's native kind.
    type: (i: IssueObject) => i.repo_id >= LOCAL_REPO_IDS ? 'ZenhubIssue' : 'GithubIssue',
    pullRequest: (i: IssueObject) => i.is_pull_request === 1,
    ghId: () => null,
    ghUpdatedAt: (i: IssueObject) => iso(i.host_updated_at ?? i.created_at),
    createdAt: (i: IssueObject) => iso(i.created_at),
    updatedAt: (i: IssueObject) => iso(i.host_updated_at ?? i.planning_changed_at ?? i.created_at),
    estimate: (i: IssueObject) => i.estimate === null ? null : { value: i.estimate }
  },
  Repository: {
    id: (r: RepositoryObject) => encodeId('Repository', r.id),
    ghId: (r: RepositoryObject) => ghIdOf(r.id),
    ownerName: (r: RepositoryObject) => r.owner,
    owner: (r: RepositoryObject) => ({ __typename: 'User' as const, login: r.owner, avatar_url: null }),
    description: () => null,
    issues: async (r: RepositoryObject, args: PageArgs, ctx: Ctx) => await repoIssues(ctx, filterOf(ctx, [r.id], undefined), { includeClosed: true }, args)
  },
  Epic: {
    id: (e: EpicObject) => encodeId('Epic', e.issue.id),
    createdAt: (e: EpicObject) => iso(e.issue.created_at),
    updatedAt: (e: EpicObject) => iso(e.issue.host_updated_at ?? e.issue.planning_changed_at ?? e.issue.created_at)
  },
  ZenhubLabel: {
    id: (l: ReturnType<typeof labelObject>) => encodeId('ZenhubLabel', l.name)
  },
  Release: {
    id: (r: ReleaseRow) => encodeId('Release', r.id),
    startOn: (r: ReleaseRow) => r.start_date.slice(0, 10),
    endOn: (r: ReleaseRow) => r.desired_end_date.slice(0, 10),
    state: (r: ReleaseRow) => r.state === 'closed' ? 'CLOSED' : 'OPEN',
    closedAt: (r: ReleaseRow) => iso(r.closed_at),
    createdAt: (r: ReleaseRow) => iso(r.created_at)
  },
  SprintIssue: {
    id: (si: SprintIssueObject) => encodeId('SprintIssue', `${si.sprint.id}:${si.issue.id}`),
    createdAt: (si: SprintIssueObject) => iso(si.added_at),
    updatedAt: (si: SprintIssueObject) => iso(si.added_at)
  },
  Sprint: {
    id: (s: SprintObject) => encodeId('Sprint', s.id),
    generatedName: (s: SprintObject) => s.name,
    state: (s: SprintObject) => s.state === 'closed' ? 'CLOSED' : 'OPEN',
    startAt: (s: SprintObject) => iso(s.starts_at),
    endAt: (s: SprintObject) => iso(s.ends_at),
    createdAt: (s: SprintObject) => iso(s.starts_at),
    updatedAt: (s: SprintObject) => iso(s.starts_at),
    totalPoints: (s: SprintObject) => s.points_total,
    completedPoints: (s: SprintObject) => s.points_closed,
    closedIssuesCount: (s: SprintObject) => s.issues_closed,
    description: () => null,
    sprintIssues: async (s: SprintObject, args: PageArgs & { labelIds?: string[] | null }, ctx: Ctx) => {
      const repoIds = (await ctx.reads.repositoriesOf([s.workspace_id])).map((r) => r.repo_id)
      const f = filterOf(ctx, repoIds, args.labelIds == null ? undefined : { labels: { in: args.labelIds.map((id) => textKey(id, 'ZenhubLabel')) } })
      const page = pageOf(args, issueKeyOf)
      const [rows, counts] = await Promise.all([ctx.reads.sprintPage(s.id, f, page), ctx.reads.sprintCounts(s.id, f)])
      const added = new Map((await ctx.reads.sprintMembership([s.id], rows.rows.map((r) => r.id))).map((m) => [m.issue_id, m.added_at]))
      const nodes = rows.rows.map((r) => ({ __typename: 'SprintIssue' as const, sprint: s, issue: issueObject(r), added_at: added.get(r.id) ?? s.starts_at, cursor: issueCursor(r.key) }))
      return connectionOf(nodes, (n) => n.cursor, page, rows.hasMore, counts.issues)
    },
    issues: async (s: SprintObject, args: PageArgs, ctx: Ctx) => {
      const repoIds = (await ctx.reads.repositoriesOf([s.workspace_id])).map((r) => r.repo_id)
      const f = filterOf(ctx, repoIds, undefined)
      const page = pageOf(args, issueKeyOf)
      const [rows, counts] = await Promise.all([ctx.reads.sprintPage(s.id, f, page), ctx.reads.sprintCounts(s.id, f)])
      return issueConnection(rows.rows, page, rows.hasMore, counts)
    }
  },
  Label: {
    id: (l: { name: string }) => encodeId('Label', l.name)
  },
  Milestone: {
    id: (m: { repo_id: number, number: number }) => encodeId('Milestone', `${m.repo_id}:${m.number}`),
    state: (m: { state: string }) => m.state === 'closed' ? 'CLOSED' : 'OPEN',
    dueOn: (m: { due_on: string | null }) => iso(m.due_on),
    startDate: (m: { start_date: string | null }) => iso(m.start_date)
  }
}

const group = <T, K>(rows: T[], keyOf: (row: T) => K): Map<K, T[]> => {
  const out = new Map<K, T[]>()
  for (const row of rows) {
    const key = keyOf(row)
    const list = out.get(key)
    if (list === undefined) out.set(key, [row])
    else list.push(row)
  }
  return out
}

/** Fields read for a whole page at once: one statement per field, whatever the page's size. */
export const loaders = {
  Issue: {
    async repository (queries: Array<Query<IssueObject>>, ctx: Ctx) {
      const rows = new Map((await ctx.reads.repositoriesByIds([...new Set(queries.map((q) => q.obj.repo_id))])).map((r) => [r.id, r]))
      return queries.map((q) => repositoryObject(rows.get(q.obj.repo_id)!))
    },
    /**
     * The issue's page on its issue host; for a repository with no issue host (made here), this
     * server's board filtered to it (as zenhubUrl, in the oldest workspace holding the repository),
     * never a github.com address guessed from the name: that would be somebody else's.
     */
    async htmlUrl (queries: Array<Query<IssueObject>>, ctx: Ctx) {
      // both at once (the boards of repositories with an address are not used): one round trip
      const ids = [...new Set(queries.map((q) => q.obj.repo_id))]
      const [repositories, boards] = await Promise.all([ctx.reads.repositoriesByIds(ids), ctx.reads.firstWorkspacesOf(ids)])
      const rows = new Map(repositories.map((r) => [r.id, r]))
      return queries.map((q) => {
        const web = rows.get(q.obj.repo_id)!.html_url
        if (web !== null) return `${web}/${q.obj.is_pull_request === 1 ? 'pull' : 'issues'}/${q.obj.number}`
        const board = boards.get(q.obj.repo_id)
        const query = new URLSearchParams({ ...(board === undefined ? {} : { board }), repo: String(q.obj.repo_id), q: `#${q.obj.number}` })
        return ctx.address(`/board?${query.toString()}`)
      })
    },
    async body (queries: Array<Query<IssueObject>>, ctx: Ctx) {
      const rows = new Map((await ctx.reads.bodiesOf([...new Set(queries.map((q) => q.obj.id))])).map((r) => [Number(r.id), r.body]))
      return queries.map((q) => rows.get(q.obj.id) ?? null)
    },
    async closedAt (queries: Array<Query<IssueObject>>, ctx: Ctx) {
      const rows = new Map((await ctx.reads.closedAtOf(queries.map((q) => q.obj.id))).map((r) => [Number(r.issue_id), r.at]))
      return queries.map((q) => q.obj.state === 'closed' ? iso(rows.get(q.obj.id) ?? q.obj.created_at) : null)
    },
    async milestone (queries: Array<Query<IssueObject>>, ctx: Ctx) {
      const keys = queries.filter((q) => q.obj.milestone_number !== null).map((q) => ({ repo_id: q.obj.repo_id, number: q.obj.milestone_number! }))
      const rows = new Map((await ctx.reads.milestonesOf(keys)).map((m) => [`${m.repo_id}:${m.number}`, m]))
      return queries.map((q) => q.obj.milestone_number === null ? null : rows.get(`${q.obj.repo_id}:${q.obj.milestone_number}`) ?? null)
    },
    async labels (queries: Array<Query<IssueObject, PageArgs>>, ctx: Ctx) {
      const rows = group(await ctx.reads.labelsOf(queries.map((q) => q.obj.id)), (r) => Number(r.issue_id))
      return queries.map((q) => listConnection(rows.get(q.obj.id) ?? [], (l) => l.name, q.params))
    },
    async assignees (queries: Array<Query<IssueObject, PageArgs>>, ctx: Ctx) {
      const rows = group(await ctx.reads.assigneesOf(queries.map((q) => q.obj.id)), (r) => Number(r.issue_id))
      return queries.map((q) => listConnection(rows.get(q.obj.id) ?? [], (a) => a.login, q.params))
    },
    async pipelineIssue (queries: Array<Query<IssueObject, { workspaceId: string }>>, ctx: Ctx) {
      const asked = group(queries, (q) => q.params.workspaceId)
      const read = async ([workspaceId, list]: [string, typeof queries]) => await ctx.reads.placementsIn(workspaceId, list.map((q) => q.obj.id))
      const rows = (await Promise.all([...asked].map(read))).flat()
      return queries.map((q) => rows.find((r) => r.issue_id === q.obj.id && r.workspace_id === q.params.workspaceId) ?? null)
    },
    async pipelineIssues (queries: Array<Query<IssueObject, PageArgs>>, ctx: Ctx) {
      const rows = group(await ctx.reads.placementsOf(queries.map((q) => q.obj.id)), (r) => r.issue_id)
      return queries.map((q) => listConnection(rows.get(q.obj.id) ?? [], (p) => p.workspace_id, q.params))
    },
    async blockingIssues (queries: Array<Query<IssueObject, PageArgs>>, ctx: Ctx) {
      return await linked(queries, ctx, 'blocking')
    },
    async blockedIssues (queries: Array<Query<IssueObject, PageArgs>>, ctx: Ctx) {
      return await linked(queries, ctx, 'blocked')
    },
    async parentIssue (queries: Array<Query<IssueObject>>, ctx: Ctx) {
      const links = await ctx.reads.epicsOf(queries.map((q) => q.obj.id))
      const parents = new Map((await ctx.reads.issuesByIds([...new Set(links.map((l) => l.epic_id))])).map((r) => [r.id, r]))
      return queries.map((q) => {
        const parent = links.map((l) => l.issue_id === q.obj.id ? parents.get(l.epic_id) : undefined)
          .find((p) => p !== undefined && ctx.readable.has(p.repo_id))
        return parent === undefined ? null : issueObject(parent)
      })
    },
    async githubChildIssues (queries: Array<Query<IssueObject, PageArgs>>, ctx: Ctx) {
      const rows = group((await ctx.reads.childrenOf(queries.map((q) => q.obj.id))).filter((r) => ctx.readable.has(r.repo_id)), (r) => r.epic_id)
      return queries.map((q) => smallIssueConnection(rows.get(q.obj.id) ?? [], q.params))
    },
    async releases (queries: Array<Query<IssueObject, PageArgs>>, ctx: Ctx) {
      const rows = group(await ctx.reads.releasesOf(queries.map((q) => q.obj.id)), (r) => r.issue_id)
      return queries.map((q) => listConnection((rows.get(q.obj.id) ?? []).map(releaseObject), (r) => r.id, q.params))
    },
    async sprints (queries: Array<Query<IssueObject, PageArgs & { workspaceId?: string | null }>>, ctx: Ctx) {
      const links = await ctx.reads.sprintIdsOf(queries.map((q) => q.obj.id))
      const byWorkspace = new Map<string, SprintObject[]>()
      // Only workspaces the viewer can see: an issue's sprints in a board it has left name nothing of that board.
      for (const ws of new Set(links.map((l) => l.workspace_id))) if (await workspaceFor(ctx, ws) !== undefined) byWorkspace.set(ws, await sprintsOf(ctx, ws))
      return queries.map((q) => {
        const mine = links.filter((l) => l.issue_id === q.obj.id && (q.params.workspaceId == null || l.workspace_id === q.params.workspaceId))
        const list = mine.map((l) => byWorkspace.get(l.workspace_id)?.find((s) => s.id === l.sprint_id)).filter((s): s is SprintObject => s !== undefined)
        return listConnection(list, (s) => s.id, q.params)
      })
    }
  },
  PipelineIssue: {
    async pipeline (queries: Array<Query<PlacementNode>>, ctx: Ctx) {
      const rows = new Map((await ctx.reads.pipelinesByIds([...new Set(queries.map((q) => q.obj.pipeline_id))])).map((p) => [p.id, p]))
      return queries.map((q) => pipelineObject(rows.get(q.obj.pipeline_id)!))
    },
    async issue (queries: Array<Query<PlacementNode>>, ctx: Ctx) {
      const rows = new Map((await ctx.reads.issuesByIds([...new Set(queries.map((q) => q.obj.issue_id))])).map((i) => [i.id, i]))
      return queries.map((q) => issueObject(rows.get(q.obj.issue_id)!))
    },
    async workspace (queries: Array<Query<PlacementNode>>, ctx: Ctx) {
      return await workspacesFor(queries.map((q) => q.obj.workspace_id), ctx)
    }
  },
  Pipeline: {
    async workspace (queries: Array<Query<PipelineObject>>, ctx: Ctx) {
      return await workspacesFor(queries.map((q) => q.obj.workspace_id), ctx)
    }
  },
  Sprint: {
    async workspace (queries: Array<Query<SprintObject>>, ctx: Ctx) {
      return await workspacesFor(queries.map((q) => q.obj.workspace_id), ctx)
    }
  },
  Workspace: {
    async pipelinesConnection (queries: Array<Query<WorkspaceObject, PageArgs>>, ctx: Ctx) {
      const rows = group(await ctx.reads.pipelinesOf(queries.map((q) => q.obj.id)), (p) => p.workspace_id)
      return queries.map((q) => listConnection((rows.get(q.obj.id) ?? []).map(pipelineObject), (p) => p.id, q.params))
    },
    async repositoriesConnection (queries: Array<Query<WorkspaceObject, PageArgs>>, ctx: Ctx) {
      const repos = await readableReposOf(queries.map((q) => q.obj.id), ctx)
      return queries.map((q) => listConnection(repos.get(q.obj.id) ?? [], (r) => String(r.id), q.params))
    },
    async defaultRepository (queries: Array<Query<WorkspaceObject>>, ctx: Ctx) {
      const repos = await readableReposOf(queries.map((q) => q.obj.id), ctx)
      return queries.map((q) => repos.get(q.obj.id)?.[0] ?? null)
    }
  },
  Epic: {
    async childIssues (queries: Array<Query<EpicObject, PageArgs>>, ctx: Ctx) {
      const rows = group((await ctx.reads.childrenOf(queries.map((q) => q.obj.issue.id))).filter((r) => ctx.readable.has(r.repo_id)), (r) => r.epic_id)
      return queries.map((q) => smallIssueConnection(rows.get(q.obj.issue.id) ?? [], q.params))
    },
    async issueCountProgress (queries: Array<Query<EpicObject>>, ctx: Ctx) {
      const rows = group((await ctx.reads.childrenOf(queries.map((q) => q.obj.issue.id))).filter((r) => ctx.readable.has(r.repo_id)), (r) => r.epic_id)
      return queries.map((q) => {
        const list = rows.get(q.obj.issue.id) ?? []
        const closed = list.filter((r) => r.state === 'closed').length
        return { open: list.length - closed, closed, total: list.length }
      })
    },
    async issueEstimateProgress (queries: Array<Query<EpicObject>>, ctx: Ctx) {
      const rows = group((await ctx.reads.childrenOf(queries.map((q) => q.obj.issue.id))).filter((r) => ctx.readable.has(r.repo_id)), (r) => r.epic_id)
      return queries.map((q) => {
        const list = rows.get(q.obj.issue.id) ?? []
        const sum = (state: string) => list.filter((r) => r.state === state).reduce((s, r) => s + (r.estimate ?? 0), 0)
        return { open: sum('open'), closed: sum('closed'), total: sum('open') + sum('closed') }
      })
    }
  },
  Repository: {
    async labels (queries: Array<Query<RepositoryObject, PageArgs>>, ctx: Ctx) {
      const rows = group(await ctx.reads.labelsIn([...new Set(queries.map((q) => q.obj.id))]), (l) => l.repo_id)
      return queries.map((q) => listConnection(rows.get(q.obj.id) ?? [], (l) => l.name, q.params))
    },
    async milestones (queries: Array<Query<RepositoryObject, PageArgs>>, ctx: Ctx) {
      const rows = group(await ctx.reads.milestonesIn([...new Set(queries.map((q) => q.obj.id))]), (m) => m.repo_id)
      return queries.map((q) => listConnection(rows.get(q.obj.id) ?? [], (m) => String(m.number), q.params))
    },
    async assignableUsers (queries: Array<Query<RepositoryObject, PageArgs & { query?: string | null }>>, ctx: Ctx) {
      const rows = group(await assignableOn(ctx, [...new Set(queries.map((q) => q.obj.id))]), (a) => a.repo_id)
      return queries.map((q) => listConnection((rows.get(q.obj.id) ?? []).filter((a) => contains(a.login, q.params.query)), (a) => a.login, q.params))
    },
    async workspacesConnection (queries: Array<Query<RepositoryObject, PageArgs>>, ctx: Ctx) {
      const all = await ctx.reads.workspacesHolding(queries.map((q) => q.obj.id))
      const holds = group(await ctx.reads.repositoriesOf(all.map((w) => w.id)), (r) => r.repo_id)
      return queries.map((q) => {
        const mine = new Set((holds.get(q.obj.id) ?? []).map((r) => r.workspace_id))
        return listConnection(all.filter((w) => mine.has(w.id)).map(workspaceObject), (w) => w.id, q.params)
      })
    }
  }
}

async function workspacesFor (ids: string[], ctx: Ctx) {
  const rows = new Map((await ctx.reads.workspacesByIds([...new Set(ids)])).map((w) => [w.id, w]))
  return ids.map((id) => workspaceObject(rows.get(id)!))
}

async function readableReposOf (workspaceIds: string[], ctx: Ctx): Promise<Map<string, RepositoryObject[]>> {
  const links = (await ctx.reads.repositoriesOf(workspaceIds)).filter((l) => ctx.readable.has(l.repo_id))
  const repos = new Map((await ctx.reads.repositoriesByIds([...new Set(links.map((l) => l.repo_id))])).map((r) => [r.id, repositoryObject(r)]))
  const out = new Map<string, RepositoryObject[]>()
  for (const l of links) {
    const repo = repos.get(l.repo_id)
    if (repo === undefined) continue
    const list = out.get(l.workspace_id)
    if (list === undefined) out.set(l.workspace_id, [repo])
    else list.push(repo)
  }
  return out
}

async function linked (queries: Array<Query<IssueObject, PageArgs>>, ctx: Ctx, side: 'blocking' | 'blocked') {
  const deps = await ctx.reads.dependenciesOf(queries.map((q) => q.obj.id))
  const other = side === 'blocking' ? (d: { blocking_id: number }) => d.blocking_id : (d: { blocked_id: number }) => d.blocked_id
  const self = side === 'blocking' ? (d: { blocked_id: number }) => d.blocked_id : (d: { blocking_id: number }) => d.blocking_id
  const rows = new Map((await ctx.reads.issuesByIds([...new Set(deps.map(other))])).map((r) => [r.id, r]))
  return queries.map((q) => {
    const list = deps.filter((d) => self(d) === q.obj.id).map((d) => rows.get(other(d)))
      .filter((r): r is IssueNode => r !== undefined && ctx.readable.has(r.repo_id))
    return smallIssueConnection(list, q.params)
  })
}
