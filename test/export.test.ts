import t from 'tap'
import { PassThrough } from 'node:stream'
import { join } from 'node:path'
import { runAdminCommand, WRITTEN } from '../cli/admin.js'
import { openSqliteStore } from '../db/store.js'
import { exportFixture, loadFixture } from '../services/fixtures.js'
import { build, testFixture, type App, OTHER_REPO, P, PRIVATE_REPO, REPO, WS_NEW, WS_OLD } from './helper.js'
import { adminAnswers, plan, planningAnswers } from './planning-answers.js'
import { encodeId } from '../plugins/graphql/ids.js'
import { gql } from './gql.js'
import { createRequire } from 'node:module'
import { deliver, SECRET } from './deliveries.js'

const REPOS = [REPO, OTHER_REPO, PRIVATE_REPO]

async function exported (app: App): Promise<any> {
  const res = await app.admin({ url: '/admin/export' })
  if (res.statusCode !== 200) throw new Error(`export: ${res.statusCode} ${res.body}`)
  return res.json()
}

/** The source's tokens on the target's users (an export carries none: tokens are made on the new server). */
function withTokens (backup: any): any {
  const tokens = new Map(testFixture().users.map((u) => [u.login, u.token]))
  return { ...backup, users: backup.users.map((u: any) => tokens.has(u.login) ? { ...u, token: tokens.get(u.login) } : u) }
}

/** What the issue host said of a repository (kept since migration 029). */
const REPO_FACTS = { created_at: '2019-03-04T05:06:07.000Z', is_private: true, is_archived: true, owner_platform_id: 4242, owner_kind: 'Organization' as const }
const PIPELINE_TIMES = { created_at: '2025-01-02T03:04:05.000Z', updated_at: '2025-06-07T08:09:10.000Z' }
const PR_CONNECTIONS = [{ repo_id: REPO, issue_number: 9, created_at: '2026-02-01T10:00:00.000Z' }, { repo_id: REPO, issue_number: 8, created_at: '2026-03-01T10:00:00.000Z' }]

/** The GraphQL answers that read them: a repository's host facts, the pipelines' times, an issue's connected pull requests in order. */
const HOSTED_READ = `{ repositoriesByGhId(ghIds: [${REPO}, ${OTHER_REPO}]) { ghId createdAt isPrivate isArchived owner { __typename ghId login } }
  workspace(id: "${WS_OLD}") { pipelinesConnection { nodes { id name createdAt updatedAt } } }
  issueByInfo(repositoryGhId: ${REPO}, issueNumber: 2) { connectedPrs { nodes { number } } } }`

/** What the issue host brings and the fixture format carries: labels, assignees, a pipeline's host label. */
function hostData () {
  const fixture = testFixture()
  const hosted: Record<number, object> = {
    2: { labels: [{ name: 'bug', color: 'd73a4a' }, { name: 'ui', color: null }], assignees: [{ login: 'octo', avatar_url: 'https://avatars.example/octo' }] },
    3: { assignees: [{ login: 'alice', avatar_url: null }, { login: 'bob', avatar_url: null }] },
    5: { pull_request: true, body: 'A *described* pull request' }
  }
  return {
    ...fixture,
    repositories: [...fixture.repositories.map((r) => r.id === REPO ? { ...r, ...REPO_FACTS } : r), { id: 77, owner: 'unknown', name: '77', placeholder: true }],
    users: [...fixture.users.map((u) => u.login === 'bob' ? { ...u, email: 'Bob@example.com' } : u), { id: 9, login: 'erin' }],
    milestones: [...fixture.milestones, { repo_id: REPO, number: 2, title: 'v2.0', due_on: '2026-12-01T00:00:00Z', state: 'closed' as const }],
    issues: [
      ...fixture.issues.map((i) => i.repo_id === REPO && hosted[i.number] !== undefined ? { ...i, ...hosted[i.number], milestone_number: 2 } : i),
      // Two pull requests connected to #2, the later-numbered one first: the order is the connections' times, not the ids.
      ...[8, 9].map((n) => ({ repo_id: REPO, number: n, title: `PR ${n}`, pull_request: true }))
    ].map((i) => i.repo_id === REPO && i.number === 2 ? { ...i, connected_prs: PR_CONNECTIONS } : i),
    workspaces: fixture.workspaces.map((w) => w.id === WS_OLD ? { ...w, pipelines: w.pipelines.map((p: any) => p.id === P.doing ? { ...p, host_label: 'In progress', ...PIPELINE_TIMES } : p) } : w)
  }
}

