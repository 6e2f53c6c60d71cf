import t from 'tap'
import { longDeadline, longWorkHooked, withLongDeadline } from '../db/engine/long-work.js'

t.test('a long deadline holds for its work only, and the storage behind it is off once no such work runs', async (t) => {
  t.equal(longDeadline(), undefined, 'none outside')
  const hooked = longWorkHooked()
  if (hooked === undefined) t.comment('this Node does not say whether the storage is on: only the deadlines are checked')
  let finishFirst!: () => void
  const first = withLongDeadline(60_000, async () => {
    await new Promise<void>((resolve) => { finishFirst = resolve })
    return longDeadline()
  })
  const second = withLongDeadline(30_000, async () => {
    await new Promise((resolve) => setTimeout(resolve, 10))
    return longDeadline()
  })
  t.equal(await second, 30_000, 'each work sees its own')
  if (hooked !== undefined) t.equal(longWorkHooked(), true, 'on while the first still runs')
  finishFirst()
  t.equal(await first, 60_000, 'the first still sees its deadline after the second finished')
  if (hooked !== undefined) t.equal(longWorkHooked(), false, 'off once none runs: no hook on every promise the process makes')
  t.equal(longDeadline(), undefined)
  t.equal(await withLongDeadline(5_000, async () => await Promise.resolve().then(() => longDeadline())), 5_000, 'and on again for the next')
  if (hooked !== undefined) t.equal(longWorkHooked(), false)
  await t.rejects(withLongDeadline(1_000, async () => { throw new Error('failed') }), /failed/)
  if (hooked !== undefined) t.equal(longWorkHooked(), false, 'off after a failure too')
})
