import { Invalid, NotFound } from './errors.js'
import { checkReportSpan } from './report-span.js'
import { writeTransaction, type Executor } from './engine/transaction.js'

/** Milestone start dates (the milestones themselves come from the admin API or fixtures). */
export function createMilestonesRepository (db: Executor) {
  const notFound = (repoId: number, number: number) => new NotFound(`milestone ${number} not found in repository ${repoId}`)

  return {
    async startDate (repoId: number, number: number): Promise<string> {
      const row = await db.selectFrom('milestones').select('start_date').where('repo_id', '=', repoId).where('number', '=', number).executeTakeFirst()
      if (row === undefined) throw notFound(repoId, number)
      if (row.start_date === null) throw new NotFound(`milestone ${number} in repository ${repoId} has no start date`)
      return row.start_date
    },

    /** Stores the date normalized to UTC with milliseconds (null clears it); returns what was stored. */
    async setStartDate<D extends string | null> (repoId: number, number: number, startDate: D): Promise<D> {
      if (startDate !== null && Number.isNaN(Date.parse(startDate))) throw new Invalid('start_date must be an ISO 8601 date and time')
      const normalized = (startDate === null ? null : new Date(startDate).toISOString()) as D
      return await writeTransaction(db, async (trx) => {
        const row = await trx.selectFrom('milestones').select('due_on').where('repo_id', '=', repoId).where('number', '=', number).executeTakeFirst()
        if (row === undefined) throw notFound(repoId, number)
        // The due date comes from the host and may move later: the burndown checks the span again.
        if (row.due_on != null && normalized !== null) checkReportSpan(Date.parse(normalized), Date.parse(row.due_on), `milestone ${number} (start_date to its due date)`)
        await trx.updateTable('milestones').set({ start_date: normalized }).where('repo_id', '=', repoId).where('number', '=', number).execute()
        return normalized
      })
    }
  }
}

export type MilestonesRepository = ReturnType<typeof createMilestonesRepository>
