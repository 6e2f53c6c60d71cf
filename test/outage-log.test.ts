import t from 'tap'
import { onceAMinute } from '../plugins/core/outage-log.js'

t.test('an outage warning: the first, then at most one a minute saying how many came between', async (t) => {
  const lines: Array<Record<string, unknown>> = []
  const log = { warn: (detail: Record<string, unknown>, msg: string) => lines.push({ ...detail, msg }) } as unknown as Parameters<typeof onceAMinute>[0]
  const clock = { now: 1_000_000 }
  const warn = onceAMinute(log, 'the database is unavailable', () => clock.now)
  for (let i = 0; i < 1400; i++) {
    warn(Object.assign(new Error('Connection terminated'), { code: 'ECONNRESET' }))
    clock.now += 10
  }
  t.equal(lines.length, 1, '1,400 in 14 s: one warning')
  t.same(lines[0], { err: { message: 'Connection terminated', code: 'ECONNRESET' }, alsoUnavailable: 0, msg: 'the database is unavailable' })
  clock.now = 1_000_000 + 60_000
  warn(new Error('timeout expired'))
  t.equal(lines.length, 2, 'a minute after the first: one more')
  t.match(lines[1], { alsoUnavailable: 1399 })
  warn(new Error('timeout expired'))
  t.equal(lines.length, 2)
})
