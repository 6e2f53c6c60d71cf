import { Invalid, NotFound } from './errors.js'
import { isCalendarDate } from './zoned-time.js'
import { writeTransaction, type Executor } from './engine/transaction.js'

export interface EpicDates { start_on: string | null, end_on: string | null }

/**
 * Start and end dates of legacy epics (issues that are epics): the REST API has none, the hosted
 * service's GraphQL API sets them with updateEpicDates. YYYY-MM-DD; a start after the end is refused.
 */
export function createEpicDatesRepository (db: Executor) {
  return {
    /** The dates of the epics given that have any. */
    async of (issueIds: number[]): Promise<Map<number, EpicDates>> {
      if (issueIds.length === 0) return new Map()
      const rows = await db.selectFrom('epic_dates').select(['issue_id', 'start_on', 'end_on']).where('issue_id', 'in', [...new Set(issueIds)]).execute()
      return new Map(rows.map((r) => [Number(r.issue_id), { start_on: r.start_on, end_on: r.end_on }]))
    },

    /** Changes what `change` names (null clears); answers the dates after. */
    async set (issueId: number, change: Partial<EpicDates>): Promise<EpicDates> {
      for (const [field, value] of [['startOn', change.start_on], ['endOn', change.end_on]] as const) {
        if (value != null && !isCalendarDate(value)) throw new Invalid(`${field} must be a YYYY-MM-DD date`)
      }
      return await writeTransaction(db, async (trx) => {
        const issue = await trx.selectFrom('issues').select('is_epic').where('id', '=', issueId).executeTakeFirst()
        if (issue === undefined || Number(issue.is_epic) !== 1) throw new NotFound(`epic ${issueId} not found`)
        const before = await trx.selectFrom('epic_dates').select(['start_on', 'end_on']).where('issue_id', '=', issueId).executeTakeFirst()
        const after = {
          start_on: change.start_on === undefined ? before?.start_on ?? null : change.start_on,
          end_on: change.end_on === undefined ? before?.end_on ?? null : change.end_on
        }
        if (after.start_on !== null && after.end_on !== null && after.start_on > after.end_on) throw new Invalid('startOn must not be after endOn')
        await trx.insertInto('epic_dates').values({ issue_id: issueId, ...after })
          .onConflict((oc) => oc.column('issue_id').doUpdateSet(after)).execute()
        return after
      })
    }
  }
}

export type EpicDatesRepository = ReturnType<typeof createEpicDatesRepository>
