import type { FastifyBaseLogger } from 'fastify'

const QUIET_MS = 60_000

/**
 * A warning a store outage would repeat on every request and every probe (docs/scale-out.md,
 * "When a store goes away"): the first is logged, then at most one a minute, saying how many
 * more came in between (`alsoUnavailable`).
 */
export function onceAMinute (log: FastifyBaseLogger, message: string, now: () => number = Date.now): (err: unknown) => void {
  let quietUntil = 0
  let unreported = 0
  return (err) => {
    const at = now()
    if (at < quietUntil) {
      unreported++
      return
    }
    const { message: reason, code } = (err ?? {}) as { message?: unknown, code?: unknown }
    log.warn({ err: { message: reason, code }, alsoUnavailable: unreported }, message)
    unreported = 0
    quietUntil = at + QUIET_MS
  }
}
