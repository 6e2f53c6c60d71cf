import t from 'tap'
import { build, REPO, OTHER_REPO, PRIVATE_REPO, WS_OLD, WS_NEW, P } from './helper.js'
import { encodeId } from '../plugins/graphql/ids.js'
import { gql } from './gql.js'

// One app for the whole file (CI budget); each test uses issues the others leave alone.
const app = await build(t)
const idOf = async (repo: number, n: number): Promise<string> => (await gql(app, 'alice', `{ issueByInfo(repositoryGhId: ${repo}, issueNumber: ${n}) { id } }`)).data.issueByInfo.id
const rest = async (repo: number, n: number) => (await app.as('alice', { url: `/p1/repositories/${repo}/issues/${n}` })).json()
const column = async (pipeline: string): Promise<number[]> => {
  const board = (await app.as('alice', { url: `/p2/workspaces/${WS_OLD}/repositories/${REPO}/board` })).json()
  return board.pipelines.find((p: any) => p.id === pipeline).issues.map((i: any) => i.issue_number)
}
const BATCH = 'successCount failedIssues { number } githubErrors clientMutationId'

t.test('closeIssues and reopenIssues do what POST …/close and …/reopen do; reopenIssues lands at START or END', async (t) => {
  const [two, three] = [await idOf(REPO, 2), await idOf(REPO, 3)]
  const closed = await gql(app, 'bob', `mutation($i: CloseIssuesInput!) { closeIssues(input: $i) { ${BATCH} } }`, { i: { issueIds: [two], clientMutationId: 'c1' } })
  t.same(closed.data.closeIssues, { successCount: 1, failedIssues: [], githubErrors: {}, clientMutationId: 'c1' })
  t.equal((await app.as('bob', { method: 'POST', url: `/p1/repositories/${REPO}/issues/3/close` })).statusCode, 200)
  const [a, b] = [await rest(REPO, 2), await rest(REPO, 3)]
  t.equal(a.status, 'closed')
  t.same(a, b, 'the same state as the REST twin left')
  t.notOk((await column(P.todo)).includes(2), 'off the board')

  const reopened = await gql(app, 'bob', `mutation($i: ReopenIssuesInput!) { reopenIssues(input: $i) { ${BATCH} } }`,
    { i: { issueIds: [two], pipelineId: encodeId('Pipeline', P.doing), position: 'END' } })
  t.same(reopened.data.reopenIssues, { successCount: 1, failedIssues: [], githubErrors: {}, clientMutationId: null })
  t.equal((await rest(REPO, 2)).status, 'open')
  t.equal((await column(P.doing)).at(-1), 2, 'at the end of the pipeline asked for')
  const top = await gql(app, 'bob', `mutation { reopenIssues(input: { issueIds: ["${three}"], pipelineId: "${P.doing}", position: START }) { successCount } }`)
  t.same(top.data, { reopenIssues: { successCount: 1 } }, 'a REST pipeline id works too')
  t.equal((await column(P.doing))[0], 3, 'at the start')
  const events = (await app.as('alice', { url: `/p1/repositories/${REPO}/issues/3/events` })).json()
  t.match(events[0], { type: 'transferIssue', user_id: 2, to_pipeline: { name: 'Doing' } }, 'the move is an issue event by bob, as a REST move is')
})

t.test('batch writes: one issue without write permission refuses the whole batch and nothing changes; unreadable is NOT_FOUND', async (t) => {
  const [one, web] = [await idOf(REPO, 1), await idOf(OTHER_REPO, 1)]
  const mixed = await gql(app, 'bob', `mutation { closeIssues(input: { issueIds: ["${one}", "${web}"] }) { successCount } }`)
  t.equal(mixed.errors![0].extensions.code, 'FORBIDDEN')
  t.same(mixed.data, { closeIssues: null })
  t.equal((await rest(REPO, 1)).status, 'open', 'the writable one was not closed either')
  t.equal((await gql(app, 'carol', `mutation { closeIssues(input: { issueIds: ["${one}"] }) { successCount } }`)).errors![0].extensions.code, 'FORBIDDEN')
  t.equal((await gql(app, 'dave', `mutation { closeIssues(input: { issueIds: ["${one}"] }) { successCount } }`)).errors![0].extensions.code, 'NOT_FOUND')
  const many = Array.from({ length: 101 }, (_, i) => encodeId('Issue', i + 1))
  t.equal((await gql(app, 'alice', 'mutation($ids: [ID!]!) { closeIssues(input: { issueIds: $ids }) { successCount } }', { ids: many })).errors![0].extensions.code, 'BAD_USER_INPUT')
  t.equal((await rest(REPO, 1)).status, 'open')
})

