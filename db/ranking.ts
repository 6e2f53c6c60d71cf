/**
 * Board order as numbers. A pipeline is ordered by `rank`: a prioritized issue's rank is its
 * position; an unprioritized one's is derived from its number and sorts above every ordinary
 * position, so those follow by number. A move picks a rank between its new neighbours; only when
 * they leave no room is a small window around the spot spread out again.
 */

/** Spacing of positions made by top/bottom moves, and the first position of an empty pipeline. */
export const GAP = 65536
export const FIRST = 2 ** 32
/** Past the last usable rank (ranks are safe integers). */
export const CEILING = 2 ** 53
/** A respaced window leaves at least this much room between neighbours. */
export const MIN_SPACING = 1024

/** The rank of an issue nobody has prioritized: above every ordinary position, by number. */
export function unprioritizedRank (number: number): number {
  return 2 ** 44 + number * 2 ** 20
}

/** A rank strictly between two neighbours (undefined: the pipeline's start or end), if there is room. */
export function between (prev: number | undefined, next: number | undefined): number | undefined {
  if (prev === undefined && next === undefined) return FIRST
  if (next === undefined) return prev! + GAP < CEILING ? prev! + GAP : undefined
  if (prev === undefined) {
    if (next > FIRST) return FIRST
    return next - GAP >= 0 ? next - GAP : (next >= 2 ? Math.floor(next / 2) : undefined)
  }
  const mid = prev + Math.floor((next - prev) / 2)
  return mid > prev && mid < next ? mid : undefined
}

/**
 * Evenly spaced ranks for `count` issues strictly between `lower` and `upper`, or undefined when
 * the spacing would be under MIN_SPACING (the caller then widens the window). `whole`: the window
 * is the whole pipeline, so any spacing of at least 1 will do.
 */
export function spread (lower: number, upper: number, count: number, whole: boolean): number[] | undefined {
  const step = Math.floor((upper - lower) / (count + 1))
  if (step < MIN_SPACING && !(whole && step >= 1)) return undefined
  return Array.from({ length: count }, (_, i) => lower + step * (i + 1))
}