/** Sprints of a workspace: configuration, settled sprints, membership, a removal (events). */
async function sprints (app: App): Promise<void> {
  const config = await app.as('alice', { method: 'PUT', url: `/p2/workspaces/${WS_NEW}/sprint_config`, payload: { length_weeks: 2, starts_on: isoDay(-42), time_zone: 'Europe/Berlin', carry_over: true } })
  if (config.statusCode !== 200) throw new Error(`sprint config: ${config.body}`)
  const list = (await app.as('alice', { url: `/p2/workspaces/${WS_NEW}/sprints` })).json()
  const active = list.find((s: any) => s.state === 'active') ?? list[0]
  const next = list.find((s: any) => s.state === 'future')
  for (const [sprint, issues] of [[active, [3, 4, 5]], [next, [6]]] as const) {
    const res = await app.as('bob', { method: 'POST', url: `/p2/sprints/${sprint.id}/issues`, payload: { issues: issues.map((n) => ({ repo_id: REPO, issue_number: n })) } })
    if (res.statusCode !== 200) throw new Error(`sprint issues: ${res.body}`)
  }
  await app.as('bob', { method: 'DELETE', url: `/p2/sprints/${active.id}/issues`, payload: { issues: [{ repo_id: REPO, issue_number: 5 }] } })
}

const isoDay = (days: number): string => new Date(Date.now() + days * 86_400_000).toISOString().slice(0, 10)

/** Every sprint answer of the workspaces, by URL. */
async function sprintAnswers (app: App): Promise<Record<string, unknown>> {
  const out: Record<string, unknown> = {}
  const read = async (url: string): Promise<any> => {
    const res = await app.as('alice', { url })
    out[url] = { status: res.statusCode, body: res.json() }
    return res.json()
  }
  for (const ws of [WS_OLD, WS_NEW]) {
    await read(`/p2/workspaces/${ws}/sprint_config`)
    const list = await read(`/p2/workspaces/${ws}/sprints`)
    for (const sprint of Array.isArray(list) ? list : []) {
      await read(`/p2/sprints/${sprint.id}`)
      await read(`/p2/sprints/${sprint.id}/review`)
    }
    await read(`/p2/workspaces/${ws}/sprint_events`)
  }
  return out
}

