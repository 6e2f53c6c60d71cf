import t from 'tap'
import Database from 'better-sqlite3'
import { build, buildWithSql, METRICS_TOKEN, REPO, OTHER_REPO, PRIVATE_REPO, WS_OLD, WS_NEW, P } from './helper.js'
import { encodeId } from '../plugins/graphql/ids.js'
import { gql, type Gql } from './gql.js'

// One app for most of the file; the tests run in order and build on each other.
const { app, sql } = await buildWithSql(t, { metricsToken: METRICS_TOKEN })
const code = (r: Gql) => r.errors?.[0]?.extensions.code
const issueId = async (repo: number, n: number): Promise<string> => (await gql(app, 'alice', `{ issueByInfo(repositoryGhId: ${repo}, issueNumber: ${n}) { id } }`)).data.issueByInfo.id
const ITEM = '__typename ... on Issue { id number title state repository { name ownerName } } ... on ZenhubEpic { id title epicState: state }'
const depend = async (blocking: [number, number], blocked: [number, number]) => {
  const res = await app.as('alice', { method: 'POST', url: '/p1/dependencies', payload: { blocking: { repo_id: blocking[0], issue_number: blocking[1] }, blocked: { repo_id: blocked[0], issue_number: blocked[1] } } })
  if (res.statusCode >= 300) throw new Error(res.body)
}

t.test('blockingItems and blockedItems: the dependencies of db/dependencies.ts, readable ends only, filtered by state', async (t) => {
  await depend([REPO, 1], [REPO, 2])
  await depend([REPO, 7], [REPO, 2])
  await depend([PRIVATE_REPO, 1], [REPO, 2])
  await depend([REPO, 2], [OTHER_REPO, 1])
  const byInfo = (login: 'alice' | 'bob' | 'carol', field: string, n = 2, filter = '') => gql(app, login,
    `query GetIssueBlockers { issueByInfo(repositoryGhId: ${REPO}, issueNumber: ${n}) { number ${field}(first: 50${filter}) { totalCount nodes { ${ITEM} } } } }`)
  const alice = await byInfo('alice', 'blockingItems')
  t.same(alice.data.issueByInfo.blockingItems.nodes.map((i: any) => [i.__typename, i.repository.name, i.number, i.state]),
    [['Issue', 'api', 1, 'OPEN'], ['Issue', 'api', 7, 'CLOSED'], ['Issue', 'secret', 1, 'OPEN']], 'oldest first, closed ones too')
  t.same((await byInfo('carol', 'blockingItems')).data.issueByInfo.blockingItems,
    {
      totalCount: 2,
      nodes: [{ __typename: 'Issue', id: await issueId(REPO, 1), number: 1, title: 'Issue 1', state: 'OPEN', repository: { name: 'api', ownerName: 'acme' } },
        { __typename: 'Issue', id: await issueId(REPO, 7), number: 7, title: 'Closed one', state: 'CLOSED', repository: { name: 'api', ownerName: 'acme' } }]
    },
    'an end the viewer cannot read is left out, without a trace in the count')
  t.same((await byInfo('alice', 'blockingItems', 2, ', filters: { state: { eq: CLOSED } }')).data.issueByInfo.blockingItems.nodes.map((i: any) => i.number), [7])
  t.same((await byInfo('alice', 'blockingItems', 2, ', filters: { state: { eq: OPEN } }')).data.issueByInfo.blockingItems.totalCount, 2)
  t.same((await byInfo('alice', 'blockedItems')).data.issueByInfo.blockedItems.nodes.map((i: any) => [i.repository.name, i.number]), [['web', 1]])
  t.same((await byInfo('carol', 'blockedItems')).data.issueByInfo.blockedItems, { totalCount: 0, nodes: [] }, 'carol cannot read web')
  t.same((await byInfo('alice', 'blockedItems', 1)).data.issueByInfo.blockedItems.nodes.map((i: any) => i.number), [2])

  const byNode = await gql(app, 'bob', `query GetIssueBlockingByNode($id: ID!) { node(id: $id) { ... on Issue { number blockedItems(first: 50) { nodes { ${ITEM} } } blockingItems(first: 1) { totalCount pageInfo { hasNextPage } nodes { ... on Issue { number } } } } } }`,
    { id: await issueId(REPO, 2) })
  t.same(byNode.data.node, {
    number: 2,
    blockedItems: { nodes: [{ __typename: 'Issue', id: await issueId(OTHER_REPO, 1), number: 1, title: 'Web 1', state: 'OPEN', repository: { name: 'web', ownerName: 'acme' } }] },
    blockingItems: { totalCount: 2, pageInfo: { hasNextPage: true }, nodes: [{ number: 1 }] }
  })
  const hidden = await gql(app, 'carol', 'query($id: ID!) { node(id: $id) { ... on Issue { blockingItems { totalCount } } } }', { id: await issueId(PRIVATE_REPO, 1) })
  t.equal(hidden.data.node, null, 'an issue the viewer cannot read: null, nothing of its dependencies')
  const notFound = await gql(app, 'carol', `{ issueByInfo(repositoryGhId: ${PRIVATE_REPO}, issueNumber: 1) { blockingItems { totalCount } } }`)
  t.equal(code(notFound), 'NOT_FOUND')
})

