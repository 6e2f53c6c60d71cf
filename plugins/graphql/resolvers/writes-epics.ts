import { DomainError, Invalid, NotFound } from '../../../db/errors.js'
import type { IssueNode } from '../../../db/graph-reads.js'
import { encodeId, numberKey, repoOfGhId } from '../ids.js'
import { issueObject } from './objects.js'
import { echo, mayWrite, MAX_BATCH, writableIssue, writableIssueKey, type Ctx, type Input } from './write-access.js'

export interface EpicIssue {
  repositoryId?: string | null
  repositoryGhId?: number | null
  title: string
  body?: string | null
  labels?: string[] | null
  assignees?: string[] | null
}
export interface EpicsIssues { issueIds: string[], epicIds: string[] }

/** A legacy epic as Epic objects are (reads.ts): the issue it is. */
const epicObject = (row: IssueNode) => ({ __typename: 'Epic' as const, issue: issueObject(row) })

/** The epics asked for, each with write access to its repository (as update_issues), and the issues, each readable. */
async function epicsAndIssues (ctx: Ctx, input: EpicsIssues) {
  mayWrite(ctx)
  const epicIds = [...new Set(input.epicIds)]
  const issueIds = [...new Set(input.issueIds)]
  if (epicIds.length > 20 || issueIds.length > MAX_BATCH) throw new Invalid(`give at most 20 epics and ${MAX_BATCH} issues`)
  const epics = []
  for (const id of epicIds) {
    const { issue, repo } = await writableIssueKey(ctx, numberKey(id, 'Epic'), id)
    if (issue.is_epic !== 1) throw new NotFound(`epic ${id} not found`)
    epics.push({ issue, repo })
  }
  const children = await ctx.reads.issuesByIds(issueIds.map((id) => numberKey(id, 'Issue')))
  if (children.length !== issueIds.length || children.some((c) => !ctx.readable.has(c.repo_id))) throw new NotFound('an issue of issueIds was not found')
  return { epics, refs: children.map((c) => ({ repo_id: c.repo_id, issue_number: c.number })) }
}

/** The issues behind the ids, each readable (NOT_FOUND for the whole batch otherwise). */
async function readableIssues (ctx: Ctx, ids: string[], field: string): Promise<IssueNode[]> {
  const unique = [...new Set(ids)]
  if (unique.length > MAX_BATCH) throw new Invalid(`${field} must not list more than ${MAX_BATCH} issues`)
  const rows = new Map((await ctx.reads.issuesByIds(unique.map((id) => numberKey(id, 'Issue')))).map((r) => [r.id, r]))
  return unique.map((id) => {
    const row = rows.get(numberKey(id, 'Issue'))
    if (row === undefined || !ctx.readable.has(row.repo_id)) throw new NotFound(`issue ${id} of ${field} not found`)
    return row
  })
}

const refOf = (issue: IssueNode) => ({ repo_id: issue.repo_id, issue_number: issue.number })

async function epicsAfter (ctx: Ctx, ids: number[]) {
  const rows = new Map((await ctx.reads.issuesByIds(ids)).map((r) => [r.id, r]))
  return ids.map((id) => epicObject(rows.get(id)!))
}

