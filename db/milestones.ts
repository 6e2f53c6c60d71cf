import { httpErrors } from '@fastify/sensible'
import type { Db } from './connection.js'

/** Milestone start dates (the milestones themselves come from the admin API or fixtures). */
export function createMilestonesRepository (db: Db) {
  const get = db.prepare<[number, number], { start_date: string | null }>(
    'SELECT start_date FROM milestones WHERE repo_id = ? AND number = ?')
  const set = db.prepare<[string, number, number]>('UPDATE milestones SET start_date = ? WHERE repo_id = ? AND number = ?')

  const notFound = (repoId: number, number: number) => httpErrors.notFound(`milestone ${number} not found in repository ${repoId}`)

  return {
    startDate (repoId: number, number: number): string {
      const row = get.get(repoId, number)
      if (row === undefined) throw notFound(repoId, number)
      if (row.start_date === null) throw httpErrors.notFound(`milestone ${number} in repository ${repoId} has no start date`)
      return row.start_date
    },

    /** Stores the date normalized to UTC with milliseconds; returns what was stored. */
    setStartDate (repoId: number, number: number, startDate: string): string {
      const normalized = new Date(startDate).toISOString()
      if (set.run(normalized, repoId, number).changes === 0) throw notFound(repoId, number)
      return normalized
    }
  }
}
