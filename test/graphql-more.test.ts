import t from 'tap'
import { build, REPO, OTHER_REPO, WS_OLD, WS_NEW } from './helper.js'
import { encodeId } from '../plugins/graphql/ids.js'
import { gql, type Gql } from './gql.js'

const app = await build(t)
const readToken = (await app.as('bob', { method: 'POST', url: '/account/tokens', payload: { name: 'reader', scope: 'read' } })).json().token as string
const asReader = async (query: string, variables?: Record<string, unknown>): Promise<Gql> =>
  (await app.inject({ method: 'POST', url: '/public/graphql', headers: { authorization: `Bearer ${readToken}` }, payload: { query, variables } })).json()
const code = (answer: Gql) => answer.errors?.[0]?.extensions.code

t.test('every answer carries X-RateLimit-Limit, -Used and -Remaining, errors too', async (t) => {
  for (const query of ['{ viewer { name } }', '{ nope }']) {
    const res = await app.as('carol', { method: 'POST', url: '/public/graphql', payload: { query } })
    const [limit, used, remaining] = ['limit', 'used', 'remaining'].map((h) => Number(res.headers[`x-ratelimit-${h}`]))
    t.ok(limit > 0 && used > 0, query)
    t.equal(remaining, limit - used, 'what is left of the budget')
  }
})

t.test('setMilestoneStartDate is POST …/milestones/:n/start_date; null clears; refusals change nothing', async (t) => {
  const milestoneId = encodeId('Milestone', `${REPO}:1`)
  const url = `/p1/repositories/${REPO}/milestones/1/start_date`
  const doc = 'mutation($i: SetMilestoneStartDateInput!) { setMilestoneStartDate(input: $i) { clientMutationId milestone { id number title startDate } } }'
  t.equal(code(await asReader(doc, { i: { milestoneId, startDate: '2026-01-05T00:00:00Z' } })), 'FORBIDDEN', 'a read token')
  t.equal(code(await gql(app, 'carol', doc, { i: { milestoneId, startDate: '2026-01-05T00:00:00Z' } })), 'FORBIDDEN', 'a read user')
  t.equal(code(await gql(app, 'dave', doc, { i: { milestoneId, startDate: '2026-01-05T00:00:00Z' } })), 'NOT_FOUND', 'no access')
  t.equal(code(await gql(app, 'bob', doc, { i: { milestoneId: encodeId('Milestone', `${REPO}:9`), startDate: '2026-01-05T00:00:00Z' } })), 'NOT_FOUND')
  t.equal(code(await gql(app, 'bob', doc, { i: { milestoneId, startDate: 'soon' } })), 'BAD_USER_INPUT')
  t.equal((await app.as('bob', { url })).statusCode, 404, 'nothing set by the refusals')

  const set = await gql(app, 'bob', doc, { i: { milestoneId, startDate: '2026-01-05T09:30:00+01:00', clientMutationId: 'm1' } })
  t.same(set.data.setMilestoneStartDate, { clientMutationId: 'm1', milestone: { id: milestoneId, number: 1, title: 'v1.0', startDate: '2026-01-05T08:30:00.000Z' } })
  t.same((await app.as('carol', { url })).json(), { start_date: '2026-01-05T08:30:00.000Z' }, 'what the REST twin reads')
  const twin = await app.as('bob', { method: 'POST', url, payload: { start_date: '2026-02-01T00:00:00Z' } })
  const read = await gql(app, 'carol', `{ node(id: "${milestoneId}") { ... on Milestone { startDate } } }`)
  t.equal(read.data.node.startDate, twin.json().start_date, 'and the other way round')

  const cleared = await gql(app, 'bob', doc, { i: { milestoneId, startDate: null } })
  t.equal(cleared.data.setMilestoneStartDate.milestone.startDate, null)
  t.equal((await app.as('bob', { url })).statusCode, 404, 'REST has no start date either')
})

