/**
 * Blocked-term matching: case-insensitive, whole words, `*` standing for any run of
 * non-space characters (`darn*` blocks "darn" and "darnit", `f*k` blocks "flak").
 */
export function termPattern (term: string): RegExp {
  const body = term.split('*').map((part) => part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')).join('\\S*')
  return new RegExp(`(?<![\\p{L}\\p{N}])${body}(?![\\p{L}\\p{N}])`, 'iu')
}

/** The first blocked term the text matches, or undefined. */
export function matchTerm (text: string, terms: Array<{ term: string }>): string | undefined {
  return terms.find(({ term }) => termPattern(term).test(text))?.term
}