t.test('a page of issues with their blocking and blocked items costs a fixed number of statements', { skip: process.env.TEST_DATABASE_URL !== undefined && 'counted on SQLite' }, async (t) => {
  const { default: Database } = await import('better-sqlite3')
  const executed: string[] = []
  const db = new Database(':memory:', { verbose: (text) => executed.push(String(text)) })
  const counted = await build(t, { database: db })
  t.teardown(() => db.close())
  const q = `{ searchIssuesByPipeline(pipelineId: "${P.todo}", filters: {}, first: 100) { nodes { number blockingItems { totalCount nodes { ${ITEM} } } blockedItems { nodes { ${ITEM} } } } } }`
  const count = async () => {
    await gql(counted, 'alice', '{ viewer { id } }')
    executed.length = 0
    const res = await gql(counted, 'alice', q)
    t.notOk(res.errors)
    return { statements: executed.length, issues: res.data.searchIssuesByPipeline.nodes.length }
  }
  await counted.as('alice', { method: 'POST', url: '/p1/dependencies', payload: { blocking: { repo_id: REPO, issue_number: 1 }, blocked: { repo_id: REPO, issue_number: 2 } } })
  const small = await count()
  for (let n = 100; n < 160; n++) {
    await counted.admin({ method: 'POST', url: `/admin/repositories/${REPO}/issues`, payload: { number: n, title: `n${n}` } })
    await counted.as('alice', { method: 'POST', url: '/p1/dependencies', payload: { blocking: { repo_id: REPO, issue_number: n }, blocked: { repo_id: REPO, issue_number: 1 + n % 6 } } })
  }
  const large = await count()
  t.ok(large.issues > small.issues * 5, `${small.issues} then ${large.issues} issues`)
  t.equal(large.statements, small.statements, `${large.statements} statements either way`)
})

t.test('pipelineConfiguration: the issue-host label written on entering, only where some repository writes back; no pipeline-to-pipeline automations', async (t) => {
  const doc = (name: string) => `query ${name}($workspaceId: ID!) { workspace(id: $workspaceId) { pipelinesConnection(first: 50) { nodes { id name
    pipelineConfiguration { id createdAt pipelineAutomations(first: 50) { totalCount nodes { id elementDetails createdAt updatedAt } } }
    pipelineToPipelineAutomationSources(first: 50) { totalCount nodes { id destinationPipeline { id name } createdAt } }
    pipelineToPipelineAutomationDestinations(first: 50) { totalCount nodes { id sourcePipeline { id name } createdAt } } } } } }`
  const none = (await gql(app, 'carol', doc('PipelineAutomations'), { workspaceId: WS_OLD })).data.workspace.pipelinesConnection.nodes
  t.equal(none.length, 3)
  for (const p of none) {
    t.same(p.pipelineConfiguration.pipelineAutomations, { totalCount: 0, nodes: [] })
    t.same(p.pipelineToPipelineAutomationSources, { totalCount: 0, nodes: [] })
    t.same(p.pipelineToPipelineAutomationDestinations, { totalCount: 0, nodes: [] })
  }
  t.equal(none[0].pipelineConfiguration.id, encodeId('PipelineConfiguration', P.todo))
  const labelled = await app.admin({ method: 'PATCH', url: `/admin/workspaces/${WS_OLD}/pipelines/${P.doing}`, payload: { host_label: 'status: doing' } })
  t.ok(labelled.statusCode < 300, labelled.body)
  const unsynced = (await gql(app, 'carol', doc('Unsynced'), { workspaceId: WS_OLD })).data.workspace.pipelinesConnection.nodes
  t.same(unsynced[1].pipelineConfiguration.pipelineAutomations.totalCount, 0, 'a label no repository writes back does nothing: not listed')
  await sql("INSERT INTO connections (id, kind, web_url, api_url, secret, token, created_at) VALUES ('cccccccccccccccccccccccc', 'github', 'https://github.com', 'https://api.github.com', 'secret', 'ghp_x', '2026-01-01T00:00:00Z')")
  await sql('UPDATE repositories SET connection_id = ? WHERE id = ?', ['cccccccccccccccccccccccc', OTHER_REPO])
  const hidden = (await gql(app, 'carol', doc('Hidden'), { workspaceId: WS_OLD })).data.workspace.pipelinesConnection.nodes
  t.same(hidden[1].pipelineConfiguration.pipelineAutomations.totalCount, 0, 'only a repository carol cannot read writes back: nothing said of it')
  const alices = (await gql(app, 'alice', doc('Alices'), { workspaceId: WS_OLD })).data.workspace.pipelinesConnection.nodes
  t.same(alices[1].pipelineConfiguration.pipelineAutomations.totalCount, 1, 'alice reads it')
  await sql('UPDATE repositories SET connection_id = ? WHERE id = ?', ['cccccccccccccccccccccccc', REPO])
  const synced = (await gql(app, 'carol', doc('Synced'), { workspaceId: WS_OLD })).data.workspace.pipelinesConnection.nodes
  t.same(synced[1].pipelineConfiguration.pipelineAutomations.nodes.map((a: any) => [a.id, a.elementDetails]),
    [[encodeId('PipelineAutomation', P.doing), { labels: [{ name: 'status: doing', color: null }] }]])
  t.same(synced[0].pipelineConfiguration.pipelineAutomations.totalCount, 0, 'pipelines without a label: none')
  await sql('UPDATE repositories SET connection_id = NULL WHERE id IN (?, ?)', [OTHER_REPO, REPO])
})

