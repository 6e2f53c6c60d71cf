import t from 'tap'
import { sql, type Kysely } from 'kysely'
import type { FastifyInstance } from 'fastify'
import { buildApp } from '../app.js'
import type { Database } from '../db/schema.js'
import { TEST_DATABASE_URL } from './pg.js'
import { addDays, localDate, startOfDay } from '../db/zoned-time.js'
import { planIndex, planned } from '../db/sprints.js'
import { OTHER_REPO, PRIVATE_REPO, REPO, TOKENS, WS_OLD, WS_NEW } from './helper.js'
import { buildWithHistory, estimate, setState } from './history-helper.js'

const BERLIN = { length_weeks: 1, starts_on: '2026-03-23', time_zone: 'Europe/Berlin', carry_over: true }
const ref = (repo_id: number, issue_number: number) => ({ repo_id, issue_number })
const schemaOf = async (db: Kysely<Database>): Promise<string> => (await sql<{ schema: string }>`SELECT current_schema() AS schema`.execute(db)).rows[0].schema

t.test('zoned days and sprint plans across a DST change, through Intl', async (t) => {
  t.equal(new Date(startOfDay('2026-03-29', 'Europe/Berlin')).toISOString(), '2026-03-28T23:00:00.000Z')
  t.equal(new Date(startOfDay('2026-03-30', 'Europe/Berlin')).toISOString(), '2026-03-29T22:00:00.000Z', 'summer time: +02:00')
  t.equal(new Date(startOfDay('2026-11-01', 'America/New_York')).toISOString(), '2026-11-01T04:00:00.000Z')
  t.equal(new Date(startOfDay('2026-11-02', 'America/New_York')).toISOString(), '2026-11-02T05:00:00.000Z', 'back to standard time')
  // Chile's clocks skip midnight: the day begins at 01:00.
  t.equal(new Date(startOfDay('2026-09-06', 'America/Santiago')).toISOString(), '2026-09-06T04:00:00.000Z')
  t.equal(localDate(Date.parse('2026-03-29T21:59:59Z'), 'Europe/Berlin'), '2026-03-29')
  t.equal(localDate(Date.parse('2026-03-29T22:00:00Z'), 'Europe/Berlin'), '2026-03-30')
  t.equal(addDays('2026-02-28', 1), '2026-03-01')
  t.same(planned(BERLIN, 0), { number: 1, starts_at: '2026-03-22T23:00:00.000Z', ends_at: '2026-03-29T22:00:00.000Z' }, 'a 167-hour sprint')
  t.same(planned(BERLIN, 1), { number: 2, starts_at: '2026-03-29T22:00:00.000Z', ends_at: '2026-04-05T22:00:00.000Z' })
  t.equal(planIndex(BERLIN, Date.parse('2026-03-29T21:59:59Z')), 0)
  t.equal(planIndex(BERLIN, Date.parse('2026-03-29T22:00:00Z')), 1)
  t.equal(planIndex(BERLIN, Date.parse('2026-03-01T00:00:00Z')), -1)
  t.equal(planIndex({ ...BERLIN, length_weeks: 2 }, Date.parse('2027-03-29T00:00:00Z')), 26)
})

