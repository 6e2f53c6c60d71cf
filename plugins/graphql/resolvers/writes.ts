import { Invalid, NotFound } from '../../../db/errors.js'
import { encodeId, numberKey, repoOfGhId } from '../ids.js'
import { issueObject, pipelineObject } from './objects.js'
import { mayWrite, reread, writableIssue, type Ctx, type Input } from './write-access.js'
import { issueWrites } from './writes-issues.js'
import { sprintWrites } from './writes-sprints.js'
import { labelWrites } from './writes-labels.js'
import { boardWrites } from './writes-board.js'
import { epicWrites } from './writes-epics.js'
import { pipelineWrites } from './writes-pipelines.js'
import { milestoneWrites } from './writes-milestones.js'
import { zenhubEpicWrites } from './zenhub-epics.js'
import { priorityWrites } from './priorities.js'
import { prConnectionWrites } from './pr-connections.js'
import { labelDefinitionWrites } from './writes-label-definitions.js'
import { workspaceWrites } from './writes-workspaces.js'
import { zenhubEpicMetaWrites } from './zenhub-epic-meta.js'
import { epicDateWrites } from './epic-dates.js'
import { pipelineFor } from './visibility.js'

export interface BlockageEnd { id: string, type: 'ISSUE' | 'ZENHUB_EPIC' }
interface IssueInfo { repositoryGhId?: number | null, repositoryId?: string | null, issueNumber: number }

const repoOf = (info: IssueInfo): number => {
  const id = (info.repositoryGhId == null ? undefined : repoOfGhId(info.repositoryGhId)) ?? (info.repositoryId == null ? undefined : numberKey(info.repositoryId, 'Repository'))
  if (id === undefined) throw new Invalid('give repositoryGhId or repositoryId')
  return id
}

/** Both ends of a dependency as the REST API names them, with write access to both repositories. */
async function dependencyOf (ctx: Ctx, input: { blockingIssue: IssueInfo, blockedIssue: IssueInfo }) {
  const blocking = { repo_id: repoOf(input.blockingIssue), issue_number: input.blockingIssue.issueNumber }
  const blocked = { repo_id: repoOf(input.blockedIssue), issue_number: input.blockedIssue.issueNumber }
  await ctx.auth.requireAccess(ctx.request, blocking.repo_id, 'write')
  await ctx.auth.requireAccess(ctx.request, blocked.repo_id, 'write')
  return { blocking, blocked }
}

async function dependencyPayload (ctx: Ctx, dependency: Awaited<ReturnType<typeof dependencyOf>>, input: Input) {
  const blocking = await ctx.reads.issueByNumber(dependency.blocking.repo_id, dependency.blocking.issue_number)
  const blocked = await ctx.reads.issueByNumber(dependency.blocked.repo_id, dependency.blocked.issue_number)
  if (blocking === undefined || blocked === undefined) throw new NotFound('issue not found')
  return {
    clientMutationId: input.clientMutationId ?? null,
    issueDependency: { id: encodeId('IssueDependency', `${blocking.id}:${blocked.id}`), blockingIssue: issueObject(blocking), blockedIssue: issueObject(blocked) }
  }
}

/** Mutations: each the domain operation of its REST twin, after the same permission checks. */
export const mutationResolvers = {
  async moveIssue (_: unknown, { input }: { input: Input & { issueId: string, pipelineId: string, position?: number | null } }, ctx: Ctx) {
    mayWrite(ctx)
    const { issue, repo } = await writableIssue(ctx, input.issueId)
    const { pipeline } = await pipelineFor(ctx, input.pipelineId)
    const position = input.position ?? 0
    if (position < 0) throw new Invalid('position must be 0 or more')
    await ctx.store.boards.move(ctx.user, pipeline.workspace_id, repo, issue.number, pipeline.id, position)
    return { clientMutationId: input.clientMutationId ?? null, issue: await reread(ctx, issue.id), pipeline: pipelineObject(pipeline) }
  },
  async setEstimate (_: unknown, { input }: { input: Input & { issueId: string, value?: number | null } }, ctx: Ctx) {
    mayWrite(ctx)
    const { issue, repo } = await writableIssue(ctx, input.issueId)
    await ctx.store.issues.setEstimate(ctx.user, repo, issue.number, input.value ?? null)
    return { clientMutationId: input.clientMutationId ?? null, issue: await reread(ctx, issue.id) }
  },
  async setMultipleEstimates (_: unknown, { input }: { input: Input & { issueIds: string[], value?: number | null } }, ctx: Ctx) {
    mayWrite(ctx)
    if (input.issueIds.length > 100) throw new Invalid('issueIds must not list more than 100 issues')
    const targets = []
    for (const id of input.issueIds) targets.push(await writableIssue(ctx, id))
    for (const { issue, repo } of targets) await ctx.store.issues.setEstimate(ctx.user, repo, issue.number, input.value ?? null)
    const rows = new Map((await ctx.reads.issuesByIds(targets.map((t) => t.issue.id))).map((r) => [r.id, r]))
    return { clientMutationId: input.clientMutationId ?? null, issues: targets.map((t) => issueObject(rows.get(t.issue.id)!)) }
  },
  async createIssueDependency (_: unknown, { input }: { input: Input & { blockingIssue: IssueInfo, blockedIssue: IssueInfo } }, ctx: Ctx) {
    mayWrite(ctx)
    const dependency = await dependencyOf(ctx, input)
    await ctx.store.dependencies.create(dependency, (r) => ctx.readable.has(r), ctx.user)
    return await dependencyPayload(ctx, dependency, input)
  },
  async deleteIssueDependency (_: unknown, { input }: { input: Input & { blockingIssue: IssueInfo, blockedIssue: IssueInfo } }, ctx: Ctx) {
    mayWrite(ctx)
    const dependency = await dependencyOf(ctx, input)
    const payload = await dependencyPayload(ctx, dependency, input)
    await ctx.store.dependencies.remove(dependency, ctx.user)
    return payload
  },
  async createBlockage (_: unknown, { input }: { input: Input & { blocking: BlockageEnd, blocked: BlockageEnd } }, ctx: Ctx) {
    mayWrite(ctx)
    const [blocking, blocked] = await Promise.all([input.blocking, input.blocked].map(async (end) => {
      if (end.type !== 'ISSUE') throw new Invalid('only issues block or are blocked here (type ISSUE)')
      return (await writableIssue(ctx, end.id)).issue
    }))
    const ref = (issue: typeof blocking) => ({ repo_id: issue.repo_id, issue_number: issue.number })
    const dependency = { blocking: ref(blocking), blocked: ref(blocked) }
    await ctx.store.dependencies.create(dependency, (r) => ctx.readable.has(r), ctx.user)
    const at = new Date(ctx.now()).toISOString()
    const blockage = {
      id: encodeId('IssueDependency', `${blocking.id}:${blocked.id}`),
      blocking: await reread(ctx, blocking.id),
      blocked: await reread(ctx, blocked.id),
      createdAt: at,
      updatedAt: at
    }
    return { clientMutationId: input.clientMutationId ?? null, blockage }
  },
  ...issueWrites,
  ...sprintWrites,
  ...labelWrites,
  ...boardWrites,
  ...epicWrites,
  ...pipelineWrites,
  ...milestoneWrites,
  ...zenhubEpicWrites,
  ...priorityWrites,
  ...prConnectionWrites,
  ...labelDefinitionWrites,
  ...workspaceWrites,
  ...zenhubEpicMetaWrites,
  ...epicDateWrites
}