t.test('export → import on an empty server: the same answers on every endpoint', async (t) => {
  const source = await build(t, { fixture: hostData() })
  await plan(source)
  await sprints(source)
  const res = await source.admin({ url: '/admin/export' })
  t.equal(res.statusCode, 200)
  t.match(res.headers['content-type'], /application\/json/)
  const backup = res.json()
  t.notMatch(res.body, /token|hash/, 'no tokens or hashes in the file')
  t.same(backup.users.map((u: any) => u.login), ['alice', 'bob', 'carol', 'dave', 'erin'])
  t.same(backup.users.find((u: any) => u.login === 'bob').email, 'Bob@example.com', 'emails come along')
  t.notOk('email' in backup.users.find((u: any) => u.login === 'erin'), 'no email, no field')
  t.same(backup.repositories.find((r: any) => r.id === 77), { id: 77, owner: 'unknown', name: '77', placeholder: true, created_at: backup.repositories.find((r: any) => r.id === 77).created_at, permissions: {} })
  t.equal(backup.epics.length, 2)
  t.equal(backup.dependencies.length, 2)
  t.equal(backup.release_reports.length, 2)
  t.ok(backup.issue_events.length > 5)
  t.match(backup.issues.find((i: any) => i.repo_id === REPO && i.number === 2), { labels: [{ name: 'bug', color: 'd73a4a' }, { name: 'ui', color: null }], assignees: [{ login: 'octo' }] })
  t.match(backup.milestones.find((m: any) => m.number === 2), { due_on: '2026-12-01T00:00:00.000Z', state: 'closed' })
  t.equal(backup.issues.find((i: any) => i.repo_id === REPO && i.number === 2).milestone_number, 2)
  t.equal(backup.issues.find((i: any) => i.repo_id === REPO && i.number === 5).pull_request, true, 'a pull request stays one')
  t.equal(backup.issues.find((i: any) => i.repo_id === REPO && i.number === 5).body, 'A *described* pull request', 'the description comes along')
  t.match(backup.workspaces.find((w: any) => w.id === WS_OLD).pipelines, [{}, { id: P.doing, host_label: 'In progress', created_at: PIPELINE_TIMES.created_at }, {}])
  t.match(backup.repositories.find((r: any) => r.id === REPO), REPO_FACTS, 'the issue host\'s facts of a repository')
  t.notOk('is_private' in backup.repositories.find((r: any) => r.id === OTHER_REPO), 'not private, no field')
  t.same(backup.issues.find((i: any) => i.repo_id === REPO && i.number === 2).connected_prs, PR_CONNECTIONS, 'connections oldest first, with their times')
  const hostedBefore = await gql(source, 'alice', HOSTED_READ)
  t.equal(hostedBefore.errors, undefined, JSON.stringify(hostedBefore.errors))
  t.match(hostedBefore.data.repositoriesByGhId, [{ ghId: REPO, createdAt: REPO_FACTS.created_at, isPrivate: true, isArchived: true, owner: { __typename: 'Organization', ghId: 4242 } }])
  t.same(hostedBefore.data.issueByInfo.connectedPrs.nodes, [{ number: 9 }, { number: 8 }])
  t.match(backup.sprints, [{ workspace_id: WS_NEW, length_weeks: 2, time_zone: 'Europe/Berlin', carry_over: true }])
  t.same(backup.sprints[0].sprints.map((s: any) => s.issues.length).filter((n: number) => n > 0), [2, 1], 'sprint membership: the active sprint (one issue removed) and the next')
  t.ok(backup.sprints[0].events.some((e: any) => e.type === 'sprint_issue_removed'), 'the removal is an event')
  t.ok(backup.sprints[0].events.length >= 5, 'sprint events')

  const target = await build(t, { fixture: null })
  const imported = await target.admin({ method: 'POST', url: '/admin/import', payload: withTokens(backup) })
  t.equal(imported.statusCode, 200, imported.body)
  t.match(imported.json(), { users: 5, repositories: 4, epics: 2, dependencies: 2, release_reports: 2 })

  t.same(await exported(target), backup, 'the target exports the same file')
  t.same(await gql(target, 'alice', HOSTED_READ), hostedBefore, 'repository host facts, pipeline times and connection order the same over GraphQL')
  for (const login of ['alice', 'bob'] as const) {
    const before = await planningAnswers(async (url) => await source.as(login, { url }), REPOS)
    const after = await planningAnswers(async (url) => await target.as(login, { url }), REPOS)
    t.ok(Object.keys(before).length > 60, `${Object.keys(before).length} answers compared for ${login}`)
    t.same(after, before, `every answer the same for ${login}`)
  }
  t.same(await adminAnswers(target.admin, [...REPOS, 77]), await adminAnswers(source.admin, [...REPOS, 77]), 'the admin lists too')
  const sprintsBefore = await sprintAnswers(source)
  t.ok(Object.keys(sprintsBefore).length > 10, `${Object.keys(sprintsBefore).length} sprint answers compared`)
  t.same(await sprintAnswers(target), sprintsBefore, 'sprint configuration, sprints, membership, reviews and events the same')
  const labelled = async (app: App) => (await app.as('alice', { url: `/p1/repositories/${REPO}/issues?issue_numbers=2` })).json()
  t.match(await labelled(target), [{ issue_number: 2, labels: [{ name: 'bug' }, { name: 'ui' }], assignees: [{ login: 'octo' }] }], 'labels and assignees come along')
  const chat = await target.as('bob', { url: '/api/v1/chat/me' })
  if (chat.statusCode === 200) t.match(chat.json(), { role: 'moderator' }, 'chat roles come along')

  // Read two rows at a time, the file is the same.
  const store = await openSqliteStore(':memory:')
  t.teardown(async () => await store.close())
  await loadFixture(store, backup)
  let paged = ''
  for await (const chunk of exportFixture(store, 2)) paged += chunk
  t.same(JSON.parse(paged), backup, 'pages of two rows make the same file')

  // SEED_FILE of the file on an empty server: the same again.
  const seedFile = join(t.testdir({ 'backup.json': JSON.stringify(backup) }), 'backup.json')
  const seeded = await build(t, { seedFile, fixture: null })
  t.same(await exported(seeded), backup, 'SEED_FILE loads it whole')

  // A second import of the same file is refused whole, changing nothing.
  const again = await target.admin({ method: 'POST', url: '/admin/import', payload: backup })
  t.equal(again.statusCode, 409)
  t.same(await exported(target), backup)
})

