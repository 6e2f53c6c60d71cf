import t from 'tap'
import { build, REPO, OTHER_REPO, PRIVATE_REPO, WS_OLD, WS_NEW, P } from './helper.js'

const ref = (repo_id: number, issue_number: number) => ({ repo_id, issue_number })

t.test('convert to epic, list, epic data with totals', async (t) => {
  const app = await build(t)
  for (const [n, e] of [[1, 10], [2, 5], [3, 8]] as const) {
    await app.as('alice', { method: 'PUT', url: `/p1/repositories/${REPO}/issues/${n}/estimate`, payload: { estimate: e } })
  }
  await app.as('alice', { method: 'PUT', url: `/p1/repositories/${OTHER_REPO}/issues/1/estimate`, payload: { estimate: 2 } })
  const convert = await app.as('bob', {
    method: 'POST',
    url: `/p1/repositories/${REPO}/issues/1/convert_to_epic`,
    payload: { issues: [ref(REPO, 2), ref(REPO, 3), ref(OTHER_REPO, 1), ref(REPO, 2)] }
  })
  t.equal(convert.statusCode, 200)
  t.equal(convert.body, '')
  const list = await app.as('carol', { url: `/p1/repositories/${REPO}/epics` })
  t.same(list.json(), { epic_issues: [{ issue_number: 1, repo_id: REPO, issue_url: `/board?board=${WS_OLD}&repo=${REPO}&q=%231` }] },
    'only the parent epic is listed; its issues are not epics')
  t.same((await app.as('carol', { url: `/p1/repositories/${OTHER_REPO}/epics` })).statusCode, 404, 'carol cannot read OTHER_REPO')
  t.same((await app.as('bob', { url: `/p1/repositories/${OTHER_REPO}/epics` })).json(), { epic_issues: [] })

  const data = (await app.as('bob', { url: `/p1/repositories/${REPO}/epics/1` })).json()
  t.same(data.total_epic_estimates, { value: 10 + 5 + 8 + 2 })
  t.same(data.estimate, { value: 10 })
  t.same(data.pipeline, { name: 'To Do', pipeline_id: P.todo, workspace_id: WS_OLD })
  t.equal(data.pipelines.length, 2)
  t.same(data.issues.map((i: { repo_id: number, issue_number: number }) => [i.repo_id, i.issue_number]), [[REPO, 2], [REPO, 3], [OTHER_REPO, 1]])
  t.same(data.issues[0], {
    issue_number: 2,
    is_epic: false,
    repo_id: REPO,
    estimate: { value: 5 },
    pipelines: [{ name: 'To Do', pipeline_id: P.todo, workspace_id: WS_OLD }, { name: 'Ideas', pipeline_id: P.ideas, workspace_id: WS_NEW }],
    pipeline: { name: 'To Do', pipeline_id: P.todo, workspace_id: WS_OLD }
  })
  const carolView = (await app.as('carol', { url: `/p1/repositories/${REPO}/epics/1` })).json()
  t.equal(carolView.issues.length, 2, 'children in unreadable repositories are left out')
  t.same(carolView.total_epic_estimates, { value: 23 })
  t.equal((await app.as('bob', { url: `/p1/repositories/${REPO}/issues/1` })).json().is_epic, true)
  const board = (await app.as('bob', { url: `/p1/repositories/${REPO}/board` })).json()
  t.equal(board.pipelines[0].issues[0].is_epic, true, 'boards show is_epic')
  t.equal(board.pipelines[0].issues[1].is_epic, false)
})

t.test('epic refusals', async (t) => {
  const app = await build(t)
  const url = (n: number) => `/p1/repositories/${REPO}/issues/${n}/convert_to_epic`
  t.equal((await app.as('bob', { method: 'POST', url: url(1), payload: { issues: [] } })).statusCode, 200)
  const again = await app.as('bob', { method: 'POST', url: url(1), payload: { issues: [] } })
  t.equal(again.statusCode, 400)
  t.match(again.json().message, /already an epic/)
  t.equal((await app.as('bob', { method: 'POST', url: url(2), payload: {} })).statusCode, 400, 'issues is required')
  t.equal((await app.as('bob', { method: 'POST', url: url(2), payload: { issues: [{ repo_id: REPO }] } })).statusCode, 400)
  const self = await app.as('bob', { method: 'POST', url: url(2), payload: { issues: [ref(REPO, 2)] } })
  t.equal(self.statusCode, 400)
  t.match(self.json().message, /cannot contain itself/)
  t.equal((await app.as('bob', { url: `/p1/repositories/${REPO}/issues/2` })).json().is_epic, false, 'a refused conversion changes nothing')
  const unreadable = await app.as('bob', { method: 'POST', url: url(2), payload: { issues: [ref(PRIVATE_REPO, 1), ref(REPO, 99)] } })
  t.equal(unreadable.statusCode, 400)
  t.equal(unreadable.json().message, `issues not found (repo_id#issue_number): ${PRIVATE_REPO}#1, ${REPO}#99`, 'unreadable and missing issues look the same')
  t.equal((await app.as('carol', { method: 'POST', url: url(2), payload: { issues: [] } })).statusCode, 403)
  t.equal((await app.as('dave', { method: 'POST', url: url(2), payload: { issues: [] } })).statusCode, 404)
  t.equal((await app.as('bob', { method: 'POST', url: url(99), payload: { issues: [] } })).statusCode, 404)
  t.equal((await app.as('bob', { url: `/p1/repositories/${REPO}/epics/2` })).statusCode, 404, 'not an epic')
  t.equal((await app.as('bob', { url: `/p1/repositories/${REPO}/epics/99` })).statusCode, 404)
})

