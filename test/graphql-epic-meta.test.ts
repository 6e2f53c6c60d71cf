import t from 'tap'
import { build, testFixture, REPO, OTHER_REPO, WS_OLD, WS_NEW, TOKENS } from './helper.js'
import { encodeId } from '../plugins/graphql/ids.js'
import { gql, type Gql } from './gql.js'

// ZenhubEpic's assignees, labels, key dates and estimate, legacy epics' dates and
// searchIssuesByZenhubEpics, through the documents of the zh client (cmd/epic*.go, cmd/issue.go).
const base = testFixture()
const fixture = {
  ...base,
  issues: base.issues.map((i) => i.repo_id === REPO && i.number === 1 ? { ...i, labels: [{ name: 'bug', color: 'd73a4a' }] } : i),
  epics: [{ repo_id: REPO, issue_number: 6, issues: [{ repo_id: REPO, issue_number: 5 }] }]
}
const app = await build(t, { fixture })
const ORG = encodeId('ZenhubOrganization', 1)
const USER = { alice: encodeId('ZenhubUser', 1), bob: encodeId('ZenhubUser', 2), carol: encodeId('ZenhubUser', 3), dave: encodeId('ZenhubUser', 4) }
const code = (r: Gql) => r.errors?.[0]?.extensions.code
const message = (r: Gql) => r.errors?.[0]?.message ?? ''
const issueId = async (repo: number, n: number): Promise<string> => (await gql(app, 'alice', `{ issueByInfo(repositoryGhId: ${repo}, issueNumber: ${n}) { id } }`)).data.issueByInfo.id

const ASSIGNEES = 'assignees(first: 50) { nodes { id name githubUser { login } } }'
const LABELS = 'labels(first: 50) { nodes { id name color } }'
const ADD_ASSIGNEES = `mutation AddAssigneesToZenhubEpics($input: AddAssigneesToZenhubEpicsInput!) {
  addAssigneesToZenhubEpics(input: $input) { zenhubEpics { id ${ASSIGNEES} } } }`
const REMOVE_ASSIGNEES = `mutation RemoveAssigneesFromZenhubEpics($input: RemoveAssigneesFromZenhubEpicsInput!) {
  removeAssigneesFromZenhubEpics(input: $input) { zenhubEpics { id ${ASSIGNEES} } } }`
const ADD_LABELS = `mutation AddZenhubLabelsToZenhubEpics($input: AddZenhubLabelsToZenhubEpicsInput!) {
  addZenhubLabelsToZenhubEpics(input: $input) { zenhubEpics { id ${LABELS} } } }`
const REMOVE_LABELS = `mutation RemoveZenhubLabelsFromZenhubEpics($input: RemoveZenhubLabelsFromZenhubEpicsInput!) {
  removeZenhubLabelsFromZenhubEpics(input: $input) { zenhubEpics { id ${LABELS} } } }`
const CREATE_KEY_DATE = `mutation CreateZenhubEpicKeyDate($input: CreateZenhubEpicKeyDateInput!) {
  createZenhubEpicKeyDate(input: $input) { keyDate { id date description color } zenhubEpic { id title } } }`
const DELETE_KEY_DATE = `mutation DeleteZenhubEpicKeyDate($input: DeleteZenhubEpicKeyDateInput!) {
  deleteZenhubEpicKeyDate(input: $input) { keyDate { id date description } zenhubEpic { id title } } }`
const KEY_DATES = 'query GetEpicKeyDates($id: ID!) { node(id: $id) { ... on ZenhubEpic { id title keyDates(first: 50) { totalCount nodes { id date description color } } } } }'
const SET_ESTIMATE = `mutation SetEstimateOnZenhubEpics($input: SetMultipleEstimatesOnZenhubEpicsInput!) {
  setMultipleEstimatesOnZenhubEpics(input: $input) { zenhubEpics { id title estimate { value } } } }`
const UPDATE_EPIC_DATES = `mutation UpdateEpicDates($input: UpdateEpicDatesInput!) {
  updateEpicDates(input: $input) { epic { id startOn endOn issue { title number } } } }`