t.test('createIssue and updateIssue do what POST and PATCH /p1/repositories/:id/issues do', async (t) => {
  const repositoryId = encodeId('Repository', REPO)
  const made = await gql(app, 'bob', `mutation($i: CreateIssueInput!) { createIssue(input: $i) { clientMutationId issue {
    number title body state labels { nodes { name } } assignees { nodes { login } } pipelineIssue(workspaceId: "${WS_OLD}") { pipeline { name } } } } }`,
  { i: { repositoryId, title: 'From GraphQL', body: 'Kept as the description', labels: ['bug'], assignees: ['bob'], clientMutationId: 'n' } })
  t.notOk(made.errors)
  const issue = made.data.createIssue.issue
  t.same(issue, { number: 8, title: 'From GraphQL', body: 'Kept as the description', state: 'OPEN', labels: { nodes: [{ name: 'bug' }] }, assignees: { nodes: [{ login: 'bob' }] }, pipelineIssue: { pipeline: { name: 'To Do' } } })
  t.equal(made.data.createIssue.clientMutationId, 'n')
  const twin = await app.as('bob', { method: 'POST', url: `/p1/repositories/${REPO}/issues`, payload: { title: 'From REST', body: 'Kept as the description', labels: ['bug'], assignees: ['bob'] } })
  t.equal(twin.statusCode, 201)
  t.equal(twin.json().issue_number, 9, 'the next number')
  const [g, r] = [await rest(REPO, 8), await rest(REPO, 9)]
  t.same(g, r, 'the same planning data as the REST twin\'s issue')
  const bulk = (await app.as('bob', { url: `/p1/repositories/${REPO}/issues?issue_numbers=8,9` })).json()
  t.same(bulk[0].labels, bulk[1].labels)
  t.same(bulk[0].assignees, bulk[1].assignees)
  t.equal((await gql(app, 'carol', `mutation { createIssue(input: { repositoryId: "${repositoryId}", title: "x" }) { issue { id } } }`)).errors![0].extensions.code, 'FORBIDDEN')
  t.equal((await gql(app, 'dave', `mutation { createIssue(input: { repositoryId: "${repositoryId}", title: "x" }) { issue { id } } }`)).errors![0].extensions.code, 'NOT_FOUND')
  t.equal((await gql(app, 'bob', `mutation { createIssue(input: { repositoryId: "${repositoryId}", title: "  " }) { issue { id } } }`)).errors![0].extensions.code, 'BAD_USER_INPUT')

  const id = await idOf(REPO, 8)
  const edited = await gql(app, 'bob', `mutation { updateIssue(input: { issueId: "${id}", title: "Renamed", state: CLOSED, clientMutationId: "u" }) { clientMutationId issue { title state } } }`)
  t.same(edited.data.updateIssue, { clientMutationId: 'u', issue: { title: 'Renamed', state: 'CLOSED' } })
  await app.as('bob', { method: 'PATCH', url: `/p1/repositories/${REPO}/issues/9`, payload: { title: 'Renamed' } })
  await app.as('bob', { method: 'POST', url: `/p1/repositories/${REPO}/issues/9/close` })
  const after = (await app.as('bob', { url: `/p1/repositories/${REPO}/issues?issue_numbers=8,9` })).json()
  t.equal(after[0].title, after[1].title)
  t.same(await rest(REPO, 8), await rest(REPO, 9))
  t.equal((await gql(app, 'carol', `mutation { updateIssue(input: { issueId: "${id}", title: "no" }) { issue { id } } }`)).errors![0].extensions.code, 'FORBIDDEN')
  t.equal(after[0].title, 'Renamed', 'carol changed nothing')
})

