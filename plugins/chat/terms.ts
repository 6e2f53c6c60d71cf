/** A blocked term may hold at most this many `*` wildcards. */
export const MAX_WILDCARDS = 8

const WORD = /[\p{L}\p{N}]/u
const SPACE = /\s/u
const STAR = Symbol('star')
type Token = string | typeof STAR

/** The term as lower-cased characters and wildcards (runs of `*` are one wildcard). */
function tokens (term: string): Token[] {
  const out: Token[] = []
  for (const ch of term) {
    if (ch !== '*') out.push(ch.toLowerCase())
    else if (out.at(-1) !== STAR) out.push(STAR)
  }
  return out
}

/**
 * Whether the text holds the term: case-insensitive, as whole words, `*` standing for any run of
 * non-space characters (`darn*` blocks "darn" and "darnit", `f*k` blocks "flak"). Runs the term
 * as a state machine over the text, every possible start at once, so the time is at most
 * text length × term length, whatever the wildcards (no backtracking).
 */
export function containsTerm (text: string, term: string): boolean {
  const pattern = tokens(term)
  const end = pattern.length
  const chars = [...text]
  let active = new Uint8Array(end + 1)
  let next = new Uint8Array(end + 1)
  // A wildcard may match nothing: entering its state also enters the one after it.
  const enter = (states: Uint8Array, i: number): void => {
    while (true) {
      states[i] = 1
      if (i < end && pattern[i] === STAR) i++
      else return
    }
  }
  for (let at = 0; at <= chars.length; at++) {
    if (at === 0 || !WORD.test(chars[at - 1])) enter(active, 0)
    if (active[end] === 1 && (at === chars.length || !WORD.test(chars[at]))) return true
    if (at === chars.length) return false
    const ch = chars[at]
    const lower = ch.toLowerCase()
    next.fill(0)
    for (let i = 0; i < end; i++) {
      if (active[i] === 0) continue
      const token = pattern[i]
      if (token === STAR) {
        if (!SPACE.test(ch)) enter(next, i)
      } else if (token === lower) {
        enter(next, i + 1)
      }
    }
    [active, next] = [next, active]
  }
  return false
}

/** The first blocked term the text matches, or undefined. */
export function matchTerm (text: string, terms: Array<{ term: string }>): string | undefined {
  return terms.find(({ term }) => containsTerm(text, term))?.term
}

/** Why a term cannot be blocked, or undefined when it can. */
export function termProblem (term: string): string | undefined {
  const wildcards = tokens(term).filter((t) => t === STAR).length
  if (wildcards > MAX_WILDCARDS) return `body/term must not hold more than ${MAX_WILDCARDS} * wildcards`
  if (tokens(term).every((t) => t === STAR)) return 'body/term must hold a character other than *'
  return undefined
}
