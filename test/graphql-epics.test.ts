import t from 'tap'
import { build, REPO, WS_OLD, WS_NEW, TOKENS } from './helper.js'
import { encodeId } from '../plugins/graphql/ids.js'
import { gql, type Gql } from './gql.js'

// One app for the whole file (CI budget); the tests run in order and build on each other.
const app = await build(t)
const ORG = encodeId('ZenhubOrganization', 1)
const EPIC = 'id title body state startOn endOn createdAt updatedAt creator { name } zenhubOrganization { id } viewerPermission'
const code = (r: Gql) => r.errors?.[0]?.extensions.code
const issueId = async (repo: number, n: number): Promise<string> => (await gql(app, 'alice', `{ issueByInfo(repositoryGhId: ${repo}, issueNumber: ${n}) { id } }`)).data.issueByInfo.id
const own = async (login: keyof typeof TOKENS, ws: string) => (await gql(app, login, `{ workspace(id: "${ws}") { zenhubRepository { id ghId name } } }`)).data.workspace
const epics = async (login: keyof typeof TOKENS, ws = WS_OLD) => (await gql(app, login, `{ workspace(id: "${ws}") { zenhubEpics { totalCount nodes { id title state } } } }`)).data.workspace.zenhubEpics
let ownRepo: { id: string, ghId: number, name: string }
/** The REST API's repo_id of the own repository (its ghId is negative: beyond GraphQL's Int) */
let ownRest: number
let epicId: string

t.test('zenhubRepository: the workspace\'s own repository, made once by a workspace writer\'s read; createIssue works in it', async (t) => {
  t.same(await own('carol', WS_OLD), { zenhubRepository: null }, 'a reader\'s read writes nothing: it is not there yet')
  const first = await own('bob', WS_OLD)
  ownRepo = first.zenhubRepository
  ownRest = Number(Buffer.from(ownRepo.id, 'base64').toString().split('/').pop())
  t.ok(ownRest >= 2 ** 40, 'a repository that lives here only')
  t.equal(ownRepo.ghId, -1, 'the first of them: ghId -1')
  t.same(await own('bob', WS_OLD), first, 'made once')
  t.same(await own('carol', WS_OLD), { zenhubRepository: null }, 'only its maker holds a permission on it at first')
  const granted = await app.admin({ method: 'PUT', url: `/admin/repositories/${ownRest}/permissions/carol`, payload: { permission: 'read' } })
  t.ok(granted.statusCode < 300, 'granted as any repository')
  t.same(await own('carol', WS_OLD), first, 'then carol reads it')
  await app.admin({ method: 'PUT', url: `/admin/repositories/${ownRest}/permissions/alice`, payload: { permission: 'admin' } })
  t.not((await own('alice', WS_NEW)).zenhubRepository.id, ownRepo.id, 'each workspace has its own')
  t.equal(await own('dave', WS_OLD), null, 'a user without the workspace does not see it')
  const repos = (await gql(app, 'bob', `{ workspace(id: "${WS_OLD}") { repositoriesConnection { nodes { id } } } }`)).data.workspace.repositoriesConnection.nodes
  t.ok(repos.some((r: { id: string }) => r.id === ownRepo.id), 'it is one of the workspace\'s repositories')

  const made = await gql(app, 'bob', 'mutation($i: CreateIssueInput!) { createIssue(input: $i) { issue { number title type repository { id } } } }',
    { i: { repositoryId: ownRepo.id, title: 'Native issue' } })
  t.same(made.data.createIssue.issue, { number: 1, title: 'Native issue', type: 'ZenhubIssue', repository: { id: ownRepo.id } })
  const board = (await app.as('bob', { url: `/p2/workspaces/${WS_OLD}/repositories/${ownRest}/board` })).json()
  t.ok(board.pipelines[0].issues.some((i: { issue_number: number }) => i.issue_number === 1), 'on the workspace\'s board, in its first pipeline')
  const carol = await gql(app, 'carol', 'mutation($i: CreateIssueInput!) { createIssue(input: $i) { issue { number } } }', { i: { repositoryId: ownRepo.id, title: 'No' } })
  t.equal(code(carol), 'FORBIDDEN', 'a reader of the workspace reads it and cannot write it')
})

