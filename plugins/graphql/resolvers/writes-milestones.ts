import { Invalid, NotFound } from '../../../db/errors.js'
import { milestoneKey, numberKey } from '../ids.js'
import { echo, eachIssue, mayWrite, writableIssues, type Ctx, type Input, type Target } from './write-access.js'
import { recordAudit, requireAdministrator } from './admin-writes.js'

export type MilestoneState = 'OPEN' | 'CLOSED'
export interface MilestoneInput { title?: string | null, description?: string | null, dueOn?: string | null, startDate?: string | null }
export interface MilestoneChange extends MilestoneInput { milestoneId?: string | null, updateAllInWorkspaceId?: string | null, state?: MilestoneState | null }

const stateOf = (state: MilestoneState) => state === 'CLOSED' ? 'closed' as const : 'open' as const

async function milestoneRow (ctx: Ctx, repoId: number, number: number, id: string) {
  const [milestone] = await ctx.reads.milestonesOf([{ repo_id: repoId, number }])
  if (milestone === undefined) throw new NotFound(`milestone ${id} not found`)
  return milestone
}

/** Milestones of a repository bound to an issue host are the host's: changing them here would diverge from it. */
async function refuseHostBound (ctx: Ctx, repoId: number): Promise<void> {
  if (await ctx.store.repositories.hostConnection(repoId) !== null) {
    throw new Invalid(`repository ${repoId} is bound to an issue host: its milestones are changed there and come back with the sync`)
  }
}

function titleOf (title: string): string {
  const trimmed = title.trim()
  if (trimmed.length === 0 || trimmed.length > 500) throw new Invalid('title must have 1 to 500 characters')
  return trimmed
}

function descriptionOf (input: MilestoneInput): string | null | undefined {
  if (input.description === undefined) return undefined
  const text = input.description?.trim() ?? ''
  if (text.length > 2000) throw new Invalid('description must have at most 2000 characters')
  return text === '' ? null : text
}

/**
 * The admin API's milestone writes' rule: a server administrator (who reads the repository here:
 * NOT_FOUND otherwise), on a repository not bound to an issue host.
 */
async function milestoneRepo (ctx: Ctx, repoId: number, id: string): Promise<void> {
  if (!ctx.readable.has(repoId)) throw new NotFound(`${id} not found`)
  await requireAdministrator(ctx, 'milestones')
  await refuseHostBound(ctx, repoId)
}

/** Sets (or clears) the milestone of each issue, as PATCH /admin/repositories/:id/issues/:n {milestone_number} does. */
async function setIssuesMilestone (ctx: Ctx, targets: Target[], milestone: { repoId: number, number: number } | null) {
  for (const { repo } of targets) await refuseHostBound(ctx, repo.id)
  return await eachIssue(ctx, targets, async ({ issue, repo }) => {
    if (milestone !== null && milestone.repoId !== repo.id) throw new Invalid(`the milestone belongs to repository ${milestone.repoId}, not to the issue's ${repo.id}`)
    await ctx.store.transaction(async (s) => {
      await s.repositories.updateIssue(repo.id, issue.number, { milestone_number: milestone?.number ?? null })
    }, [repo.id], [])
  })
}

/**
 * Milestones: the admin API's milestone writes (POST, PATCH, DELETE /admin/repositories/:id/milestones…)
 * by server administrators, audited as there, their start dates (POST /p1/…/milestones/:n/start_date),
 * and an issue's milestone (PATCH /admin/repositories/:id/issues/:n) with write permission.
 */