const GET_EPIC = `query GetZenhubEpic($id: ID!, $workspaceId: ID!) { node(id: $id) { ... on ZenhubEpic {
  id title body state startOn endOn createdAt updatedAt estimate { value } creator { id name githubUser { login } }
  ${ASSIGNEES} ${LABELS}
  childIssues(first: 100, workspaceId: $workspaceId) { totalCount nodes { id number title state estimate { value } repository { name ownerName }
    pipelineIssue(workspaceId: $workspaceId) { pipeline { id name } } } }
  zenhubIssueCountProgress { open closed total } zenhubIssueEstimateProgress { open closed total }
  blockingItems(first: 20) { totalCount nodes { ... on Issue { id number title repository { name ownerName } } ... on ZenhubEpic { id title } } }
  blockedItems(first: 20) { totalCount nodes { ... on Issue { id number title repository { name ownerName } } ... on ZenhubEpic { id title } } }
  keyDates(first: 50) { totalCount nodes { id date description color } } } } }`
const LIST_BY_EPIC = `query ListIssuesByEpic($zenhubEpicIds: [ID!]!, $workspaceId: ID!, $filters: ZenhubEpicIssueSearchFiltersInput!, $first: Int!, $after: String) {
  searchIssuesByZenhubEpics(zenhubEpicIds: $zenhubEpicIds, filters: $filters, first: $first, after: $after) {
    totalCount pageInfo { hasNextPage endCursor }
    nodes { id number title state htmlUrl pullRequest estimate { value } repository { id ghId name ownerName }
      assignees(first: 10) { nodes { login } } labels(first: 20) { nodes { name color } } sprints(first: 1) { nodes { id name state } }
      pipelineIssue(workspaceId: $workspaceId) { pipeline { id name } } } } }`

let epic1: string
let epic2: string
const read = async (id: string, fields: string, login: keyof typeof TOKENS = 'alice') => (await gql(app, login, `{ node(id: "${id}") { ... on ZenhubEpic { ${fields} } } }`)).data.node
const logins = async (id: string) => (await read(id, ASSIGNEES)).assignees.nodes.map((n: { name: string }) => n.name)
const labelNames = async (id: string) => (await read(id, LABELS)).labels.nodes.map((n: { name: string, color: string | null }) => `${n.name}:${String(n.color)}`)

t.before(async () => {
  const own = (await gql(app, 'bob', `{ workspace(id: "${WS_OLD}") { zenhubRepository { id } } }`)).data.workspace.zenhubRepository
  const create = 'mutation($i: CreateZenhubEpicInput!) { createZenhubEpic(input: $i) { zenhubEpic { id } } }'
  const made = []
  for (const title of ['Launch', 'Polish']) {
    made.push((await gql(app, 'bob', create, { i: { zenhubOrganizationId: ORG, zenhubRepositoryId: own.id, zenhubEpic: { title } } })).data.createZenhubEpic.zenhubEpic.id)
  }
  ;[epic1, epic2] = made
})

t.test('assignees: users who can read the workspace, added and removed in one transaction per write', async (t) => {
  const added = await gql(app, 'bob', ADD_ASSIGNEES, { input: { zenhubEpicIds: [epic1, epic2], assigneeIds: [USER.carol, USER.alice] } })
  t.same(added.errors, undefined)
  t.same(added.data.addAssigneesToZenhubEpics.zenhubEpics[0], {
    id: epic1,
    assignees: { nodes: [{ id: USER.alice, name: 'alice', githubUser: { login: 'alice' } }, { id: USER.carol, name: 'carol', githubUser: { login: 'carol' } }] }
  })
  t.same(await logins(epic2), ['alice', 'carol'], 'every epic of the batch')
  t.same((await gql(app, 'bob', ADD_ASSIGNEES, { input: { zenhubEpicIds: [epic1], assigneeIds: [USER.alice] } })).errors, undefined, 'again: no change')

  const refusals: Array<[string, Gql, string]> = [
    ['NOT_FOUND', await gql(app, 'bob', ADD_ASSIGNEES, { input: { zenhubEpicIds: [epic1], assigneeIds: [USER.bob, encodeId('ZenhubUser', 999)] } }), 'an unknown user'],
    ['NOT_FOUND', await gql(app, 'bob', ADD_ASSIGNEES, { input: { zenhubEpicIds: [epic1], assigneeIds: [USER.bob, USER.dave] } }), 'a user who cannot see the workspace'],
    ['NOT_FOUND', await gql(app, 'bob', ADD_ASSIGNEES, { input: { zenhubEpicIds: [epic1, encodeId('ZenhubEpic', 999)], assigneeIds: [USER.bob] } }), 'an unknown epic'],
    ['BAD_USER_INPUT', await gql(app, 'bob', ADD_ASSIGNEES, { input: { zenhubEpicIds: [epic1], assigneeIds: ['nope'] } }), 'not an id'],
    ['BAD_USER_INPUT', await gql(app, 'bob', ADD_ASSIGNEES, { input: { zenhubEpicIds: [epic1], assigneeIds: [] } }), 'no user'],
    ['FORBIDDEN', await gql(app, 'carol', ADD_ASSIGNEES, { input: { zenhubEpicIds: [epic1], assigneeIds: [USER.bob] } }), 'a reader of the workspace'],
    ['NOT_FOUND', await gql(app, 'dave', ADD_ASSIGNEES, { input: { zenhubEpicIds: [epic1], assigneeIds: [USER.dave] } }), 'a user without the workspace']
  ]
  for (const [expected, res, why] of refusals) t.equal(code(res), expected, `${why}: ${message(res)}`)
  t.same(await logins(epic1), ['alice', 'carol'], 'the refusals wrote nothing')

  const removed = await gql(app, 'bob', REMOVE_ASSIGNEES, { input: { zenhubEpicIds: [epic1], assigneeIds: [USER.carol, USER.bob] } })
  t.same(removed.data.removeAssigneesFromZenhubEpics.zenhubEpics, [{ id: epic1, assignees: { nodes: [{ id: USER.alice, name: 'alice', githubUser: { login: 'alice' } }] } }])
  t.same(await logins(epic2), ['alice', 'carol'], 'the other epic keeps its assignees')
  t.equal(code(await gql(app, 'bob', REMOVE_ASSIGNEES, { input: { zenhubEpicIds: [epic1], assigneeIds: [encodeId('ZenhubUser', 999)] } })), 'NOT_FOUND')
})