t.test('createSprintConfig, addIssuesToSprints and removeIssuesFromSprints against PUT …/sprint_config and POST/DELETE /p2/sprints/:id/issues', async (t) => {
  const sprintConfig = { workspaceId: WS_NEW, name: 'Fortnights', tzIdentifier: 'Europe/Berlin', startOn: '2026-11-02', endOn: '2026-11-15', settings: { moveUnfinishedIssues: true, issuesFromPipeline: { enabled: false } } }
  const doc = 'mutation($i: CreateSprintConfigInput!) { createSprintConfig(input: $i) { clientMutationId sprintConfig { name kind period startDay endDay tzIdentifier settings { moveUnfinishedIssues } } } }'
  t.equal((await gql(app, 'bob', doc, { i: { sprintConfig } })).errors![0].extensions.code, 'FORBIDDEN', 'admin on every repository needed, as REST')
  t.equal((await gql(app, 'dave', doc, { i: { sprintConfig } })).errors![0].extensions.code, 'NOT_FOUND')
  t.equal((await app.as('alice', { url: `/p2/workspaces/${WS_NEW}/sprint_config` })).statusCode, 404, 'nothing set by the refusals')
  t.equal((await gql(app, 'alice', doc, { i: { sprintConfig: { ...sprintConfig, endOn: '2026-11-10' } } })).errors![0].extensions.code, 'BAD_USER_INPUT')
  t.equal((await gql(app, 'alice', doc, { i: { sprintConfig: { ...sprintConfig, tzIdentifier: 'Mars/Olympus' } } })).errors![0].extensions.code, 'BAD_USER_INPUT')
  const made = await gql(app, 'alice', doc, { i: { sprintConfig, clientMutationId: 's' } })
  t.same(made.data.createSprintConfig, {
    clientMutationId: 's',
    sprintConfig: { name: 'Fortnights', kind: 'weekly', period: 2, startDay: 'MONDAY', endDay: 'SUNDAY', tzIdentifier: 'Europe/Berlin', settings: { moveUnfinishedIssues: true } }
  })
  t.same((await app.as('alice', { url: `/p2/workspaces/${WS_NEW}/sprint_config` })).json(), { length_weeks: 2, starts_on: '2026-11-02', time_zone: 'Europe/Berlin', carry_over: true })

  const active = (await app.as('bob', { url: `/p2/workspaces/${WS_NEW}/sprints?state=active` })).json()[0]
  const sprintId = encodeId('Sprint', active.id)
  const four = await idOf(REPO, 4)
  const added = await gql(app, 'bob', `mutation { addIssuesToSprints(input: { issueIds: ["${four}"], sprintIds: ["${sprintId}"], clientMutationId: "a" }) {
    clientMutationId sprintIssues { issue { number } sprint { id name totalPoints } } } }`)
  t.same(added.data.addIssuesToSprints, { clientMutationId: 'a', sprintIssues: [{ issue: { number: 4 }, sprint: { id: sprintId, name: active.name, totalPoints: 0 } }] })
  const twin = await app.as('bob', { method: 'POST', url: `/p2/sprints/${active.id}/issues`, payload: { issues: [{ repo_id: REPO, issue_number: 5 }] } })
  t.same(twin.json(), { added: [{ repo_id: REPO, issue_number: 5 }] })
  const sprint = (await app.as('bob', { url: `/p2/sprints/${active.id}` })).json()
  t.equal(sprint.issues_total, 2, 'both in the sprint')
  const events = (await app.as('bob', { url: `/p2/workspaces/${WS_NEW}/sprint_events` })).json()
  t.same(events.filter((e: any) => e.type === 'sprint_issue_added').map((e: any) => e.issue_number), [4, 5], 'an event each, as REST')
  t.equal((await gql(app, 'carol', `mutation { addIssuesToSprints(input: { issueIds: ["${four}"], sprintIds: ["${sprintId}"] }) { sprintIssues { id } } }`)).errors![0].extensions.code, 'FORBIDDEN')

  const removed = await gql(app, 'bob', `mutation { removeIssuesFromSprints(input: { issueIds: ["${four}"], sprintIds: ["${sprintId}"] }) { sprints { id closedIssuesCount } } }`)
  t.same(removed.data.removeIssuesFromSprints.sprints, [{ id: sprintId, closedIssuesCount: 0 }])
  await app.as('bob', { method: 'DELETE', url: `/p2/sprints/${active.id}/issues`, payload: { issues: [{ repo_id: REPO, issue_number: 5 }] } })
  t.equal((await app.as('bob', { url: `/p2/sprints/${active.id}` })).json().issues_total, 0)
})

