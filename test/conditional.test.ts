import t from 'tap'
import { join } from 'node:path'
import { runAdminCommand } from '../cli/admin.js'
import { noneMatch } from '../plugins/core/conditional.js'
import { build, P, REPO, TOKENS, WS_OLD } from './helper.js'

const BOARD = `/p1/repositories/${REPO}/board`
const ISSUE = `/p1/repositories/${REPO}/issues/1`

t.test('If-None-Match: a list, weak tags and * match; other tags do not', async (t) => {
  t.ok(noneMatch('"a"', '"a"'))
  t.ok(noneMatch('"x", W/"a"', '"a"'))
  t.ok(noneMatch('W/"a"', 'W/"a"'))
  t.ok(noneMatch('*', '"a"'))
  t.notOk(noneMatch('"b"', '"a"'))
  t.notOk(noneMatch('', '"a"'))
  t.notOk(noneMatch(undefined, '"a"'))
})

t.test('every read carries an ETag; the same tag answers 304 with no body', async (t) => {
  const app = await build(t)
  await app.as('alice', { method: 'POST', url: '/p1/dependencies', payload: { blocking: { repo_id: REPO, issue_number: 1 }, blocked: { repo_id: REPO, issue_number: 2 } } })
  await app.as('alice', { method: 'POST', url: `/p1/repositories/${REPO}/issues/3/convert_to_epic`, payload: { issues: [{ repo_id: REPO, issue_number: 4 }] } })
  await app.as('alice', { method: 'POST', url: `/p1/repositories/${REPO}/reports/release`, payload: { title: 'R1', start_date: '2026-01-01T00:00:00Z', desired_end_date: '2026-02-01T00:00:00Z' } })
  const reads = [
    BOARD, `/p2/workspaces/${WS_OLD}/repositories/${REPO}/board`, ISSUE, `/p1/repositories/${REPO}/epics`, `/p1/repositories/${REPO}/epics/3`,
    `/p1/repositories/${REPO}/issues/1/events`, `/p1/repositories/${REPO}/events`, `/p1/repositories/${REPO}/dependencies`,
    `/p1/repositories/${REPO}/reports/releases`
  ]
  for (const url of reads) {
    const first = await app.as('alice', { url })
    t.equal(first.statusCode, 200, url)
    const etag = first.headers.etag as string
    t.match(etag, /^"[A-Za-z0-9_-]+"$/, `${url} has a strong ETag`)
    const again = await app.as('alice', { url, headers: { 'if-none-match': etag } })
    t.equal(again.statusCode, 304, `${url} unchanged: 304`)
    t.equal(again.body, '', 'no body')
    t.equal(again.headers.etag, etag, 'the tag is repeated')
    t.equal((await app.as('alice', { url, headers: { 'if-none-match': `"other", W/${etag}` } })).statusCode, 304, 'a list with the weak form matches')
    const other = await app.as('alice', { url, headers: { 'if-none-match': '"something-else"' } })
    t.equal(other.statusCode, 200, 'another tag gets the whole answer')
    t.equal(other.body, first.body)
  }
})

t.test('errors carry no ETag and are never answered with a 304', async (t) => {
  const app = await build(t)
  const missing = await app.as('alice', { url: `/p1/repositories/${REPO}/issues/999` })
  t.equal(missing.statusCode, 404)
  t.equal(missing.headers.etag, undefined)
  t.equal((await app.as('alice', { url: `/p1/repositories/${REPO}/issues/999`, headers: { 'if-none-match': '*' } })).statusCode, 404)
  t.equal((await app.as('dave', { url: BOARD, headers: { 'if-none-match': '*' } })).statusCode, 404, 'no read access: 404 even with *')
})