t.test('labels: by ZenhubLabel id (a label of the workspace) or by name and color; taken off by id or name', async (t) => {
  const zenhubLabels = (await gql(app, 'bob', `{ workspace(id: "${WS_OLD}") { zenhubLabels { nodes { id name } } } }`)).data.workspace.zenhubLabels.nodes
  const bug = zenhubLabels.find((l: { name: string }) => l.name === 'bug').id
  const added = await gql(app, 'bob', ADD_LABELS, { input: { zenhubEpicIds: [epic1], zenhubLabelIds: [bug], labelInfos: [{ name: 'roadmap', color: '#00ff00' }] } })
  t.same(added.errors, undefined)
  t.same(added.data.addZenhubLabelsToZenhubEpics.zenhubEpics[0].labels.nodes.map((l: { name: string, color: string }) => [l.name, l.color]), [['bug', 'd73a4a'], ['roadmap', '00ff00']])

  const refusals: Array<[string, Gql, string]> = [
    ['NOT_FOUND', await gql(app, 'bob', ADD_LABELS, { input: { zenhubEpicIds: [epic1, epic2], zenhubLabelIds: [encodeId('ZenhubLabel', 'nowhere')] } }), 'a label the workspace does not have'],
    ['BAD_USER_INPUT', await gql(app, 'bob', ADD_LABELS, { input: { zenhubEpicIds: [epic2], labelInfos: [{ name: 'ok' }, { name: 'x', color: 'red' }] } }), 'a color that is not hex'],
    ['BAD_USER_INPUT', await gql(app, 'bob', ADD_LABELS, { input: { zenhubEpicIds: [epic2], labelInfos: [{ name: ' ' }] } }), 'a blank name'],
    ['BAD_USER_INPUT', await gql(app, 'bob', ADD_LABELS, { input: { zenhubEpicIds: [epic2] } }), 'no label'],
    ['NOT_FOUND', await gql(app, 'bob', ADD_LABELS, { input: { zenhubEpicIds: [epic2, encodeId('ZenhubEpic', 999)], labelInfos: [{ name: 'ok' }] } }), 'an unknown epic'],
    ['FORBIDDEN', await gql(app, 'carol', ADD_LABELS, { input: { zenhubEpicIds: [epic2], labelInfos: [{ name: 'ok' }] } }), 'a reader']
  ]
  for (const [expected, res, why] of refusals) t.equal(code(res), expected, `${why}: ${message(res)}`)
  t.same(await labelNames(epic2), [], 'the refusals wrote nothing')

  const onEpic = added.data.addZenhubLabelsToZenhubEpics.zenhubEpics[0].labels.nodes
  const roadmap = onEpic.find((l: { name: string }) => l.name === 'roadmap').id
  const removed = await gql(app, 'bob', REMOVE_LABELS, { input: { zenhubEpicIds: [epic1], zenhubLabelIds: [roadmap] } })
  t.same(removed.errors, undefined, 'a Label id as ZenhubEpic.labels answers it')
  t.same(await labelNames(epic1), ['bug:d73a4a'])
  await gql(app, 'bob', REMOVE_LABELS, { input: { zenhubEpicIds: [epic1], labelInfos: [{ name: 'bug' }] } })
  t.same(await labelNames(epic1), [], 'by name')

  t.equal((await app.admin({ method: 'PATCH', url: '/admin/users/alice', payload: { administrator: true } })).statusCode, 200)
  const org = await gql(app, 'alice', 'mutation($i: CreateZenhubLabelInput!) { createZenhubLabel(input: $i) { zenhubLabel { id } } }',
    { i: { zenhubOrganizationId: ORG, name: 'platform', color: '123456' } })
  const platform = org.data.createZenhubLabel.zenhubLabel.id
  t.same((await gql(app, 'bob', ADD_LABELS, { input: { zenhubEpicIds: [epic1], zenhubLabelIds: [platform] } })).errors, undefined)
  t.same(await labelNames(epic1), ['platform:123456'], 'a label of the organization, by its id')
  await gql(app, 'bob', REMOVE_LABELS, { input: { zenhubEpicIds: [epic1], zenhubLabelIds: [platform] } })
  t.same(await labelNames(epic1), [])
  t.equal(code(await gql(app, 'bob', REMOVE_LABELS, { input: { zenhubEpicIds: [epic1], zenhubLabelIds: [encodeId('ZenhubLabel', 'nowhere')] } })), 'NOT_FOUND')
})

