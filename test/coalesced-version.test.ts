import t from 'tap'
import { coalescedVersion } from '../db/engine/coalesced-version.js'

/** A query whose answers the test gives by hand, one per query sent, in order. */
function manualQuery () {
  const sent: Array<{ answer: (value: number) => void, fail: (err: Error) => void }> = []
  const query = async () => await new Promise<number>((resolve, reject) => sent.push({ answer: resolve, fail: reject }))
  return { sent, query }
}

const tick = async () => await new Promise((resolve) => setImmediate(resolve))

t.test('one read answers every request of a turn; a read asked while one is out waits for the next', async (t) => {
  const { sent, query } = manualQuery()
  const version = coalescedVersion(query)
  const first = version.read()
  const alsoFirst = version.read()
  t.equal(sent.length, 0, 'nothing is sent before the turn\'s requests have all asked')
  await tick()
  t.equal(sent.length, 1, 'one query for the whole turn')
  const second = version.read()
  const third = version.read()
  await tick()
  t.equal(sent.length, 1, 'reads asked while it is out send nothing yet')
  sent[0].answer(7)
  t.equal(await first, 7)
  t.equal(await alsoFirst, 7)
  await tick()
  t.equal(sent.length, 2, 'the next query is sent in the turn the first returns')
  const fourth = version.read()
  sent[1].answer(8)
  t.equal(await second, 8, 'not the answer of the query sent before it asked')
  t.equal(await third, 8)
  await tick()
  t.equal(sent.length, 3, 'a read asked while the second query was out waits for a third')
  sent[2].answer(9)
  t.equal(await fourth, 9)
  t.same(version.stats, { asked: 5, queries: 3, watched: 0 })
})

t.test('a synchronous read (SQLite) answers the turn at its end, never with a value read before a request asked', async (t) => {
  let counter = 1
  let reads = 0
  const version = coalescedVersion(() => { reads++; return counter })
  const first = version.read()
  counter = 2 // a commit after the first request asked, before the turn ended
  const second = version.read()
  t.equal(reads, 0)
  t.same(await Promise.all([first, second]), [2, 2], 'both answered with the counter read after the last of them asked')
  t.equal(reads, 1)
  counter = 3
  t.equal(await version.read(), 3, 'the next turn reads again')
  t.same(version.stats, { asked: 3, queries: 2, watched: 0 })
})

t.test('an idle reader sends one query per read; a failed query fails only its own batch', async (t) => {
  const { sent, query } = manualQuery()
  const version = coalescedVersion(query)
  const first = version.read()
  await tick()
  const second = version.read()
  sent[0].fail(new Error('connection lost'))
  await t.rejects(first, /connection lost/)
  await tick()
  sent[1].answer(3)
  t.equal(await second, 3)
  const third = version.read()
  await tick()
  t.equal(sent.length, 3)
  sent[2].answer(4)
  t.equal(await third, 4)
})

t.test('a query that throws at once rejects its batch and the reader goes on', async (t) => {
  let calls = 0
  const version = coalescedVersion(async () => {
    calls++
    if (calls === 1) throw new Error('pool closed')
    return 5
  })
  await t.rejects(version.read(), /pool closed/)
  t.equal(await version.read(), 5)
  const sync = coalescedVersion(() => { throw new Error('database closed') })
  await t.rejects(sync.read(), /database closed/, 'a synchronous read that throws rejects its batch too')
})