t.test('createZenhubEpic: in the workspace its zenhubRepositoryId names, with the workspace\'s write permission', async (t) => {
  const create = 'mutation($i: CreateZenhubEpicInput!) { createZenhubEpic(input: $i) { clientMutationId zenhubEpic { ' + EPIC + ' } } }'
  const ambiguous = await gql(app, 'bob', create, { i: { zenhubOrganizationId: ORG, zenhubEpic: { title: 'Where?' } } })
  t.equal(code(ambiguous), 'BAD_USER_INPUT', 'bob writes two workspaces: which one must be said')
  t.equal(code(await gql(app, 'bob', create, { i: { zenhubOrganizationId: encodeId('ZenhubOrganization', 2), zenhubRepositoryId: ownRepo.id, zenhubEpic: { title: 'x' } } })), 'NOT_FOUND')
  t.equal(code(await gql(app, 'carol', create, { i: { zenhubOrganizationId: ORG, zenhubRepositoryId: ownRepo.id, zenhubEpic: { title: 'x' } } })), 'FORBIDDEN', 'read permission only')
  t.equal(code(await gql(app, 'dave', create, { i: { zenhubOrganizationId: ORG, zenhubRepositoryId: ownRepo.id, zenhubEpic: { title: 'x' } } })), 'NOT_FOUND', 'no access')
  t.equal(code(await gql(app, 'bob', create, { i: { zenhubOrganizationId: ORG, zenhubRepositoryId: ownRepo.id, zenhubEpic: { title: '  ' } } })), 'BAD_USER_INPUT')
  t.same(await epics('bob'), { totalCount: 0, nodes: [] }, 'nothing was made by the refusals')

  const made = await gql(app, 'bob', create, { i: { clientMutationId: 'e1', zenhubOrganizationId: ORG, zenhubRepositoryId: ownRepo.id, zenhubEpic: { title: 'Launch', body: 'All of it' } } })
  const epic = made.data.createZenhubEpic.zenhubEpic
  epicId = epic.id
  t.equal(made.data.createZenhubEpic.clientMutationId, 'e1')
  t.match(Buffer.from(epicId, 'base64').toString(), /^gid:\/\/raptor\/ZenhubEpic\/\d+$/)
  t.match(epic, { title: 'Launch', body: 'All of it', state: 'OPEN', startOn: null, endOn: null, creator: { name: 'bob' }, zenhubOrganization: { id: ORG }, viewerPermission: 'WRITE' })
  t.same(await epics('carol'), { totalCount: 1, nodes: [{ id: epicId, title: 'Launch', state: 'OPEN' }] }, 'a reader of the workspace lists it')
  t.same(await epics('bob', WS_NEW), { totalCount: 0, nodes: [] }, 'in its workspace only')
  t.same((await gql(app, 'carol', `{ node(id: "${epicId}") { ... on ZenhubEpic { title viewerPermission } } }`)).data.node, { title: 'Launch', viewerPermission: 'READ' })
  t.same((await gql(app, 'dave', `{ node(id: "${epicId}") { id } }`)).data.node, null, 'invisible without the workspace')
})