t.test('key dates: created, listed earliest first, read by node, deleted', async (t) => {
  const late = await gql(app, 'bob', CREATE_KEY_DATE, { input: { zenhubEpicId: epic1, date: '2026-06-30', description: 'GA' } })
  t.match(late.data.createZenhubEpicKeyDate, { keyDate: { date: '2026-06-30', description: 'GA', color: null }, zenhubEpic: { id: epic1, title: 'Launch' } })
  const early = (await gql(app, 'bob', CREATE_KEY_DATE, { input: { zenhubEpicId: epic1, date: '2026-03-01', description: 'Beta' } })).data.createZenhubEpicKeyDate.keyDate
  t.match(Buffer.from(early.id, 'base64').toString(), /^gid:\/\/raptor\/KeyDate\/\d+$/)
  const listed = (await gql(app, 'carol', KEY_DATES, { id: epic1 })).data.node
  t.same(listed.keyDates.nodes.map((k: { description: string }) => k.description), ['Beta', 'GA'])
  t.equal(listed.keyDates.totalCount, 2)
  t.same((await gql(app, 'carol', `{ node(id: "${early.id}") { ... on KeyDate { date description } } }`)).data.node, { date: '2026-03-01', description: 'Beta' })
  t.same((await gql(app, 'dave', `{ node(id: "${early.id}") { id } }`)).data.node, null, 'not visible without the workspace')

  t.equal(code(await gql(app, 'bob', CREATE_KEY_DATE, { input: { zenhubEpicId: epic1, date: '2026-02-30', description: 'x' } })), 'BAD_USER_INPUT', 'no such day')
  t.equal(code(await gql(app, 'bob', CREATE_KEY_DATE, { input: { zenhubEpicId: epic1, date: '2026-02-03', description: '  ' } })), 'BAD_USER_INPUT', 'blank')
  t.equal(code(await gql(app, 'carol', CREATE_KEY_DATE, { input: { zenhubEpicId: epic1, date: '2026-02-03', description: 'x' } })), 'FORBIDDEN')
  t.equal(code(await gql(app, 'carol', DELETE_KEY_DATE, { input: { keyDateId: early.id } })), 'FORBIDDEN')
  t.equal(code(await gql(app, 'dave', DELETE_KEY_DATE, { input: { keyDateId: early.id } })), 'NOT_FOUND')
  t.equal((await gql(app, 'alice', KEY_DATES, { id: epic1 })).data.node.keyDates.totalCount, 2, 'the refusals changed nothing')

  const gone = await gql(app, 'bob', DELETE_KEY_DATE, { input: { keyDateId: early.id } })
  t.same(gone.data.deleteZenhubEpicKeyDate, { keyDate: { id: early.id, date: '2026-03-01', description: 'Beta' }, zenhubEpic: { id: epic1, title: 'Launch' } })
  t.equal(code(await gql(app, 'bob', DELETE_KEY_DATE, { input: { keyDateId: early.id } })), 'NOT_FOUND', 'twice')
  t.same((await gql(app, 'alice', KEY_DATES, { id: epic1 })).data.node.keyDates.nodes.map((k: { description: string }) => k.description), ['GA'])
})

