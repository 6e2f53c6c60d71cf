import t from 'tap'
import { build, REPO, OTHER_REPO, PRIVATE_REPO, type App } from './helper.js'

const ref = (repo_id: number, issue_number: number) => ({ repo_id, issue_number })
const body = { title: 'Great title', description: 'Amazing description', start_date: '2007-01-01T00:00:00Z', desired_end_date: '2007-02-01T00:00:00Z' }

async function create (app: App, extra: object = {}, login: 'alice' | 'bob' = 'alice') {
  return await app.as(login, { method: 'POST', url: `/p1/repositories/${REPO}/reports/release`, payload: { ...body, ...extra } })
}

t.test('create and read a release report', async (t) => {
  const app = await build(t)
  const res = await create(app, { repositories: [OTHER_REPO, REPO] })
  t.equal(res.statusCode, 200)
  const report = res.json()
  t.match(report, {
    release_id: /^[0-9a-f]{24}$/,
    title: 'Great title',
    description: 'Amazing description',
    start_date: '2007-01-01T00:00:00.000Z',
    desired_end_date: '2007-02-01T00:00:00.000Z',
    closed_at: null,
    state: 'open',
    repositories: [REPO, OTHER_REPO]
  })
  t.ok(Date.parse(report.created_at) > Date.now() - 60_000)
  t.same((await app.as('carol', { url: `/p1/reports/release/${report.release_id}` })).json(), { ...report, repositories: [REPO] }, 'visible to a reader of one repository, with only the repositories she can read')
  const list = await app.as('carol', { url: `/p1/repositories/${REPO}/reports/releases` })
  t.equal(list.statusCode, 200)
  t.same(Object.keys(list.json()[0]), ['release_id', 'title', 'description', 'start_date', 'desired_end_date', 'created_at', 'closed_at', 'state'], 'no repositories in the list')
  const plain = (await create(app, { description: undefined })).json()
  t.equal(plain.description, '', 'no description is an empty string, not null')
  t.same(plain.repositories, [REPO], 'only the URL repository')
  t.equal((await app.as('dave', { url: `/p1/reports/release/${report.release_id}` })).statusCode, 404)
  t.equal((await app.as('alice', { url: '/p1/reports/release/ffffffffffffffffffffffff' })).statusCode, 404)
})

t.test('create refusals', async (t) => {
  const app = await build(t)
  t.equal((await create(app, { repositories: [OTHER_REPO] }, 'bob')).statusCode, 403, 'push permission needed on every repository')
  t.equal((await create(app, { repositories: [PRIVATE_REPO] }, 'bob')).statusCode, 404, 'an unreadable repository is not found')
  t.equal((await create(app, { repositories: [424242] })).statusCode, 404)
  t.equal((await app.as('carol', { method: 'POST', url: `/p1/repositories/${REPO}/reports/release`, payload: body })).statusCode, 403)
  const backwards = await create(app, { desired_end_date: '2006-01-01T00:00:00Z' })
  t.equal(backwards.statusCode, 400)
  t.match(backwards.json().message, /desired_end_date must not be before start_date/)
  for (const bad of [{ title: '' }, { title: undefined }, { start_date: 'soon' }, { desired_end_date: undefined }, { repositories: ['x'] }, { description: 5 }]) {
    const res = await create(app, bad)
    t.equal(res.statusCode, 400, JSON.stringify(bad))
  }
  for (const field of ['start_date', 'desired_end_date']) {
    const leap = await create(app, { [field]: '2026-12-31T23:59:60Z' })
    t.equal(leap.statusCode, 400, `a leap second as ${field}`)
    t.match(leap.json().message, new RegExp(`body/${field}`))
  }
  t.same((await app.as('alice', { url: `/p1/repositories/${REPO}/reports/releases` })).json(), [], 'nothing half-written')
})

t.test('edit and state transitions', async (t) => {
  const app = await build(t)
  const { release_id: id } = (await create(app)).json()
  const url = `/p1/reports/release/${id}`
  const closed = await app.as('bob', { method: 'PATCH', url, payload: { title: 'Renamed', state: 'closed' } })
  t.equal(closed.statusCode, 200)
  t.match(closed.json(), { title: 'Renamed', description: 'Amazing description', state: 'closed', closed_at: String })
  const closedAt = closed.json().closed_at
  t.equal((await app.as('bob', { method: 'PATCH', url, payload: { title: 'Renamed', state: 'closed' } })).json().closed_at, closedAt, 'closing again keeps the time')
  const reopened = await app.as('bob', { method: 'PATCH', url, payload: { title: 'Renamed', state: 'open', start_date: '2007-01-15T10:00:00+01:00' } })
  t.match(reopened.json(), { state: 'open', closed_at: null, start_date: '2007-01-15T09:00:00.000Z' })
  t.equal((await app.as('bob', { method: 'PATCH', url, payload: { state: 'closed' } })).statusCode, 400, 'title is required')
  t.equal((await app.as('bob', { method: 'PATCH', url, payload: { title: 'x', state: 'done' } })).statusCode, 400)
  t.equal((await app.as('bob', { method: 'PATCH', url, payload: { title: 'x', desired_end_date: '2006-01-01T00:00:00Z' } })).statusCode, 400)
  t.equal((await app.as('carol', { method: 'PATCH', url, payload: { title: 'x' } })).statusCode, 403)
  t.equal((await app.as('dave', { method: 'PATCH', url, payload: { title: 'x' } })).statusCode, 404)
})

