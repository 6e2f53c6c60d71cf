import t from 'tap'
import { containsTerm, matchTerm, MAX_WILDCARDS, termProblem } from '../plugins/chat/terms.js'

// The backtracking expression the matcher replaced, kept here as the reference of its meaning.
function reference (text: string, term: string): boolean {
  const body = term.split('*').map((part) => part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')).join('\\S*')
  return new RegExp(`(?<![\\p{L}\\p{N}])${body}(?![\\p{L}\\p{N}])`, 'iu').test(text)
}

t.test('whole words, case-insensitive, * for non-space runs', async (t) => {
  t.ok(containsTerm('Well DARN it', 'darn'))
  t.notOk(containsTerm('darnation', 'darn'))
  t.ok(containsTerm('darnit!', 'darn*'))
  t.ok(containsTerm('(flak)', 'f*k'))
  t.notOk(containsTerm('fla k', 'f*k'), '* does not cross spaces')
  t.ok(containsTerm('a bad word here', 'bad word'))
  t.notOk(containsTerm('abad word', 'bad word'))
  t.equal(matchTerm('x darn y', [{ term: 'heck' }, { term: 'darn' }]), 'darn')
  t.equal(matchTerm('clean', [{ term: 'heck' }]), undefined)
})

t.test('the same answers as the regular expression it replaced', async (t) => {
  const alphabet = ['a', 'b', 'A', ' ', '-', '1', 'é']
  const pick = (n: number, extra: string[] = []): string => Array.from({ length: n }, () => [...alphabet, ...extra][Math.floor(Math.random() * (alphabet.length + extra.length))]).join('')
  let differences = 0
  for (let i = 0; i < 3000; i++) {
    const term = pick(1 + Math.floor(Math.random() * 5), ['*', '*']).replace(/^ +| +$/g, '') || 'a'
    const text = pick(Math.floor(Math.random() * 12))
    if (containsTerm(text, term) !== reference(text, term)) {
      differences++
      t.fail(`${JSON.stringify(term)} in ${JSON.stringify(text)}`)
    }
  }
  t.equal(differences, 0, '3,000 random terms and texts agree')
})

t.test('worst-case terms match in linear time', async (t) => {
  const term = `*${'a*'.repeat(MAX_WILDCARDS - 1)}b`
  const text = 'a'.repeat(500)
  t.notOk(containsTerm(text, term))
  t.notOk(containsTerm(text, '*a*a*a*a*a*a*a*b'))
  t.ok(containsTerm(`${'a'.repeat(499)}b`, term))
  // The best of three rounds: on a shared machine one round can lose the CPU for a while.
  let elapsed = Infinity
  for (let round = 0; round < 3; round++) {
    const started = performance.now()
    containsTerm(text, term)
    containsTerm(text, '*a*a*a*a*a*a*a*b')
    containsTerm(`${'a'.repeat(499)}b`, term)
    elapsed = Math.min(elapsed, performance.now() - started)
  }
  t.ok(elapsed < 10, `three worst-case matches took ${elapsed.toFixed(2)} ms (< 10 ms)`)
})

t.test('terms with too many wildcards are refused', async (t) => {
  t.equal(termProblem('*a*a*a*b'), undefined)
  t.match(termProblem('*a'.repeat(MAX_WILDCARDS + 1)), /at most|more than/)
  t.match(termProblem('***'), /other than \*/)
})
