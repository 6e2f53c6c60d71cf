import t from 'tap'
import { readFileSync } from 'node:fs'
import { buildWithSql, REPO, OTHER_REPO, WS_OLD, TOKENS } from './helper.js'
import { encodeId } from '../plugins/graphql/ids.js'
import { gql as post, type Gql } from './gql.js'

const { app, sql } = await buildWithSql(t)
const gql = async (login: keyof typeof TOKENS, query: string, variables?: Record<string, unknown>): Promise<Gql> => await post(app, login, query, variables)
const code = (answer: Gql) => answer.errors?.[0]?.extensions.code
const ORG = encodeId('ZenhubOrganization', 1)
const audit = async () => (await app.admin({ url: '/admin/audit?limit=50' })).json().entries as Array<{ action: string, actor: string, target: string | null }>
const actions = async () => (await audit()).map((e) => e.action)

// The client documents exactly as the hosted service's MCP server sends them.
const CLIENT = '/work/client-docs/zenhub-mcp'
const doc = (name: string, fallback: string): string => { try { return readFileSync(`${CLIENT}/${name}.graphql`, 'utf8') } catch { return fallback } }
const REPO_LABELS = doc('labels__queries__getRepositoryLabels', 'query($repositoryGhId: Int!) { repositoriesByGhId(ghIds: [$repositoryGhId]) { id name labels { nodes { id name color description } } } }')
const WS_LABELS = doc('labels__queries__getWorkspaceLabels', 'query($workspaceId: ID!) { workspace(id: $workspaceId) { id name zenhubLabels { nodes { id name color description } } } }')
const GITHUB_LABEL = doc('labels__mutations__createGithubLabel', 'mutation($input: CreateGithubLabelInput!) { createGithubLabel(input: $input) { label { id name color description } } }')
const ZENHUB_LABEL = doc('labels__mutations__createZenhubLabel', 'mutation($input: CreateZenhubLabelInput!) { createZenhubLabel(input: $input) { zenhubLabel { id name color description } } }')
const DELETE_LABELS = doc('labels__mutations__deleteZenhubLabels', 'mutation($input: DeleteZenhubLabelsInput!) { deleteZenhubLabels(input: $input) { zenhubLabels { id } } }')
const CREATE = doc('milestones__mutations__createMilestone', 'mutation($input: CreateMilestoneInput!) { createMilestone(input: $input) { milestone { id title description dueOn } } }')
const UPDATE = doc('milestones__mutations__updateMilestone', 'mutation($input: UpdateMilestoneInput!) { updateMilestone(input: $input) { milestone { id title description dueOn } } }')
const DELETE = doc('milestones__mutations__deleteMilestone', 'mutation($input: DeleteMilestoneInput!) { deleteMilestone(input: $input) { milestone { id } } }')

const makeAdministrator = async (login: string) => t.equal((await app.admin({ method: 'PATCH', url: `/admin/users/${login}`, payload: { administrator: true } })).statusCode, 200)

