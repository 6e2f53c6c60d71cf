/**
 * Calendar days and midnights in an IANA time zone, through Intl (no zone tables of our own):
 * sprint boundaries and the days of the reports' series (docs, "Sprints and reports").
 */

import { isWithinDateRange } from '../schemas/formats.js'

const DAY_MS = 86_400_000
const formatters = new Map<string, Intl.DateTimeFormat>()

function formatter (timeZone: string): Intl.DateTimeFormat {
  let f = formatters.get(timeZone)
  if (f === undefined) {
    f = new Intl.DateTimeFormat('en-US', {
      timeZone, hourCycle: 'h23', year: 'numeric', month: '2-digit', day: '2-digit', hour: '2-digit', minute: '2-digit', second: '2-digit'
    })
    if (formatters.size > 1000) formatters.clear()
    formatters.set(timeZone, f)
  }
  return f
}

/** Whether Intl knows the zone (an IANA name such as Europe/Berlin, or UTC). */
export function isTimeZone (value: string): boolean {
  if (value.length === 0 || value.length > 64) return false
  try {
    formatter(value)
    return true
  } catch {
    return false
  }
}

/** Whether the text is a real calendar day written YYYY-MM-DD, from EARLIEST_DAY to LATEST_DAY. */
export function isCalendarDate (value: string): boolean {
  const m = /^(\d{4})-(\d{2})-(\d{2})$/.exec(value)
  if (m === null) return false
  const d = new Date(Date.UTC(Number(m[1]), Number(m[2]) - 1, Number(m[3])))
  return d.toISOString().slice(0, 10) === value && isWithinDateRange(d.getTime())
}

interface Parts { year: number, month: number, day: number, hour: number, minute: number, second: number }

function partsAt (ms: number, timeZone: string): Parts {
  const out: Record<string, number> = {}
  for (const p of formatter(timeZone).formatToParts(new Date(ms))) if (p.type !== 'literal') out[p.type] = Number(p.value)
  return out as unknown as Parts
}

/** The zone's offset from UTC at the instant, in ms (local minus UTC). */
function offsetAt (ms: number, timeZone: string): number {
  const p = partsAt(ms, timeZone)
  return Date.UTC(p.year, p.month - 1, p.day, p.hour, p.minute, p.second) - Math.floor(ms / 1000) * 1000
}

/** The day (YYYY-MM-DD) the instant falls on in the zone. */
export function localDate (ms: number, timeZone: string): string {
  const p = partsAt(ms, timeZone)
  return `${String(p.year).padStart(4, '0')}-${String(p.month).padStart(2, '0')}-${String(p.day).padStart(2, '0')}`
}

/** The calendar day `days` after `date` (YYYY-MM-DD). */
export function addDays (date: string, days: number): string {
  return new Date(Date.parse(`${date}T00:00:00Z`) + days * DAY_MS).toISOString().slice(0, 10)
}

/** Whole days from one calendar day to another. */
export function daysBetween (from: string, to: string): number {
  return Math.round((Date.parse(`${to}T00:00:00Z`) - Date.parse(`${from}T00:00:00Z`)) / DAY_MS)
}

/**
 * The first instant of the day in the zone: its 00:00, or, where a change to summer time skips
 * midnight, the moment the day begins.
 */
export function startOfDay (date: string, timeZone: string): number {
  const wall = Date.parse(`${date}T00:00:00Z`)
  let guess = wall - offsetAt(wall, timeZone)
  // The offset at the guess may differ from the one at the wall time read as UTC (a change between them).
  guess = wall - offsetAt(guess, timeZone)
  if (localDate(guess, timeZone) !== date) {
    // Midnight does not exist that day: the day begins where the previous one ends.
    let lo = Math.floor((guess - DAY_MS) / 1000)
    let hi = Math.floor((guess + DAY_MS) / 1000)
    while (hi - lo > 1) {
      const mid = Math.floor((lo + hi) / 2)
      if (localDate(mid * 1000, timeZone) < date) lo = mid
      else hi = mid
    }
    return hi * 1000
  }
  // An earlier instant of the same day can exist when the clocks went back around midnight.
  const earlier = guess - 3_600_000
  if (localDate(earlier, timeZone) === date && partsAt(earlier, timeZone).hour === 0) return earlier
  return guess
}