const FAVORITES = `query FavoriteWorkspaces { viewer { workspaceFavorites(first: 50) { nodes { id workspace { id name displayName description viewerPermission isFavorite
  zenhubOrganization { id name } repositoriesConnection(first: 1) { totalCount } pipelinesConnection(first: 1) { totalCount } } } } } }`
const LIST = 'query ListWorkspaces { viewer { zenhubOrganizations(first: 50) { nodes { id name workspaces(first: 100) { nodes { id name isFavorite viewerPermission } } } } } }'
const RECENT = `query RecentWorkspaces { recentlyViewedWorkspaces(first: 50) { nodes { id name displayName description isFavorite viewerPermission
  zenhubOrganization { id name } repositoriesConnection(first: 1) { totalCount } pipelinesConnection(first: 1) { totalCount } } } }`
const favorite = async (login: 'alice' | 'bob' | 'carol' | 'dave', ws: string, how = 'setFavoriteWorkspace') => await gql(app, login,
  `mutation($i: ${how === 'setFavoriteWorkspace' ? 'SetFavoriteWorkspaceInput' : 'DeleteWorkspaceFavoriteInput'}!) { ${how}(input: $i) { clientMutationId ${how === 'setFavoriteWorkspace' ? 'workspaceFavorite { id createdAt workspace { id isFavorite } }' : 'workspace { id isFavorite }'} } }`,
  { i: { workspaceId: ws, clientMutationId: 'c1' } })
const favorites = async (login: 'alice' | 'bob' | 'carol' | 'dave') => (await gql(app, login, FAVORITES)).data.viewer.workspaceFavorites.nodes.map((f: any) => f.workspace.name)
const listed = async (login: 'alice' | 'bob' | 'carol' | 'dave') => Object.fromEntries((await gql(app, login, LIST)).data.viewer.zenhubOrganizations.nodes[0].workspaces.nodes.map((w: any) => [w.name, w.isFavorite]))