/** A workspace's own repository with a native issue, and two epics that are not issues holding issues of it and of REPO. */
async function zenhubEpics (app: App): Promise<void> {
  const own = (await gql(app, 'bob', `{ workspace(id: "${WS_OLD}") { zenhubRepository { id ghId } } }`)).data.workspace.zenhubRepository
  await gql(app, 'bob', 'mutation($i: CreateIssueInput!) { createIssue(input: $i) { issue { number } } }', { i: { repositoryId: own.id, title: 'Native issue' } })
  const issueId = async (repo: number, n: number): Promise<string> => (await gql(app, 'bob', `{ issueByInfo(repositoryGhId: ${repo}, issueNumber: ${n}) { id } }`)).data.issueByInfo.id
  const create = 'mutation($i: CreateZenhubEpicInput!) { createZenhubEpic(input: $i) { zenhubEpic { id } } }'
  const made: string[] = []
  for (const title of ['Launch', 'Later']) {
    const res = await gql(app, 'bob', create, { i: { zenhubOrganizationId: encodeId('ZenhubOrganization', 1), zenhubRepositoryId: own.id, zenhubEpic: { title, body: `${title} body` } } })
    if (res.errors !== undefined) throw new Error(JSON.stringify(res.errors))
    made.push(res.data.createZenhubEpic.zenhubEpic.id)
  }
  await gql(app, 'bob', `mutation { updateZenhubEpicState(input: { zenhubEpicId: "${made[0]}", state: IN_PROGRESS }) { clientMutationId } }`)
  await gql(app, 'bob', `mutation { updateZenhubEpicDates(input: { zenhubEpicId: "${made[0]}", startOn: "2026-01-05", endOn: "2026-02-27" }) { clientMutationId } }`)
  const add = 'mutation($i: AddIssuesToZenhubEpicsInput!) { addIssuesToZenhubEpics(input: $i) { clientMutationId } }'
  await gql(app, 'bob', add, { i: { zenhubEpicIds: [made[0]], issueIds: [await issueId(own.ghId, 1), await issueId(REPO, 2)] } })
  await gql(app, 'bob', add, { i: { zenhubEpicIds: [made[1]], issueIds: [await issueId(REPO, 3)] } })
}

const EPICS_READ = `{ workspace(id: "${WS_OLD}") { zenhubRepository { id ghId name }
  zenhubEpics { totalCount nodes { id title body state startOn endOn createdAt updatedAt creator { name }
    childIssues(workspaceId: "${WS_OLD}") { totalCount nodes { number title repository { id } } } } } } }`

