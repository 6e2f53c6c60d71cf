import t from 'tap'
import { buildWithSql, REPO, OTHER_REPO, TOKENS } from './helper.js'
import { encodeId } from '../plugins/graphql/ids.js'
import { gql as post, type Gql } from './gql.js'

const { app, sql } = await buildWithSql(t)
const gql = async (login: keyof typeof TOKENS, query: string, variables?: Record<string, unknown>): Promise<Gql> => await post(app, login, query, variables)
const readToken = (await app.as('alice', { method: 'POST', url: '/account/tokens', payload: { name: 'reader', scope: 'read' } })).json().token as string
const asReader = async (query: string, variables?: Record<string, unknown>): Promise<Gql> =>
  (await app.inject({ method: 'POST', url: '/public/graphql', headers: { authorization: `Bearer ${readToken}` }, payload: { query, variables } })).json()
const code = (answer: Gql) => answer.errors?.[0]?.extensions.code
const milestones = async (repo: number) => (await app.admin({ url: `/admin/repositories/${repo}/milestones` })).json()
const issueMilestones = async (repo: number) =>
  Object.fromEntries((await app.admin({ url: `/admin/repositories/${repo}/issues` })).json().map((i: { number: number, milestone_number?: number }) => [i.number, i.milestone_number ?? null]))
const issueId = async (repo: number, n: number): Promise<string> => (await gql('alice', `{ issueByInfo(repositoryGhId: ${repo}, issueNumber: ${n}) { id } }`)).data.issueByInfo.id

const CREATE = 'mutation($i: CreateMilestoneInput!) { createMilestone(input: $i) { clientMutationId milestone { id number title state dueOn startDate } } }'
const UPDATE = 'mutation($i: UpdateMilestoneInput!) { updateMilestone(input: $i) { milestone { id number title state dueOn startDate } } }'
const ADD = 'mutation($i: AddMilestoneForIssuesInput!) { addMilestoneToIssues(input: $i) { successCount failedIssues { number } githubErrors } }'
const REMOVE = 'mutation($i: RemoveMilestoneForIssuesInput!) { removeMilestoneToIssues(input: $i) { successCount failedIssues { number } } }'

t.test('createMilestone and updateMilestone are the admin API\'s milestone writes, by server administrators as there', async (t) => {
  const repositoryId = encodeId('Repository', REPO)
  const wanted = { repositoryId, title: 'v2.0', dueOn: '2026-03-01T00:00:00Z' }
  t.equal(code(await asReader(CREATE, { i: wanted })), 'FORBIDDEN', 'a read token')
  t.equal(code(await gql('carol', CREATE, { i: wanted })), 'FORBIDDEN', 'a reader')
  t.equal(code(await gql('bob', CREATE, { i: wanted })), 'FORBIDDEN', 'a writer, not an administrator of the repository')
  t.equal(code(await gql('dave', CREATE, { i: wanted })), 'NOT_FOUND', 'no access')
  t.equal(code(await gql('alice', CREATE, { i: wanted })), 'FORBIDDEN', 'an administrator of the repository who is not a server administrator')
  t.equal((await app.admin({ method: 'PATCH', url: '/admin/users/alice', payload: { administrator: true } })).statusCode, 200)
  t.equal(code(await gql('alice', CREATE, { i: { ...wanted, title: ' ' } })), 'BAD_USER_INPUT')
  t.equal(code(await gql('alice', CREATE, { i: { ...wanted, startDate: '2026-01-01T00:00:00Z', dueOn: '2099-01-01T00:00:00Z' } })), 'BAD_USER_INPUT', 'a span the burndown refuses')
  t.same((await milestones(REPO)).map((m: { number: number }) => m.number), [1], 'the refusals made nothing')

  const made = await gql('alice', CREATE, { i: { ...wanted, startDate: '2026-02-01T00:00:00Z', clientMutationId: 'c1' } })
  const milestoneId = encodeId('Milestone', `${REPO}:2`)
  t.same(made.data.createMilestone, {
    clientMutationId: 'c1',
    milestone: { id: milestoneId, number: 2, title: 'v2.0', state: 'OPEN', dueOn: '2026-03-01T00:00:00.000Z', startDate: '2026-02-01T00:00:00.000Z' }
  }, 'numbered one past the highest')
  t.match((await milestones(REPO)).find((m: { number: number }) => m.number === 2), { title: 'v2.0', state: 'open', due_on: '2026-03-01T00:00:00.000Z', start_date: '2026-02-01T00:00:00.000Z' }, 'what the admin API lists')

  t.equal(code(await gql('bob', UPDATE, { i: { milestoneId, title: 'Nope' } })), 'FORBIDDEN', 'a writer')
  t.equal(code(await gql('dave', UPDATE, { i: { milestoneId, title: 'Nope' } })), 'NOT_FOUND', 'no access')
  t.equal(code(await gql('alice', UPDATE, { i: { title: 'Nope' } })), 'BAD_USER_INPUT', 'no milestoneId')
  t.equal(code(await gql('alice', UPDATE, { i: { milestoneId: encodeId('Milestone', `${REPO}:9`), title: 'Nope' } })), 'NOT_FOUND')
  t.equal((await milestones(REPO)).find((m: { number: number }) => m.number === 2).title, 'v2.0', 'unchanged by the refusals')

  const updated = await gql('alice', UPDATE, { i: { milestoneId, title: 'v2.0 final', state: 'CLOSED', dueOn: null, startDate: null } })
  t.same(updated.data.updateMilestone.milestone, { id: milestoneId, number: 2, title: 'v2.0 final', state: 'CLOSED', dueOn: null, startDate: null })
  t.match((await milestones(REPO)).find((m: { number: number }) => m.number === 2), { title: 'v2.0 final', state: 'closed', due_on: null, start_date: null })
  const twin = await app.admin({ method: 'PATCH', url: `/admin/repositories/${REPO}/milestones/2`, payload: { state: 'open' } })
  t.equal(twin.statusCode, 200)
  t.equal((await gql('carol', `{ node(id: "${milestoneId}") { ... on Milestone { state } } }`)).data.node.state, 'OPEN', 'and the other way round')
})

