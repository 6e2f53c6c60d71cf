import t from 'tap'
import { formReceiver } from './receiver.js'
import { build, REPO, OTHER_REPO, PRIVATE_REPO, WS_OLD, WS_NEW, P, type App } from './helper.js'

const move = async (app: App, n: number, pipeline: string, position: unknown = 'top') =>
  await app.as('bob', { method: 'POST', url: `/p1/repositories/${REPO}/issues/${n}/moves`, payload: { pipeline_id: pipeline, position } })
const estimate = async (app: App, n: number, value: number | null) =>
  await app.as('bob', { method: 'PUT', url: `/p1/repositories/${REPO}/issues/${n}/estimate`, payload: { estimate: value } })

t.test('many issues at once: in the order asked, unknown ones left out, the same data as one at a time', async (t) => {
  const app = await build(t)
  await estimate(app, 2, 5)
  const res = await app.as('carol', { url: `/p1/repositories/${REPO}/issues?issue_numbers=3,99,2,3` })
  t.equal(res.statusCode, 200)
  t.same(res.json().map((i: { issue_number: number }) => i.issue_number), [3, 2], 'asked order, duplicates once, #99 left out')
  const single = (await app.as('carol', { url: `/p1/repositories/${REPO}/issues/2` })).json()
  t.same(res.json()[1], { issue_number: 2, title: 'Issue 2', html_url: null, pull_request: false, labels: [], assignees: [], ...single }, 'the fields of issue data, with the title, the page, whether it is a pull request, the host\'s labels and assignees')
  for (const bad of ['1,,2', 'a', '0', '-1', '', Array.from({ length: 101 }, (_, i) => i + 1).join(',')]) {
    const refused = await app.as('carol', { url: `/p1/repositories/${REPO}/issues?issue_numbers=${bad}` })
    t.equal(refused.statusCode, 400, `issue_numbers=${bad.slice(0, 20)}`)
    t.match(refused.json().message, /issue_numbers/)
  }
  t.equal((await app.as('carol', { url: `/p1/repositories/${REPO}/issues` })).statusCode, 400, 'the list is required')
  t.equal((await app.as('carol', { url: `/p1/repositories/${OTHER_REPO}/issues?issue_numbers=1` })).statusCode, 404, 'no read access: 404')
})

t.test('a board filtered to one pipeline; the legacy board unchanged', async (t) => {
  const app = await build(t)
  const full = (await app.as('alice', { url: `/p1/repositories/${REPO}/board` })).json()
  const doing = await app.as('alice', { url: `/p1/repositories/${REPO}/board?pipeline_id=${P.todo}` })
  t.same(doing.json(), { pipelines: [full.pipelines[0]] })
  const p2 = await app.as('alice', { url: `/p2/workspaces/${WS_NEW}/repositories/${REPO}/board?pipeline_id=${P.now}` })
  t.same(p2.json().pipelines.map((p: { id: string }) => p.id), [P.now])
  const wrong = await app.as('alice', { url: `/p1/repositories/${REPO}/board?pipeline_id=${P.now}` })
  t.equal(wrong.statusCode, 400, 'a pipeline of another workspace')
  t.match(wrong.json().message, /querystring\/pipeline_id/)
  t.same((await app.as('alice', { url: `/p1/repositories/${REPO}/board` })).json(), full, 'without the parameter: the same board')
})

