import t from 'tap'
import { isDateTime } from '../schemas/formats.js'
import { isCalendarDate } from '../db/zoned-time.js'
import { REPO, WS_OLD } from './helper.js'
import { buildWithHistory } from './history-helper.js'

// Every date a request names lies from 1000-01-01 to 8999-12-31 (UTC): times are stored as ISO text
// and compared as text, and a year past 9999 (`+010000`) sorts wrongly (docs/api.md).

t.test('dates and date-times are bounded', async (t) => {
  for (const taken of ['1000-01-01', '2026-11-26', '8999-12-31']) t.ok(isCalendarDate(taken), taken)
  for (const refused of ['0999-12-31', '9000-01-01', '9999-12-31', '0000-01-01']) t.notOk(isCalendarDate(refused), refused)
  for (const taken of ['1000-01-01T00:00:00Z', '8999-12-31T23:59:59.999Z', '8999-12-31T23:00:00-00:59']) t.ok(isDateTime(taken), taken)
  for (const refused of ['0999-12-31T23:59:59Z', '1000-01-01T00:30:00+01:00', '8999-12-31T23:00:00-01:00', '9999-12-31T23:59:59Z', '0000-01-01T00:00:00Z']) {
    t.notOk(isDateTime(refused), refused)
  }
})

t.test('a date past the bound is a 400 naming the field, never a 500', async (t) => {
  const { app } = await buildWithHistory(t, { clock: () => Date.parse('2026-03-20T12:00:00Z'), sprintTickMs: 0 })
  const config = { length_weeks: 2, time_zone: 'Pacific/Kiritimati', carry_over: true }
  const url = `/p2/workspaces/${WS_OLD}/sprint_config`
  for (const startsOn of ['9999-12-31', '9999-12-17', '9000-01-01', '0999-12-31']) {
    const res = await app.as('alice', { method: 'PUT', url, payload: { ...config, starts_on: startsOn } })
    t.equal(res.statusCode, 400, `starts_on ${startsOn}`)
    t.match(res.json().message, /^body\/starts_on must be a calendar date, YYYY-MM-DD, from 1000-01-01 to 8999-12-31$/)
  }
  const last = await app.as('alice', { method: 'PUT', url, payload: { ...config, starts_on: '8999-12-31' } })
  t.equal(last.statusCode, 200, 'the last day is taken')
  t.equal((await app.as('alice', { url: `/p2/workspaces/${WS_OLD}/sprints?state=future` })).statusCode, 200)

  const release = await app.as('alice', {
    method: 'POST', url: `/p1/repositories/${REPO}/reports/release`, payload: { title: 'Far', start_date: '9999-12-31T00:00:00Z', desired_end_date: '9999-12-31T23:00:00-05:00' }
  })
  t.equal(release.statusCode, 400)
  t.match(release.json().message, /body\/start_date/)
  const start = await app.as('bob', { method: 'POST', url: `/p1/repositories/${REPO}/milestones/1/start_date`, payload: { start_date: '9999-12-31T23:00:00-05:00' } })
  t.equal(start.statusCode, 400)
  t.match(start.json().message, /body\/start_date/)
  const due = await app.admin({ method: 'PATCH', url: `/admin/repositories/${REPO}/milestones/1`, payload: { due_on: '9999-12-31' } })
  t.equal(due.statusCode, 400)
  t.match(due.json().message, /due_on must be .* from 1000-01-01 to 8999-12-31/)
  const since = await app.as('alice', { url: `/p1/repositories/${REPO}/issues/changed?since=9999-12-31T23:59:59-01:00` })
  t.equal(since.statusCode, 400)
  t.match(since.json().message, /querystring\/since/)
})
