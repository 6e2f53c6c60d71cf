import t from 'tap'
import { between, CEILING, FIRST, GAP, MIN_SPACING, spread, unprioritizedRank } from '../db/ranking.js'

t.test('between: a rank strictly between neighbours, or none', async (t) => {
  t.equal(between(undefined, undefined), FIRST, 'an empty pipeline starts at FIRST')
  t.equal(between(10, undefined), 10 + GAP, 'the bottom is one gap below the last')
  t.equal(between(undefined, FIRST * 2), FIRST, 'the top of a pipeline that starts high')
  t.equal(between(undefined, GAP * 3), GAP * 2, 'the top, one gap above the first')
  t.equal(between(undefined, 10), 5, 'the top, halving when a gap does not fit')
  t.equal(between(undefined, 1), undefined, 'no room above 1')
  t.equal(between(100, 200), 150)
  t.equal(between(100, 101), undefined, 'adjacent ranks leave no room')
  t.equal(between(CEILING - 10, undefined), undefined, 'no room at the ceiling')
})

t.test('spread: even spacing or a signal to widen the window', async (t) => {
  t.same(spread(0, 4 * MIN_SPACING, 3, false), [MIN_SPACING, 2 * MIN_SPACING, 3 * MIN_SPACING])
  t.equal(spread(0, 100, 3, false), undefined, 'too tight for a window')
  t.same(spread(0, 100, 3, true), [25, 50, 75], 'the whole pipeline takes any room')
  t.equal(spread(0, 3, 3, true), undefined, 'no room at all')
})

t.test('unprioritized issues sort by number above every ordinary position', async (t) => {
  t.ok(unprioritizedRank(1) > FIRST + GAP * 1_000_000)
  t.ok(unprioritizedRank(2) > unprioritizedRank(1))
  t.ok(unprioritizedRank(2) - unprioritizedRank(1) > MIN_SPACING * 16, 'room between two of them')
})