t.test('updateZenhubEpic, updateZenhubEpicState and updateZenhubEpicDates change it; refusals change nothing', async (t) => {
  const updated = await gql(app, 'bob', `mutation { updateZenhubEpic(input: { zenhubEpicId: "${epicId}", title: "Launch v2", clientMutationId: "u" }) { clientMutationId zenhubEpic { title body } } }`)
  t.same(updated.data.updateZenhubEpic, { clientMutationId: 'u', zenhubEpic: { title: 'Launch v2', body: 'All of it' } })
  const state = await gql(app, 'bob', `mutation { updateZenhubEpicState(input: { zenhubEpicId: "${epicId}", state: IN_PROGRESS }) { zenhubEpic { state } } }`)
  t.same(state.data.updateZenhubEpicState.zenhubEpic, { state: 'IN_PROGRESS' })
  const dates = await gql(app, 'bob', `mutation { updateZenhubEpicDates(input: { zenhubEpicId: "${epicId}", startOn: "2026-01-05", endOn: "2026-02-27" }) { zenhubEpic { startOn endOn } } }`)
  t.same(dates.data.updateZenhubEpicDates.zenhubEpic, { startOn: '2026-01-05', endOn: '2026-02-27' })
  const backwards = await gql(app, 'bob', `mutation { updateZenhubEpicDates(input: { zenhubEpicId: "${epicId}", startOn: "2026-03-01" }) { zenhubEpic { id } } }`)
  t.equal(code(backwards), 'BAD_USER_INPUT', 'a start after the end')

  const tokenRes = await app.as('bob', { method: 'POST', url: '/account/tokens', payload: { name: 'reader', scope: 'read' } })
  const readToken = tokenRes.json().token as string
  const asReader = async (query: string) => (await app.inject({ method: 'POST', url: '/public/graphql', headers: { authorization: `Bearer ${readToken}` }, payload: { query } })).json() as Gql
  t.equal(code(await asReader(`mutation { updateZenhubEpic(input: { zenhubEpicId: "${epicId}", title: "Read token" }) { zenhubEpic { id } } }`)), 'FORBIDDEN', 'a read token')
  t.equal(code(await asReader(`mutation { deleteZenhubEpic(input: { zenhubEpicId: "${epicId}" }) { zenhubEpicId } }`)), 'FORBIDDEN')
  t.equal(code(await gql(app, 'carol', `mutation { updateZenhubEpic(input: { zenhubEpicId: "${epicId}", title: "Carol" }) { zenhubEpic { id } } }`)), 'FORBIDDEN', 'a read user')
  t.equal(code(await gql(app, 'dave', `mutation { updateZenhubEpic(input: { zenhubEpicId: "${epicId}", title: "Dave" }) { zenhubEpic { id } } }`)), 'NOT_FOUND', 'a user without the workspace')
  t.equal(code(await gql(app, 'bob', 'mutation { updateZenhubEpic(input: { zenhubEpicId: "nope", title: "x" }) { zenhubEpic { id } } }')), 'BAD_USER_INPUT', 'not an id')
  const read = (await gql(app, 'alice', `{ node(id: "${epicId}") { ... on ZenhubEpic { title body state startOn endOn } } }`)).data.node
  t.same(read, { title: 'Launch v2', body: 'All of it', state: 'IN_PROGRESS', startOn: '2026-01-05', endOn: '2026-02-27' }, 'only the permitted changes')
})

t.test('addIssuesToZenhubEpics and removeIssuesFromZenhubEpics: childIssues, progress and Issue.parentZenhubEpics follow', async (t) => {
  const [one, native] = [await issueId(REPO, 1), await issueId(ownRepo.ghId, 1)]
  await gql(app, 'alice', `mutation { setEstimate(input: { issueId: "${one}", value: 3 }) { clientMutationId } }`)
  const add = 'mutation($i: AddIssuesToZenhubEpicsInput!) { addIssuesToZenhubEpics(input: $i) { clientMutationId zenhubEpics { id title } } }'
  t.equal(code(await gql(app, 'carol', add, { i: { zenhubEpicIds: [epicId], issueIds: [one] } })), 'FORBIDDEN')
  t.equal(code(await gql(app, 'bob', add, { i: { zenhubEpicIds: [epicId], issueIds: [encodeId('Issue', 999999)] } })), 'NOT_FOUND')
  const added = await gql(app, 'bob', add, { i: { zenhubEpicIds: [epicId], issueIds: [one, native], clientMutationId: 'a' } })
  t.same(added.data.addIssuesToZenhubEpics, { clientMutationId: 'a', zenhubEpics: [{ id: epicId, title: 'Launch v2' }] })
  t.same((await gql(app, 'bob', add, { i: { zenhubEpicIds: [epicId], issueIds: [one] } })).errors, undefined, 'adding again is no change')

  const detail = `{ node(id: "${epicId}") { ... on ZenhubEpic { childIssues(workspaceId: "${WS_OLD}") { totalCount nodes { number title } }
    zenhubIssueCountProgress { open closed total } zenhubIssueEstimateProgress { open closed total } } } }`
  t.same((await gql(app, 'bob', detail)).data.node, {
    childIssues: { totalCount: 2, nodes: [{ number: 1, title: 'Issue 1' }, { number: 1, title: 'Native issue' }] },
    zenhubIssueCountProgress: { open: 2, closed: 0, total: 2 },
    zenhubIssueEstimateProgress: { open: 3, closed: 0, total: 3 }
  })
  const parents = await gql(app, 'carol', `{ issueByInfo(repositoryGhId: ${REPO}, issueNumber: 1) { parentZenhubEpics { nodes { id title } } } }`)
  t.same(parents.data.issueByInfo.parentZenhubEpics.nodes, [{ id: epicId, title: 'Launch v2' }])

  const removed = await gql(app, 'bob', `mutation { removeIssuesFromZenhubEpics(input: { zenhubEpicIds: ["${epicId}"], issueIds: ["${one}"] }) { zenhubEpics { id } } }`)
  t.same(removed.data.removeIssuesFromZenhubEpics.zenhubEpics, [{ id: epicId }])
  t.same((await gql(app, 'bob', detail)).data.node.childIssues, { totalCount: 1, nodes: [{ number: 1, title: 'Native issue' }] })
  t.same((await gql(app, 'bob', `{ issueByInfo(repositoryGhId: ${REPO}, issueNumber: 1) { parentZenhubEpics { totalCount } } }`)).data.issueByInfo.parentZenhubEpics, { totalCount: 0 })
})