t.test('setMultipleEstimatesOnZenhubEpics: the epics\' own estimate, all or none', async (t) => {
  const set = await gql(app, 'bob', SET_ESTIMATE, { input: { zenhubEpicIds: [epic1, epic2], value: 8 } })
  t.same(set.data.setMultipleEstimatesOnZenhubEpics.zenhubEpics, [{ id: epic1, title: 'Launch', estimate: { value: 8 } }, { id: epic2, title: 'Polish', estimate: { value: 8 } }])
  t.equal(code(await gql(app, 'bob', SET_ESTIMATE, { input: { zenhubEpicIds: [epic1, encodeId('ZenhubEpic', 999)], value: 1 } })), 'NOT_FOUND')
  t.equal(code(await gql(app, 'bob', SET_ESTIMATE, { input: { zenhubEpicIds: [epic1], value: -1 } })), 'BAD_USER_INPUT')
  t.equal(code(await gql(app, 'carol', SET_ESTIMATE, { input: { zenhubEpicIds: [epic1], value: 1 } })), 'FORBIDDEN')
  t.same(await read(epic1, 'estimate { value }'), { estimate: { value: 8 } }, 'the refusals changed nothing')
  await gql(app, 'bob', SET_ESTIMATE, { input: { zenhubEpicIds: [epic2], value: null } })
  t.same(await read(epic2, 'estimate { value }'), { estimate: null }, 'null clears it')
})

t.test('GetZenhubEpic: everything zh shows of an epic', async (t) => {
  const one = await issueId(REPO, 1)
  await gql(app, 'bob', 'mutation($i: AddIssuesToZenhubEpicsInput!) { addIssuesToZenhubEpics(input: $i) { clientMutationId } }', { i: { zenhubEpicIds: [epic1], issueIds: [one] } })
  await gql(app, 'bob', ADD_ASSIGNEES, { input: { zenhubEpicIds: [epic1], assigneeIds: [USER.bob] } })
  await gql(app, 'bob', ADD_LABELS, { input: { zenhubEpicIds: [epic1], labelInfos: [{ name: 'roadmap' }] } })
  const res = await gql(app, 'carol', GET_EPIC, { id: epic1, workspaceId: WS_OLD })
  t.same(res.errors, undefined)
  t.match(res.data.node, {
    id: epic1,
    title: 'Launch',
    estimate: { value: 8 },
    creator: { name: 'bob', githubUser: { login: 'bob' } },
    assignees: { nodes: [{ name: 'alice' }, { name: 'bob' }] },
    labels: { nodes: [{ name: 'roadmap', color: null }] },
    childIssues: { totalCount: 1, nodes: [{ number: 1, title: 'Issue 1', repository: { name: 'api', ownerName: 'acme' } }] },
    zenhubIssueCountProgress: { open: 1, closed: 0, total: 1 },
    blockingItems: { totalCount: 0, nodes: [] },
    blockedItems: { totalCount: 0, nodes: [] },
    keyDates: { totalCount: 1, nodes: [{ date: '2026-06-30', description: 'GA', color: null }] }
  })
})