t.test('repositories of a report', async (t) => {
  const app = await build(t)
  const { release_id: id } = (await create(app)).json()
  const add = await app.as('alice', { method: 'POST', url: `/p1/reports/release/${id}/repository/${OTHER_REPO}` })
  t.equal(add.statusCode, 200)
  t.equal(add.body, '')
  t.same((await app.as('alice', { url: `/p1/reports/release/${id}` })).json().repositories, [REPO, OTHER_REPO])
  t.equal((await app.as('bob', { method: 'POST', url: `/p1/reports/release/${id}/repository/${PRIVATE_REPO}` })).statusCode, 404)
  t.equal((await app.as('bob', { method: 'DELETE', url: `/p1/reports/release/${id}/repository/${OTHER_REPO}` })).statusCode, 403, 'bob only reads OTHER_REPO')
  await app.as('alice', { method: 'PATCH', url: `/p1/reports/release/${id}/issues`, payload: { add_issues: [ref(OTHER_REPO, 1), ref(REPO, 1)], remove_issues: [] } })
  const removed = await app.as('alice', { method: 'DELETE', url: `/p1/reports/release/${id}/repository/${OTHER_REPO}` })
  t.equal(removed.statusCode, 204)
  t.equal(removed.body, '')
  t.same((await app.as('alice', { url: `/p1/reports/release/${id}/issues` })).json(), [ref(REPO, 1)], 'its issues left with it')
  t.equal((await app.as('alice', { method: 'DELETE', url: `/p1/reports/release/${id}/repository/${OTHER_REPO}` })).statusCode, 404)
  const last = await app.as('alice', { method: 'DELETE', url: `/p1/reports/release/${id}/repository/${REPO}` })
  t.equal(last.statusCode, 400)
  t.match(last.json().message, /at least one repository/)
})

t.test('issues of a report', async (t) => {
  const app = await build(t)
  const { release_id: id } = (await create(app, { repositories: [PRIVATE_REPO] })).json()
  const url = `/p1/reports/release/${id}/issues`
  const res = await app.as('alice', { method: 'PATCH', url, payload: { add_issues: [ref(REPO, 2), ref(REPO, 3), ref(PRIVATE_REPO, 1)], remove_issues: [] } })
  t.equal(res.statusCode, 200)
  t.same(res.json(), { added: [ref(REPO, 2), ref(REPO, 3), ref(PRIVATE_REPO, 1)], removed: [] })
  const both = await app.as('bob', { method: 'PATCH', url, payload: { add_issues: [ref(REPO, 2), ref(REPO, 4)], remove_issues: [ref(REPO, 3), ref(REPO, 5)] } })
  t.same(both.json(), { added: [ref(REPO, 4)], removed: [ref(REPO, 3)] }, 'add and remove in one request; only what changed')
  t.same((await app.as('bob', { url })).json(), [ref(REPO, 2), ref(REPO, 4)], 'bob does not see the private repository\'s issue')
  t.same((await app.as('alice', { url })).json(), [ref(REPO, 2), ref(REPO, 4), ref(PRIVATE_REPO, 1)])
  const outside = await app.as('alice', { method: 'PATCH', url, payload: { add_issues: [ref(OTHER_REPO, 1)], remove_issues: [] } })
  t.equal(outside.statusCode, 400)
  t.match(outside.json().message, /not in the report's repositories: 1002#1/)
  t.equal((await app.as('alice', { method: 'PATCH', url, payload: { add_issues: [ref(REPO, 99)], remove_issues: [] } })).statusCode, 400)
  t.equal((await app.as('alice', { method: 'PATCH', url, payload: { add_issues: [] } })).statusCode, 400, 'both keys required')
  t.equal((await app.as('carol', { method: 'PATCH', url, payload: { add_issues: [], remove_issues: [] } })).statusCode, 403)
  t.equal((await app.as('alice', { url: '/p1/reports/release/ffffffffffffffffffffffff/issues' })).statusCode, 404)
})