t.test('a 304 is not counted against the rate limit; a 200 is', async (t) => {
  const app = await build(t, { rateLimit: { max: 3, timeWindow: 60_000 } })
  const first = await app.as('carol', { url: BOARD })
  t.equal(first.headers['x-ratelimit-used'], '1')
  for (let i = 0; i < 10; i++) {
    const res = await app.as('carol', { url: BOARD, headers: { 'if-none-match': first.headers.etag as string } })
    t.equal(res.statusCode, 304)
    t.equal(res.headers['x-ratelimit-used'], '1', 'the 304 gave its request back')
  }
  t.equal((await app.as('carol', { url: BOARD })).headers['x-ratelimit-used'], '2')
  t.equal((await app.as('carol', { url: BOARD })).headers['x-ratelimit-used'], '3')
  t.equal((await app.as('carol', { url: BOARD })).statusCode, 403, 'full 200s still spend the budget')
})

t.test('the ETag moves when the answer changes, and only then', async (t) => {
  const app = await build(t)
  const tag = async (url: string) => (await app.as('alice', { url })).headers.etag
  const board = await tag(BOARD)
  const issue = await tag(ISSUE)
  t.equal((await app.as('alice', { method: 'PUT', url: `/p1/repositories/${REPO}/issues/6/estimate`, payload: { estimate: 2 } })).statusCode, 200)
  t.not(await tag(BOARD), board, 'an estimate on the board: a new tag')
  t.equal(await tag(ISSUE), issue, 'issue 1 did not change: same tag although the database did')
})

t.test('cached reads follow every kind of write', async (t) => {
  const database = join(t.testdir({}), 'planning.db')
  const app = await build(t, { database })
  const other = await build(t, { database, fixture: null })
  const numbers = async (on = app) => (await on.inject({ url: BOARD, headers: { 'x-authentication-token': TOKENS.alice } })).json().pipelines[0].issues.map((i: { issue_number: number }) => i.issue_number)
  const issue = async (on = app) => (await on.inject({ url: ISSUE, headers: { 'x-authentication-token': TOKENS.alice } })).json()
  t.same(await numbers(), [1, 2, 3, 4, 5, 6])
  t.same(await numbers(other), [1, 2, 3, 4, 5, 6], 'the second instance has cached it too')
  t.same((await issue()).estimate, undefined)

  t.equal((await app.as('bob', { method: 'POST', url: `${ISSUE}/moves`, payload: { pipeline_id: P.todo, position: 'bottom' } })).statusCode, 200)
  t.same(await numbers(), [2, 3, 4, 5, 6, 1], 'a move through the API')
  t.same(await numbers(other), [2, 3, 4, 5, 6, 1], 'a move through the API, read on the second instance')

  t.equal((await other.inject({ method: 'PUT', url: `${ISSUE}/estimate`, payload: { estimate: 8 }, headers: { 'x-authentication-token': TOKENS.bob } })).statusCode, 200)
  t.same((await issue()).estimate, { value: 8 }, 'an estimate through the second instance')

  t.equal((await app.admin({ method: 'PATCH', url: `/admin/repositories/${REPO}/issues/2`, payload: { state: 'closed' } })).statusCode, 200)
  t.same(await numbers(), [3, 4, 5, 6, 1], 'an issue closed through the admin API')

  await runAdminCommand(database, ['close-issue', String(REPO), '3'])
  t.same(await numbers(), [4, 5, 6, 1], 'an issue closed through the admin CLI')
  t.same(await numbers(other), [4, 5, 6, 1])

  t.equal((await app.admin({ method: 'PUT', url: `/admin/repositories/${REPO}/permissions/alice`, payload: { permission: 'none' } })).statusCode, 200)
  t.equal((await other.inject({ url: BOARD, headers: { 'x-authentication-token': TOKENS.alice } })).statusCode, 404, 'a permission removed: the cached board is not served')
  t.equal((await app.admin({ method: 'POST', url: '/admin/users/bob/token' })).statusCode, 200)
  t.equal((await other.inject({ url: ISSUE, headers: { 'x-authentication-token': TOKENS.bob } })).statusCode, 401, 'a regenerated token stops at once')
})
