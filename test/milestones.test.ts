import t from 'tap'
import { build, REPO } from './helper.js'

const url = (n: number, repo = REPO) => `/p1/repositories/${repo}/milestones/${n}/start_date`

t.test('milestone start dates', async (t) => {
  const app = await build(t)
  const none = await app.as('carol', { url: url(1) })
  t.equal(none.statusCode, 404)
  t.match(none.json().message, /has no start date/)
  const set = await app.as('bob', { method: 'POST', url: url(1), payload: { start_date: '2010-11-13T01:38:56.842Z' } })
  t.equal(set.statusCode, 200)
  t.same(set.json(), { start_date: '2010-11-13T01:38:56.842Z' })
  t.same((await app.as('carol', { url: url(1) })).json(), { start_date: '2010-11-13T01:38:56.842Z' })
  const offset = await app.as('bob', { method: 'POST', url: url(1), payload: { start_date: '2026-03-01T09:00:00+02:00' } })
  t.same(offset.json(), { start_date: '2026-03-01T07:00:00.000Z' }, 'normalized to UTC with milliseconds')
})

t.test('milestone refusals', async (t) => {
  const app = await build(t)
  for (const start_date of ['yesterday', '2026-13-01T00:00:00Z', '2026-02-30', 12345, '', '2026-12-31T23:59:60Z', '2026-02-30T00:00:00Z', '+275760-09-14T00:00:00Z', '2026-01-01T00:00:00+24:00']) {
    const res = await app.as('bob', { method: 'POST', url: url(1), payload: { start_date } })
    t.equal(res.statusCode, 400, JSON.stringify(start_date))
    t.match(res.json().message, /start_date/)
  }
  t.equal((await app.as('bob', { method: 'POST', url: url(1), payload: {} })).statusCode, 400)
  t.equal((await app.as('bob', { method: 'POST', url: url(9), payload: { start_date: '2026-01-01T00:00:00Z' } })).statusCode, 404, 'unknown milestone')
  t.equal((await app.as('bob', { url: url(9) })).statusCode, 404)
  t.equal((await app.as('carol', { method: 'POST', url: url(1), payload: { start_date: '2026-01-01T00:00:00Z' } })).statusCode, 403)
  t.equal((await app.as('dave', { url: url(1) })).statusCode, 404)
  t.equal((await app.as('bob', { url: '/p1/repositories/1001/milestones/x/start_date' })).statusCode, 400)
})
