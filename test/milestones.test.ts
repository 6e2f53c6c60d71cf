import t from 'tap'
import { build, REPO } from './helper.js'
import { buildWithHistory } from './history-helper.js'

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

t.test('milestones keep due_on and state; issues keep their milestone (admin API, fixture, bulk read)', async (t) => {
  const { app, db } = await buildWithHistory(t)
  const created = await app.admin({ method: 'POST', url: `/admin/repositories/${REPO}/milestones`, payload: { number: 2, title: 'v2', due_on: '2026-12-01' } })
  t.equal(created.statusCode, 201)
  t.same(created.json(), { repo_id: REPO, number: 2, title: 'v2', due_on: '2026-12-01T00:00:00.000Z', state: 'open', description: null })
  const bad = await app.admin({ method: 'POST', url: `/admin/repositories/${REPO}/milestones`, payload: { number: 3, title: 'v3', due_on: '2026-02-30' } })
  t.equal(bad.statusCode, 400)
  t.match(bad.json().message, /due_on/)
  const patched = await app.admin({ method: 'PATCH', url: `/admin/repositories/${REPO}/milestones/2`, payload: { due_on: '2026-12-02T10:00:00+01:00', state: 'closed' } })
  t.same(patched.json(), { repo_id: REPO, number: 2, title: 'v2', due_on: '2026-12-02T09:00:00.000Z', state: 'closed', description: null })
  t.equal((await app.admin({ method: 'PATCH', url: `/admin/repositories/${REPO}/milestones/9`, payload: { state: 'closed' } })).statusCode, 404)

  const issue = await app.admin({ method: 'POST', url: `/admin/repositories/${REPO}/issues`, payload: { number: 50, title: 'With a milestone', milestone_number: 2 } })
  t.equal(issue.statusCode, 201)
  t.equal(issue.json().milestone_number, 2)
  const unknown = await app.admin({ method: 'POST', url: `/admin/repositories/${REPO}/issues`, payload: { number: 51, title: 'x', milestone_number: 9 } })
  t.equal(unknown.statusCode, 400)
  t.match(unknown.json().message, /milestone 9 not found/)
  const moved = await app.admin({ method: 'PATCH', url: `/admin/repositories/${REPO}/issues/1`, payload: { milestone_number: 1 } })
  t.equal(moved.json().milestone_number, 1)

  const bulk = await app.as('carol', { url: `/p1/repositories/${REPO}/issues?issue_numbers=1,2,50` })
  t.same(bulk.json().map((i: { issue_number: number, milestone: unknown }) => [i.issue_number, i.milestone]), [
    [1, { number: 1, title: 'v1.0', due_on: null, state: 'open' }],
    [2, undefined],
    [50, { number: 2, title: 'v2', due_on: '2026-12-02T09:00:00.000Z', state: 'closed' }]
  ])
  const cleared = await app.admin({ method: 'PATCH', url: `/admin/repositories/${REPO}/issues/1`, payload: { milestone_number: null } })
  t.equal(cleared.json().milestone_number, undefined)
  const history = await db.selectFrom('issue_milestones').select(['milestone_number']).orderBy('id').execute()
  t.same(history.map((h) => h.milestone_number === null ? null : Number(h.milestone_number)), [2, 1, null], 'each change recorded with its time')

  const listed = await app.admin({ url: `/admin/repositories/${REPO}/milestones` })
  t.same(listed.json().map((m: { number: number, due_on: string | null, state: string }) => [m.number, m.due_on, m.state]), [[1, null, 'open'], [2, '2026-12-02T09:00:00.000Z', 'closed']])
})

t.test('fixture due_on, milestone state and issue milestone_number', async (t) => {
  const app = await build(t, {
    fixture: {
      users: [{ id: 1, login: 'alice', token: 'alice-token-123456' }],
      repositories: [{ id: 5, owner: 'o', name: 'r', permissions: { alice: 'read' } }],
      milestones: [{ repo_id: 5, number: 1, title: 'm', due_on: '2027-01-15T12:00:00Z', state: 'closed' }],
      issues: [{ repo_id: 5, number: 1, title: 'i', milestone_number: 1 }]
    }
  })
  const bulk = await app.as('alice', { url: '/p1/repositories/5/issues?issue_numbers=1' })
  t.same(bulk.json()[0].milestone, { number: 1, title: 'm', due_on: '2027-01-15T12:00:00.000Z', state: 'closed' })
  const refused = await app.admin({ method: 'POST', url: '/admin/import', payload: { issues: [{ repo_id: 5, number: 2, title: 'x', milestone_number: 4 }] } })
  t.equal(refused.statusCode, 400)
  t.match(refused.json().message, /issues\[0\].*milestone 4/)
})