t.test('milestones: administrators only, as the admin API; descriptions kept; each write audited', async (t) => {
  const repositoryId = encodeId('Repository', REPO)
  const wanted = { repositoryId, title: 'v3.0', description: 'The big one', dueOn: '2026-06-01T00:00:00Z' }
  t.equal(code(await gql('alice', CREATE, { input: wanted })), 'FORBIDDEN', 'an admin of the repository who is not a server administrator (the admin API\'s rule)')
  t.equal(code(await gql('bob', CREATE, { input: wanted })), 'FORBIDDEN', 'a writer')
  t.equal(code(await gql('dave', CREATE, { input: wanted })), 'NOT_FOUND', 'no access')
  await makeAdministrator('alice')
  t.equal(code(await gql('alice', CREATE, { input: { ...wanted, description: 'x'.repeat(2001) } })), 'BAD_USER_INPUT', 'a description too long')
  const before = (await app.admin({ url: `/admin/repositories/${REPO}/milestones` })).json().length

  const made = await gql('alice', CREATE, { input: wanted })
  t.equal(made.errors, undefined)
  const milestone = made.data.createMilestone.milestone
  t.match(milestone, { title: 'v3.0', description: 'The big one', dueOn: '2026-06-01T00:00:00.000Z' })
  const listed = (await app.admin({ url: `/admin/repositories/${REPO}/milestones` })).json()
  t.equal(listed.length, before + 1)
  t.match(listed.at(-1), { title: 'v3.0', description: 'The big one' }, 'the admin API lists its description')

  const updated = await gql('alice', UPDATE, { input: { milestoneId: milestone.id, description: 'Smaller now', title: 'v3.0-rc' } })
  t.same(updated.data.updateMilestone.milestone, { ...milestone, title: 'v3.0-rc', description: 'Smaller now' })
  t.equal((await gql('alice', UPDATE, { input: { milestoneId: milestone.id, description: null } })).data.updateMilestone.milestone.description, null, 'null clears it')
  const rest = await app.admin({ method: 'PATCH', url: `/admin/repositories/${REPO}/milestones/${listed.at(-1).number as number}`, payload: { description: 'From REST' } })
  t.equal(rest.statusCode, 200)
  t.equal((await gql('carol', `{ node(id: "${milestone.id as string}") { ... on Milestone { description } } }`)).data.node.description, 'From REST', 'the same store both ways')

  // An issue with the milestone loses it when the milestone goes.
  const number = listed.at(-1).number as number
  t.equal((await app.admin({ method: 'PATCH', url: `/admin/repositories/${REPO}/issues/3`, payload: { milestone_number: number } })).statusCode, 200)
  t.equal(code(await gql('bob', DELETE, { input: { milestoneId: milestone.id } })), 'FORBIDDEN', 'a writer may not delete')
  t.equal(code(await gql('dave', DELETE, { input: { milestoneId: milestone.id } })), 'NOT_FOUND')
  const deleted = await gql('alice', DELETE, { input: { milestoneId: milestone.id } })
  t.same(deleted.data.deleteMilestone.milestone, { id: milestone.id })
  t.equal((await app.admin({ url: `/admin/repositories/${REPO}/milestones` })).json().length, before, 'gone')
  const issue = (await app.admin({ url: `/admin/repositories/${REPO}/issues` })).json().find((i: { number: number }) => i.number === 3)
  t.equal(issue.milestone_number, undefined, 'its issue has none')
  const history = await sql('SELECT milestone_number FROM issue_milestones WHERE repo_id = ? ORDER BY id DESC LIMIT 1', [REPO])
  t.equal(history[0].milestone_number, null, 'recorded for the reports')
  t.equal(code(await gql('alice', DELETE, { input: { milestoneId: milestone.id } })), 'NOT_FOUND', 'twice')

  const seen = await audit()
  for (const action of ['milestone.created', 'milestone.updated', 'milestone.deleted']) {
    t.ok(seen.some((e) => e.action === action && e.actor === 'user:alice' && e.target === `repository:${REPO}`), `${action} audited`)
  }
  t.ok(seen.some((e) => e.action === 'milestone.updated' && e.actor === 'admin'), 'and the admin API\'s PATCH by its name')

  const twin = await app.admin({ method: 'DELETE', url: `/admin/repositories/${REPO}/milestones/1` })
  t.equal(twin.statusCode, 200, 'the REST twin')
  t.equal(code(await gql('alice', `{ node(id: "${encodeId('Milestone', `${REPO}:1`)}") { id } }`)), undefined)
  t.ok((await actions()).includes('milestone.deleted'))
})

t.test('labels of a repository: made with write permission, listed with their description', async (t) => {
  const repositoryId = encodeId('Repository', REPO)
  const input = { repositoryId, name: 'needs-review', color: '#1D76DB', description: 'Someone should look' }
  t.equal(code(await gql('carol', GITHUB_LABEL, { input })), 'FORBIDDEN', 'a reader')
  t.equal(code(await gql('dave', GITHUB_LABEL, { input })), 'NOT_FOUND', 'no access')
  t.equal(code(await gql('bob', GITHUB_LABEL, { input: { ...input, color: 'blue' } })), 'BAD_USER_INPUT', 'a color that is not hex')
  t.equal(code(await gql('bob', GITHUB_LABEL, { input: { ...input, name: ' ' } })), 'BAD_USER_INPUT', 'no name')
  t.equal(code(await gql('bob', GITHUB_LABEL, { input: { ...input, description: 'x'.repeat(101) } })), 'BAD_USER_INPUT', 'a description too long')

  const made = await gql('bob', GITHUB_LABEL, { input })
  t.same(made.data.createGithubLabel.label, { id: encodeId('Label', 'needs-review'), name: 'needs-review', color: '1d76db', description: 'Someone should look' })
  t.equal(code(await gql('bob', GITHUB_LABEL, { input: { ...input, name: 'Needs-Review' } })), 'NOT_UNIQUE', 'the same name in another case')

  // A label worn by an issue is the repository's too.
  const issueId = (await gql('bob', `{ issueByInfo(repositoryGhId: ${REPO}, issueNumber: 1) { id } }`)).data.issueByInfo.id as string
  const worn = await gql('bob', 'mutation($i: AddLabelsToIssuesInput!) { addLabelsToIssues(input: $i) { successCount } }', { i: { issueIds: [issueId], labelInfos: [{ name: 'bug' }] } })
  t.equal(worn.data.addLabelsToIssues.successCount, 1)
  t.equal(code(await gql('bob', GITHUB_LABEL, { input: { ...input, name: 'BUG' } })), 'NOT_UNIQUE', 'a name an issue wears')

  const listed = await gql('carol', REPO_LABELS, { repositoryGhId: REPO })
  t.same(listed.data.repositoriesByGhId[0].labels.nodes.map((l: { name: string, description: string | null }) => [l.name, l.description]),
    [['bug', null], ['needs-review', 'Someone should look']])
  t.same((await gql('dave', REPO_LABELS, { repositoryGhId: REPO })).data.repositoriesByGhId, [], 'no trace without access')

  // Applied to an issue, the made label keeps its description on the repository.
  await gql('bob', 'mutation($i: AddLabelsToIssuesInput!) { addLabelsToIssues(input: $i) { successCount } }', { i: { issueIds: [issueId], labelInfos: [{ name: 'needs-review' }] } })
  const after = (await gql('carol', REPO_LABELS, { repositoryGhId: REPO })).data.repositoriesByGhId[0].labels.nodes
  t.match(after.find((l: { name: string }) => l.name === 'needs-review'), { description: 'Someone should look' })

  const connection = (await app.admin({ method: 'POST', url: '/admin/connections', payload: { kind: 'github', secret: 'a-webhook-secret-0123456789', token: 'ghp_writer' } })).json().id as string
  await sql('UPDATE repositories SET connection_id = ? WHERE id = ?', [connection, OTHER_REPO])
  const refused = await gql('alice', GITHUB_LABEL, { input: { ...input, repositoryId: encodeId('Repository', OTHER_REPO) } })
  t.equal(code(refused), 'BAD_USER_INPUT', 'a repository bound to an issue host')
  t.match(refused.errors?.[0].message, /bound to an issue host/)
  t.same((await sql('SELECT name FROM repository_labels WHERE repo_id = ?', [OTHER_REPO])), [], 'nothing made')
  await sql('UPDATE repositories SET connection_id = NULL WHERE id = ?', [OTHER_REPO])
})