t.test('deleteZenhubEpic: the epic goes, its issues stay', async (t) => {
  t.equal(code(await gql(app, 'carol', `mutation { deleteZenhubEpic(input: { zenhubEpicId: "${epicId}" }) { zenhubEpicId } }`)), 'FORBIDDEN')
  t.equal(code(await gql(app, 'dave', `mutation { deleteZenhubEpic(input: { zenhubEpicId: "${epicId}" }) { zenhubEpicId } }`)), 'NOT_FOUND')
  t.equal((await epics('alice')).totalCount, 1, 'the refusals deleted nothing')
  const gone = await gql(app, 'bob', `mutation { deleteZenhubEpic(input: { zenhubEpicId: "${epicId}", clientMutationId: "d" }) { clientMutationId zenhubEpicId } }`)
  t.same(gone.data.deleteZenhubEpic, { clientMutationId: 'd', zenhubEpicId: epicId })
  t.same(await epics('alice'), { totalCount: 0, nodes: [] })
  t.same((await gql(app, 'alice', `{ node(id: "${epicId}") { id } }`)).data.node, null)
  t.equal(code(await gql(app, 'bob', `mutation { deleteZenhubEpic(input: { zenhubEpicId: "${epicId}" }) { zenhubEpicId } }`)), 'NOT_FOUND', 'twice')
  t.equal((await app.as('alice', { url: `/p1/repositories/${ownRest}/issues/1` })).statusCode, 200, 'its issue stays')
})

t.test('zenhubEpics: filters by state, query and order', async (t) => {
  const create = async (title: string) => (await gql(app, 'alice', `mutation { createZenhubEpic(input: { zenhubOrganizationId: "${ORG}", zenhubRepositoryId: "${ownRepo.id}", zenhubEpic: { title: "${title}" } }) { zenhubEpic { id } } }`)).data.createZenhubEpic.zenhubEpic.id
  const [b, a] = [await create('Beta'), await create('Alpha')]
  await gql(app, 'alice', `mutation { updateZenhubEpicState(input: { zenhubEpicId: "${b}", state: CLOSED }) { zenhubEpic { id } } }`)
  const list = async (args: string) => (await gql(app, 'alice', `{ workspace(id: "${WS_OLD}") { zenhubEpics${args} { nodes { title } } } }`)).data.workspace.zenhubEpics.nodes.map((n: { title: string }) => n.title)
  t.same(await list(''), ['Beta', 'Alpha'], 'oldest first')
  t.same(await list('(orderBy: { field: TITLE, direction: ASC })'), ['Alpha', 'Beta'])
  t.same(await list('(filters: { state: { in: [CLOSED] } })'), ['Beta'])
  t.same(await list('(filters: { state: { nin: [CLOSED] } })'), ['Alpha'])
  t.same(await list('(query: "alp")'), ['Alpha'])
  t.same(await list('(first: 1)'), ['Beta'])
  t.ok(a)
})
