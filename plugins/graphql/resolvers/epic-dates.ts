import { Invalid, NotFound } from '../../../db/errors.js'
import type { EpicDates } from '../../../db/epic-dates.js'
import { numberKey } from '../ids.js'
import { issueObject, type IssueObject } from './objects.js'
import { echo, mayWrite, writableIssueKey, type Ctx, type Input } from './write-access.js'
import type { Query } from '../batched-fields.js'

interface EpicObject { issue: IssueObject }
export interface EpicDatesInput { epicId: string, roadmapId?: string | null, startOn?: string | null, endOn?: string | null }

/** Legacy epics' (issues') start and end dates: set by updateEpicDates, read as Epic.startOn and endOn. */
export const epicDateWrites = {
  async updateEpicDates (_: unknown, { input }: { input: Input & EpicDatesInput }, ctx: Ctx) {
    mayWrite(ctx)
    if (input.roadmapId != null) throw new Invalid('roadmapId is not offered: there are no roadmaps here')
    const { issue } = await writableIssueKey(ctx, numberKey(input.epicId, 'Epic'), input.epicId)
    if (issue.is_epic !== 1) throw new NotFound(`epic ${input.epicId} not found`)
    const change: Partial<EpicDates> = {}
    if (input.startOn !== undefined) change.start_on = input.startOn
    if (input.endOn !== undefined) change.end_on = input.endOn
    await ctx.store.epicDates.set(issue.id, change)
    const [row] = await ctx.reads.issuesByIds([issue.id])
    return { ...echo(input), epic: { __typename: 'Epic' as const, issue: issueObject(row ?? issue) } }
  }
}

const datesOf = async (queries: Array<Query<EpicObject>>, ctx: Ctx) => await ctx.store.epicDates.of(queries.map((q) => q.obj.issue.id))

export const epicDateLoaders = {
  Epic: {
    async startOn (queries: Array<Query<EpicObject>>, ctx: Ctx) {
      const dates = await datesOf(queries, ctx)
      return queries.map((q) => dates.get(q.obj.issue.id)?.start_on ?? null)
    },
    async endOn (queries: Array<Query<EpicObject>>, ctx: Ctx) {
      const dates = await datesOf(queries, ctx)
      return queries.map((q) => dates.get(q.obj.issue.id)?.end_on ?? null)
    }
  }
}