t.test('updateEpicDates: a legacy epic\'s dates, with write permission on its repository', async (t) => {
  const epic = encodeId('Epic', Number(Buffer.from(await issueId(REPO, 6), 'base64').toString().split('/').pop()))
  const set = await gql(app, 'bob', UPDATE_EPIC_DATES, { input: { epicId: epic, startOn: '2026-01-05', endOn: '2026-02-27' } })
  t.same(set.data.updateEpicDates.epic, { id: epic, startOn: '2026-01-05', endOn: '2026-02-27', issue: { title: 'Issue 6', number: 6 } })
  const partial = await gql(app, 'bob', UPDATE_EPIC_DATES, { input: { epicId: epic, endOn: '2026-03-31' } })
  t.same(partial.data.updateEpicDates.epic.startOn, '2026-01-05', 'a date left out stays')
  const refusals: Array<[string, Gql, string]> = [
    ['BAD_USER_INPUT', await gql(app, 'bob', UPDATE_EPIC_DATES, { input: { epicId: epic, startOn: '2026-05-01' } }), 'a start after the end'],
    ['BAD_USER_INPUT', await gql(app, 'bob', UPDATE_EPIC_DATES, { input: { epicId: epic, startOn: '2026-13-01' } }), 'no such day'],
    ['BAD_USER_INPUT', await gql(app, 'bob', UPDATE_EPIC_DATES, { input: { epicId: epic, roadmapId: 'r', startOn: '2026-01-01' } }), 'a roadmap'],
    ['FORBIDDEN', await gql(app, 'carol', UPDATE_EPIC_DATES, { input: { epicId: epic, startOn: '2026-01-01' } }), 'a reader'],
    ['NOT_FOUND', await gql(app, 'dave', UPDATE_EPIC_DATES, { input: { epicId: epic, startOn: '2026-01-01' } }), 'no access'],
    ['NOT_FOUND', await gql(app, 'bob', UPDATE_EPIC_DATES, { input: { epicId: encodeId('Epic', 999999), startOn: '2026-01-01' } }), 'no such epic']
  ]
  for (const [expected, res, why] of refusals) t.equal(code(res), expected, `${why}: ${message(res)}`)
  const listed = (await gql(app, 'carol', `{ workspace(id: "${WS_NEW}") { epics { nodes { id startOn endOn } } } }`)).data.workspace.epics.nodes
  t.same(listed, [{ id: epic, startOn: '2026-01-05', endOn: '2026-03-31' }], 'read back, the refusals changed nothing')
  await gql(app, 'bob', UPDATE_EPIC_DATES, { input: { epicId: epic, startOn: null, endOn: null } })
  t.same((await gql(app, 'bob', `{ node(id: "${epic}") { ... on Epic { startOn endOn } } }`)).data.node, { startOn: null, endOn: null }, 'null clears')
})

t.test('searchIssuesByZenhubEpics: the epics\' readable issues, by workspace, a page at a time', async (t) => {
  const [two, web] = [await issueId(REPO, 2), await issueId(OTHER_REPO, 1)]
  await gql(app, 'alice', 'mutation($i: AddIssuesToZenhubEpicsInput!) { addIssuesToZenhubEpics(input: $i) { clientMutationId } }', { i: { zenhubEpicIds: [epic2], issueIds: [two, web] } })
  const list = async (login: keyof typeof TOKENS, filters: object, first = 10, after?: string) =>
    await gql(app, login, LIST_BY_EPIC, { zenhubEpicIds: [epic1, epic2], workspaceId: WS_OLD, filters, first, after })
  const numbers = (res: Gql) => res.data.searchIssuesByZenhubEpics.nodes.map((n: { repository: { name: string }, number: number }) => `${n.repository.name}#${n.number}`)
  const all = await list('bob', {})
  t.same(all.errors, undefined)
  t.same(numbers(all), ['api#1', 'api#2', 'web#1'], 'epic by epic, in the order added')
  t.equal(all.data.searchIssuesByZenhubEpics.totalCount, 3)
  t.same(numbers(await list('carol', {})), ['api#1', 'api#2'], 'only the issues the viewer can read')
  t.same(numbers(await list('bob', { workspaces: { in: [WS_NEW] } })), ['api#1', 'api#2'], 'of repositories in a workspace')
  t.same(numbers(await list('bob', { workspaces: { nin: [WS_NEW] } })), ['web#1'], 'of repositories not in it')
  t.same(numbers(await list('bob', { workspaces: { notInAny: true } })), [], 'of repositories in no workspace')
  const first = await list('bob', {}, 2)
  t.same(first.data.searchIssuesByZenhubEpics.pageInfo.hasNextPage, true)
  t.same(numbers(await list('bob', {}, 2, first.data.searchIssuesByZenhubEpics.pageInfo.endCursor)), ['web#1'], 'the next page')
  t.equal(code(await list('dave', {})), 'NOT_FOUND', 'epics the viewer cannot see')
  t.equal(code(await gql(app, 'bob', LIST_BY_EPIC, { zenhubEpicIds: [], workspaceId: WS_OLD, filters: {}, first: 1 })), 'BAD_USER_INPUT')
})

