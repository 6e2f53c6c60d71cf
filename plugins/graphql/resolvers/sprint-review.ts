import { createReportsRepository, type SprintReview } from '../../../db/reports.js'
import type { GraphContext } from '../context.js'
import { listConnection, type PageArgs } from '../connections.js'
import { encodeId } from '../ids.js'
import { smallIssueConnection } from './issue-connections.js'
import type { SprintObject } from './objects.js'

type Ctx = GraphContext
const iso = (text: string | number) => new Date(text).toISOString()
const day = (text: string) => text.slice(0, 10)
const points = (n: number) => `${n} point${n === 1 ? '' : 's'}`
const issues = (n: number) => `${n} issue${n === 1 ? '' : 's'}`

interface ReviewObject { sprint: SprintObject, review: SprintReview, at: number }

/** The review's text: what the REST sprint review (GET /p2/sprints/:id/review) counts, as Markdown. */
function bodyOf ({ sprint, review }: ReviewObject): string {
  const sum = (list: Array<{ points: number }>) => list.reduce((s, x) => s + x.points, 0)
  return [
    `**${sprint.name}** (${day(sprint.starts_at)} to ${day(sprint.ends_at)})`,
    '',
    `- Committed at the start: ${issues(review.committed.issues)}, ${points(review.committed.points)}`,
    `- Completed: ${issues(review.completed.issues)}, ${points(review.completed.points)}`,
    `- Added during the sprint: ${issues(review.added.length)}, ${points(sum(review.added))}`,
    `- Removed during the sprint: ${issues(review.removed.length)}, ${points(sum(review.removed))}`,
    `- Carried over to the next sprint: ${issues(review.carried_over.length)}, ${points(sum(review.carried_over))}`,
    `- Average of the last ${review.velocity.sprints.length} closed sprints: ${points(review.velocity.average_points)}, ${issues(review.velocity.average_issues)}`
  ].join('\n')
}

/**
 * Sprint.sprintReview: the hosted service's review is a text its AI writes on request; this server
 * writes none and keeps none, so the review here is made from the stored sprint data each time it
 * is read (the REST sprint review's counts), for a sprint that has started. Its features and
 * review meetings, which only the hosted service's generator makes, are empty lists.
 */
export const sprintReviewResolvers = {
  Sprint: {
    sprintReview: async (s: SprintObject, _: unknown, ctx: Ctx): Promise<ReviewObject | null> => {
      if (s.state === 'future') return null
      const at = ctx.now()
      const row = await ctx.store.sprints.row(s.id)
      const review = await createReportsRepository(ctx.store.db).review(row, s, (repoId) => ctx.readable.has(repoId), at)
      return { sprint: s, review, at }
    }
  },
  SprintReview: {
    id: (r: ReviewObject) => encodeId('SprintReview', r.sprint.id),
    title: (r: ReviewObject) => `Review of ${r.sprint.name}`,
    body: bodyOf,
    state: (r: ReviewObject) => r.sprint.state === 'closed' ? 'COMPLETED' : 'IN_PROGRESS',
    language: () => 'en',
    lastGeneratedAt: () => null,
    manuallyEdited: () => false,
    initiatedBy: () => null,
    createdAt: (r: ReviewObject) => iso(r.sprint.starts_at),
    updatedAt: (r: ReviewObject) => iso(Math.min(Date.parse(r.sprint.ends_at), r.at)),
    sprint: (r: ReviewObject) => r.sprint,
    sprintReviewFeatures: (_: ReviewObject, args: PageArgs) => listConnection([], () => '', args),
    sprintReviewSchedules: (_: ReviewObject, args: PageArgs) => listConnection([], () => '', args),
    /** The sprint's issues closed after it ended: its review, made at the end, does not count them. */
    issuesClosedAfterSprintReview: async (r: ReviewObject, args: PageArgs, ctx: Ctx) => {
      if (r.sprint.state !== 'closed') return smallIssueConnection([], args)
      const rows = await ctx.reads.sprintIssuesClosedAfter(r.sprint.id, r.sprint.ends_at)
      return smallIssueConnection(rows.filter((i) => ctx.readable.has(i.repo_id)), args)
    }
  }
}
