import { DomainError, Invalid, NotFound } from '../../../db/errors.js'
import type { IssueNode } from '../../../db/graph-reads.js'
import type { Repository } from '../../../db/repositories.js'
import type { GraphContext } from '../context.js'
import { encodeId, numberKey } from '../ids.js'
import { issueObject } from './objects.js'

export type Ctx = GraphContext
export interface Input { clientMutationId?: string | null }
export interface Target { issue: IssueNode, repo: Repository }

/** The most issues one batch mutation takes, as the REST API's bulk endpoints. */
export const MAX_BATCH = 100

export const echo = (input: Input) => ({ clientMutationId: input.clientMutationId ?? null })

/** A write's first step: the credential may write at all (not a read token), else FORBIDDEN. */
export function mayWrite (ctx: Ctx): void {
  const refusal = ctx.auth.changeRefusal(ctx.request)
  if (refusal !== undefined) throw refusal
}

/** The issue behind an id, with write access to its repository (NOT_FOUND without read access, FORBIDDEN without write). */
export async function writableIssue (ctx: Ctx, id: string): Promise<Target> {
  return await writableIssueKey(ctx, numberKey(id, 'Issue'), id)
}

/** The same by the issue's key (an Epic id names its issue's). */
export async function writableIssueKey (ctx: Ctx, key: number, id: string): Promise<Target> {
  const [issue] = await ctx.reads.issuesByIds([key])
  if (issue === undefined || !ctx.readable.has(issue.repo_id)) throw new NotFound(`issue ${id} not found`)
  return { issue, repo: await ctx.auth.requireAccess(ctx.request, issue.repo_id, 'write') }
}

/** Every issue of a batch, each checked before any is changed: one refusal refuses the whole batch. */
export async function writableIssues (ctx: Ctx, ids: string[]): Promise<Target[]> {
  mayWrite(ctx)
  const unique = [...new Set(ids)]
  if (unique.length > MAX_BATCH) throw new Invalid(`issueIds must not list more than ${MAX_BATCH} issues`)
  const targets = []
  for (const id of unique) targets.push(await writableIssue(ctx, id))
  return targets
}

export async function reread (ctx: Ctx, id: number) {
  const [row] = await ctx.reads.issuesByIds([id])
  if (row === undefined) throw new NotFound(`issue ${id} not found`)
  return issueObject(row)
}

/**
 * Runs `change` on each issue in turn. A domain refusal of one issue (the issue host refusing
 * it, a conflict) is reported in `failedIssues` with its message under the issue's id in
 * `githubErrors`; the others go on.
 */
export async function eachIssue (ctx: Ctx, targets: Target[], change: (target: Target) => Promise<void>) {
  const failed: IssueNode[] = []
  const errors: Record<string, string> = {}
  for (const target of targets) {
    try {
      await change(target)
    } catch (err) {
      if (!(err instanceof DomainError)) throw err
      failed.push(target.issue)
      errors[encodeId('Issue', target.issue.id)] = err.message
    }
  }
  const rows = failed.length === 0 ? [] : await ctx.reads.issuesByIds(failed.map((i) => i.id))
  return { successCount: targets.length - failed.length, failedIssues: rows.map(issueObject), githubErrors: errors }
}
