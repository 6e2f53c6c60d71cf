import { NotFound } from './errors.js'
import { writeTransaction, type Executor } from './transaction.js'

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
        const result = await trx.updateTable('milestones').set({ start_date: normalized }).where('repo_id', '=', repoId).where('number', '=', number).executeTakeFirst()
        if (Number(result.numUpdatedRows) === 0) throw notFound(repoId, number)
        return normalized
      })
    }
  }
}

export type MilestonesRepository = ReturnType<typeof createMilestonesRepository>