t.test('createBlockage is POST /p1/dependencies; labels and assignees added and removed as PATCH …/issues/:n sets them', async (t) => {
  const [five, six] = [await idOf(REPO, 5), await idOf(REPO, 6)]
  const made = await gql(app, 'bob', `mutation { createBlockage(input: { blocking: { id: "${five}", type: ISSUE }, blocked: { id: "${six}", type: ISSUE }, clientMutationId: "b" }) {
    clientMutationId blockage { id blocking { ... on Issue { number } } blocked { __typename ... on Issue { number } } } } }`)
  t.notOk(made.errors)
  t.match(made.data.createBlockage, { clientMutationId: 'b', blockage: { blocking: { number: 5 }, blocked: { __typename: 'Issue', number: 6 } } })
  const deps = (await app.as('bob', { url: `/p1/repositories/${REPO}/dependencies` })).json().dependencies
  t.ok(deps.some((d: any) => d.blocking.issue_number === 5 && d.blocked.issue_number === 6), 'REST sees it')
  const cycle = await gql(app, 'bob', `mutation { createBlockage(input: { blocking: { id: "${six}", type: ISSUE }, blocked: { id: "${five}", type: ISSUE } }) { blockage { id } } }`)
  const twin = await app.as('bob', { method: 'POST', url: '/p1/dependencies', payload: { blocking: { repo_id: REPO, issue_number: 6 }, blocked: { repo_id: REPO, issue_number: 5 } } })
  t.equal(cycle.errors![0].message, twin.json().message, 'a cycle refused as REST refuses it')
  t.equal((await gql(app, 'carol', `mutation { createBlockage(input: { blocking: { id: "${six}", type: ISSUE }, blocked: { id: "${five}", type: ISSUE } }) { blockage { id } } }`)).errors![0].extensions.code, 'FORBIDDEN')

  const bulk = async () => (await app.as('bob', { url: `/p1/repositories/${REPO}/issues?issue_numbers=5,6` })).json().map((i: any) => [i.labels.map((l: any) => l.name), i.assignees.map((a: any) => a.login)])
  const added = await gql(app, 'bob', `mutation { addLabelsToIssues(input: { issueIds: ["${five}", "${six}"], labelIds: ["${encodeId('ZenhubLabel', 'bug')}"], labelInfos: [{ name: "urgent" }] }) {
    successCount failedIssues { number } labels { name } } }`)
  t.same(added.data.addLabelsToIssues, { successCount: 2, failedIssues: [], labels: [{ name: 'bug' }, { name: 'urgent' }] })
  const assigned = await gql(app, 'bob', `mutation { addAssigneesToIssues(input: { issueIds: ["${five}"], assigneeIds: ["${encodeId('User', 'carol')}"] }) { successCount unassignable { issues { id } } } }`)
  t.same(assigned.data.addAssigneesToIssues, { successCount: 1, unassignable: [] })
  t.same(await bulk(), [[['bug', 'urgent'], ['carol']], [['bug', 'urgent'], []]])
  await app.as('bob', { method: 'PATCH', url: `/p1/repositories/${REPO}/issues/6`, payload: { assignees: ['carol'] } })
  const a = (await app.as('bob', { url: `/p1/repositories/${REPO}/issues/5/events` })).json()
  const b = (await app.as('bob', { url: `/p1/repositories/${REPO}/issues/6/events` })).json()
  t.same(a.map((e: any) => e.type), b.map((e: any) => e.type), 'the same events as the REST twin\'s')
  const removed = await gql(app, 'bob', `mutation { removeLabelsFromIssues(input: { issueIds: ["${five}"], labelInfos: [{ name: "urgent" }] }) { successCount } }`)
  t.same(removed.data.removeLabelsFromIssues, { successCount: 1 })
  await gql(app, 'bob', `mutation { removeAssigneesFromIssues(input: { issueIds: ["${five}", "${six}"], assigneeIds: ["${encodeId('User', 'carol')}"] }) { successCount } }`)
  t.same(await bulk(), [[['bug'], []], [['bug', 'urgent'], []]])
  t.equal((await gql(app, 'carol', `mutation { addLabelsToIssues(input: { issueIds: ["${five}"], labelInfos: [{ name: "x" }] }) { successCount } }`)).errors![0].extensions.code, 'FORBIDDEN')
  t.equal((await gql(app, 'bob', `mutation { addLabelsToIssues(input: { issueIds: ["${five}"] }) { successCount } }`)).errors![0].extensions.code, 'BAD_USER_INPUT')
})