t.test('sprint config: permissions and validation', async (t) => {
  const clock = { now: Date.parse('2026-03-20T12:00:00Z') }
  const { app } = await buildWithHistory(t, { clock: () => clock.now, sprintTickMs: 0 })
  const url = `/p2/workspaces/${WS_OLD}/sprint_config`
  t.equal((await app.as('alice', { url })).statusCode, 404, 'none yet')
  t.equal((await app.as('bob', { method: 'PUT', url, payload: BERLIN })).statusCode, 403, 'admin on every repository needed')
  t.equal((await app.as('dave', { method: 'PUT', url, payload: BERLIN })).statusCode, 404, 'an unreadable workspace does not exist')
  for (const bad of [{ ...BERLIN, time_zone: 'Mars/Olympus' }, { ...BERLIN, starts_on: '2026-02-30' }, { ...BERLIN, length_weeks: 5 }]) {
    const res = await app.as('alice', { method: 'PUT', url, payload: bad })
    t.equal(res.statusCode, 400, JSON.stringify(bad))
  }
  const set = await app.as('alice', { method: 'PUT', url, payload: BERLIN })
  t.equal(set.statusCode, 200)
  t.same((await app.as('carol', { url })).json(), BERLIN)
  const sprints = (await app.as('carol', { url: `/p2/workspaces/${WS_OLD}/sprints` })).json()
  t.same(sprints.map((s: { name: string, state: string, starts_at: string }) => [s.name, s.state, s.starts_at]), [
    ['Sprint 1', 'future', '2026-03-22T23:00:00.000Z'],
    ['Sprint 2', 'future', '2026-03-29T22:00:00.000Z'],
    ['Sprint 3', 'future', '2026-04-05T22:00:00.000Z'],
    ['Sprint 4', 'future', '2026-04-12T22:00:00.000Z']
  ], 'four sprints before the first starts')

  // Re-planning moves future sprints only; their ids (and issues) stay.
  clock.now = Date.parse('2026-03-25T12:00:00Z')
  const before = (await app.as('alice', { url: `/p2/workspaces/${WS_OLD}/sprints` })).json()
  t.same(before.map((s: { state: string }) => s.state), ['active', 'future', 'future', 'future'])
  await app.as('alice', { method: 'PUT', url, payload: { ...BERLIN, length_weeks: 2, starts_on: '2026-03-30' } })
  const after = (await app.as('alice', { url: `/p2/workspaces/${WS_OLD}/sprints` })).json()
  t.same(after.map((s: { id: string, name: string, starts_at: string, ends_at: string }) => [s.id, s.name, s.starts_at, s.ends_at]), [
    [before[0].id, 'Sprint 1', '2026-03-22T23:00:00.000Z', '2026-03-29T22:00:00.000Z'],
    [before[1].id, 'Sprint 1', '2026-03-29T22:00:00.000Z', '2026-04-12T22:00:00.000Z'],
    [before[2].id, 'Sprint 2', '2026-04-12T22:00:00.000Z', '2026-04-26T22:00:00.000Z'],
    [before[3].id, 'Sprint 3', '2026-04-26T22:00:00.000Z', '2026-05-10T22:00:00.000Z']
  ])
  t.equal((await app.as('alice', { url: `/p2/workspaces/${WS_NEW}/sprints` })).json().length, 0, 'another workspace has none')
})

t.test('a plan that starts today or in the past has its current sprint at once', async (t) => {
  const clock = { now: Date.parse('2026-03-25T12:00:00Z') }
  const { app } = await buildWithHistory(t, { clock: () => clock.now, sprintTickMs: 0 })
  const url = `/p2/workspaces/${WS_OLD}/sprint_config`
  type Row = { id: string, name: string, state: string, starts_at: string, ends_at: string }
  const list = async (ws: string, query = ''): Promise<Row[]> => (await app.as('alice', { url: `/p2/workspaces/${ws}/sprints${query}` })).json()

  t.equal((await app.as('alice', { method: 'PUT', url, payload: { ...BERLIN, starts_on: '2026-03-25' } })).statusCode, 200)
  const today = await list(WS_OLD, '?state=active')
  t.same(today.map((s) => [s.name, s.starts_at, s.ends_at]), [['Sprint 1', '2026-03-24T23:00:00.000Z', '2026-03-31T22:00:00.000Z']], 'a start today: Sprint 1 is active')
  t.same((await list(WS_OLD)).map((s) => [s.name, s.state]), [['Sprint 1', 'active'], ['Sprint 2', 'future'], ['Sprint 3', 'future'], ['Sprint 4', 'future']], 'the current one and the next three')
  const burndown = await app.as('alice', { url: `/p2/sprints/${today[0].id}/burndown` })
  t.equal(burndown.statusCode, 200, 'a burndown on day one')
  t.same(burndown.json().days.map((d: { date: string }) => d.date), ['2026-03-25'])

  // A start in the past: the sprint holding today is numbered from the start, as the plan has it.
  const past = `/p2/workspaces/${WS_NEW}/sprint_config`
  t.equal((await app.as('alice', { method: 'PUT', url: past, payload: { ...BERLIN, starts_on: '2026-03-09' } })).statusCode, 200)
  t.same((await list(WS_NEW)).map((s) => [s.name, s.state, s.starts_at]), [
    ['Sprint 3', 'active', '2026-03-22T23:00:00.000Z'], ['Sprint 4', 'future', '2026-03-29T22:00:00.000Z'],
    ['Sprint 5', 'future', '2026-04-05T22:00:00.000Z'], ['Sprint 6', 'future', '2026-04-12T22:00:00.000Z']
  ])
})