t.test('favorite workspaces: per user, persisted, shown to nobody else; NOT_FOUND for a workspace the viewer cannot see', async (t) => {
  t.same(await favorites('bob'), [])
  t.same(await listed('bob'), { Engineering: false, Roadmap: false })
  const set = await favorite('bob', WS_NEW)
  t.same(set.data.setFavoriteWorkspace, { clientMutationId: 'c1', workspaceFavorite: { id: encodeId('WorkspaceFavorite', WS_NEW), createdAt: set.data.setFavoriteWorkspace.workspaceFavorite.createdAt, workspace: { id: WS_NEW, isFavorite: true } } })
  const again = await favorite('bob', WS_NEW)
  t.equal(again.data.setFavoriteWorkspace.workspaceFavorite.createdAt, set.data.setFavoriteWorkspace.workspaceFavorite.createdAt, 'marking again keeps the first time')
  await favorite('bob', WS_OLD)
  t.same(await favorites('bob'), ['Roadmap', 'Engineering'], 'oldest mark first')
  const full = (await gql(app, 'bob', FAVORITES)).data.viewer.workspaceFavorites.nodes[0].workspace
  t.match(full, { id: WS_NEW, name: 'Roadmap', displayName: 'Roadmap', description: 'Plans', viewerPermission: 'WRITE', isFavorite: true, repositoriesConnection: { totalCount: 1 }, pipelinesConnection: { totalCount: 2 } })
  t.same(await listed('bob'), { Engineering: true, Roadmap: true })
  t.same(await listed('carol'), { Engineering: false, Roadmap: false }, 'bob\'s marks are his own')
  t.same(await favorites('carol'), [])
  const stored = await sql('SELECT user_id, workspace_id FROM workspace_favorites ORDER BY workspace_id')
  t.same(stored.map((r) => [Number(r.user_id), r.workspace_id]), [[2, WS_OLD], [2, WS_NEW]], 'persisted')

  const removed = await favorite('bob', WS_OLD, 'deleteWorkspaceFavorite')
  t.same(removed.data.deleteWorkspaceFavorite, { clientMutationId: 'c1', workspace: { id: WS_OLD, isFavorite: false } })
  t.same(await favorites('bob'), ['Roadmap'])
  t.notOk((await favorite('bob', WS_OLD, 'deleteWorkspaceFavorite')).errors, 'removing one that is not there changes nothing')

  t.equal(code(await favorite('dave', WS_OLD)), 'NOT_FOUND', 'a workspace dave cannot see')
  t.equal(code(await favorite('dave', 'ffffffffffffffffffffffff')), 'NOT_FOUND')
})

t.test('a favorite moves no change counter: other kept answers are sent again, the answers showing favorites follow', async (t) => {
  const counter = async () => Number((await sql('SELECT value FROM change_counter WHERE id = 1'))[0].value)
  const hits = async () => {
    const res = await app.inject({ url: '/metrics', headers: { authorization: `Bearer ${METRICS_TOKEN}` } })
    return Number(/^planning_graphql_cache_hits_total (\d+)/m.exec(res.body)?.[1])
  }
  const BOARD = `query Board { searchIssuesByPipeline(pipelineId: "${P.todo}", filters: {}, first: 10) { nodes { number } } }`
  const board = (await gql(app, 'bob', BOARD)).data
  t.same(await listed('bob'), { Engineering: false, Roadmap: true }, 'kept with what it read')
  const before = await counter()
  await favorite('bob', WS_OLD)
  t.equal(await counter(), before, 'setting one leaves the counter')
  let at = await hits()
  t.same((await gql(app, 'bob', BOARD)).data, board)
  t.equal(await hits(), at + 1, 'the kept board answer is sent again')
  at = await hits()
  t.same(await listed('bob'), { Engineering: true, Roadmap: true }, 'the kept list is made again: it shows the new favorite')
  t.equal(await hits(), at, 'not sent from what was kept')
  t.same(await listed('bob'), { Engineering: true, Roadmap: true })
  t.equal(await hits(), at + 1, 'and kept again')
  t.same(await favorites('bob'), ['Roadmap', 'Engineering'])
  await favorite('bob', WS_OLD, 'deleteWorkspaceFavorite')
  t.equal(await counter(), before, 'removing one leaves it too')
  t.same(await listed('bob'), { Engineering: false, Roadmap: true })
  t.same(await favorites('bob'), ['Roadmap'], 'the favorites list follows')
  t.same(await listed('carol'), { Engineering: false, Roadmap: false }, 'nobody else\'s')
})

