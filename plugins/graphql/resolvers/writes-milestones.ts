import { NotFound } from '../../../db/errors.js'
import { milestoneKey } from '../ids.js'
import { echo, mayWrite, type Ctx, type Input } from './write-access.js'

/** Milestones: the operation of POST /p1/repositories/:id/milestones/:n/start_date. */
export const milestoneWrites = {
  async setMilestoneStartDate (_: unknown, { input }: { input: Input & { milestoneId: string, startDate?: string | null } }, ctx: Ctx) {
    mayWrite(ctx)
    const { repoId, number } = milestoneKey(input.milestoneId)
    if (!ctx.readable.has(repoId)) throw new NotFound(`milestone ${input.milestoneId} not found`)
    await ctx.auth.requireAccess(ctx.request, repoId, 'write')
    await ctx.store.milestones.setStartDate(repoId, number, input.startDate ?? null)
    const [milestone] = await ctx.reads.milestonesOf([{ repo_id: repoId, number }])
    if (milestone === undefined) throw new NotFound(`milestone ${input.milestoneId} not found`)
    return { ...echo(input), milestone }
  }
}
