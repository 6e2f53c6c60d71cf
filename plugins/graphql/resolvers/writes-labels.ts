import { Invalid } from '../../../db/errors.js'
import { textKey } from '../ids.js'
import { echo, eachIssue, writableIssues, type Ctx, type Input, type Target } from './write-access.js'

export interface IssueLabels { issueIds: string[], labelIds?: string[] | null, labelInfos?: Array<{ name?: string | null, color?: string | null }> | null }
export interface IssueAssignees { issueIds: string[], assigneeIds: string[] }

/** The label names asked for, by id or by name. */
function labelNames (input: IssueLabels): string[] {
  const names = [...(input.labelIds ?? []).map((id) => textKey(id, 'ZenhubLabel')), ...(input.labelInfos ?? []).map((l) => l.name?.trim() ?? '')]
  if (names.length === 0 || names.some((n) => n.length === 0 || n.length > 50)) throw new Invalid('give labelIds or labelInfos, each label name of 1 to 50 characters')
  return [...new Set(names)]
}

/**
 * Each issue's labels or assignees replaced by a changed set through the operation of
 * PATCH /p1/repositories/:id/issues/:n (the issue host first when the repository is connected).
 */
async function changeEach (ctx: Ctx, targets: Target[], kind: 'labels' | 'assignees', change: (current: string[]) => string[]) {
  return await eachIssue(ctx, targets, async ({ issue, repo }) => {
    const data = (await ctx.store.issues.dataOf(repo.id, [issue.number])).get(issue.number)
    const current = kind === 'labels' ? (data?.labels ?? []).map((l) => l.name) : (data?.assignees ?? []).map((a) => a.login)
    const next = change(current)
    if (next.length === current.length && next.every((n) => current.includes(n))) return
    if (kind === 'assignees' && next.length > 10) throw new Invalid('an issue takes at most 10 assignees')
    await ctx.hostIssues.edit(repo, issue.number, { [kind]: next })
  })
}

/** Labels and assignees added to and removed from many issues. */
export const labelWrites = {
  async addLabelsToIssues (_: unknown, { input }: { input: Input & IssueLabels }, ctx: Ctx) {
    const names = labelNames(input)
    const targets = await writableIssues(ctx, input.issueIds)
    const result = await changeEach(ctx, targets, 'labels', (current) => [...new Set([...current, ...names])])
    return { ...echo(input), ...result, labels: names.map((name) => ({ name, color: input.labelInfos?.find((l) => l.name === name)?.color ?? null })) }
  },
  async removeLabelsFromIssues (_: unknown, { input }: { input: Input & IssueLabels }, ctx: Ctx) {
    const names = labelNames(input)
    const targets = await writableIssues(ctx, input.issueIds)
    const result = await changeEach(ctx, targets, 'labels', (current) => current.filter((n) => !names.includes(n)))
    return { ...echo(input), ...result, labels: names.map((name) => ({ name, color: null })) }
  },
  async addAssigneesToIssues (_: unknown, { input }: { input: Input & IssueAssignees }, ctx: Ctx) {
    const logins = [...new Set(input.assigneeIds.map((id) => textKey(id, 'User')))]
    const targets = await writableIssues(ctx, input.issueIds)
    return { ...echo(input), ...await changeEach(ctx, targets, 'assignees', (current) => [...new Set([...current, ...logins])]), unassignable: [] }
  },
  async removeAssigneesFromIssues (_: unknown, { input }: { input: Input & IssueAssignees }, ctx: Ctx) {
    const logins = new Set(input.assigneeIds.map((id) => textKey(id, 'User')))
    const targets = await writableIssues(ctx, input.issueIds)
    return { ...echo(input), ...await changeEach(ctx, targets, 'assignees', (current) => current.filter((l) => !logins.has(l))) }
  }
}