export const milestoneWrites = {
  async setMilestoneStartDate (_: unknown, { input }: { input: Input & { milestoneId: string, startDate?: string | null } }, ctx: Ctx) {
    mayWrite(ctx)
    const { repoId, number } = milestoneKey(input.milestoneId)
    if (!ctx.readable.has(repoId)) throw new NotFound(`milestone ${input.milestoneId} not found`)
    await ctx.auth.requireAccess(ctx.request, repoId, 'write')
    await ctx.store.milestones.setStartDate(repoId, number, input.startDate ?? null)
    return { ...echo(input), milestone: await milestoneRow(ctx, repoId, number, input.milestoneId) }
  },

  async createMilestone (_: unknown, { input }: { input: Input & MilestoneInput & { repositoryId: string, title: string } }, ctx: Ctx) {
    mayWrite(ctx)
    const repoId = numberKey(input.repositoryId, 'Repository')
    await milestoneRepo(ctx, repoId, `repository ${input.repositoryId}`)
    const title = titleOf(input.title)
    const description = descriptionOf(input) ?? null
    const number = await ctx.store.transaction(async (s) => {
      const next = await s.repositories.nextMilestoneNumber(repoId)
      await s.repositories.createMilestone(repoId, next, title, { description, ...(input.dueOn == null ? {} : { due_on: input.dueOn }) })
      if (input.startDate != null) await s.milestones.setStartDate(repoId, next, input.startDate)
      await recordAudit(s, ctx, 'milestone.created', `repository:${repoId}`, { number: next, title })
      return next
    })
    return { ...echo(input), milestone: await milestoneRow(ctx, repoId, number, input.repositoryId) }
  },

  async updateMilestone (_: unknown, { input }: { input: Input & MilestoneChange }, ctx: Ctx) {
    mayWrite(ctx)
    if (input.milestoneId == null) throw new Invalid('milestoneId is required: updating every milestone of a workspace by title is not offered')
    if (input.updateAllInWorkspaceId != null) throw new Invalid('updateAllInWorkspaceId: updating every milestone of a workspace by title is not offered')
    const { repoId, number } = milestoneKey(input.milestoneId)
    await milestoneRepo(ctx, repoId, `milestone ${input.milestoneId}`)
    const title = input.title == null ? undefined : titleOf(input.title)
    const description = descriptionOf(input)
    await ctx.store.transaction(async (s) => {
      await s.repositories.updateMilestone(repoId, number, {
        ...(title === undefined ? {} : { title }),
        ...(description === undefined ? {} : { description }),
        ...(input.state == null ? {} : { state: stateOf(input.state) }),
        ...(input.dueOn === undefined ? {} : { due_on: input.dueOn })
      })
      if (input.startDate !== undefined) await s.milestones.setStartDate(repoId, number, input.startDate)
      await recordAudit(s, ctx, 'milestone.updated', `repository:${repoId}`, { number, ...(title === undefined ? {} : { title }), ...(input.state == null ? {} : { state: input.state }) })
    })
    return { ...echo(input), milestone: await milestoneRow(ctx, repoId, number, input.milestoneId) }
  },

  async deleteMilestone (_: unknown, { input }: { input: Input & { milestoneId: string, updateAllInWorkspaceId?: string | null } }, ctx: Ctx) {
    mayWrite(ctx)
    if (input.updateAllInWorkspaceId != null) throw new Invalid('updateAllInWorkspaceId: deleting every milestone of a workspace by title is not offered')
    const { repoId, number } = milestoneKey(input.milestoneId)
    await milestoneRepo(ctx, repoId, `milestone ${input.milestoneId}`)
    const milestone = await milestoneRow(ctx, repoId, number, input.milestoneId)
    await ctx.store.transaction(async (s) => {
      await s.repositories.deleteMilestone(repoId, number)
      await recordAudit(s, ctx, 'milestone.deleted', `repository:${repoId}`, { number, title: milestone.title })
    })
    return { ...echo(input), milestone }
  },

  async addMilestoneToIssues (_: unknown, { input }: { input: Input & { issueIds: string[], milestoneId: string } }, ctx: Ctx) {
    mayWrite(ctx)
    const { repoId, number } = milestoneKey(input.milestoneId)
    if (!ctx.readable.has(repoId)) throw new NotFound(`milestone ${input.milestoneId} not found`)
    await milestoneRow(ctx, repoId, number, input.milestoneId)
    const targets = await writableIssues(ctx, input.issueIds)
    return { ...echo(input), ...await setIssuesMilestone(ctx, targets, { repoId, number }) }
  },

  async removeMilestoneToIssues (_: unknown, { input }: { input: Input & { issueIds: string[] } }, ctx: Ctx) {
    const targets = await writableIssues(ctx, input.issueIds)
    return { ...echo(input), ...await setIssuesMilestone(ctx, targets, null) }
  }
}
