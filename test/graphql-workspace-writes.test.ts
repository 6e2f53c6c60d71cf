import t from 'tap'
import { readFileSync } from 'node:fs'
import { buildWithSql, REPO, OTHER_REPO, PRIVATE_REPO, WS_NEW, WS_OLD, TOKENS } from './helper.js'
import { encodeId } from '../plugins/graphql/ids.js'
import { gql as post, type Gql } from './gql.js'

const clock = { now: Date.parse('2026-03-20T12:00:00Z') }
const { app, sql } = await buildWithSql(t, { clock: () => clock.now, sprintTickMs: 0 })
const gql = async (login: keyof typeof TOKENS, query: string, variables?: Record<string, unknown>): Promise<Gql> => await post(app, login, query, variables)
const code = (answer: Gql) => answer.errors?.[0]?.extensions.code
const issueId = async (repo: number, n: number): Promise<string> => (await gql('alice', `{ issueByInfo(repositoryGhId: ${repo}, issueNumber: ${n}) { id } }`)).data.issueByInfo.id
const parentOf = async (repo: number, n: number) => (await gql('alice', `{ issueByInfo(repositoryGhId: ${repo}, issueNumber: ${n}) { parentIssue { number } } }`)).data.issueByInfo.parentIssue?.number ?? null

const CLIENT = '/work/client-docs/zenhub-mcp'
const doc = (name: string, fallback: string): string => { try { return readFileSync(`${CLIENT}/${name}.graphql`, 'utf8') } catch { return fallback } }
const CREATE_WORKSPACE = doc('workspaces__mutations__createWorkspace', 'mutation($input: CreateWorkspaceInput!) { createWorkspace(input: $input) { workspace { id name description } } }')
const DELETE_SPRINTS = doc('sprints__mutations__deleteSprintConfigAndOpenSprints', 'mutation($input: DeleteSprintConfigAndOpenSprintsInput!) { deleteSprintConfigAndOpenSprints(input: $input) { workspace { id } } }')
const EPIC_FROM_ISSUE = doc('epics__mutations__createEpicFromIssue', 'mutation($input: CreateEpicFromIssueInput!) { createEpicFromIssue(input: $input) { epic { id issue { id title number htmlUrl } } } }')
const SUB_ISSUES = doc('epics__mutations__addSubIssues', 'mutation($input: AddSubIssuesInput!) { addSubIssues(input: $input) { failedIssues { id } successCount } }')

t.test('createWorkspace is the admin API\'s workspace creation: administrators only, audited', async (t) => {
  const input = { name: '  Platform  ', description: 'The platform team', repositoryGhIds: [REPO, OTHER_REPO], defaultRepositoryGhId: REPO }
  t.equal(code(await gql('alice', CREATE_WORKSPACE, { input })), 'FORBIDDEN', 'an admin of every repository who is not a server administrator')
  t.equal(code(await gql('bob', CREATE_WORKSPACE, { input })), 'FORBIDDEN')
  t.equal((await app.admin({ method: 'PATCH', url: '/admin/users/bob', payload: { administrator: true } })).statusCode, 200)
  t.equal(code(await gql('bob', CREATE_WORKSPACE, { input: { ...input, repositoryGhIds: [REPO, PRIVATE_REPO] } })), 'NOT_FOUND', 'a repository the administrator cannot read')
  t.equal(code(await gql('bob', CREATE_WORKSPACE, { input: { ...input, defaultRepositoryGhId: PRIVATE_REPO } })), 'BAD_USER_INPUT', 'a default repository not among them')
  t.equal(code(await gql('bob', CREATE_WORKSPACE, { input: { ...input, name: ' ' } })), 'BAD_USER_INPUT')
  t.equal(code(await gql('bob', CREATE_WORKSPACE, { input: { ...input, zenhubOrganizationId: encodeId('ZenhubOrganization', 7) } })), 'NOT_FOUND')
  const before = (await app.admin({ url: '/admin/workspaces' })).json().length

  const made = await gql('bob', CREATE_WORKSPACE, { input: { ...input, zenhubOrganizationId: encodeId('ZenhubOrganization', 1) } })
  t.equal(made.errors, undefined)
  const workspace = made.data.createWorkspace.workspace
  t.match(workspace, { name: 'Platform', description: 'The platform team' })
  t.match(workspace.id, /^[0-9a-f]{24}$/, 'a REST workspace id')
  const listed = (await app.admin({ url: '/admin/workspaces' })).json()
  t.equal(listed.length, before + 1)
  t.match(listed.find((w: { id: string }) => w.id === workspace.id), { repositories: [REPO, OTHER_REPO], pipelines: [{ name: 'New Issues' }, { name: 'In Progress' }, { name: 'Done' }] })
  const board = await app.as('carol', { url: `/p2/workspaces/${workspace.id as string}/repositories/${REPO}/board` })
  t.equal(board.statusCode, 200, 'its board opens for a reader of its repositories')
  t.ok(board.json().pipelines[0].issues.length > 0, 'the repositories\' issues are on it')
  const audit = (await app.admin({ url: '/admin/audit?limit=20' })).json().entries as Array<{ action: string, actor: string, target: string }>
  t.ok(audit.some((e) => e.action === 'workspace.created' && e.actor === 'user:bob' && e.target === `workspace:${workspace.id as string}`), 'audited')
})