t.test('the organization\'s labels: administrators make and delete them, audited; every workspace lists them', async (t) => {
  const input = { zenhubOrganizationId: ORG, name: 'Priority: High', color: 'b60205', description: 'Do it first' }
  t.equal(code(await gql('bob', ZENHUB_LABEL, { input })), 'FORBIDDEN', 'a writer, not an administrator')
  t.equal(code(await gql('alice', ZENHUB_LABEL, { input: { ...input, zenhubOrganizationId: encodeId('ZenhubOrganization', 2) } })), 'NOT_FOUND', 'another organization')
  const made = await gql('alice', ZENHUB_LABEL, { input })
  const id = encodeId('ZenhubLabel', 'Priority: High')
  t.same(made.data.createZenhubLabel.zenhubLabel, { id, name: 'Priority: High', color: 'b60205', description: 'Do it first' })
  t.equal(code(await gql('alice', ZENHUB_LABEL, { input: { ...input, name: 'priority: high' } })), 'NOT_UNIQUE')

  const listed = await gql('carol', WS_LABELS, { workspaceId: WS_OLD })
  const names = listed.data.workspace.zenhubLabels.nodes.map((l: { name: string }) => l.name)
  t.ok(names.includes('Priority: High') && names.includes('bug') && names.includes('needs-review'), 'the organization\'s and the repositories\' labels')
  t.match(listed.data.workspace.zenhubLabels.nodes.find((l: { name: string }) => l.name === 'Priority: High'), { id, color: 'b60205', description: 'Do it first' })
  t.same((await gql('carol', `{ node(id: "${id}") { ... on ZenhubLabel { name description } } }`)).data.node, { name: 'Priority: High', description: 'Do it first' })

  t.equal(code(await gql('bob', DELETE_LABELS, { input: { zenhubOrganizationId: ORG, names: ['Priority: High'] } })), 'FORBIDDEN')
  const deleted = await gql('alice', DELETE_LABELS, { input: { zenhubOrganizationId: ORG, names: ['PRIORITY: HIGH', 'bug', 'nothing'] } })
  t.same(deleted.data.deleteZenhubLabels.zenhubLabels, [{ id }], 'the organization\'s labels deleted; a repository\'s label or an unknown name is not one')
  const after = (await gql('carol', WS_LABELS, { workspaceId: WS_OLD })).data.workspace.zenhubLabels.nodes.map((l: { name: string }) => l.name)
  t.notOk(after.includes('Priority: High'))
  t.ok(after.includes('bug'), 'an issue keeps wearing its label')
  const seen = await audit()
  t.ok(seen.some((e) => e.action === 'label.created' && e.actor === 'user:alice'))
  t.ok(seen.some((e) => e.action === 'label.deleted' && e.actor === 'user:alice'))
})

t.test('export and import carry milestone descriptions, repositories\' labels and the organization\'s labels', async (t) => {
  await gql('alice', ZENHUB_LABEL, { input: { zenhubOrganizationId: ORG, name: 'kept', color: '00ff00' } })
  await gql('alice', CREATE, { input: { repositoryId: encodeId('Repository', OTHER_REPO), title: 'Described', description: 'with words' } })
  const exported = (await app.admin({ url: '/admin/export' })).json()
  t.same(exported.zenhub_labels, [{ name: 'kept', color: '00ff00' }])
  t.match(exported.repositories.find((r: { id: number }) => r.id === REPO).labels, [{ name: 'needs-review', color: '1d76db', description: 'Someone should look' }])
  t.match(exported.milestones.find((m: { title: string }) => m.title === 'Described'), { description: 'with words' })

  const { app: other } = await buildWithSql(t, { fixture: exported })
  t.same((await other.admin({ url: '/admin/export' })).json(), exported, 'the same export after an import')
})