t.test('moving a plan that has not begun to today makes its nearest sprint the current one, issues and all', async (t) => {
  const clock = { now: Date.parse('2026-03-20T12:00:00Z') }
  const { app } = await buildWithHistory(t, { clock: () => clock.now, sprintTickMs: 0 })
  const url = `/p2/workspaces/${WS_OLD}/sprint_config`
  await app.as('alice', { method: 'PUT', url, payload: BERLIN })
  const [s1] = (await app.as('alice', { url: `/p2/workspaces/${WS_OLD}/sprints` })).json()
  await app.as('alice', { method: 'POST', url: `/p2/sprints/${s1.id}/issues`, payload: { issues: [ref(REPO, 2)] } })
  t.equal((await app.as('alice', { method: 'PUT', url, payload: { ...BERLIN, starts_on: '2026-03-16' } })).statusCode, 200)
  const active = (await app.as('alice', { url: `/p2/workspaces/${WS_OLD}/sprints?state=active` })).json()
  t.same(active.map((s: { id: string, name: string, starts_at: string, issues_total: number }) => [s.id, s.name, s.starts_at, s.issues_total]), [[s1.id, 'Sprint 1', '2026-03-15T23:00:00.000Z', 1]])
  const feed = (await app.as('alice', { url: `/p2/workspaces/${WS_OLD}/sprint_events?limit=100` })).json()
  t.same(feed.filter((e: { type: string }) => e.type === 'sprint_started').map((e: { sprint_id: string }) => e.sprint_id), [s1.id], 'started once')

  // A re-plan that leaves a gap after the active sprint: the gap becomes a sprint when it comes.
  clock.now = Date.parse('2026-03-25T12:00:00Z')
  await app.as('alice', { method: 'PUT', url, payload: { ...BERLIN, length_weeks: 2, starts_on: '2026-03-25' } })
  clock.now = Date.parse('2026-04-01T12:00:00Z')
  const now = (await app.as('alice', { url: `/p2/workspaces/${WS_OLD}/sprints?state=active` })).json()
  t.equal(now.length, 1, 'a sprint holds today')
  t.same([now[0].name, now[0].starts_at, now[0].ends_at], ['Sprint 1', '2026-03-29T22:00:00.000Z', '2026-04-07T22:00:00.000Z'], 'from the end of the last to the plan\'s next start')
})