t.test('deleteSprintConfigAndOpenSprints deletes the plan and the sprints that have not ended', async (t) => {
  const url = `/p2/workspaces/${WS_NEW}/sprint_config`
  t.equal((await app.as('alice', { method: 'PUT', url, payload: { length_weeks: 1, starts_on: '2026-03-16', time_zone: 'UTC', carry_over: false } })).statusCode, 200)
  clock.now = Date.parse('2026-03-28T12:00:00Z')
  const sprints = async () => (await app.as('alice', { url: `/p2/workspaces/${WS_NEW}/sprints` })).json() as Array<{ id: string, state: string }>
  const before = await sprints()
  const closed = before.filter((s) => s.state === 'closed').map((s) => s.id)
  const active = before.find((s) => s.state === 'active')!
  t.ok(closed.length > 0 && before.some((s) => s.state === 'future'), 'ended, active and future sprints')
  t.equal((await app.as('alice', { method: 'POST', url: `/p2/sprints/${active.id}/issues`, payload: { issues: [{ repo_id: REPO, issue_number: 2 }] } })).statusCode, 200)

  t.equal(code(await gql('bob', DELETE_SPRINTS, { input: { workspaceId: WS_NEW } })), 'FORBIDDEN', 'a writer')
  t.equal(code(await gql('dave', DELETE_SPRINTS, { input: { workspaceId: WS_NEW } })), 'NOT_FOUND', 'no access')
  t.equal((await sprints()).length, before.length, 'nothing deleted by the refusals')

  const answer = await gql('alice', DELETE_SPRINTS, { input: { workspaceId: WS_NEW, clientMutationId: 'x' } })
  t.same(answer.data.deleteSprintConfigAndOpenSprints, { workspace: { id: WS_NEW } })
  t.same((await sprints()).map((s) => s.id), closed, 'only the ended sprints stay')
  t.equal((await app.as('alice', { url })).statusCode, 404, 'no configuration')
  t.same(await sql('SELECT issue_id FROM sprint_issues WHERE sprint_id = ?', [active.id]), [], 'the active sprint\'s issues went with it')
  clock.now = Date.parse('2026-04-20T12:00:00Z')
  t.same((await sprints()).map((s) => s.id), closed, 'and no sprint is made later')
})

t.test('createEpicFromIssue is convert_to_epic', async (t) => {
  const [four, web1] = [await issueId(REPO, 4), await issueId(OTHER_REPO, 1)]
  t.equal(code(await gql('carol', EPIC_FROM_ISSUE, { input: { issueId: four } })), 'FORBIDDEN', 'a reader')
  t.equal(code(await gql('dave', EPIC_FROM_ISSUE, { input: { issueId: four } })), 'NOT_FOUND')
  t.equal(code(await gql('bob', EPIC_FROM_ISSUE, { input: { issueId: four, epicChildIds: [await issueId(1003, 1)] } })), 'NOT_FOUND', 'a child bob cannot read')
  const made = await gql('bob', EPIC_FROM_ISSUE, { input: { issueId: four, epicChildIds: [web1] } })
  t.equal(made.errors, undefined)
  t.match(made.data.createEpicFromIssue.epic, { id: encodeId('Epic', Number(Buffer.from(four, 'base64').toString().split('/').pop())), issue: { id: four, number: 4, title: 'Issue 4', htmlUrl: `http://localhost:80/board?board=${WS_OLD}&repo=${REPO}&q=%234` } })
  const rest = (await app.as('bob', { url: `/p1/repositories/${REPO}/epics/4` })).json()
  t.same(rest.issues.map((i: { repo_id: number, issue_number: number }) => [i.repo_id, i.issue_number]), [[OTHER_REPO, 1]], 'REST sees the epic and its child')
  t.equal(await parentOf(OTHER_REPO, 1), 4)
  t.equal(code(await gql('bob', EPIC_FROM_ISSUE, { input: { issueId: four } })), 'BAD_USER_INPUT', 'already an epic')
})

t.test('addSubIssues makes issues children of a parent (its epic), replacing another parent only when asked', async (t) => {
  const [four, five, six] = [await issueId(REPO, 4), await issueId(REPO, 5), await issueId(REPO, 6)]
  t.equal(code(await gql('carol', SUB_ISSUES, { input: { parentId: five, childIssueIds: [six] } })), 'FORBIDDEN', 'a reader')
  t.equal(code(await gql('dave', SUB_ISSUES, { input: { parentId: five, childIssueIds: [six] } })), 'NOT_FOUND')

  const first = await gql('bob', SUB_ISSUES, { input: { parentId: five, childIssueIds: [six] } })
  t.same(first.data.addSubIssues, { failedIssues: [], successCount: 1 })
  t.equal(await parentOf(REPO, 6), 5, 'the parent became an epic holding it')
  t.equal((await app.as('bob', { url: `/p1/repositories/${REPO}/epics/5` })).statusCode, 200)

  const kept = await gql('bob', SUB_ISSUES, { input: { parentId: four, childIssueIds: [six] } })
  t.same(kept.data.addSubIssues, { failedIssues: [{ id: six }], successCount: 0 }, 'a child with a parent stays with it')
  t.equal(await parentOf(REPO, 6), 5)
  const moved = await gql('bob', 'mutation($input: AddSubIssuesInput!) { addSubIssues(input: $input) { failedIssues { id } successCount githubErrors } }',
    { input: { parentId: four, childIssueIds: [six], replaceParent: true } })
  t.same(moved.data.addSubIssues, { failedIssues: [], successCount: 1, githubErrors: {} })
  t.equal(await parentOf(REPO, 6), 4, 'moved')
  const five2 = (await app.as('bob', { url: `/p1/repositories/${REPO}/epics/5` })).json()
  t.same(five2.issues, [], 'out of its old parent')

  const loop = await gql('bob', 'mutation($input: AddSubIssuesInput!) { addSubIssues(input: $input) { failedIssues { id } successCount githubErrors } }',
    { input: { parentId: six, childIssueIds: [four] } })
  t.equal(loop.data.addSubIssues.successCount, 0, 'a loop is refused')
  t.match(loop.data.addSubIssues.githubErrors[four], /loop/)
})
