import type { IssueRef } from '../schemas/common.js'
import { Invalid } from './errors.js'
import type { Executor } from './engine/transaction.js'

export type { IssueRef }
export interface ResolvedIssue { id: number, repo_id: number, number: number, estimate: number | null, is_epic: number }

export const refKey = (ref: IssueRef): string => `${ref.repo_id}#${ref.issue_number}`
export const toRef = (issue: { repo_id: number, number: number }): IssueRef => ({ repo_id: Number(issue.repo_id), issue_number: Number(issue.number) })

/**
 * Resolves issue references from a request body (duplicates collapse). Issues that do not exist
 * and issues in repositories the caller cannot read are refused alike, with a 400 that lists them.
 */
export async function resolveRefs (db: Executor, refs: IssueRef[], canRead: (repoId: number) => boolean, what = 'issues'): Promise<ResolvedIssue[]> {
  const wanted = new Map<string, IssueRef>()
  for (const ref of refs) if (!wanted.has(refKey(ref))) wanted.set(refKey(ref), ref)
  const readable = [...wanted.values()].filter((ref) => canRead(ref.repo_id))
  const found = new Map<string, ResolvedIssue>()
  if (readable.length > 0) {
    const rows = await db.selectFrom('issues').select(['id', 'repo_id', 'number', 'estimate', 'is_epic'])
      .where((eb) => eb.or(readable.map((ref) => eb.and([eb('repo_id', '=', ref.repo_id), eb('number', '=', ref.issue_number)]))))
      .execute()
    for (const row of rows) found.set(refKey(toRef(row)), row)
  }
  const missing = [...wanted.keys()].filter((key) => !found.has(key))
  if (missing.length > 0) throw new Invalid(`${what} not found (repo_id#issue_number): ${missing.join(', ')}`)
  return [...wanted.keys()].map((key) => found.get(key)!)
}

/** Refuses issues that a request both adds and removes (which one would win is not obvious). */
export function refuseOverlap (add: ResolvedIssue[], remove: ResolvedIssue[]): void {
  const both = add.filter((a) => remove.some((r) => r.id === a.id))
  if (both.length > 0) {
    throw new Invalid(`issues listed in both add_issues and remove_issues: ${both.map((i) => refKey(toRef(i))).join(', ')}`)
  }
}