t.test('movePipelineIssues: START, END, after and before, each a move of POST …/moves, in the REST board\'s order', async (t) => {
  const pi = async (n: number): Promise<string> =>
    (await gql(app, 'alice', `{ issueByInfo(repositoryGhId: ${REPO}, issueNumber: ${n}) { pipelineIssue(workspaceId: "${WS_NEW}") { id } } }`)).data.issueByInfo.pipelineIssue.id
  const now = encodeId('Pipeline', P.now)
  const order = async () => (await app.as('bob', { url: `/p2/workspaces/${WS_NEW}/repositories/${REPO}/board` })).json().pipelines.find((p: any) => p.id === P.now).issues.map((i: any) => i.issue_number)
  const doc = 'mutation($i: MovePipelineIssuesInput!) { movePipelineIssues(input: $i) { clientMutationId pipeline { name } pipelineIssues { pipeline { name } issue { number } } } }'
  const first = await gql(app, 'bob', doc, { i: { pipelineId: now, pipelineIssueIds: [await pi(5), await pi(4)], position: 'START', clientMutationId: 'm' } })
  t.same(first.data.movePipelineIssues, { clientMutationId: 'm', pipeline: { name: 'Now' }, pipelineIssues: [{ pipeline: { name: 'Now' }, issue: { number: 5 } }, { pipeline: { name: 'Now' }, issue: { number: 4 } }] })
  t.same(await order(), [5, 4])
  await gql(app, 'bob', doc, { i: { pipelineId: now, pipelineIssueIds: [await pi(1)], position: 'END' } })
  await gql(app, 'bob', doc, { i: { pipelineId: now, pipelineIssueIds: [await pi(6)], afterPipelineIssueId: await pi(5) } })
  const before = await gql(app, 'bob', doc, { i: { pipelineId: now, pipelineIssueIds: [await pi(2), await pi(3)], beforePipelineIssueId: await pi(1) } })
  t.notOk(before.errors)
  t.same(await order(), [5, 6, 4, 2, 3, 1])
  const events = (await app.as('bob', { url: `/p1/repositories/${REPO}/issues/6/events` })).json()
  t.match(events[0], { type: 'transferIssue', user_id: 2, to_pipeline: { name: 'Now' }, workspace_id: WS_NEW })
  t.equal((await gql(app, 'carol', doc, { i: { pipelineId: now, pipelineIssueIds: [await pi(1)], position: 'START' } })).errors![0].extensions.code, 'FORBIDDEN')
  t.equal((await gql(app, 'bob', doc, { i: { pipelineId: now, pipelineIssueIds: [await pi(1)], position: 'START', afterPipelineIssueId: await pi(5) } })).errors![0].extensions.code, 'BAD_USER_INPUT')
  t.same(await order(), [5, 6, 4, 2, 3, 1], 'refusals moved nothing')
})

