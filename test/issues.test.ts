import t from 'tap'
import { build, REPO, OTHER_REPO, WS_OLD, WS_NEW, P } from './helper.js'

t.test('issue data has the hosted shape plus status', async (t) => {
  const app = await build(t)
  const res = await app.as('carol', { url: `/p1/repositories/${REPO}/issues/1` })
  t.equal(res.statusCode, 200)
  t.same(res.json(), {
    plus_ones: [],
    pipelines: [
      { name: 'To Do', pipeline_id: P.todo, workspace_id: WS_OLD },
      { name: 'Ideas', pipeline_id: P.ideas, workspace_id: WS_NEW }
    ],
    is_epic: false,
    status: 'open',
    pipeline: { name: 'To Do', pipeline_id: P.todo, workspace_id: WS_OLD }
  }, 'no estimate key when none is set; pipeline is the oldest workspace\'s')
  t.equal((await app.as('carol', { url: `/p1/repositories/${REPO}/issues/404` })).statusCode, 404)
  t.equal((await app.as('carol', { url: `/p1/repositories/${REPO}/issues/404` })).json().message, `issue 404 not found in repository ${REPO}`)
})

t.test('the pipeline of the oldest workspace follows moves there, not elsewhere', async (t) => {
  const app = await build(t)
  await app.as('bob', { method: 'POST', url: `/p2/workspaces/${WS_NEW}/repositories/${REPO}/issues/2/moves`, payload: { pipeline_id: P.now, position: 'top' } })
  let data = (await app.as('bob', { url: `/p1/repositories/${REPO}/issues/2` })).json()
  t.equal(data.pipeline.pipeline_id, P.todo)
  t.equal(data.pipelines[1].pipeline_id, P.now)
  await app.as('bob', { method: 'POST', url: `/p1/repositories/${REPO}/issues/2/moves`, payload: { pipeline_id: P.doing, position: 'top' } })
  data = (await app.as('bob', { url: `/p1/repositories/${REPO}/issues/2` })).json()
  t.equal(data.pipeline.name, 'Doing')
})

t.test('estimates: set, clear, permissions and bad input', async (t) => {
  const app = await build(t)
  const url = `/p1/repositories/${REPO}/issues/3/estimate`
  const set = await app.as('bob', { method: 'PUT', url, payload: { estimate: 8 } })
  t.equal(set.statusCode, 200)
  t.same(set.json(), { estimate: 8 })
  t.same((await app.as('bob', { url: `/p1/repositories/${REPO}/issues/3` })).json().estimate, { value: 8 })
  t.same((await app.as('bob', { method: 'PUT', url, payload: { estimate: 0.5 } })).json(), { estimate: 0.5 })
  t.same((await app.as('bob', { method: 'PUT', url, payload: { estimate: 0 } })).json(), { estimate: 0 }, 'zero is an estimate')
  const cleared = await app.as('bob', { method: 'PUT', url, payload: { estimate: null } })
  t.same(cleared.json(), { estimate: null })
  t.notOk('estimate' in (await app.as('bob', { url: `/p1/repositories/${REPO}/issues/3` })).json())
  t.equal((await app.as('carol', { method: 'PUT', url, payload: { estimate: 1 } })).statusCode, 403)
  t.equal((await app.as('dave', { method: 'PUT', url, payload: { estimate: 1 } })).statusCode, 404)
  t.equal((await app.as('bob', { method: 'PUT', url: `/p1/repositories/${REPO}/issues/99/estimate`, payload: { estimate: 1 } })).statusCode, 404)
  for (const payload of [{}, { estimate: '5' }, { estimate: -2 }, { estimate: true }, { estimate: [1] }]) {
    const res = await app.as('bob', { method: 'PUT', url, payload })
    t.equal(res.statusCode, 400, JSON.stringify(payload))
    t.match(res.json().message, /body/)
  }
})

t.test('events list estimate and transfer changes, newest first', async (t) => {
  const app = await build(t)
  const base = `/p1/repositories/${REPO}/issues/4`
  await app.as('bob', { method: 'PUT', url: `${base}/estimate`, payload: { estimate: 4 } })
  await app.as('bob', { method: 'PUT', url: `${base}/estimate`, payload: { estimate: 8 } })
  await app.as('bob', { method: 'PUT', url: `${base}/estimate`, payload: { estimate: null } })
  await app.as('bob', { method: 'POST', url: `${base}/moves`, payload: { pipeline_id: P.doing, position: 'top' } })
  await app.as('bob', { method: 'POST', url: `${base}/moves`, payload: { pipeline_id: P.doing, position: 'bottom' } })
  const res = await app.as('carol', { url: `${base}/events` })
  t.equal(res.statusCode, 200)
  const events = res.json() as Array<Record<string, unknown>>
  const stripped = events.map(({ created_at: at, ...rest }) => { t.ok(Date.parse(String(at)) > 0); return rest })
  t.same(stripped, [
    { type: 'transferIssue', user_id: 2, from_pipeline: { name: 'To Do' }, to_pipeline: { name: 'Doing' }, workspace_id: WS_OLD },
    { type: 'estimateIssue', user_id: 2, from_estimate: { value: 8 } },
    { type: 'estimateIssue', user_id: 2, from_estimate: { value: 4 }, to_estimate: { value: 8 } },
    { type: 'estimateIssue', user_id: 2, to_estimate: { value: 4 } },
    { type: 'transferIssue', user_id: 1, to_pipeline: { name: 'Ideas' }, workspace_id: WS_NEW },
    { type: 'transferIssue', user_id: 1, to_pipeline: { name: 'To Do' }, workspace_id: WS_OLD }
  ], 'a reorder in one pipeline records no event; first placements have no from_pipeline')
  const times = events.map((e) => Date.parse(String(e.created_at)))
  t.same(times, [...times].sort((a, b) => b - a), 'sorted by creation time, newest first')
  t.same((await app.as('bob', { url: `/p1/repositories/${OTHER_REPO}/issues/1/events` })).json(), [], 'no author, no first-placement event')
  t.equal((await app.as('dave', { url: `${base}/events` })).statusCode, 404)
})
