import { Invalid } from './errors.js'
import { daysBetween } from './zoned-time.js'

/**
 * The longest period a report covers (docs/sprints.md, "Reports"): a burndown holds one entry per
 * day, so a period of centuries would hold the server for as long as it takes to compute.
 */
export const MAX_REPORT_DAYS = 1830

const DAY_MS = 86_400_000

/** Refuses a period from `start` to `end` (epoch ms) longer than MAX_REPORT_DAYS; `what` names it in the message. */
export function checkReportSpan (start: number, end: number, what: string): void {
  if (end - start <= MAX_REPORT_DAYS * DAY_MS) return
  throw new Invalid(`${what} spans ${Math.ceil((end - start) / DAY_MS)} days: a report covers at most ${MAX_REPORT_DAYS} days (5 years)`)
}

/**
 * The same limit on calendar dates (YYYY-MM-DD, first and last included): a period of MAX_REPORT_DAYS
 * touches up to two more dates (its partial first and last day, in any time zone).
 */
export function checkReportDates (firstDay: string, lastDay: string, what: string): void {
  const dates = daysBetween(firstDay, lastDay) + 1
  if (dates <= MAX_REPORT_DAYS + 2) return
  throw new Invalid(`${what} spans ${dates} days: a report covers at most ${MAX_REPORT_DAYS} days (5 years)`)
}
