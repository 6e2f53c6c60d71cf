import { createReportsRepository } from '../../../db/reports.js'
import type { IssueNode } from '../../../db/graph-reads.js'
import type { GraphContext } from '../context.js'
import { listConnection, type PageArgs } from '../connections.js'
import { encodeId } from '../ids.js'
import { issueObject, type IssueObject, type SprintObject, type WorkspaceObject } from './objects.js'
import { sprintsOf } from './reads.js'
import { configObject } from './writes-sprints.js'

type Ctx = GraphContext
const iso = (text: string) => new Date(text).toISOString()

/** The mean completed points of the last `count` sprints of `ended` (newest first), and how many there were. */
function meanOf (ended: SprintObject[], count: number) {
  const last = ended.slice(0, count)
  return last.length === 0 ? undefined : { velocity: last.reduce((sum, s) => sum + s.points_closed, 0) / last.length, sprintsCount: last.length }
}

/** Planning reads beside reads.ts: sprint plan, velocity, scope changes and issue timelines, each what a REST read gives. */
export const planningReads = {
  Workspace: {
    sprintConfig: async (w: WorkspaceObject, _: unknown, ctx: Ctx) => {
      const config = await ctx.store.sprints.configOf(w.id)
      return config === undefined ? null : configObject(w.id, 'Sprint', config)
    },
    averageSprintVelocityWithDiff: async (w: WorkspaceObject, args: { skipDiff?: boolean | null }, ctx: Ctx) => {
      const ended = (await sprintsOf(ctx, w.id)).filter((s) => s.state === 'closed').sort((a, b) => Date.parse(b.ends_at) - Date.parse(a.ends_at))
      const now = meanOf(ended, 3)
      if (now === undefined) return null
      const before = args.skipDiff === true ? undefined : meanOf(ended.slice(1), 3)
      return { ...now, difference: before === undefined ? null : now.velocity - before.velocity }
    }
  },
  Sprint: {
    scopeChange: async (s: SprintObject, args: PageArgs, ctx: Ctx) => {
      const canRead = (repoId: number) => ctx.readable.has(repoId)
      const row = await ctx.store.sprints.row(s.id)
      const review = await createReportsRepository(ctx.store.db).review(row, s, canRead, ctx.now())
      const changes = [
        ...review.added.map((c) => ({ ...c, action: 'ISSUE_ADDED' as const })),
        ...review.removed.map((c) => ({ ...c, action: 'ISSUE_REMOVED' as const }))
      ].sort((a, b) => Date.parse(a.at) - Date.parse(b.at))
      const issues = new Map<string, IssueNode>()
      for (const c of changes) {
        const key = `${c.repo_id}#${c.issue_number}`
        if (issues.has(key)) continue
        const issue = await ctx.reads.issueByNumber(c.repo_id, c.issue_number)
        if (issue !== undefined) issues.set(key, issue)
      }
      const nodes = changes.flatMap((c, i) => {
        const issue = issues.get(`${c.repo_id}#${c.issue_number}`)
        return issue === undefined ? [] : [{ key: String(i), action: c.action, effectiveAt: iso(c.at), estimateValue: c.points, issue: issueObject(issue) }]
      })
      return listConnection(nodes, (n) => n.key, args)
    }
  },
  Issue: {
    timelineItems: async (i: IssueObject, args: PageArgs, ctx: Ctx) => {
      // REST lists newest first; the timeline reads oldest first, each event keyed by its place in it.
      const events = (await ctx.store.issues.events(i.repo_id, i.number)).reverse()
      const items = events.map((e, n) => ({
        id: encodeId('TimelineItem', `${i.id}:${n}`),
        createdAt: iso(e.created_at),
        updatedAt: iso(e.created_at),
        ...(e.type === 'estimateIssue'
          ? { key: 'issue.set_estimate', data: { previous_value: e.from_estimate === undefined ? null : String(e.from_estimate.value), current_value: e.to_estimate === undefined ? null : String(e.to_estimate.value) } }
          : { key: 'issue.transfer_pipeline', data: { from_pipeline: e.from_pipeline ?? null, to_pipeline: e.to_pipeline ?? null, workspace_id: e.workspace_id ?? null } })
      }))
      return listConnection(items, (item) => item.id, args)
    }
  }
}
