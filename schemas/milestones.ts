import { Type, PositiveInt } from './common.js'

export const MilestoneParams = Type.Object({ repo_id: PositiveInt, milestone_number: PositiveInt })

export const StartDate = Type.Object({
  start_date: Type.String({ format: 'date-time', description: 'ISO 8601 date-time, e.g. 2026-11-13T01:38:56.842Z' })
})
