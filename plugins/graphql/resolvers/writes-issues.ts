import { Invalid, NotFound } from '../../../db/errors.js'
import { numberKey } from '../ids.js'
import { echo, eachIssue, mayWrite, reread, writableIssue, writableIssues, type Ctx, type Input } from './write-access.js'
import { pipelineFor } from './visibility.js'

type IssueState = 'OPEN' | 'CLOSED'
export interface NewIssue { repositoryId: string, title: string, body?: string | null, labels?: string[] | null, assignees?: string[] | null }
export interface IssueChange { issueId: string, title?: string | null, body?: string | null, state?: IssueState | null }
const stateOf = (state: IssueState) => state === 'OPEN' ? 'open' as const : 'closed' as const

/** Issues opened, edited, closed and reopened: the operations of the REST API's issue writes (services/host-issues.ts). */
export const issueWrites = {
  async closeIssues (_: unknown, { input }: { input: Input & { issueIds: string[] } }, ctx: Ctx) {
    const targets = await writableIssues(ctx, input.issueIds)
    return { ...echo(input), ...await eachIssue(ctx, targets, async ({ issue, repo }) => await ctx.hostIssues.setState(repo, issue.number, 'closed')) }
  },

  async reopenIssues (_: unknown, { input }: { input: Input & { issueIds: string[], pipelineId: string, position: 'START' | 'END' } }, ctx: Ctx) {
    const targets = await writableIssues(ctx, input.issueIds)
    const { pipeline } = await pipelineFor(ctx, input.pipelineId)
    const landing = { user: ctx.user, pipelineId: pipeline.id, position: input.position === 'START' ? 'top' as const : 'bottom' as const }
    return { ...echo(input), ...await eachIssue(ctx, targets, async ({ issue, repo }) => await ctx.hostIssues.setState(repo, issue.number, 'open', landing)) }
  },

  async createIssue (_: unknown, { input }: { input: Input & NewIssue }, ctx: Ctx) {
    mayWrite(ctx)
    const repoId = numberKey(input.repositoryId, 'Repository')
    if (!ctx.readable.has(repoId)) throw new NotFound(`repository ${input.repositoryId} not found`)
    const repo = await ctx.auth.requireAccess(ctx.request, repoId, 'write')
    const title = input.title.trim()
    if (title.length === 0 || title.length > 256) throw new Invalid('title must have 1 to 256 characters')
    const number = await ctx.hostIssues.create(ctx.user, repo, {
      title,
      ...(input.body == null ? {} : { body: input.body }),
      ...(input.labels == null ? {} : { labels: [...new Set(input.labels)] }),
      ...(input.assignees == null ? {} : { assignees: [...new Set(input.assignees)] })
    })
    const created = await ctx.reads.issueByNumber(repo.id, number)
    if (created === undefined) throw new NotFound(`issue ${number} not found`)
    return { ...echo(input), issue: await reread(ctx, created.id) }
  },

  async updateIssue (_: unknown, { input }: { input: Input & IssueChange }, ctx: Ctx) {
    mayWrite(ctx)
    const { issue, repo } = await writableIssue(ctx, input.issueId)
    const title = input.title?.trim()
    if (title != null && (title.length === 0 || title.length > 256)) throw new Invalid('title must have 1 to 256 characters')
    if (title != null || input.body != null) {
      await ctx.hostIssues.edit(repo, issue.number, { ...(title == null ? {} : { title }), ...(input.body == null ? {} : { body: input.body }) })
    }
    if (input.state != null) await ctx.hostIssues.setState(repo, issue.number, stateOf(input.state))
    return { ...echo(input), issue: await reread(ctx, issue.id) }
  }
}
