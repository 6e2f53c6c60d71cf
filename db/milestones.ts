import { NotFound } from './errors.js'
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

    /** Stores the date normalized to UTC with milliseconds; returns what was stored. */
    async setStartDate (repoId: number, number: number, startDate: string): Promise<string> {
      const normalized = new Date(startDate).toISOString()
      return await writeTransaction(db, async (trx) => {
        const row = await trx.selectFrom('milestones').select('due_on').where('repo_id', '=', repoId).where('number', '=', number).executeTakeFirst()
        if (row === undefined) throw notFound(repoId, number)
        // The due date comes from the host and may move later: the burndown checks the span again.
        if (row.due_on != null) checkReportSpan(Date.parse(normalized), Date.parse(row.due_on), `milestone ${number} (start_date to its due date)`)
        await trx.updateTable('milestones').set({ start_date: normalized }).where('repo_id', '=', repoId).where('number', '=', number).execute()
        return normalized
      })
    }
  }
}

export type MilestonesRepository = ReturnType<typeof createMilestonesRepository>
