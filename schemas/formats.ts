import { FormatRegistry } from '@sinclair/typebox'

// ISO 8601 / RFC 3339 date-time with a zone.
const DATE_TIME = /^(\d{4})-(\d{2})-(\d{2})[Tt ](\d{2}):(\d{2})(?::(\d{2})(?:\.\d+)?)?(?:[Zz]|[+-](\d{2}):?(\d{2}))$/

/** The first and last day a date or date-time may name (UTC; docs/api.md). */
export const EARLIEST_DAY = '1000-01-01'
export const LATEST_DAY = '8999-12-31'
const EARLIEST_MS = Date.parse(`${EARLIEST_DAY}T00:00:00Z`)
const AFTER_LATEST_MS = Date.parse(`${LATEST_DAY}T00:00:00Z`) + 86_400_000

/**
 * Whether an instant lies within the days a date may name. Times are stored as ISO text and
 * compared as text: a year past 9999 (written `+010000`, reached from 9999-12-31 by a sprint or a
 * time zone) or before 0000 would sort wrongly, so dates keep far from both ends.
 */
export function isWithinDateRange (ms: number): boolean {
  return ms >= EARLIEST_MS && ms < AFTER_LATEST_MS
}

/**
 * A date-time that JavaScript's `Date` can hold: real calendar days (no February 30), no leap
 * second (`23:59:60` has no `Date`), zones within ±23:59, from EARLIEST_DAY to LATEST_DAY (UTC).
 */
export function isDateTime (value: string): boolean {
  const m = DATE_TIME.exec(value)
  if (m === null) return false
  const [year, month, day, hour, minute, second = 0, zoneHour = 0, zoneMinute = 0] = m.slice(1).map((x) => x === undefined ? undefined : Number(x)) as number[]
  const daysInMonth = new Date(Date.UTC(year, month, 0)).getUTCDate()
  if (month < 1 || month > 12 || day < 1 || day > daysInMonth) return false
  if (hour > 23 || minute > 59 || second > 59 || zoneHour > 23 || zoneMinute > 59) return false
  return isWithinDateRange(Date.parse(value))
}

/** Formats used outside Fastify's validator (fixtures read from files by the server and CLI). */
export function registerFormats (): void {
  if (!FormatRegistry.Has('date-time')) FormatRegistry.Set('date-time', isDateTime)
}

/**
 * Where the first string holding a NUL character is (`/message`, `/add_issues/0/title`), if any.
 * Walked without recursion: a value nested 50,000 levels deep must not exhaust the stack.
 */
export function nulAt (value: unknown, path = ''): string | undefined {
  const stack: Array<[unknown, string]> = [[value, path]]
  while (stack.length > 0) {
    const [node, at] = stack.pop()!
    if (typeof node === 'string') {
      if (node.includes('\u0000')) return at
      continue
    }
    if (typeof node !== 'object' || node === null) continue
    // Pushed last key first, so the first NUL in document order is found first.
    const keys = Object.keys(node)
    for (let i = keys.length - 1; i >= 0; i--) stack.push([(node as Record<string, unknown>)[keys[i]!], `${at}/${keys[i]!}`])
  }
  return undefined
}