t.test('sprint issues, carry-over at the boundary, review, burndown in two zones, events', async (t) => {
  const clock = { now: Date.parse('2026-03-20T12:00:00Z') }
  const { app, db } = await buildWithHistory(t, { clock: () => clock.now, sprintTickMs: 0, webhooks: { worker: false } })
  const hook = await app.as('alice', { method: 'POST', url: `/p1/repositories/${REPO}/webhooks`, payload: { url: 'https://example.com/hook', events: ['sprint_started', 'sprint_ended', 'sprint_issue_added', 'sprint_issue_removed'] } })
  t.equal(hook.statusCode, 201)
  await app.as('alice', { method: 'PUT', url: `/p2/workspaces/${WS_OLD}/sprint_config`, payload: BERLIN })
  const [s1, s2] = (await app.as('bob', { url: `/p2/workspaces/${WS_OLD}/sprints` })).json()
  for (const [n, points] of [[1, 3], [3, 5], [4, 2], [5, 1]]) await estimate(db, REPO, n, points, '2026-03-20T10:00:00.000Z')

  const issues = `/p2/sprints/${s1.id}/issues`
  const add = await app.as('bob', { method: 'POST', url: issues, payload: { issues: [ref(REPO, 1), ref(REPO, 3), ref(REPO, 4), ref(REPO, 3)] } })
  t.equal(add.statusCode, 200)
  t.same(add.json(), { added: [ref(REPO, 1), ref(REPO, 3), ref(REPO, 4)] })
  t.equal((await app.as('bob', { method: 'POST', url: issues, payload: { issues: [ref(OTHER_REPO, 1)] } })).statusCode, 403, 'read access is not enough')
  const hidden = await app.as('bob', { method: 'POST', url: issues, payload: { issues: [ref(PRIVATE_REPO, 1)] } })
  t.equal(hidden.statusCode, 400, 'an unreadable issue is refused as unknown')
  t.notMatch(hidden.body, /Secret/)
  t.equal((await app.as('bob', { method: 'POST', url: issues, payload: { issues: Array.from({ length: 101 }, (_, i) => ref(REPO, i + 1)) } })).statusCode, 400, 'at most 100')
  t.equal((await app.as('dave', { url: `/p2/sprints/${s1.id}` })).statusCode, 404)
  t.equal((await app.as('alice', { method: 'POST', url: `/p2/sprints/${s2.id}/issues`, payload: { issues: [ref(PRIVATE_REPO, 1)] } })).statusCode, 200)

  // Moving an issue to another open sprint takes it out of the first.
  await app.as('bob', { method: 'POST', url: `/p2/sprints/${s2.id}/issues`, payload: { issues: [ref(REPO, 4)] } })
  t.equal((await app.as('bob', { url: `/p2/sprints/${s1.id}` })).json().issues_total, 2)
  await app.as('bob', { method: 'POST', url: issues, payload: { issues: [ref(REPO, 4)] } })
  const one = (await app.as('bob', { url: `/p2/sprints/${s1.id}` })).json()
  t.match(one, { issues_total: 3, points_total: 10, issues_closed: 0, state: 'future' })
  t.same((await app.as('bob', { url: `/p2/sprints/${s2.id}` })).json().issues_total, 0, 'bob cannot see the private issue')
  t.same((await app.as('alice', { url: `/p2/sprints/${s2.id}` })).json().issues_total, 1)

  // During the sprint: one issue added and removed, one re-estimated; closes one second either side of the end.
  clock.now = Date.parse('2026-03-24T12:00:00Z')
  await app.as('bob', { method: 'POST', url: issues, payload: { issues: [ref(REPO, 5)] } })
  await estimate(db, REPO, 4, 4, '2026-03-25T10:00:00.000Z')
  clock.now = Date.parse('2026-03-26T12:00:00Z')
  const removed = await app.as('bob', { method: 'DELETE', url: issues, payload: { issues: [ref(REPO, 5), ref(REPO, 6)] } })
  t.same(removed.json(), { removed: [ref(REPO, 5)] })
  await setState(db, REPO, 1, 'closed', '2026-03-29T21:59:59.000Z')
  await setState(db, REPO, 3, 'closed', '2026-03-29T22:00:01.000Z')

  clock.now = Date.parse('2026-04-01T00:00:00Z')
  const states = (await app.as('bob', { url: `/p2/workspaces/${WS_OLD}/sprints?state=closed` })).json()
  t.same(states.map((s: { id: string }) => s.id), [s1.id])
  t.match(states[0], { issues_total: 3, issues_closed: 1, points_total: 12, points_closed: 3 }, 'closed counts as of the end')
  const next = (await app.as('bob', { url: `/p2/sprints/${s2.id}` })).json()
  t.match(next, { state: 'active', issues_total: 2, issues_closed: 1, points_total: 9 }, 'the issue open at the end (closed a second later) and the open one carried over')
  t.equal((await app.as('bob', { method: 'POST', url: issues, payload: { issues: [ref(REPO, 2)] } })).statusCode, 409, 'an ended sprint takes no issues')

  const review = (await app.as('bob', { url: `/p2/sprints/${s1.id}/review` })).json()
  t.same(review.committed, { issues: 3, points: 10 })
  t.same(review.completed, { issues: 1, points: 3 })
  t.same(review.added, [{ repo_id: REPO, issue_number: 5, at: '2026-03-24T12:00:00.000Z', points: 1, carried: false }])
  t.same(review.removed, [{ repo_id: REPO, issue_number: 5, at: '2026-03-26T12:00:00.000Z', points: 1 }])
  t.same(review.carried_over.map((c: { issue_number: number, to_sprint_id: string }) => [c.issue_number, c.to_sprint_id]), [[3, s2.id], [4, s2.id]])
  t.same(review.velocity, { sprints: [{ id: s1.id, name: 'Sprint 1', points: 3, issues: 1 }], average_points: 3, average_issues: 1 })

  const berlin = (await app.as('bob', { url: `/p2/sprints/${s1.id}/burndown` })).json()
  t.equal(berlin.time_zone, 'Europe/Berlin')
  type Day = { date: string, remaining_points: number, remaining_issues: number, closed_points: number }
  t.same(berlin.days.map((d: Day) => [d.date, d.remaining_points, d.remaining_issues, d.closed_points]), [
    ['2026-03-23', 10, 3, 0], ['2026-03-24', 11, 4, 0], ['2026-03-25', 13, 4, 0], ['2026-03-26', 12, 3, 0],
    ['2026-03-27', 12, 3, 0], ['2026-03-28', 12, 3, 0], ['2026-03-29', 9, 2, 3]
  ])
  t.same(berlin.ideal.map((i: { remaining_points: number }) => i.remaining_points), [10, 8.333, 6.667, 5, 3.333, 1.667, 0])
  t.same(berlin.scope_changes, [
    { at: '2026-03-24T12:00:00.000Z', repo_id: REPO, issue_number: 5, change: 'added', points: 1 },
    { at: '2026-03-25T10:00:00.000Z', repo_id: REPO, issue_number: 4, change: 'estimate', points: 2 },
    { at: '2026-03-26T12:00:00.000Z', repo_id: REPO, issue_number: 5, change: 'removed', points: 1 }
  ])
  const york = (await app.as('bob', { url: `/p2/sprints/${s1.id}/burndown?time_zone=America/New_York` })).json()
  t.same(york.days.map((d: { date: string, remaining_points: number }) => [d.date, d.remaining_points]), [
    ['2026-03-22', 10], ['2026-03-23', 10], ['2026-03-24', 11], ['2026-03-25', 13], ['2026-03-26', 12], ['2026-03-27', 12], ['2026-03-28', 12], ['2026-03-29', 9]
  ])
  const csv = await app.as('bob', { url: `/p2/sprints/${s1.id}/burndown`, headers: { accept: 'text/csv' } })
  t.match(csv.headers['content-type'], /^text\/csv/)
  t.equal(csv.body.split('\r\n')[0], 'date,remaining_points,remaining_issues,closed_points,ideal_points')
  t.equal(csv.body.split('\r\n')[2], '2026-03-24,11,4,0,8.333')

  // Today's series stops at today.
  clock.now = Date.parse('2026-03-31T10:00:00Z')
  const partial = (await app.as('bob', { url: `/p2/sprints/${s2.id}/burndown` })).json()
  t.same(partial.days.map((d: { date: string }) => d.date), ['2026-03-30', '2026-03-31'])
  t.equal(partial.ideal.length, 7)

  const velocity = (await app.as('bob', { url: `/p2/workspaces/${WS_OLD}/velocity?format=csv` }))
  t.equal(velocity.body, `sprint_id,name,starts_at,ends_at,points_closed,issues_closed\r\n${s1.id},Sprint 1,2026-03-22T23:00:00.000Z,2026-03-29T22:00:00.000Z,3,1\r\n`)

  const feed = (await app.as('bob', { url: `/p2/workspaces/${WS_OLD}/sprint_events?limit=100` })).json()
  t.notOk(feed.some((e: { repo_id?: number }) => e.repo_id === PRIVATE_REPO), 'no event of an unreadable repository')
  t.same(feed.filter((e: { type: string }) => e.type === 'sprint_started' || e.type === 'sprint_ended').map((e: { type: string, sprint_id: string, at: string }) => [e.type, e.sprint_id, e.at]), [
    ['sprint_started', s1.id, '2026-03-22T23:00:00.000Z'], ['sprint_ended', s1.id, '2026-03-29T22:00:00.000Z'], ['sprint_started', s2.id, '2026-03-29T22:00:00.000Z']
  ])
  t.equal(feed.filter((e: { carried: boolean }) => e.carried).length, 2)
  const deliveries = await db.selectFrom('webhook_deliveries').select(['event_type', 'body']).orderBy('seq').execute()
  const types = deliveries.map((d) => d.event_type)
  t.ok(types.includes('sprint_started') && types.includes('sprint_ended') && types.includes('sprint_issue_added') && types.includes('sprint_issue_removed'))
  const carried = deliveries.find((d) => d.event_type === 'sprint_issue_added' && d.body.includes('carried_over=true'))
  t.match(new URLSearchParams(carried!.body).get('sprint_id'), s2.id)
})

