import { NotFound } from '../../../db/errors.js'
import type { IssueNode } from '../../../db/graph-reads.js'
import type { PrConnection } from '../../../db/pr-connections.js'
import type { PageArgs } from '../connections.js'
import { numberKey } from '../ids.js'
import { smallIssueConnection } from './issue-connections.js'
import type { IssueObject } from './objects.js'
import { echo, mayWrite, reread, writableIssue, type Ctx, type Input } from './write-access.js'
import type { Query } from '../batched-fields.js'

type Ends = Input & { issueId: string, pullRequestId: string }

/** Write on the issue's repository, read on the pull request's (NOT_FOUND without, as for one that does not exist). */
async function endsOf (ctx: Ctx, input: Ends): Promise<{ issueId: number, pullRequestId: number }> {
  mayWrite(ctx)
  const { issue } = await writableIssue(ctx, input.issueId)
  const [pr] = await ctx.reads.issuesByIds([numberKey(input.pullRequestId, 'Issue')])
  if (pr === undefined || !ctx.readable.has(pr.repo_id)) throw new NotFound(`pull request ${input.pullRequestId} not found`)
  return { issueId: issue.id, pullRequestId: pr.id }
}

const payload = async (ctx: Ctx, input: Ends, ends: { issueId: number, pullRequestId: number }) =>
  ({ ...echo(input), issue: await reread(ctx, ends.issueId), pullRequest: await reread(ctx, ends.pullRequestId) })

export const prConnectionWrites = {
  async createIssuePrConnection (_: unknown, { input }: { input: Ends }, ctx: Ctx) {
    const ends = await endsOf(ctx, input)
    await ctx.store.prConnections.connect(ends.issueId, ends.pullRequestId)
    return await payload(ctx, input, ends)
  },

  async deleteIssuePrConnection (_: unknown, { input }: { input: Ends }, ctx: Ctx) {
    const ends = await endsOf(ctx, input)
    await ctx.store.prConnections.disconnect(ends.issueId, ends.pullRequestId)
    return await payload(ctx, input, ends)
  }
}

/** The other ends of `links` for each query's issue, readable ones only, in the links' order. */
async function otherEnds (ctx: Ctx, queries: Array<Query<IssueObject, PageArgs>>, links: PrConnection[], side: 'issue' | 'pr') {
  const self = (l: PrConnection) => side === 'issue' ? l.issue_id : l.pull_request_id
  const other = (l: PrConnection) => side === 'issue' ? l.pull_request_id : l.issue_id
  const rows = new Map((await ctx.reads.issuesByIds([...new Set(links.map(other))])).map((r) => [r.id, r]))
  return queries.map((q) => {
    const list = links.filter((l) => self(l) === q.obj.id).map((l) => rows.get(other(l)))
      .filter((r): r is IssueNode => r !== undefined && ctx.readable.has(r.repo_id))
    return smallIssueConnection(list, q.params)
  })
}

/** Read for a whole page of issues at once. */
export const prConnectionLoaders = {
  Issue: {
    async connectedPrs (queries: Array<Query<IssueObject, PageArgs>>, ctx: Ctx) {
      return await otherEnds(ctx, queries, await ctx.store.prConnections.ofIssues(queries.map((q) => q.obj.id)), 'issue')
    },
    async connections (queries: Array<Query<IssueObject, PageArgs>>, ctx: Ctx) {
      const prs = queries.filter((q) => q.obj.is_pull_request === 1).map((q) => q.obj.id)
      return await otherEnds(ctx, queries, await ctx.store.prConnections.ofPullRequests(prs), 'pr')
    }
  }
}
