import t from 'tap'
import { keptTickRecords } from '../tick-shape.js'

t.test('one nextTick record is held from start-up, with the fields Node gives it', async (t) => {
  t.equal(keptTickRecords.length, 1)
  t.type((keptTickRecords[0] as { callback?: unknown }).callback, 'function')
})
