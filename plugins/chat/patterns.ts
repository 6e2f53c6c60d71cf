import { RE2JS } from 're2js'

/** At most this many pattern filters. */
export const MAX_PATTERNS = 200
/** RE2's rough cost of a compiled pattern: bigger ones are refused, so matching stays cheap. */
const MAX_PROGRAM = 1000

const compiled = new Map<string, RE2JS>()

/**
 * A pattern compiled with RE2 semantics (re2js): matching takes time linear in the text, with no
 * backtracking, so `(a+)+$` cannot hang the server. Case-insensitive. Throws on a bad pattern.
 */
export function compilePattern (pattern: string): RE2JS {
  let re = compiled.get(pattern)
  if (re === undefined) {
    re = RE2JS.compile(pattern, RE2JS.CASE_INSENSITIVE)
    if (compiled.size >= MAX_PATTERNS * 2) compiled.clear()
    compiled.set(pattern, re)
  }
  return re
}

/** Why a pattern cannot be a filter (RE2 syntax: no back-references or look-around), or undefined. */
export function patternProblem (pattern: string): string | undefined {
  let re: RE2JS
  try {
    re = RE2JS.compile(pattern, RE2JS.CASE_INSENSITIVE)
  } catch (err) {
    return `body/pattern is not a valid RE2 regular expression: ${(err as Error).message.slice(0, 200)}`
  }
  if (re.programSize() > MAX_PROGRAM) return 'body/pattern is too complex; make it shorter or simpler'
  if (re.test('')) return 'body/pattern matches every message'
  return undefined
}

/** The first pattern that matches part of the text, or undefined. */
export function matchPattern<P extends { pattern: string }> (text: string, patterns: P[]): P | undefined {
  return patterns.find((p) => compilePattern(p.pattern).test(text))
}
