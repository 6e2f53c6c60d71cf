import { FormatRegistry } from '@sinclair/typebox'

// ISO 8601 / RFC 3339 date-time with a zone.
const DATE_TIME = /^(\d{4})-(\d{2})-(\d{2})[Tt ](\d{2}):(\d{2})(?::(\d{2})(?:\.\d+)?)?(?:[Zz]|[+-](\d{2}):?(\d{2}))$/

/**
 * A date-time that JavaScript's `Date` can hold: real calendar days (no February 30), no leap
 * second (`23:59:60` has no `Date`), zones within ±23:59, inside Date's range.
 */
export function isDateTime (value: string): boolean {
  const m = DATE_TIME.exec(value)
  if (m === null) return false
  const [year, month, day, hour, minute, second = 0, zoneHour = 0, zoneMinute = 0] = m.slice(1).map((x) => x === undefined ? undefined : Number(x)) as number[]
  const daysInMonth = new Date(Date.UTC(year, month, 0)).getUTCDate()
  if (month < 1 || month > 12 || day < 1 || day > daysInMonth) return false
  if (hour > 23 || minute > 59 || second > 59 || zoneHour > 23 || zoneMinute > 59) return false
  return !Number.isNaN(Date.parse(value))
}

/** Formats used outside Fastify's validator (fixtures read from files by the server and CLI). */
export function registerFormats (): void {
  if (!FormatRegistry.Has('date-time')) FormatRegistry.Set('date-time', isDateTime)
}