t.test('epics that are not issues and the workspace\'s own repository come along', async (t) => {
  const source = await build(t)
  await zenhubEpics(source)
  const backup = await exported(source)
  t.match(backup.zenhub_epics, [
    { title: 'Launch', body: 'Launch body', state: 'IN_PROGRESS', start_on: '2026-01-05', end_on: '2026-02-27', creator: 'bob', issues: [{}, {}] },
    { title: 'Later', state: 'OPEN', start_on: null, creator: 'bob', issues: [{ repo_id: REPO, issue_number: 3 }] }
  ])
  const own = backup.workspaces.find((w: any) => w.id === WS_OLD).own_repository_id
  t.ok(own >= 2 ** 40, 'the workspace names its own repository')
  const before = await gql(source, 'bob', EPICS_READ)
  t.equal(before.data.workspace.zenhubEpics.totalCount, 2)
  t.equal(before.data.workspace.zenhubEpics.nodes[0].childIssues.totalCount, 2)

  const target = await build(t, { fixture: null })
  const imported = await target.admin({ method: 'POST', url: '/admin/import', payload: withTokens(backup) })
  t.equal(imported.statusCode, 200, imported.body)
  t.match(imported.json(), { zenhub_epics: 2 })
  t.same(await exported(target), backup, 'the target exports the same file')
  for (const login of ['bob', 'carol'] as const) t.same(await gql(target, login, EPICS_READ), await gql(source, login, EPICS_READ), `the same epics, issues and own repository for ${login}`)
  const next = await gql(target, 'bob', 'mutation($i: CreateZenhubEpicInput!) { createZenhubEpic(input: $i) { zenhubEpic { id } } }',
    { i: { zenhubOrganizationId: encodeId('ZenhubOrganization', 1), zenhubRepositoryId: before.data.workspace.zenhubRepository.id, zenhubEpic: { title: 'New' } } })
  t.equal(next.errors, undefined, JSON.stringify(next.errors))
  t.ok(Number(Buffer.from(next.data.createZenhubEpic.zenhubEpic.id, 'base64').toString().split('/').pop()) > Math.max(...backup.zenhub_epics.map((e: any) => e.id)), 'a new epic gets an id past the kept ones')

  const twice = await target.admin({ method: 'POST', url: '/admin/import', payload: { zenhub_epics: [backup.zenhub_epics[0]] } })
  t.equal(twice.statusCode, 409, 'an epic id taken already')
  t.match(twice.json().message, new RegExp(`zenhub_epics\\[0\\]: zenhub epic ${String(backup.zenhub_epics[0].id)} already exists`))

  // An export from before the link was carried: the repository is adopted, not made again.
  const old = { ...withTokens(backup), zenhub_epics: undefined, workspaces: backup.workspaces.map(({ own_repository_id: _own, ...w }: any) => w) }
  const adopting = await build(t, { fixture: null })
  t.equal((await adopting.admin({ method: 'POST', url: '/admin/import', payload: old })).statusCode, 200)
  const adopted = await gql(adopting, 'bob', `{ workspace(id: "${WS_OLD}") { zenhubRepository { id ghId name } } }`)
  t.equal(adopted.errors, undefined, JSON.stringify(adopted.errors))
  t.same(adopted.data.workspace.zenhubRepository, before.data.workspace.zenhubRepository, 'the imported repository is the workspace\'s own')
  t.equal((await exported(adopting)).workspaces.find((w: any) => w.id === WS_OLD).own_repository_id, own)
})