t.test('nested epics are allowed, loops are not', async (t) => {
  const app = await build(t)
  const convert = (n: number, issues: unknown[]) => app.as('alice', { method: 'POST', url: `/p1/repositories/${REPO}/issues/${n}/convert_to_epic`, payload: { issues } })
  t.equal((await convert(1, [ref(REPO, 2)])).statusCode, 200)
  t.equal((await convert(2, [ref(REPO, 3)])).statusCode, 200, 'an epic inside an epic')
  const loop = await convert(3, [ref(REPO, 1)])
  t.equal(loop.statusCode, 400)
  t.match(loop.json().message, /loop/)
  const data = (await app.as('alice', { url: `/p1/repositories/${REPO}/epics/1` })).json()
  t.same(data.issues.map((i: { issue_number: number, is_epic: boolean }) => [i.issue_number, i.is_epic]), [[2, true]])
})

t.test('update_issues reports only what it changed; convert_to_issue releases children', async (t) => {
  const app = await build(t)
  await app.as('bob', { method: 'POST', url: `/p1/repositories/${REPO}/issues/1/convert_to_epic`, payload: { issues: [ref(REPO, 2), ref(REPO, 3)] } })
  const url = `/p1/repositories/${REPO}/epics/1/update_issues`
  const res = await app.as('bob', { method: 'POST', url, payload: { remove_issues: [ref(REPO, 3), ref(REPO, 4)], add_issues: [ref(REPO, 2), ref(REPO, 5), ref(OTHER_REPO, 2)] } })
  t.equal(res.statusCode, 200)
  t.same(res.json(), { removed_issues: [ref(REPO, 3)], added_issues: [ref(REPO, 5), ref(OTHER_REPO, 2)] })
  t.equal((await app.as('bob', { method: 'POST', url, payload: { add_issues: [] } })).statusCode, 400, 'both arrays required')
  const both = await app.as('bob', { method: 'POST', url, payload: { remove_issues: [ref(REPO, 2)], add_issues: [ref(REPO, 2)] } })
  t.equal(both.statusCode, 400)
  t.match(both.json().message, /both add_issues and remove_issues/)
  const missing = await app.as('bob', { method: 'POST', url: `/p1/repositories/${REPO}/epics/4/update_issues`, payload: { remove_issues: [], add_issues: [] } })
  t.equal(missing.statusCode, 404, 'no such epic')
  const children = async () => (await app.as('bob', { url: `/p1/repositories/${REPO}/epics/1` })).json().issues.map((i: { issue_number: number }) => i.issue_number)
  t.same(await children(), [2, 5, 2], 'children after the update (REPO#2, REPO#5, OTHER_REPO#2)')

  const back = await app.as('bob', { method: 'POST', url: `/p1/repositories/${REPO}/epics/1/convert_to_issue` })
  t.equal(back.statusCode, 200)
  t.equal(back.body, '')
  t.equal((await app.as('bob', { url: `/p1/repositories/${REPO}/epics/1` })).statusCode, 404)
  t.same((await app.as('bob', { url: `/p1/repositories/${REPO}/epics` })).json().epic_issues, [])
  t.equal((await app.as('bob', { method: 'POST', url: `/p1/repositories/${REPO}/epics/1/convert_to_issue` })).statusCode, 404, 'not an epic any more')
  const reconvert = await app.as('bob', { method: 'POST', url: `/p1/repositories/${REPO}/issues/1/convert_to_epic`, payload: { issues: [] } })
  t.equal(reconvert.statusCode, 200)
  t.same((await app.as('bob', { url: `/p1/repositories/${REPO}/epics/1` })).json().issues, [], 'children were released')
  t.equal((await app.as('carol', { method: 'POST', url: `/p1/repositories/${REPO}/epics/1/convert_to_issue` })).statusCode, 403)
})