t.test('settling is done once whoever comes first', async (t) => {
  const clock = { now: Date.parse('2026-03-20T12:00:00Z') }
  const { app, db } = await buildWithHistory(t, { clock: () => clock.now, sprintTickMs: 0 })
  await app.as('alice', { method: 'PUT', url: `/p2/workspaces/${WS_OLD}/sprint_config`, payload: BERLIN })
  const [s1] = (await app.as('alice', { url: `/p2/workspaces/${WS_OLD}/sprints` })).json()
  await app.as('alice', { method: 'POST', url: `/p2/sprints/${s1.id}/issues`, payload: { issues: [ref(REPO, 2)] } })
  clock.now = Date.parse('2026-04-20T00:00:00Z')
  const reads = await Promise.all(Array.from({ length: 6 }, async () => await app.as('alice', { url: `/p2/workspaces/${WS_OLD}/sprints` })))
  t.ok(reads.every((r) => r.statusCode === 200))
  const ended = await db.selectFrom('sprint_events').select(['sprint_id']).where('type', '=', 'sprint_ended').execute()
  t.equal(ended.length, new Set(ended.map((e) => e.sprint_id)).size, 'each end processed once')
  const open = await db.selectFrom('sprint_issues').select('sprint_id').where('open', '=', 1).execute()
  t.equal(open.length, 1, 'the open issue travelled through every ended sprint to the current one')
  const current = reads[0].json().find((s: { state: string }) => s.state === 'active')
  t.equal(open[0].sprint_id, current.id)
})