t.test('updateSprint renames a sprint (admin on the whole workspace), a re-plan keeps the name; descriptions are refused', async (t) => {
  const config = { length_weeks: 1, starts_on: '2026-01-05', time_zone: 'UTC', carry_over: false }
  t.equal((await app.as('alice', { method: 'PUT', url: `/p2/workspaces/${WS_NEW}/sprint_config`, payload: config })).statusCode, 200)
  const future = (await app.as('alice', { url: `/p2/workspaces/${WS_NEW}/sprints?state=future` })).json()
  t.ok(future.length >= 2, 'sprints planned ahead')
  const [first, second] = future
  const sprintId = encodeId('Sprint', first.id)
  const doc = 'mutation($i: UpdateSprintInput!) { updateSprint(input: $i) { clientMutationId sprint { id name generatedName } } }'
  t.equal(code(await asReader(doc, { i: { sprintId, name: 'Launch' } })), 'FORBIDDEN', 'a read token')
  t.equal(code(await gql(app, 'bob', doc, { i: { sprintId, name: 'Launch' } })), 'FORBIDDEN', 'a writer, not an administrator')
  t.equal(code(await gql(app, 'dave', doc, { i: { sprintId, name: 'Launch' } })), 'NOT_FOUND', 'no access')
  t.equal(code(await gql(app, 'alice', doc, { i: { sprintId, name: 'Launch', description: 'Big' } })), 'BAD_USER_INPUT')
  t.equal(code(await gql(app, 'alice', doc, { i: { sprintId, name: '   ' } })), 'BAD_USER_INPUT')
  t.equal((await app.as('alice', { url: `/p2/sprints/${first.id}` })).json().name, first.name, 'unchanged by the refusals')

  const renamed = await gql(app, 'alice', doc, { i: { sprintId, name: ' Launch ', clientMutationId: 'u' } })
  t.same(renamed.data.updateSprint, { clientMutationId: 'u', sprint: { id: sprintId, name: 'Launch', generatedName: 'Launch' } })
  t.equal((await app.as('bob', { url: `/p2/sprints/${first.id}` })).json().name, 'Launch', 'what REST reads')

  await app.as('alice', { method: 'PUT', url: `/p2/workspaces/${WS_NEW}/sprint_config`, payload: { ...config, length_weeks: 2 } })
  const after = await Promise.all([first.id, second.id].map(async (id) => (await app.as('alice', { url: `/p2/sprints/${id}` })).json()))
  t.equal(after[0].name, 'Launch', 'a re-plan keeps the name given')
  t.match(after[1].name, /^Sprint \d+$/, 'and names the others by their number')
})

t.test('Workspace.issues honours orderBy, across pages; an order not offered is BAD_USER_INPUT', async (t) => {
  for (const [repo, n, estimate] of [[REPO, 1, 3], [REPO, 2, 5], [OTHER_REPO, 1, 1]] as const) {
    await app.as('alice', { method: 'PUT', url: `/p1/repositories/${repo}/issues/${n}/estimate`, payload: { estimate } })
  }
  const doc = 'query($ws: ID!, $o: IssueOrderInput, $after: String) { workspace(id: $ws) { issues(first: 4, after: $after, orderBy: $o) { totalCount pageInfo { hasNextPage endCursor } nodes { title estimate { value } } } } }'
  const all = async (o: unknown) => {
    const out = []
    let after: string | null = null
    for (let i = 0; i < 5; i++) {
      const page: any = (await gql(app, 'alice', doc, { ws: WS_OLD, o, after })).data.workspace.issues
      out.push(...page.nodes)
      if (!page.pageInfo.hasNextPage) break
      after = page.pageInfo.endCursor
    }
    return out
  }
  const byTitle = await all({ field: 'title', direction: 'ASC' })
  t.same(byTitle.map((i) => i.title), ['Closed one', 'Issue 1', 'Issue 2', 'Issue 3', 'Issue 4', 'Issue 5', 'Issue 6', 'Secret', 'Web 1', 'Web 2', 'Web 3'])
  const byEstimate = await all({ field: 'estimate', direction: 'DESC' })
  t.same(byEstimate.slice(0, 3).map((i) => [i.title, i.estimate.value]), [['Issue 2', 5], ['Issue 1', 3], ['Web 1', 1]])
  t.equal(byEstimate.length, 11, 'every issue once')
  t.ok(byEstimate.slice(3).every((i) => i.estimate === null), 'then those without an estimate')
  const last = (await gql(app, 'alice', 'query($ws: ID!) { workspace(id: $ws) { issues(last: 2, orderBy: { field: title, direction: DESC }) { nodes { title } } } }', { ws: WS_OLD })).data
  t.same(last.workspace.issues.nodes.map((i: any) => i.title), ['Issue 1', 'Closed one'], 'last pages from the end of the order')
  t.equal(code(await gql(app, 'alice', doc, { ws: WS_OLD, o: { field: 'stale', direction: 'ASC' } })), 'BAD_USER_INPUT')
})