t.test('createEpic, addIssuesToEpics and removeIssuesFromEpics against the REST epic endpoints', async (t) => {
  const made = await gql(app, 'bob', `mutation { createEpic(input: { issue: { repositoryGhId: ${REPO}, title: "An epic" }, clientMutationId: "e" }) { clientMutationId epic { id issue { number title } } } }`)
  t.notOk(made.errors)
  const epic = made.data.createEpic.epic
  t.same(epic.issue.title, 'An epic')
  const list = (await app.as('bob', { url: `/p1/repositories/${REPO}/epics` })).json().epic_issues.map((e: any) => e.issue_number)
  t.ok(list.includes(epic.issue.number), 'REST lists it as an epic')
  const [one, web] = [await idOf(REPO, 1), await idOf(OTHER_REPO, 2)]
  const added = await gql(app, 'bob', `mutation { addIssuesToEpics(input: { issueIds: ["${one}", "${web}"], epicIds: ["${epic.id}"] }) { epics { id } } }`)
  t.same(added.data.addIssuesToEpics.epics, [{ id: epic.id }])
  const data = async () => (await app.as('bob', { url: `/p1/repositories/${REPO}/epics/${epic.issue.number}` })).json().issues.map((i: any) => [i.repo_id, i.issue_number])
  t.same(await data(), [[REPO, 1], [OTHER_REPO, 2]], 'children may live in a repository bob only reads, as REST allows')
  await gql(app, 'bob', `mutation { removeIssuesFromEpics(input: { issueIds: ["${web}"], epicIds: ["${epic.id}"] }) { epics { id } } }`)
  const twin = await app.as('bob', { method: 'POST', url: `/p1/repositories/${REPO}/epics/${epic.issue.number}/update_issues`, payload: { remove_issues: [{ repo_id: REPO, issue_number: 1 }], add_issues: [] } })
  t.equal(twin.statusCode, 200)
  t.same(await data(), [])
  t.equal((await gql(app, 'carol', `mutation { addIssuesToEpics(input: { issueIds: ["${one}"], epicIds: ["${epic.id}"] }) { epics { id } } }`)).errors![0].extensions.code, 'FORBIDDEN')
  t.equal((await gql(app, 'dave', `mutation { addIssuesToEpics(input: { issueIds: ["${one}"], epicIds: ["${epic.id}"] }) { epics { id } } }`)).errors![0].extensions.code, 'NOT_FOUND')
  t.same(await data(), [], 'the refusals added nothing')
})

t.test('createPipeline, updatePipeline and deletePipeline: the admin API\'s operations, administrators only', async (t) => {
  const names = async () => (await app.admin({ url: '/admin/workspaces' })).json().find((w: any) => w.id === WS_NEW).pipelines.map((p: any) => p.name)
  const refused = await gql(app, 'bob', `mutation { createPipeline(input: { workspaceId: "${WS_NEW}", name: "Review" }) { pipeline { id } } }`)
  t.equal(refused.errors![0].extensions.code, 'FORBIDDEN')
  t.equal((await gql(app, 'dave', `mutation { createPipeline(input: { workspaceId: "${WS_NEW}", name: "Review" }) { pipeline { id } } }`)).errors![0].extensions.code, 'NOT_FOUND')
  t.same(await names(), ['Ideas', 'Now'], 'nothing made')
  await app.admin({ method: 'PATCH', url: '/admin/users/alice', payload: { administrator: true } })
  const made = await gql(app, 'alice', `mutation { createPipeline(input: { workspaceId: "${WS_NEW}", name: "Review", position: 1, clientMutationId: "p" }) { clientMutationId pipeline { id name } } }`)
  t.notOk(made.errors)
  t.equal(made.data.createPipeline.pipeline.name, 'Review')
  t.same(await names(), ['Ideas', 'Review', 'Now'])
  const id = made.data.createPipeline.pipeline.id
  await gql(app, 'alice', `mutation { updatePipeline(input: { pipelineId: "${id}", name: "In review", position: -1 }) { pipeline { name } } }`)
  t.same(await names(), ['Ideas', 'Now', 'In review'])
  const gone = await gql(app, 'alice', `mutation { deletePipeline(input: { pipelineId: "${id}", destinationPipelineId: "${encodeId('Pipeline', P.now)}" }) { destinationPipeline { name } } }`)
  t.same(gone.data, { deletePipeline: { destinationPipeline: { name: 'Now' } } })
  t.same(await names(), ['Ideas', 'Now'])
  const audit = (await app.admin({ url: '/admin/audit?limit=10' })).json()
  t.ok(JSON.stringify(audit).includes('pipeline.deleted'), 'audited as admin writes are')
})