t.test('two instances on one database settle each boundary once; the tick settles with no reader', async (t) => {
  // Two instances in one process share a database on PostgreSQL; on SQLite (one writer per file, and a
  // second connection in the same thread would wait on itself) one instance serves every read.
  const clock = { now: Date.parse('2026-03-20T12:00:00Z') }
  const pg = TEST_DATABASE_URL !== undefined
  const { app, db } = await buildWithHistory(t, { clock: () => clock.now, sprintTickMs: pg ? 0 : 20 })
  let other = app as FastifyInstance
  if (pg) {
    other = await buildApp({
      databaseUrl: TEST_DATABASE_URL,
      databaseSchema: await schemaOf(db),
      databasePoolMax: 4,
      clock: () => clock.now,
      sprintTickMs: 20,
      rateLimit: false,
      documentation: false
    })
    t.teardown(async () => await other.close())
    await other.ready()
  }
  await app.as('alice', { method: 'PUT', url: `/p2/workspaces/${WS_OLD}/sprint_config`, payload: BERLIN })
  const [s1] = (await app.as('alice', { url: `/p2/workspaces/${WS_OLD}/sprints` })).json()
  await app.as('alice', { method: 'POST', url: `/p2/sprints/${s1.id}/issues`, payload: { issues: [ref(REPO, 2)] } })
  clock.now = Date.parse('2026-04-14T00:00:00Z')
  const reads = await Promise.all(Array.from({ length: 4 }, async (_, i) => {
    const target = i % 2 === 0 ? app : other
    return await target.inject({ url: `/p2/workspaces/${WS_OLD}/sprints`, headers: { 'x-authentication-token': TOKENS.alice } })
  }))
  t.same(reads.map((r) => r.statusCode), [200, 200, 200, 200])
  const ended = await db.selectFrom('sprint_events').select('sprint_id').where('type', '=', 'sprint_ended').execute()
  t.equal(ended.length, 3)
  t.equal(new Set(ended.map((e) => e.sprint_id)).size, 3, 'each end once')
  // No one reads: a tick ends the next sprint and carries the issue on.
  clock.now = Date.parse('2026-04-21T00:00:00Z')
  for (let i = 0; i < 200; i++) {
    const count = (await db.selectFrom('sprint_events').select('id').where('type', '=', 'sprint_ended').execute()).length
    if (count === 4) break
    await new Promise((resolve) => setTimeout(resolve, 25))
  }
  t.equal((await db.selectFrom('sprint_events').select('id').where('type', '=', 'sprint_ended').execute()).length, 4)
  t.equal((await db.selectFrom('sprint_issues').select('issue_id').where('open', '=', 1).execute()).length, 1)
})