t.test('setEstimate keeps the REST range (0 to 1e9); Repository.owner is the owner login; legacy epics have no dates', async (t) => {
  const id = (await gql(app, 'bob', `{ issueByInfo(repositoryGhId: ${REPO}, issueNumber: 3) { id } }`)).data.issueByInfo.id
  t.equal(code(await gql(app, 'bob', `mutation { setEstimate(input: { issueId: "${id}", value: -2 }) { issue { id } } }`)), 'BAD_USER_INPUT')
  t.equal((await app.as('bob', { method: 'PUT', url: `/p1/repositories/${REPO}/issues/3/estimate`, payload: { estimate: -2 } })).statusCode, 400, 'as REST')
  t.notOk((await app.as('bob', { url: `/p1/repositories/${REPO}/issues/3` })).json().estimate, 'no estimate stored')

  const repos = await gql(app, 'bob', `{ workspace(id: "${WS_OLD}") { repositoriesConnection { nodes { ghId ownerName owner { __typename login } } } } }`)
  t.same(repos.data.workspace.repositoriesConnection.nodes.map((r: any) => [r.ghId, r.owner]),
    [[REPO, { __typename: 'User', login: 'acme' }], [OTHER_REPO, { __typename: 'User', login: 'acme' }]])
  await app.as('alice', { method: 'POST', url: `/p1/repositories/${REPO}/issues/6/convert_to_epic`, payload: { issues: [] } })
  const epics = await gql(app, 'alice', `{ workspace(id: "${WS_NEW}") { epics { nodes { issue { number } startOn endOn } } } }`)
  t.same(epics.data.workspace.epics.nodes, [{ issue: { number: 6 }, startOn: null, endOn: null }])
})

t.test('sprintConfig, averageSprintVelocityWithDiff, Sprint.scopeChange and Issue.timelineItems read what REST reads', async (t) => {
  const config = (await app.as('bob', { url: `/p2/workspaces/${WS_NEW}/sprint_config` })).json()
  const ws = await gql(app, 'bob', `{ a: workspace(id: "${WS_NEW}") { sprintConfig { kind period startDay endDay tzIdentifier settings { moveUnfinishedIssues } } averageSprintVelocity averageSprintVelocityWithDiff { velocity } }
    b: workspace(id: "${WS_OLD}") { sprintConfig { id } } }`)
  t.same(ws.data.a.sprintConfig, { kind: 'weekly', period: config.length_weeks, startDay: 'MONDAY', endDay: 'SUNDAY', tzIdentifier: config.time_zone, settings: { moveUnfinishedIssues: config.carry_over } })
  t.equal(ws.data.b.sprintConfig, null, 'none without a plan')
  t.equal(ws.data.a.averageSprintVelocityWithDiff, null, 'null before a sprint has ended, as averageSprintVelocity')
  t.equal(ws.data.a.averageSprintVelocity, null)

  const active = (await app.as('bob', { url: `/p2/workspaces/${WS_NEW}/sprints?state=active` })).json()[0]
  const issues = (numbers: number[]) => ({ issues: numbers.map((n) => ({ repo_id: REPO, issue_number: n })) })
  await app.as('bob', { method: 'POST', url: `/p2/sprints/${active.id}/issues`, payload: issues([4, 5]) })
  await app.as('bob', { method: 'DELETE', url: `/p2/sprints/${active.id}/issues`, payload: issues([5]) })
  const review = (await app.as('bob', { url: `/p2/sprints/${active.id}/review` })).json()
  const scope = await gql(app, 'bob', `{ node(id: "${encodeId('Sprint', active.id)}") { ... on Sprint { scopeChange { totalCount nodes { action effectiveAt estimateValue issue { number } } } } } }`)
  const expected = [
    ...review.added.map((c: any) => ({ action: 'ISSUE_ADDED', effectiveAt: c.at, estimateValue: c.points, issue: { number: c.issue_number } })),
    ...review.removed.map((c: any) => ({ action: 'ISSUE_REMOVED', effectiveAt: c.at, estimateValue: c.points, issue: { number: c.issue_number } }))
  ].sort((a, b) => Date.parse(a.effectiveAt) - Date.parse(b.effectiveAt))
  t.equal(expected.length, 3, 'two added, one removed')
  t.same(scope.data.node.scopeChange, { totalCount: 3, nodes: expected.map((c) => ({ ...c, effectiveAt: new Date(c.effectiveAt).toISOString() })) })

  await app.as('bob', { method: 'PUT', url: `/p1/repositories/${REPO}/issues/4/estimate`, payload: { estimate: 2 } })
  await app.as('bob', { method: 'PUT', url: `/p1/repositories/${REPO}/issues/4/estimate`, payload: { estimate: null } })
  const events = (await app.as('carol', { url: `/p1/repositories/${REPO}/issues/4/events` })).json()
  const timeline = await gql(app, 'carol', `{ issueByInfo(repositoryGhId: ${REPO}, issueNumber: 4) { timelineItems(last: 2) { totalCount nodes { key data createdAt } } } }`)
  t.equal(timeline.data.issueByInfo.timelineItems.totalCount, events.length)
  t.same(timeline.data.issueByInfo.timelineItems.nodes, [
    { key: 'issue.set_estimate', data: { previous_value: null, current_value: '2' }, createdAt: new Date(events[1].created_at).toISOString() },
    { key: 'issue.set_estimate', data: { previous_value: '2', current_value: null }, createdAt: new Date(events[0].created_at).toISOString() }
  ], 'the REST events, oldest first')
})