t.test('export and import carry assignees, labels, key dates, estimates and legacy epic dates, ids kept', async (t) => {
  const legacy = encodeId('Epic', Number(Buffer.from(await issueId(REPO, 6), 'base64').toString().split('/').pop()))
  await gql(app, 'bob', UPDATE_EPIC_DATES, { input: { epicId: legacy, startOn: '2026-04-01', endOn: '2026-04-30' } })
  await gql(app, 'bob', CREATE_KEY_DATE, { input: { zenhubEpicId: epic2, date: '2026-05-05', description: 'Freeze' } })
  await gql(app, 'bob', SET_ESTIMATE, { input: { zenhubEpicIds: [epic2], value: 2.5 } })
  await gql(app, 'bob', ADD_LABELS, { input: { zenhubEpicIds: [epic2], labelInfos: [{ name: 'ux', color: 'aabbcc' }] } })
  const everything = `{ workspace(id: "${WS_OLD}") { zenhubEpics { nodes { id title estimate { value } ${ASSIGNEES} ${LABELS}
    keyDates { nodes { id date description } } } } } legacy: node(id: "${legacy}") { ... on Epic { startOn endOn } } }`
  const before = (await gql(app, 'alice', everything)).data
  t.equal(before.workspace.zenhubEpics.nodes.length, 2)
  const backup = (await app.admin({ url: '/admin/export' })).json()
  t.match(backup.zenhub_epics[1], {
    title: 'Polish',
    estimate: 2.5,
    assignees: [{ login: 'alice' }, { login: 'carol' }],
    labels: [{ name: 'ux', color: 'aabbcc' }],
    key_dates: [{ date: '2026-05-05', description: 'Freeze' }]
  })
  t.match(backup.epics, [{ repo_id: REPO, issue_number: 6, start_on: '2026-04-01', end_on: '2026-04-30' }])

  const tokens = new Map(testFixture().users.map((u) => [u.login, u.token]))
  const target = await build(t, { fixture: { ...backup, users: backup.users.map((u: { login: string }) => ({ ...u, token: tokens.get(u.login) })) } })
  t.same((await target.admin({ url: '/admin/export' })).json(), backup, 'the target exports the same file')
  const after = (await gql(target, 'alice', everything)).data
  t.same(after, before, 'the same reads, the same ids')
  const made = await gql(target, 'bob', CREATE_KEY_DATE, { input: { zenhubEpicId: epic2, date: '2026-05-06', description: 'Next' } })
  const ids = (list: Array<{ id: string }>) => list.map((k) => Number(Buffer.from(k.id, 'base64').toString().split('/').pop()))
  const kept = ids(after.workspace.zenhubEpics.nodes.flatMap((e: { keyDates: { nodes: Array<{ id: string }> } }) => e.keyDates.nodes))
  t.ok(ids([made.data.createZenhubEpicKeyDate.keyDate])[0] > Math.max(...kept), 'a new key date gets an id past the kept ones')
  const twice = await target.admin({ method: 'POST', url: '/admin/import', payload: { zenhub_epics: [{ ...backup.zenhub_epics[1], id: undefined }] } })
  t.equal(twice.statusCode, 409, 'a kept key date id taken')
  t.match(twice.json().message, /key date \d+ already exists/)
  const nobody = { zenhub_epics: [{ workspace_id: WS_OLD, title: 'X', issues: [], assignees: [{ login: 'nobody' }] }] }
  const badLogin = await target.admin({ method: 'POST', url: '/admin/import', payload: nobody })
  t.equal(badLogin.statusCode, 400)
  t.match(badLogin.json().message, /zenhub_epics\[0\]\.assignees\[0\]: unknown login 'nobody'/)
})

t.test('deleting an epic takes its assignees, labels and key dates with it', async (t) => {
  const keyDate = (await gql(app, 'alice', KEY_DATES, { id: epic1 })).data.node.keyDates.nodes[0].id
  await gql(app, 'bob', `mutation { deleteZenhubEpic(input: { zenhubEpicId: "${epic1}" }) { zenhubEpicId } }`)
  t.same((await gql(app, 'alice', `{ node(id: "${keyDate}") { id } }`)).data.node, null, 'its key dates go')
  const backup = (await app.admin({ url: '/admin/export' })).json()
  t.same(backup.zenhub_epics.map((e: { title: string, key_dates: unknown[] }) => [e.title, e.key_dates.length]), [['Polish', 1]])
})
