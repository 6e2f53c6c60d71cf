import { httpErrors } from '@fastify/sensible'
import type { Db } from './connection.js'

export interface IssueRef { repo_id: number, issue_number: number }
export interface ResolvedIssue { id: number, repo_id: number, number: number, estimate: number | null, is_epic: number }

export const refKey = (ref: IssueRef): string => `${ref.repo_id}#${ref.issue_number}`
export const toRef = (issue: { repo_id: number, number: number }): IssueRef => ({ repo_id: issue.repo_id, issue_number: issue.number })

/** Turns issue references from request bodies into issues, refusing unknown or unreadable ones. */
export function createIssueRefs (db: Db) {
  const byRef = db.prepare<[number, number], ResolvedIssue>(
    'SELECT id, repo_id, number, estimate, is_epic FROM issues WHERE repo_id = ? AND number = ?')

  return {
    /**
     * Resolves every reference (duplicates collapse). Issues that do not exist and issues in
     * repositories the caller cannot read are refused alike, with a 400 that lists them.
     */
    resolve (refs: IssueRef[], canRead: (repoId: number) => boolean, what = 'issues'): ResolvedIssue[] {
      const seen = new Map<string, ResolvedIssue>()
      const missing: string[] = []
      for (const ref of refs) {
        const key = refKey(ref)
        if (seen.has(key) || missing.includes(key)) continue
        const issue = canRead(ref.repo_id) ? byRef.get(ref.repo_id, ref.issue_number) : undefined
        if (issue === undefined) missing.push(key)
        else seen.set(key, issue)
      }
      if (missing.length > 0) throw httpErrors.badRequest(`${what} not found (repo_id#issue_number): ${missing.join(', ')}`)
      return [...seen.values()]
    }
  }
}

/** Refuses issues that a request both adds and removes (which one would win is not obvious). */
export function refuseOverlap (add: ResolvedIssue[], remove: ResolvedIssue[]): void {
  const both = add.filter((a) => remove.some((r) => r.id === a.id))
  if (both.length > 0) {
    throw httpErrors.badRequest(`issues listed in both add_issues and remove_issues: ${both.map((i) => refKey(toRef(i))).join(', ')}`)
  }
}