/** Legacy (issue-backed) epics: the operations of POST …/convert_to_epic and …/epics/:n/update_issues. */
export const epicWrites = {
  async createEpic (_: unknown, { input }: { input: Input & { issue: EpicIssue } }, ctx: Ctx) {
    mayWrite(ctx)
    const wanted = input.issue
    const repoId = (wanted.repositoryGhId == null ? undefined : repoOfGhId(wanted.repositoryGhId)) ?? (wanted.repositoryId == null ? undefined : numberKey(wanted.repositoryId, 'Repository'))
    if (repoId === undefined) throw new Invalid('issue: give repositoryId or repositoryGhId')
    if (!ctx.readable.has(repoId)) throw new NotFound(`repository ${repoId} not found`)
    const repo = await ctx.auth.requireAccess(ctx.request, repoId, 'write')
    const title = wanted.title.trim()
    if (title.length === 0 || title.length > 256) throw new Invalid('issue.title must have 1 to 256 characters')
    const number = await ctx.hostIssues.create(ctx.user, repo, {
      title,
      ...(wanted.body == null ? {} : { body: wanted.body }),
      ...(wanted.labels == null ? {} : { labels: [...new Set(wanted.labels)] }),
      ...(wanted.assignees == null ? {} : { assignees: [...new Set(wanted.assignees)] })
    })
    await ctx.store.epics.convertToEpic(repo.id, number, [], (r) => ctx.readable.has(r), ctx.user)
    const row = await ctx.reads.issueByNumber(repo.id, number)
    if (row === undefined) throw new NotFound(`issue ${number} not found`)
    return { ...echo(input), epic: epicObject(row) }
  },

  async createEpicFromIssue (_: unknown, { input }: { input: Input & { issueId: string, epicChildIds?: string[] | null } }, ctx: Ctx) {
    mayWrite(ctx)
    const { issue, repo } = await writableIssue(ctx, input.issueId)
    const children = await readableIssues(ctx, input.epicChildIds ?? [], 'epicChildIds')
    await ctx.store.epics.convertToEpic(repo.id, issue.number, children.map(refOf), (r) => ctx.readable.has(r), ctx.user)
    return { ...echo(input), epic: (await epicsAfter(ctx, [issue.id]))[0] }
  },

  /**
   * A child's parent issue is the epic holding it (Issue.parentIssue). The parent becomes an epic
   * first when it is not one (as convert_to_epic). A child already in another readable epic is
   * refused unless replaceParent, which takes it out of those (write permission on each) first.
   * A child refused (a loop, a permission) is reported in failedIssues; the others go on.
   */
  async addSubIssues (_: unknown, { input }: { input: Input & { parentId: string, childIssueIds: string[], replaceParent?: boolean | null } }, ctx: Ctx) {
    mayWrite(ctx)
    const { issue: parent, repo } = await writableIssue(ctx, input.parentId)
    const children = await readableIssues(ctx, input.childIssueIds, 'childIssueIds')
    const canRead = (r: number) => ctx.readable.has(r)
    if (parent.is_epic !== 1) await ctx.store.epics.convertToEpic(repo.id, parent.number, [], canRead, ctx.user)
    const links = await ctx.reads.epicsOf(children.map((c) => c.id))
    const others = new Map((await ctx.reads.issuesByIds([...new Set(links.map((l) => l.epic_id))])).filter((e) => canRead(e.repo_id)).map((e) => [e.id, e]))
    const failed: IssueNode[] = []
    const errors: Record<string, string> = {}
    for (const child of children) {
      try {
        const held = links.filter((l) => l.issue_id === child.id && l.epic_id !== parent.id).map((l) => others.get(l.epic_id)).filter((e) => e !== undefined)
        if (held.length > 0 && input.replaceParent !== true) throw new Invalid(`issue ${child.number} of repository ${child.repo_id} has a parent issue already; pass replaceParent: true to move it`)
        for (const old of held) await ctx.auth.requireAccess(ctx.request, old.repo_id, 'write')
        // Out of the old parents and into the new one together: a refused add (a loop) leaves it where it was.
        await ctx.store.transaction(async (tx) => {
          for (const old of held) await tx.epics.updateIssues(old.repo_id, old.number, [refOf(child)], [], canRead, ctx.user)
          await tx.epics.updateIssues(repo.id, parent.number, [], [refOf(child)], canRead, ctx.user)
        }, [repo.id], [])
      } catch (err) {
        if (!(err instanceof DomainError)) throw err
        failed.push(child)
        errors[encodeId('Issue', child.id)] = err.message
      }
    }
    const rows = failed.length === 0 ? [] : await ctx.reads.issuesByIds(failed.map((i) => i.id))
    return { ...echo(input), successCount: children.length - failed.length, failedIssues: rows.map(issueObject), githubErrors: errors }
  },

  async addIssuesToEpics (_: unknown, { input }: { input: Input & EpicsIssues }, ctx: Ctx) {
    const { epics, refs } = await epicsAndIssues(ctx, input)
    for (const { issue } of epics) await ctx.store.epics.updateIssues(issue.repo_id, issue.number, [], refs, (r) => ctx.readable.has(r), ctx.user)
    return { ...echo(input), epics: await epicsAfter(ctx, epics.map((e) => e.issue.id)) }
  },

  async removeIssuesFromEpics (_: unknown, { input }: { input: Input & EpicsIssues }, ctx: Ctx) {
    const { epics, refs } = await epicsAndIssues(ctx, input)
    for (const { issue } of epics) await ctx.store.epics.updateIssues(issue.repo_id, issue.number, refs, [], (r) => ctx.readable.has(r), ctx.user)
    return { ...echo(input), epics: await epicsAfter(ctx, epics.map((e) => e.issue.id)) }
  }
}