t.test('recently viewed workspaces: workspace(id) and setWorkspaceViewedNow record, at most once a minute, the last 20 kept, own views only, never kept as an answer', async (t) => {
  t.same((await gql(app, 'bob', RECENT)).data.recentlyViewedWorkspaces.nodes, [], 'nothing opened yet')
  await gql(app, 'carol', `{ workspace(id: "${WS_OLD}") { name } }`)
  const one = (await gql(app, 'carol', RECENT)).data.recentlyViewedWorkspaces.nodes
  t.match(one, [{ id: WS_OLD, name: 'Engineering', displayName: 'Engineering', isFavorite: false, viewerPermission: 'READ', zenhubOrganization: { name: 'Planning server' }, repositoriesConnection: { totalCount: 1 }, pipelinesConnection: { totalCount: 3 } }])
  const viewedNow = await gql(app, 'carol', 'mutation($i: SetWorkspaceViewedNowInput!) { setWorkspaceViewedNow(input: $i) { clientMutationId workspace { id } } }', { i: { workspaceId: WS_NEW, clientMutationId: 'v' } })
  t.same(viewedNow.data.setWorkspaceViewedNow, { clientMutationId: 'v', workspace: { id: WS_NEW } })
  t.same((await gql(app, 'carol', RECENT)).data.recentlyViewedWorkspaces.nodes.map((w: any) => w.id), [WS_NEW, WS_OLD], 'most recent first, answered again (not kept)')
  t.same((await gql(app, 'carol', `{ recentlyViewedWorkspaces(repositoryGhIds: ["${REPO}"]) { nodes { id } } }`)).data.recentlyViewedWorkspaces.nodes.length, 2)
  t.same((await gql(app, 'carol', `{ recentlyViewedWorkspaces(repositoryGhIds: ["${OTHER_REPO}"]) { nodes { id } } }`)).data.recentlyViewedWorkspaces.nodes, [], 'carol cannot read web: no workspace by it')
  t.same((await gql(app, 'bob', RECENT)).data.recentlyViewedWorkspaces.nodes, [], 'carol\'s views are hers')
  t.equal(code(await gql(app, 'dave', 'mutation($i: SetWorkspaceViewedNowInput!) { setWorkspaceViewedNow(input: $i) { workspace { id } } }', { i: { workspaceId: WS_OLD } })), 'NOT_FOUND')
  t.same(await gql(app, 'dave', `{ workspace(id: "${WS_OLD}") { name } }`), { data: { workspace: null } })
  t.same((await sql('SELECT workspace_id FROM workspace_views WHERE user_id = 4')), [], 'a workspace dave cannot see records nothing')

  // Reads of workspace(id) again within the minute: no write (the in-memory note, then the statement's own check).
  const before = await sql('SELECT viewed_at FROM workspace_views WHERE user_id = 3 AND workspace_id = ?', [WS_OLD])
  for (let i = 0; i < 3; i++) await gql(app, 'carol', `{ workspace(id: "${WS_OLD}") { id n${i}: name } }`)
  t.same(await sql('SELECT viewed_at FROM workspace_views WHERE user_id = 3 AND workspace_id = ?', [WS_OLD]), before, 'one write a minute')
})

t.test('a workspace view is written after the read, outside it and the counter; a failed write fails no read and is tried again; a shutdown writes what waits', async (t) => {
  const counter = async () => Number((await sql('SELECT value FROM change_counter WHERE id = 1'))[0].value)
  const bobs = async () => (await sql('SELECT workspace_id FROM workspace_views WHERE user_id = 2 ORDER BY workspace_id'))
    .map((r) => r.workspace_id)
  const until = async (wanted: unknown[]) => {
    const end = Date.now() + 5000
    while (JSON.stringify(await bobs()) !== JSON.stringify(wanted) && Date.now() < end) await new Promise((resolve) => setTimeout(resolve, 50))
    return await bobs()
  }
  const before = await counter()
  t.same(await bobs(), [], 'bob has opened nothing')
  t.same((await gql(app, 'bob', `{ workspace(id: "${WS_OLD}") { name } }`)).data, { workspace: { name: 'Engineering' } })
  t.same(await bobs(), [], 'the read wrote nothing')
  t.same((await gql(app, 'bob', RECENT)).data.recentlyViewedWorkspaces.nodes.map((w: any) => w.id), [WS_OLD], 'yet his recent workspaces show it')
  t.same(await until([WS_OLD]), [WS_OLD], 'written just after')

  await sql('ALTER TABLE workspace_views RENAME TO workspace_views_away')
  t.same((await gql(app, 'bob', `{ workspace(id: "${WS_NEW}") { name } }`)).data, { workspace: { name: 'Roadmap' } }, 'a read while views cannot be written')
  await new Promise((resolve) => setTimeout(resolve, 1500))
  await sql('ALTER TABLE workspace_views_away RENAME TO workspace_views')
  t.same(await until([WS_OLD, WS_NEW].sort()), [WS_OLD, WS_NEW].sort(), 'the failed write is tried again: nothing lost')
  t.equal(await counter(), before, 'the change counter did not move')

  const dir = t.testdir({})
  const shut = process.env.TEST_DATABASE_URL === undefined
    ? {
        app: await build(t, { database: `${dir}/views.db` }),
        rows: async () => {
          const db = new Database(`${dir}/views.db`, { readonly: true })
          try { return db.prepare('SELECT user_id FROM workspace_views').all() } finally { db.close() }
        }
      }
    : await (async () => {
      const made = await buildWithSql(t)
      return { app: made.app, rows: async () => await made.sql('SELECT user_id FROM workspace_views') }
    })()
  t.same((await gql(shut.app, 'carol', `{ workspace(id: "${WS_OLD}") { name } }`)).data, { workspace: { name: 'Engineering' } })
  await shut.app.close()
  t.same((await shut.rows()).map((r: any) => Number(r.user_id)), [3], 'the view waiting at shutdown was written')
})

