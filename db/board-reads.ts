import type { Static } from '@sinclair/typebox'
import type { ClosedIssue } from '../schemas/board-reads.js'
import type { Repository } from './repositories.js'
import type { Executor } from './engine/transaction.js'
import { CLOSED } from './closed-issues.js'

export type ClosedIssueRow = Omit<Static<typeof ClosedIssue>, 'html_url'>

/** Reads for the board page: repositories by id with their names, a repository's closed issues a page at a time, a sprint's issues. */
export function createBoardReads (db: Executor) {
  return {
    /** The repositories among `ids` that exist, in the order of `ids`. */
    async named (ids: number[]): Promise<Repository[]> {
      if (ids.length === 0) return []
      const rows = await db.selectFrom('repositories').select(['id', 'owner', 'name', 'html_url']).where('id', 'in', ids).execute()
      const byId = new Map(rows.map((r) => [Number(r.id), { ...r, id: Number(r.id) }]))
      return ids.flatMap((id) => byId.get(id) ?? [])
    },

    /** The issues of a sprint (in it now, or at its end for a sprint that ended), by repository and number. */
    async sprintIssues (sprintId: string): Promise<Array<{ repo_id: number, issue_number: number }>> {
      const rows = await db.selectFrom('sprint_issues as si').innerJoin('issues as i', 'i.id', 'si.issue_id').select(['i.repo_id', 'i.number'])
        .where('si.sprint_id', '=', sprintId).orderBy('i.repo_id').orderBy('i.number').execute()
      return rows.map((r) => ({ repo_id: Number(r.repo_id), issue_number: Number(r.number) }))
    },

    /** How many closed issues the repository holds. */
    async closedCount (repoId: number): Promise<number> {
      const row = await db.selectFrom('issues').select((eb) => eb.fn.countAll().as('n')).where('repo_id', '=', repoId).where('state', '=', CLOSED).executeTakeFirst()
      return Number(row?.n ?? 0)
    },

    /** Closed issues numbered below `before` (all when undefined), highest number first, at most `limit`. */
    async closed (repoId: number, limit: number, before?: number): Promise<ClosedIssueRow[]> {
      let query = db.selectFrom('issues').select(['number', 'title', 'estimate', 'is_epic'])
        .where('repo_id', '=', repoId).where('state', '=', CLOSED)
      if (before !== undefined) query = query.where('number', '<', before)
      const rows = await query.orderBy('number', 'desc').limit(limit).execute()
      return rows.map((r) => {
        const issue: ClosedIssueRow = { issue_number: Number(r.number), title: r.title, is_epic: r.is_epic === 1 }
        if (r.estimate !== null) issue.estimate = { value: r.estimate }
        return issue
      })
    }
  }
}
