import { Invalid, NotFound } from '../../../db/errors.js'
import type { IssueNode, PlacementNode } from '../../../db/graph-reads.js'
import type { PriorityRow } from '../../../db/priorities.js'
import { listConnection, type PageArgs } from '../connections.js'
import { encodeId, numberKey, repoOfGhId } from '../ids.js'
import type { WorkspaceObject } from './objects.js'
import { workspaceFor } from './visibility.js'
import { echo, mayWrite, MAX_BATCH, type Ctx, type Input } from './write-access.js'
import type { Query } from '../batched-fields.js'

export const priorityObject = (row: PriorityRow) => ({ ...row, __typename: 'Priority' as const })
type PriorityObject = ReturnType<typeof priorityObject>
export interface IssueInfo { repositoryGhId?: number | null, repositoryId?: string | null, issueNumber: number }

const iso = (text: string) => new Date(text).toISOString()

/**
 * The issues an IssueInfoInput list names, each readable (else NOT_FOUND, as for one that does
 * not exist) and writable (else FORBIDDEN), all checked before anything changes.
 */
async function writableIssuesByInfo (ctx: Ctx, infos: IssueInfo[]): Promise<IssueNode[]> {
  if (infos.length > MAX_BATCH) throw new Invalid(`issues must not list more than ${MAX_BATCH} issues`)
  const named = infos.map((info) => {
    const byGhId = info.repositoryGhId == null ? undefined : repoOfGhId(info.repositoryGhId)
    const byId = info.repositoryId == null ? undefined : numberKey(info.repositoryId, 'Repository')
    if (byGhId !== undefined && byId !== undefined && byGhId !== byId) throw new Invalid(`issue ${info.issueNumber}: repositoryGhId and repositoryId name two repositories`)
    const repoId = byGhId ?? byId
    if (repoId === undefined) throw new Invalid('each of issues needs repositoryGhId or repositoryId')
    return { repoId, number: info.issueNumber, label: byId !== undefined ? info.repositoryId! : String(info.repositoryGhId) }
  })
  const found = new Map<string, IssueNode>()
  for (const repoId of new Set(named.map((n) => n.repoId))) {
    if (!ctx.readable.has(repoId)) continue
    for (const issue of await ctx.reads.issuesByNumbers(repoId, named.filter((n) => n.repoId === repoId).map((n) => n.number))) found.set(`${repoId}:${issue.number}`, issue)
  }
  const out = new Map<number, IssueNode>()
  for (const { repoId, number, label } of named) {
    const issue = found.get(`${repoId}:${number}`)
    if (issue === undefined) throw new NotFound(`issue ${number} of repository ${label} not found`)
    out.set(issue.id, issue)
  }
  for (const repoId of new Set(named.map((n) => n.repoId))) await ctx.auth.requireAccess(ctx.request, repoId, 'write')
  return [...out.values()]
}

/** The issues' places in the workspace, in the order given (an issue off the board has none). */
async function placementsIn (ctx: Ctx, workspaceId: string, issues: IssueNode[]): Promise<PlacementNode[]> {
  const places = new Map((await ctx.reads.placementsOf(issues.map((i) => i.id))).filter((p) => p.workspace_id === workspaceId).map((p) => [p.issue_id, p]))
  return issues.flatMap((i) => places.get(i.id) ?? [])
}

export const priorityWrites = {
  async setIssueInfoPriorities (_: unknown, { input }: { input: Input & { priorityId: string, issues: IssueInfo[] } }, ctx: Ctx) {
    mayWrite(ctx)
    const [priority] = await ctx.store.priorities.byIds([numberKey(input.priorityId, 'Priority')])
    if (priority === undefined || await workspaceFor(ctx, priority.workspace_id) === undefined) throw new NotFound(`priority ${input.priorityId} not found`)
    const issues = await writableIssuesByInfo(ctx, input.issues)
    await ctx.store.priorities.set(priority.id, issues.map((i) => i.id))
    return { ...echo(input), pipelineIssues: await placementsIn(ctx, priority.workspace_id, issues) }
  },

  async removeIssueInfoPriorities (_: unknown, { input }: { input: Input & { workspaceId: string, issues: IssueInfo[] } }, ctx: Ctx) {
    mayWrite(ctx)
    if (await workspaceFor(ctx, input.workspaceId) === undefined) throw new NotFound(`workspace ${input.workspaceId} not found`)
    const issues = await writableIssuesByInfo(ctx, input.issues)
    await ctx.store.priorities.remove(input.workspaceId, issues.map((i) => i.id))
    return { ...echo(input), pipelineIssues: await placementsIn(ctx, input.workspaceId, issues) }
  }
}

export const priorityTypeResolvers = {
  Priority: {
    id: (p: PriorityObject) => encodeId('Priority', p.id),
    createdAt: (p: PriorityObject) => iso(p.created_at),
    updatedAt: (p: PriorityObject) => iso(p.updated_at)
  }
}

async function prioritiesOf (queries: Array<{ obj: WorkspaceObject }>, ctx: Ctx): Promise<Map<string, PriorityObject[]>> {
  const out = new Map<string, PriorityObject[]>()
  for (const row of await ctx.store.priorities.ofWorkspaces(queries.map((q) => q.obj.id))) {
    const list = out.get(row.workspace_id)
    if (list === undefined) out.set(row.workspace_id, [priorityObject(row)])
    else list.push(priorityObject(row))
  }
  return out
}

/** Read for a whole page at once: a page of issues costs one statement for their priorities. */
export const priorityLoaders = {
  Workspace: {
    async prioritiesConnection (queries: Array<Query<WorkspaceObject, PageArgs>>, ctx: Ctx) {
      const rows = await prioritiesOf(queries, ctx)
      return queries.map((q) => listConnection(rows.get(q.obj.id) ?? [], (p) => String(p.id), q.params))
    },
    async priorities (queries: Array<Query<WorkspaceObject>>, ctx: Ctx) {
      const rows = await prioritiesOf(queries, ctx)
      return queries.map((q) => rows.get(q.obj.id) ?? [])
    }
  },
  PipelineIssue: {
    async priority (queries: Array<Query<PlacementNode>>, ctx: Ctx) {
      const links = await ctx.store.priorities.ofIssues(queries.map((q) => q.obj.issue_id))
      const rows = new Map((await ctx.store.priorities.byIds([...new Set(links.map((l) => l.priority_id))])).map((p) => [p.id, priorityObject(p)]))
      const of = new Map(links.map((l) => [`${l.workspace_id}:${l.issue_id}`, rows.get(l.priority_id) ?? null]))
      return queries.map((q) => of.get(`${q.obj.workspace_id}:${q.obj.issue_id}`) ?? null)
    }
  }
}