t.test('the reports\' history comes along: states, milestones and release membership over past days', async (t) => {
  const source = await build(t, { fixture: hostData() })
  await plan(source)
  const backup = await exported(source)
  const issue = backup.issues.find((i: any) => i.repo_id === REPO && i.number === 3)
  t.match(issue.state_history, [{ state: 'open' }], 'each issue\'s states are exported')
  t.match(backup.issues.find((i: any) => i.repo_id === REPO && i.number === 2).milestone_history, [{ milestone_number: 2 }], 'and its milestones')
  const v1 = backup.release_reports.find((r: any) => r.title === 'v1')
  t.match(v1.issue_changes, [{ repo_id: REPO, issue_number: 3, change: 'added' }, { repo_id: OTHER_REPO, issue_number: 2, change: 'added' }], 'and the release\'s changes')

  // A history of past days, as a server that ran then would hold it: #3 (8 points) added on Jan 5, closed on Jan 10.
  issue.state_history = [{ state: 'open', at: '2025-12-20T12:00:00.000Z' }, { state: 'closed', at: '2026-01-10T12:00:00.000Z' }]
  issue.state = 'closed'
  for (const e of backup.issue_events) if (e.repo_id === REPO && e.number === 3 && e.type === 'estimateIssue') e.created_at = '2025-12-21T12:00:00.000Z'
  v1.issue_changes = [{ repo_id: REPO, issue_number: 3, change: 'added', at: '2026-01-05T12:00:00.000Z' }]
  v1.issues = [{ repo_id: REPO, issue_number: 3 }]
  const target = await build(t, { fixture: null })
  const imported = await target.admin({ method: 'POST', url: '/admin/import', payload: withTokens(backup) })
  t.equal(imported.statusCode, 200, imported.body)
  const again = await exported(target)
  t.same(again.issues.find((i: any) => i.repo_id === REPO && i.number === 3).state_history, issue.state_history, 'the states as given, not one made now')
  t.same(again.release_reports.find((r: any) => r.title === 'v1').issue_changes, v1.issue_changes)

  const burndown = (await target.as('alice', { url: `/p1/reports/release/${String(v1.id)}/burndown?time_zone=UTC` })).json()
  const day = (date: string) => burndown.days.find((d: any) => d.date === date)
  t.match(day('2026-01-04'), { remaining_points: 0, remaining_issues: 0 }, 'before it was added, not in the report')
  t.match(day('2026-01-06'), { remaining_points: 8, remaining_issues: 1 }, 'added on the 5th')
  t.match(day('2026-01-11'), { remaining_points: 0, remaining_issues: 0, closed_points: 8 }, 'closed on the 10th')
  t.match(burndown.scope_changes, [{ at: '2026-01-05T12:00:00.000Z', repo_id: REPO, issue_number: 3, change: 'added', points: 8 }])

  const refused = await target.admin({
    method: 'POST',
    url: '/admin/import',
    payload: { release_reports: [{ title: 'x', start_date: '2026-01-01T00:00:00Z', desired_end_date: '2026-02-01T00:00:00Z', repositories: [REPO], issue_changes: [{ repo_id: OTHER_REPO, issue_number: 2, change: 'added', at: '2026-01-02T00:00:00Z' }] }] }
  })
  t.equal(refused.statusCode, 400)
  t.match(refused.json().message, /release_reports\[0\].*not in the report's repositories/)
})

// GitHub's published example payloads: Codertocat/Hello-World, its issue #1 and milestone #1.
const examples = createRequire(import.meta.url)('@octokit/webhooks-examples') as Array<{ name: string, examples: Array<Record<string, any>> }>
const example = (name: string, action: string): Record<string, any> =>
  structuredClone(examples.find((e) => e.name === name)!.examples.find((x) => x.action === action)!)
const HELLO = 186853002

t.test('the issue host\'s times of what is held come along: repository, milestone, issue', async (t) => {
  const source = await build(t, { webhooks: { worker: false } })
  const connection = await source.admin({ method: 'POST', url: '/admin/connections', payload: { kind: 'github', secret: SECRET } })
  const id = connection.json().id as string
  const milestone = example('milestone', 'created')
  milestone.milestone.updated_at = '2030-02-01T00:00:00Z'
  milestone.repository.updated_at = '2030-01-01T00:00:00Z'
  t.same((await deliver(source, id, 'milestone', milestone)).json(), { result: 'handled' })
  const issue = example('issues', 'opened')
  issue.issue.updated_at = '2030-03-01T00:00:00Z'
  t.same((await deliver(source, id, 'issues', issue)).json(), { result: 'handled' })
  await source.admin({ method: 'PUT', url: `/admin/repositories/${HELLO}/permissions/alice`, payload: { permission: 'read' } })

  const backup = await exported(source)
  t.equal(backup.repositories.find((r: any) => r.id === HELLO).host_updated_at, '2030-01-01T00:00:00Z', 'the repository\'s, as the host sent it')
  t.equal(backup.milestones.find((m: any) => m.repo_id === HELLO).host_updated_at, '2030-02-01T00:00:00Z', 'the milestone\'s')
  t.equal(backup.issues.find((i: any) => i.repo_id === HELLO && i.number === 1).host_updated_at, '2030-03-01T00:00:00Z', 'the issue\'s')
  t.notOk('host_updated_at' in backup.issues.find((i: any) => i.repo_id === REPO), 'an issue the host never described has none')

  const read = `{ issueByInfo(repositoryGhId: ${HELLO}, issueNumber: 1) { ghUpdatedAt updatedAt repository { updatedAt } } }`
  const before = await gql(source, 'alice', read)
  t.same(before.data.issueByInfo, { ghUpdatedAt: '2030-03-01T00:00:00.000Z', updatedAt: '2030-03-01T00:00:00.000Z', repository: { updatedAt: '2030-01-01T00:00:00.000Z' } }, 'GraphQL shows the host\'s times')
  const target = await build(t, { fixture: null })
  const imported = await target.admin({ method: 'POST', url: '/admin/import', payload: withTokens(backup) })
  t.equal(imported.statusCode, 200, imported.body)
  t.same(await exported(target), backup, 'the target exports the same file, the times included')
  t.same(await gql(target, 'alice', read), before, 'and GraphQL answers the same')

  // An export from before the times were carried still imports: the host's times are unknown, the creation stands in.
  const strip = ({ host_updated_at: _time, ...rest }: any) => rest
  const old = { ...withTokens(backup), repositories: backup.repositories.map(strip), milestones: backup.milestones.map(strip) }
  old.issues = backup.issues.map(strip)
  const older = await build(t, { fixture: null })
  t.equal((await older.admin({ method: 'POST', url: '/admin/import', payload: old })).statusCode, 200)
  t.notOk('host_updated_at' in (await exported(older)).issues.find((i: any) => i.repo_id === HELLO), 'none held')
  t.equal((await gql(older, 'alice', read)).data.issueByInfo.ghUpdatedAt, backup.issues.find((i: any) => i.repo_id === HELLO).created_at)
})

t.test('a fixture naming what it cannot hold is refused whole', async (t) => {
  const app = await build(t, { fixture: null })
  const base = { repositories: [{ id: 1, owner: 'a', name: 'b' }], workspaces: [{ name: 'W', repositories: [1], pipelines: ['A'] }], issues: [1, 2].map((n) => ({ repo_id: 1, number: n, title: `#${n}` })) }
  const cases: Array<[unknown, RegExp]> = [
    [{ ...base, dependencies: [{ blocking: { repo_id: 1, issue_number: 1 }, blocked: { repo_id: 1, issue_number: 2 } }, { blocking: { repo_id: 1, issue_number: 2 }, blocked: { repo_id: 1, issue_number: 1 } }] }, /cycle/],
    [{ ...base, epics: [{ repo_id: 1, issue_number: 1, issues: [{ repo_id: 1, issue_number: 9 }] }] }, /epics\[0\].*issue 9 not found/],
    [{ ...base, epics: [{ repo_id: 1, issue_number: 1, issues: [{ repo_id: 1, issue_number: 2 }] }, { repo_id: 1, issue_number: 2, issues: [{ repo_id: 1, issue_number: 1 }] }] }, /contains itself/],
    [{ ...base, issue_events: [{ repo_id: 1, number: 1, type: 'estimateIssue', created_at: '2026-01-01T00:00:00Z', user_id: 5 }] }, /unknown user id 5/],
    [{ ...base, release_reports: [{ title: 'r', start_date: '2026-01-01T00:00:00Z', desired_end_date: '2026-01-02T00:00:00Z', repositories: [1], issues: [{ repo_id: 2, issue_number: 1 }] }] }, /not in the report's repositories/],
    [{ ...base, issues: [{ repo_id: 1, number: 1, title: 'x', positions: { nope: 5 } }] }, /does not hold/],
    [{ ...base, zenhub_epics: [{ workspace_id: 'nope', title: 'E', issues: [] }] }, /zenhub_epics\[0\].*workspace nope does not exist/],
    [{ ...base, workspaces: [{ ...base.workspaces[0], id: 'w1' }], zenhub_epics: [{ workspace_id: 'w1', title: 'E', issues: [{ repo_id: 1, issue_number: 9 }] }] }, /zenhub_epics\[0\].*issue 9 not found/],
    [{ ...base, workspaces: [{ ...base.workspaces[0], own_repository_id: 5 }] }, /workspaces\[0\].*repository 5 not found/],
    [{ ...base, zenhub_epics: [{ workspace_id: 'nope', title: 'E', issues: [], creator: 'nobody' }] }, /zenhub_epics\[0\]\.creator: unknown login 'nobody'/],
    [{ ...base, repositories: [{ ...base.repositories[0], created_at: '2026-02-30T00:00:00Z' }] }, /\/repositories\/0\/created_at/],
    [{ ...base, repositories: [{ ...base.repositories[0], is_private: 'yes' }] }, /\/repositories\/0\/is_private/],
    [{ ...base, repositories: [{ ...base.repositories[0], owner_kind: 'Team' }] }, /\/repositories\/0\/owner_kind/],
    [{ ...base, repositories: [{ ...base.repositories[0], owner_platform_id: 0 }] }, /\/repositories\/0\/owner_platform_id/],
    [{ ...base, workspaces: [{ ...base.workspaces[0], pipelines: [{ name: 'A', created_at: 'soon' }] }] }, /\/workspaces\/0\/pipelines\/0\/created_at/],
    [{ ...base, workspaces: [{ ...base.workspaces[0], pipelines: [{ name: 'A', created_at: '2026-02-01T00:00:00Z', updated_at: '2026-01-01T00:00:00Z' }] }] }, /workspaces\[0\]: pipelines\/0\/updated_at is before its created_at/],
    [{ ...base, issues: [{ repo_id: 1, number: 1, title: 'x', connected_prs: [{ repo_id: 1, issue_number: 2, created_at: 'x'.repeat(50) }] }] }, /\/issues\/0\/connected_prs\/0\/created_at/]
  ]
  for (const [fixture, message] of cases) {
    const res = await app.admin({ method: 'POST', url: '/admin/import', payload: fixture as object })
    t.equal(res.statusCode, 400, res.body)
    t.match(res.json().message, message)
  }
  t.same((await app.admin({ url: '/admin/repositories' })).json(), [], 'nothing was written')
})

t.test('npm run admin -- export writes the same file', async (t) => {
  const database = join(t.testdir({}), 'planning.db')
  const run = async (out: PassThrough, ...argv: string[]) => await runAdminCommand(database, argv, () => {}, { out })
  const sink = new PassThrough()
  await run(sink, 'create-repo', '42', 'acme', 'cli')
  await run(sink, 'create-issue', '42', '1', 'First')
  const chunks: Buffer[] = []
  const out = new PassThrough()
  out.on('data', (c: Buffer) => chunks.push(c))
  t.equal(await run(out, 'export'), WRITTEN)
  const backup = JSON.parse(Buffer.concat(chunks).toString('utf8'))
  t.match(backup, { repositories: [{ id: 42, owner: 'acme', name: 'cli' }], issues: [{ repo_id: 42, number: 1, title: 'First', state: 'open' }] })
})