t.test('a view of a person removed before it was written leaves the others\' views written', async (t) => {
  const made = await buildWithSql(t)
  const viewers = async () => (await made.sql('SELECT user_id FROM workspace_views ORDER BY user_id')).map((r) => Number(r.user_id))
  t.notOk((await gql(made.app, 'carol', `{ workspace(id: "${WS_OLD}") { name } }`)).errors)
  t.equal((await made.app.admin({ method: 'DELETE', url: '/admin/users/carol' })).statusCode, 204, 'carol removed while her view waits')
  t.notOk((await gql(made.app, 'bob', `{ workspace(id: "${WS_OLD}") { name } }`)).errors)
  const end = Date.now() + 5000
  while ((await viewers()).length === 0 && Date.now() < end) await new Promise((resolve) => setTimeout(resolve, 50))
  t.same(await viewers(), [2], 'bob\'s view written, carol\'s dropped')
  t.notOk((await gql(made.app, 'alice', `{ workspace(id: "${WS_NEW}") { name } }`)).errors)
  while ((await viewers()).length < 2 && Date.now() < end + 3000) await new Promise((resolve) => setTimeout(resolve, 50))
  t.same(await viewers(), [1, 2], 'and the next ones too')
})

t.test('sprintReview: made from the stored sprint data (the REST review\'s counts), null before the sprint starts; empty features and schedules', async (t) => {
  const config = { length_weeks: 1, starts_on: '2026-01-05', time_zone: 'UTC', carry_over: false }
  t.equal((await app.as('alice', { method: 'PUT', url: `/p2/workspaces/${WS_NEW}/sprint_config`, payload: config })).statusCode, 200)
  const all = (await app.as('alice', { url: `/p2/workspaces/${WS_NEW}/sprints` })).json()
  const closed = all.filter((s: any) => s.state === 'active')
  const future = all.filter((s: any) => s.state === 'future')
  t.ok(closed.length > 0 && future.length > 0, `sprints started and planned: ${all.map((s: any) => s.state).join(' ')}`)
  const doc = `query SprintReview($sprintId: ID!) { node(id: $sprintId) { ... on Sprint { id name sprintReview { id title body state language lastGeneratedAt manuallyEdited createdAt updatedAt
    initiatedBy { id } sprintReviewFeatures(first: 50) { totalCount nodes { id title } } sprintReviewSchedules(first: 20) { totalCount nodes { id } }
    issuesClosedAfterSprintReview(first: 50) { totalCount nodes { id number } } } } } }`
  const rest = (await app.as('carol', { url: `/p2/sprints/${closed[0].id}/review` }))
  const review = (await gql(app, 'carol', doc, { sprintId: encodeId('Sprint', closed[0].id) })).data.node.sprintReview
  t.match(review, {
    id: encodeId('SprintReview', closed[0].id),
    title: `Review of ${closed[0].name}`,
    state: 'IN_PROGRESS',
    language: 'en',
    lastGeneratedAt: null,
    manuallyEdited: false,
    initiatedBy: null,
    sprintReviewFeatures: { totalCount: 0, nodes: [] },
    sprintReviewSchedules: { totalCount: 0, nodes: [] },
    issuesClosedAfterSprintReview: { totalCount: 0 }
  })
  t.ok(review.body.includes(`Completed: ${rest.json().completed.issues} issue`), review.body)
  t.equal((await gql(app, 'carol', doc, { sprintId: encodeId('Sprint', future[0].id) })).data.node.sprintReview, null, 'a sprint not started: null')
  t.equal((await gql(app, 'dave', doc, { sprintId: encodeId('Sprint', closed[0].id) })).data.node, null, 'a sprint dave cannot see: null')
})
