import type { IssueNode } from '../../../db/graph-reads.js'
import { listConnection, type PageArgs } from '../connections.js'
import { issueObject, type IssueObject } from './objects.js'
import type { GraphContext as Ctx } from '../context.js'
import type { Query } from '../batched-fields.js'

type ItemArgs = PageArgs & { filters?: { state?: { eq: 'OPEN' | 'CLOSED' } | null } | null }

/**
 * An issue's blockers (`blocking`) or what it blocks (`blocked`), for a whole page of issues in two
 * statements (the dependencies, then the issues at their other ends). Dependencies join issues
 * only (db/dependencies.ts): the union's ZenhubEpic member never shows here.
 */
async function items (queries: Array<Query<IssueObject, ItemArgs>>, ctx: Ctx, side: 'blocking' | 'blocked') {
  const deps = await ctx.reads.dependenciesOf(queries.map((q) => q.obj.id))
  const other = (d: { blocking_id: number, blocked_id: number }) => side === 'blocking' ? d.blocking_id : d.blocked_id
  const self = (d: { blocking_id: number, blocked_id: number }) => side === 'blocking' ? d.blocked_id : d.blocking_id
  const rows = new Map((await ctx.reads.issuesByIds([...new Set(deps.map(other))])).map((r) => [r.id, r]))
  return queries.map((q) => {
    const state = q.params.filters?.state?.eq
    const list = deps.filter((d) => self(d) === q.obj.id).map((d) => rows.get(other(d)))
      .filter((r): r is IssueNode => r !== undefined && ctx.readable.has(r.repo_id))
      .filter((r) => state == null || (r.state === 'closed' ? 'CLOSED' : 'OPEN') === state)
    return listConnection(list.map(issueObject), (i) => String(i.id), q.params)
  })
}

/** Issue.blockingItems and Issue.blockedItems: the reference's union connection, as loaders. */
export const dependencyItemLoaders = {
  Issue: {
    blockingItems: async (queries: Array<Query<IssueObject, ItemArgs>>, ctx: Ctx) => await items(queries, ctx, 'blocking'),
    blockedItems: async (queries: Array<Query<IssueObject, ItemArgs>>, ctx: Ctx) => await items(queries, ctx, 'blocked')
  }
}