t.test('the events feed: oldest first, pages, a cursor that misses and repeats nothing while writes go on', async (t) => {
  const app = await build(t)
  const feed = async (query: string) => (await app.as('carol', { url: `/p1/repositories/${REPO}/events?${query}` })).json() as { data: Array<Record<string, unknown>>, next_cursor: string | null }
  const first = await feed('limit=3')
  t.equal(first.data.length, 3, 'the fixture\'s first placements')
  t.match(first.data[0], { issue_number: 1, type: 'transferIssue', to_pipeline: { name: 'To Do' } })
  const seen = first.data.map((e) => JSON.stringify(e))
  let cursor = first.next_cursor!
  for (let round = 0; round < 6; round++) {
    await estimate(app, 1 + (round % 6), round + 1)
    await move(app, 2 + (round % 4), round % 2 === 0 ? P.doing : P.todo)
    const page = await feed(`limit=2&cursor=${cursor}`)
    seen.push(...page.data.map((e) => JSON.stringify(e)))
    cursor = page.next_cursor!
  }
  let rest = await feed(`limit=100&cursor=${cursor}`)
  let last = cursor
  while (rest.data.length > 0) {
    seen.push(...rest.data.map((e) => JSON.stringify(e)))
    last = rest.next_cursor!
    rest = await feed(`limit=100&cursor=${last}`)
  }
  t.equal(rest.next_cursor, last, 'an empty page hands the same cursor back, to poll with')
  const all = (await feed('limit=100')).data.map((e) => JSON.stringify(e))
  t.same(seen, all, 'paging while writing saw every event once, in order')
  t.ok(all.length >= 6 + 12, `${all.length} events`)
  const estimates = (await feed('limit=100')).data.filter((e) => e.type === 'estimateIssue')
  t.same(estimates.map((e) => e.issue_number), [1, 2, 3, 4, 5, 6])
  const since = (await feed(`since=${encodeURIComponent(new Date(Date.now() + 60_000).toISOString())}`))
  t.same(since, { data: [], next_cursor: null }, 'nothing after a time to come')
  t.equal((await app.as('carol', { url: `/p1/repositories/${REPO}/events?cursor=bm9wZQ` })).statusCode, 400, 'a cursor we did not hand out')
  t.equal((await app.as('carol', { url: `/p1/repositories/${REPO}/events?limit=101` })).statusCode, 400)
  t.equal((await app.as('carol', { url: `/p1/repositories/${REPO}/events?since=yesterday` })).statusCode, 400)
  t.equal((await app.as('carol', { url: `/p1/repositories/${PRIVATE_REPO}/events` })).statusCode, 404)
})

t.test('issues whose planning data changed since a time', async (t) => {
  const app = await build(t)
  const start = new Date().toISOString()
  await new Promise((resolve) => setTimeout(resolve, 5))
  await estimate(app, 2, 3)
  await move(app, 4, P.doing)
  await app.as('bob', { method: 'POST', url: `/p1/repositories/${REPO}/issues/5/convert_to_epic`, payload: { issues: [{ repo_id: REPO, issue_number: 6 }] } })
  await app.as('alice', { method: 'POST', url: '/p1/dependencies', payload: { blocking: { repo_id: REPO, issue_number: 1 }, blocked: { repo_id: OTHER_REPO, issue_number: 1 } } })
  const changed = await app.as('carol', { url: `/p1/repositories/${REPO}/issues/changed?since=${encodeURIComponent(start)}` })
  t.equal(changed.statusCode, 200)
  t.same(changed.json().issue_numbers, [1, 2, 4, 5, 6], 'estimate, move, epic and its child, a dependency')
  const later = changed.json().as_of
  await new Promise((resolve) => setTimeout(resolve, 5))
  const again = await app.as('alice', { method: 'POST', url: '/p1/dependencies', payload: { blocking: { repo_id: REPO, issue_number: 1 }, blocked: { repo_id: OTHER_REPO, issue_number: 1 } } })
  t.equal(again.statusCode, 200, 'the same dependency again')
  t.same((await app.as('carol', { url: `/p1/repositories/${REPO}/issues/changed?since=${encodeURIComponent(later)}` })).json().issue_numbers, [], 'an existing pair changes nothing')
  t.equal((await app.as('carol', { url: `/p1/repositories/${REPO}/issues/changed` })).statusCode, 400, 'since is required')
})

t.test('the workspaces you can read, with only readable repositories', async (t) => {
  const app = await build(t)
  const carol = (await app.as('carol', { url: '/p2/workspaces' })).json()
  t.same(carol.map((w: { id: string }) => w.id), [WS_OLD, WS_NEW])
  t.same(carol[0].repositories, [REPO], 'carol reads only REPO')
  t.same(carol[0].pipelines, [{ id: P.todo, name: 'To Do', host_label: null }, { id: P.doing, name: 'Doing', host_label: null }, { id: P.done, name: 'Done', host_label: null }])
  t.same((await app.as('alice', { url: '/p2/workspaces' })).json()[0].repositories, [REPO, OTHER_REPO, PRIVATE_REPO])
  t.same((await app.as('dave', { url: '/p2/workspaces' })).json(), [], 'no readable repository: none')
})