t.test('addMilestoneToIssues and removeMilestoneToIssues set an issue\'s milestone with write permission', async (t) => {
  const milestoneId = encodeId('Milestone', `${REPO}:1`)
  const [one, two, web] = [await issueId(REPO, 1), await issueId(REPO, 2), await issueId(OTHER_REPO, 1)]
  t.equal(code(await asReader(ADD, { i: { milestoneId, issueIds: [one] } })), 'FORBIDDEN', 'a read token')
  t.equal(code(await gql('carol', ADD, { i: { milestoneId, issueIds: [one] } })), 'FORBIDDEN', 'a reader')
  t.equal(code(await gql('dave', ADD, { i: { milestoneId, issueIds: [one] } })), 'NOT_FOUND', 'no access')
  t.equal(code(await gql('bob', ADD, { i: { milestoneId, issueIds: [one, web] } })), 'FORBIDDEN', 'one issue bob only reads refuses the batch')
  t.equal(code(await gql('bob', ADD, { i: { milestoneId: encodeId('Milestone', `${REPO}:9`), issueIds: [one] } })), 'NOT_FOUND')
  t.same([(await issueMilestones(REPO))[1], (await issueMilestones(REPO))[2]], [null, null], 'nothing changed')

  const added = await gql('bob', ADD, { i: { milestoneId, issueIds: [one, two] } })
  t.same(added.data.addMilestoneToIssues, { successCount: 2, failedIssues: [], githubErrors: {} })
  t.match(await issueMilestones(REPO), { 1: 1, 2: 1, 3: null }, 'what the admin API shows')
  const read = await gql('carol', `{ issueByInfo(repositoryGhId: ${REPO}, issueNumber: 1) { milestone { id title } } }`)
  t.same(read.data.issueByInfo.milestone, { id: milestoneId, title: 'v1.0' })

  const mixed = await gql('alice', ADD, { i: { milestoneId, issueIds: [web] } })
  t.equal(mixed.data.addMilestoneToIssues.successCount, 0, 'an issue of another repository cannot take the milestone')
  t.same(mixed.data.addMilestoneToIssues.failedIssues, [{ number: 1 }])
  t.equal((await issueMilestones(OTHER_REPO))[1], null)

  t.equal(code(await gql('carol', REMOVE, { i: { issueIds: [one] } })), 'FORBIDDEN', 'a reader')
  t.equal((await issueMilestones(REPO))[1], 1, 'kept')
  const removed = await gql('bob', REMOVE, { i: { issueIds: [one] } })
  t.same(removed.data.removeMilestoneToIssues, { successCount: 1, failedIssues: [] })
  t.match(await issueMilestones(REPO), { 1: null, 2: 1 })
})

t.test('a repository bound to an issue host keeps its milestones as the host has them', async (t) => {
  const connection = (await app.admin({ method: 'POST', url: '/admin/connections', payload: { kind: 'github', secret: 'a-webhook-secret-0123456789', token: 'ghp_writer' } })).json().id as string
  t.equal((await app.admin({ method: 'POST', url: `/admin/repositories/${OTHER_REPO}/milestones`, payload: { number: 5, title: 'From the host' } })).statusCode, 201)
  await app.admin({ method: 'PATCH', url: `/admin/repositories/${OTHER_REPO}/issues/2`, payload: { milestone_number: 5 } })
  await sql('UPDATE repositories SET connection_id = ? WHERE id = ?', [connection, OTHER_REPO])
  const milestoneId = encodeId('Milestone', `${OTHER_REPO}:5`)
  const web = await issueId(OTHER_REPO, 1)
  const refused = [
    await gql('alice', CREATE, { i: { repositoryId: encodeId('Repository', OTHER_REPO), title: 'Here only' } }),
    await gql('alice', UPDATE, { i: { milestoneId, title: 'Renamed here' } }),
    await gql('alice', ADD, { i: { milestoneId, issueIds: [web] } }),
    await gql('alice', REMOVE, { i: { issueIds: [await issueId(OTHER_REPO, 2)] } })
  ]
  t.same(refused.map(code), ['BAD_USER_INPUT', 'BAD_USER_INPUT', 'BAD_USER_INPUT', 'BAD_USER_INPUT'])
  t.match(refused[0].errors?.[0].message, /bound to an issue host/)
  t.same((await milestones(OTHER_REPO)).map((m: { title: string }) => m.title), ['From the host'], 'nothing made or renamed')
  t.match(await issueMilestones(OTHER_REPO), { 1: null, 2: 5 }, 'no issue changed')
})