t.test('addRepositoryToWorkspace and disconnectWorkspaceRepository: the admin API\'s workspace change, administrators only', async (t) => {
  const repos = async () => (await app.admin({ url: '/admin/workspaces' })).json().find((w: any) => w.id === WS_NEW).repositories
  t.equal((await gql(app, 'bob', `mutation { addRepositoryToWorkspace(input: { workspaceId: "${WS_NEW}", repositoryGhId: "${OTHER_REPO}" }) { clientMutationId } }`)).errors![0].extensions.code, 'FORBIDDEN')
  t.same(await repos(), [REPO])
  await app.admin({ method: 'PATCH', url: '/admin/users/alice', payload: { administrator: true } })
  const added = await gql(app, 'alice', `mutation { addRepositoryToWorkspace(input: { workspaceId: "${WS_NEW}", repositoryGhId: "${OTHER_REPO}", clientMutationId: "r" }) {
    clientMutationId workspaceRepository { repository { ghId } workspace { id } } } }`)
  t.same(added.data.addRepositoryToWorkspace, { clientMutationId: 'r', workspaceRepository: { repository: { ghId: OTHER_REPO }, workspace: { id: WS_NEW } } })
  t.same(await repos(), [REPO, OTHER_REPO])
  const removed = await gql(app, 'alice', `mutation { disconnectWorkspaceRepository(input: { workspaceId: "${WS_NEW}", repositoryGhId: ${OTHER_REPO} }) { workspace { id } } }`)
  t.same(removed.data, { disconnectWorkspaceRepository: { workspace: { id: WS_NEW } } })
  t.same(await repos(), [REPO])
})

t.test('a pipeline or sprint of a workspace the caller cannot see is NOT_FOUND in writes and left out of Issue.sprints', async (t) => {
  // A workspace holding only what bob and carol cannot read: its pipeline ids must tell them nothing.
  const made = await app.admin({ method: 'POST', url: '/admin/workspaces', payload: { name: 'Hidden', repositories: [REPO, PRIVATE_REPO], pipelines: ['Secret plans'] } })
  const hidden = made.json() as { id: string, pipelines: Array<{ id: string }> }
  const pipelineId = encodeId('Pipeline', hidden.pipelines[0].id)
  const sprintConfig = { length_weeks: 1, starts_on: new Date().toISOString().slice(0, 10), time_zone: 'UTC' }
  t.equal((await app.as('alice', { method: 'PUT', url: `/p2/workspaces/${hidden.id}/sprint_config`, payload: sprintConfig })).statusCode, 200)
  const sprint = (await app.as('alice', { url: `/p2/workspaces/${hidden.id}/sprints?state=active` })).json()[0]
  t.equal((await app.as('alice', { method: 'POST', url: `/p2/sprints/${sprint.id}/issues`, payload: { issues: [{ repo_id: REPO, issue_number: 5 }] } })).statusCode, 200)
  const left = await app.admin({ method: 'PATCH', url: `/admin/workspaces/${hidden.id}`, payload: { remove_repositories: [REPO] } })
  t.equal(left.statusCode, 200, left.body)

  const five = await idOf(REPO, 5)
  const sprints = await gql(app, 'carol', `{ issueByInfo(repositoryGhId: ${REPO}, issueNumber: 5) { sprints { nodes { name } } } }`)
  t.same(sprints.data.issueByInfo.sprints.nodes, [], 'the sprint of a board the issue has left, which carol cannot see, is not named')
  const moved = await gql(app, 'bob', `mutation { movePipelineIssues(input: { pipelineId: "${pipelineId}", pipelineIssueIds: [], position: START }) { pipeline { name } } }`)
  t.equal(moved.errors![0].extensions.code, 'NOT_FOUND')
  t.notMatch(JSON.stringify(moved), /Secret plans|Hidden/, 'no trace of the pipeline or its workspace')
  const reopened = await gql(app, 'bob', `mutation { reopenIssues(input: { issueIds: ["${five}"], pipelineId: "${pipelineId}", position: END }) { successCount } }`)
  t.equal(reopened.errors![0].extensions.code, 'NOT_FOUND')
  const move = await gql(app, 'bob', `mutation { moveIssue(input: { issueId: "${five}", pipelineId: "${pipelineId}", position: 0 }) { issue { number } } }`)
  t.equal(move.errors![0].extensions.code, 'NOT_FOUND')
})