t.test('time spent per pipeline', async (t) => {
  const app = await build(t)
  await move(app, 1, P.doing)
  await new Promise((resolve) => setTimeout(resolve, 30))
  await move(app, 1, P.done)
  const stays = (await app.as('carol', { url: `/p1/repositories/${REPO}/issues/1/pipeline_durations` })).json() as Array<Record<string, unknown>>
  const old = stays.filter((s) => s.workspace_id === WS_OLD)
  t.same(old.map((s) => s.pipeline_name), ['To Do', 'Doing', 'Done'])
  t.same(old.map((s) => s.pipeline_id), [P.todo, P.doing, P.done])
  t.ok((old[1].seconds as number) >= 0.02, `${old[1].seconds} s in Doing`)
  t.equal(old[2].left_at, null, 'still in Done')
  t.equal(old[1].left_at, old[2].entered_at)
  t.match(stays.find((s) => s.workspace_id === WS_NEW), { pipeline_name: 'Ideas', left_at: null }, 'the other workspace: in its first pipeline since it was created')
  t.equal((await app.as('carol', { url: `/p1/repositories/${REPO}/issues/99/pipeline_durations` })).statusCode, 404)
})

t.test('webhooks choose their events; the new types carry their own fields', async (t) => {
  const { url: hookUrl, received } = await formReceiver(t)
  const app = await build(t, { webhooks: { allowPrivate: true, retryBaseMs: 20 } })
  const url = hookUrl
  const legacy = await app.as('alice', { method: 'POST', url: `/p1/repositories/${REPO}/webhooks`, payload: { url } })
  t.same(legacy.json().events, ['issue_transfer', 'issue_reprioritized', 'estimate_set', 'estimate_cleared'], 'by default the hosted API\'s four')
  const chosen = await app.as('alice', { method: 'POST', url: `/p1/repositories/${REPO}/webhooks`, payload: { url: `${url}?new`, events: ['epic_issue_added', 'dependency_created', 'issue_closed', 'release_report_changed', 'estimate_set'] } })
  t.equal(chosen.statusCode, 201)
  t.equal((await app.as('alice', { method: 'POST', url: `/p1/repositories/${REPO}/webhooks`, payload: { url, events: ['everything'] } })).statusCode, 400)
  await app.as('bob', { method: 'POST', url: `/p1/repositories/${REPO}/issues/5/convert_to_epic`, payload: { issues: [{ repo_id: REPO, issue_number: 6 }] } })
  await app.as('bob', { method: 'POST', url: '/p1/dependencies', payload: { blocking: { repo_id: REPO, issue_number: 1 }, blocked: { repo_id: REPO, issue_number: 2 } } })
  await app.admin({ method: 'PATCH', url: `/admin/repositories/${REPO}/issues/3`, payload: { state: 'closed' } })
  await app.as('bob', { method: 'POST', url: `/p1/repositories/${REPO}/reports/release`, payload: { title: 'R1', start_date: '2026-01-01T00:00:00Z', desired_end_date: '2026-02-01T00:00:00Z' } })
  await estimate(app, 4, 8)
  const deadline = Date.now() + 5000
  while (received.length < 6 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20))
  await new Promise((resolve) => setTimeout(resolve, 200))
  const types = received.map((r) => r.type)
  t.same(types.filter((x) => x === 'estimate_set').length, 2, 'estimate_set to both webhooks')
  t.match(received.find((r) => r.type === 'epic_issue_added'), { issue_number: '5', child_repo_id: String(REPO), child_issue_number: '6', user_name: 'bob', github_url: '' })
  t.match(received.find((r) => r.type === 'dependency_created'), { issue_number: '2', blocking_issue_number: '1', blocked_issue_number: '2' })
  t.match(received.find((r) => r.type === 'issue_closed'), { issue_number: '3', issue_title: 'Issue 3', user_name: '' })
  t.match(received.find((r) => r.type === 'release_report_changed'), { change: 'created', release_title: 'R1', release_state: 'open', issue_number: '' })
  t.equal(types.length, 6, 'nothing else: the legacy webhook got only its four types')
})
