import t from 'tap'
import Database from 'better-sqlite3'
import { build, testFixture, REPO, OTHER_REPO, WS_OLD, P, METRICS_TOKEN, type App } from './helper.js'
import { gql } from './gql.js'
import { recordSent } from './pg.js'
import { encodeId } from '../plugins/graphql/ids.js'

// A pipeline's page with a label filter (issue 47: 10,000 cards in one pipeline): the same answers
// as filtering the unfiltered pages, one walk of the pipeline in board order, and one run of the
// document for many identical requests after a write.
const sqlite = process.env.TEST_DATABASE_URL === undefined
// what each engine was sent: SQLite's statements, PostgreSQL's texts below the pool (recorded from before it connects)
const executed: string[] = sqlite ? [] : recordSent(t)
const handle = sqlite ? new Database(':memory:', { verbose: (text) => executed.push(String(text)) }) : undefined
t.teardown(() => handle?.close())
const fixture = testFixture()
const more = Array.from({ length: 30 }, (_, i) => ({
  repo_id: i % 2 === 0 ? REPO : OTHER_REPO,
  number: 100 + i,
  title: `More ${i}`,
  labels: [...(i % 3 === 0 ? [{ name: 'bug', color: 'd73a4a' }] : []), ...(i % 4 === 0 ? [{ name: 'ui', color: null }] : [])],
  assignees: [...(i % 2 === 0 ? [{ login: 'zed', avatar_url: 'https://avatars.example/zed' }] : []), ...(i % 3 === 0 ? [{ login: 'amy', avatar_url: null }] : [])]
}))
const app: App = await build(t, {
  ...(handle === undefined ? {} : { database: handle }),
  metricsToken: METRICS_TOKEN,
  fixture: { ...fixture, issues: [...fixture.issues, ...more] }
})
// board order apart from id order: a few cards moved to the top
for (const number of [127, 103, 112]) {
  const repo = (number - 100) % 2 === 0 ? REPO : OTHER_REPO
  const moved = await app.as('alice', { method: 'POST', url: `/p2/workspaces/${WS_OLD}/repositories/${repo}/issues/${number}/moves`, payload: { pipeline_id: P.todo, position: 'top' } })
  if (moved.statusCode >= 300) throw new Error(`move ${number}: ${moved.body}`)
}

const fields = 'totalCount pageInfo { hasNextPage endCursor } nodes { number repository { ghId } labels { nodes { name } } }'
const page = (filters: string, after?: string) =>
  `{ searchIssuesByPipeline(pipelineId: "${P.todo}", filters: ${filters}, first: 4${after === undefined ? '' : `, after: "${after}"`}) { ${fields} } }`

/** Every card of the pipeline through pages of 4, and the total each page gave. */
async function walk (filters: string): Promise<{ cards: string[], totals: number[], labels: Map<string, string[]> }> {
  const cards: string[] = []
  const totals: number[] = []
  const labels = new Map<string, string[]>()
  let after: string | undefined
  for (;;) {
    const res = await gql(app, 'alice', page(filters, after))
    t.notOk(res.errors, filters)
    const found = res.data.searchIssuesByPipeline
    totals.push(found.totalCount)
    for (const n of found.nodes) {
      const key = `${n.repository.ghId}#${n.number}`
      cards.push(key)
      labels.set(key, n.labels.nodes.map((l: { name: string }) => l.name))
    }
    if (!found.pageInfo.hasNextPage) return { cards, totals, labels }
    after = found.pageInfo.endCursor
  }
}

t.test('label filters page through the same cards, in board order, as the unfiltered pipeline filtered', async (t) => {
  const all = await walk('{}')
  t.same(all.cards.slice(0, 3).sort(), [`${REPO}#112`, `${OTHER_REPO}#103`, `${OTHER_REPO}#127`].sort(), 'moved cards first')
  const cases: Array<[string, (names: string[]) => boolean]> = [
    ['{ labels: { in: ["bug"] } }', (n) => n.includes('bug')],
    ['{ matchType: any, labels: { in: ["bug", "ui"] } }', (n) => n.includes('bug') || n.includes('ui')],
    // matchType's default is all, as the hosted service's
    ['{ labels: { in: ["bug", "ui"] } }', (n) => n.includes('bug') && n.includes('ui')],
    ['{ labels: { nin: ["bug"] } }', (n) => !n.includes('bug')]
  ]
  for (const [filters, keeps] of cases) {
    const expected = all.cards.filter((c) => keeps(all.labels.get(c)!))
    const got = await walk(filters)
    t.same(got.cards, expected, filters)
    t.ok(expected.length > 0, `${filters}: ${expected.length} cards`)
    t.same([...new Set(got.totals)], [expected.length], `${filters}: totalCount on every page`)
  }
})

t.test('a label-filtered page walks the pipeline in board order: no sort of all its cards, a fixed number of statements', { skip: !sqlite && 'plans and statements counted on SQLite' }, async (t) => {
  const count = async (filters: string) => {
    await gql(app, 'alice', '{ viewer { id } }')
    executed.length = 0
    const res = await gql(app, 'alice', page(filters), { fresh: Math.random() })
    t.notOk(res.errors)
    return [...executed]
  }
  const plain = await count('{}')
  const labelled = await count('{ labels: { in: ["bug"] } }')
  t.equal(labelled.length, plain.length, `${labelled.length} statements with the label filter as without`)
  const pageStatement = labelled.find((s) => /from "placements" as "p"/.test(s) && /limit/i.test(s))
  t.ok(pageStatement, 'the page statement')
  const plan = handle!.prepare(`EXPLAIN QUERY PLAN ${pageStatement!}`).all().map((r) => (r as { detail: string }).detail)
  t.ok(plan.some((d) => /placements_ranked/.test(d)), `in board order by index: ${plan.join(' | ')}`)
  t.notOk(plan.some((d) => /TEMP B-TREE/.test(d)), 'no sort of the pipeline\'s cards')
})

// On SQLite a document runs without waiting on I/O, so the requests hardly overlap; on PostgreSQL they do.
t.test('identical requests arriving together after a write run the document once and get the same answer', async (t) => {
  const misses = async () => {
    const res = await app.inject({ url: '/metrics', headers: { authorization: `Bearer ${METRICS_TOKEN}` } })
    return Number(/^planning_graphql_cache_misses_total (\d+)/m.exec(res.body)?.[1])
  }
  const q = page('{ labels: { in: ["bug"] } }')
  await gql(app, 'alice', q)
  const estimate = await app.as('alice', { method: 'PUT', url: `/p1/repositories/${REPO}/issues/100/estimate`, payload: { estimate: 3 } })
  t.equal(estimate.statusCode, 200)
  const before = await misses()
  executed.length = 0
  const answers = await Promise.all(Array.from({ length: 20 }, async () => await app.as('alice', { method: 'POST', url: '/public/graphql', payload: { query: q } })))
  const statements = executed.length
  t.same([...new Set(answers.map((a) => a.statusCode))], [200])
  t.equal(new Set(answers.map((a) => a.body)).size, 1, 'one answer')
  t.notOk(answers[0].json().errors)
  t.equal(await misses() - before, 1, 'one run of the document for 20 requests')
  if (sqlite) {
    executed.length = 0
    await gql(app, 'alice', q, { alone: 1 })
    t.equal(statements, executed.length, `the 20 cost the statements of one (${statements})`)
  }
})

// The case of issue 47 asks each card's repository, htmlUrl and pipeline: one read of the
// repositories for both fields (alongside the page), none of the pipeline the search already read.
t.test('a page\'s cards read their repositories once and not the searched pipeline again', async (t) => {
  const sent = executed
  const fields = `number htmlUrl repository { ghId name } labels { nodes { name } } assignees { nodes { login } } pipelineIssue(workspaceId: "${WS_OLD}") { pipeline { id name } }`
  const q = `{ searchIssuesByPipeline(pipelineId: "${P.todo}", filters: { labels: { in: ["bug"] } }, first: 4) { totalCount nodes { ${fields} } } }`
  await gql(app, 'alice', '{ viewer { id } }')
  sent.length = 0
  const res = await gql(app, 'alice', q, { fresh: Math.random() })
  t.notOk(res.errors)
  const nodes = res.data.searchIssuesByPipeline.nodes
  t.equal(nodes.length, 4)
  t.ok(nodes.every((n: { pipelineIssue: { pipeline: { id: string, name: string } } }) => n.pipelineIssue.pipeline.id === encodeId('Pipeline', P.todo) && n.pipelineIssue.pipeline.name !== ''), 'each card\'s pipeline')
  t.ok(nodes.every((n: { htmlUrl: string, repository: { name: string } }) => n.htmlUrl !== '' && n.repository.name !== ''), 'each card\'s repository and address')
  const from = (table: string) => sent.filter((s) => new RegExp(`from "${table}"`).test(s)).length
  t.equal(from('pipelines'), 1, 'the pipeline read once')
  t.equal(from('repositories'), 1, 'the repositories read once for repository and htmlUrl')
  t.equal(from('workspaces'), 0, 'no workspace read on its own')
})

// After the page, the cards' placements need no statement (the page read them), nor on PostgreSQL
// their labels and assignees (carried in the page's statement): two waves, not three. The cards'
// fields are the same as those of the same issues read by id.
t.test('a page carries its cards\' placements, and on PostgreSQL their labels and assignees', async (t) => {
  const sent = executed
  const fields = `id labels { nodes { name color } } assignees { nodes { login avatarUrl } } pipelineIssue(workspaceId: "${WS_OLD}") { id relativePosition pipeline { id } }`
  const q = `{ searchIssuesByPipeline(pipelineId: "${P.todo}", filters: { labels: { in: ["bug"] } }, first: 6) { nodes { ${fields} } } }`
  await gql(app, 'alice', '{ viewer { id } }')
  sent.length = 0
  const res = await gql(app, 'alice', q, { fresh: Math.random() })
  t.notOk(res.errors)
  const nodes = res.data.searchIssuesByPipeline.nodes as Array<{ id: string, assignees: { nodes: unknown[] } }>
  t.equal(nodes.length, 6)
  t.ok(nodes.some((n) => n.assignees.nodes.length === 2), 'a card with two assignees among them')
  t.equal(sent.filter((s) => /from "placements"/.test(s)).length, 2, 'placements read by the page and its count only')
  const lists = sent.filter((s) => /^select "issue_id", "(name|login)", "(color|avatar_url)" from "issue_(labels|assignees)"/.test(s)).length
  t.equal(lists, sqlite ? 2 : 0, sqlite ? 'SQLite reads labels and assignees after the page' : 'labels and assignees carried by the page')
  const byId = await gql(app, 'alice', `{ issues(ids: ${JSON.stringify(nodes.map((n) => n.id))}) { ${fields} } }`, { fresh: Math.random() })
  t.notOk(byId.errors)
  t.same(nodes, byId.data.issues, 'the same fields as the issues read by id')
})

t.test('a mutation reads the pipeline it renamed anew', async (t) => {
  await app.admin({ method: 'PATCH', url: '/admin/users/alice', payload: { administrator: true } })
  t.teardown(async () => { await app.admin({ method: 'PATCH', url: '/admin/users/alice', payload: { administrator: false } }) })
  const rename = async (name: string) => await app.as('alice', {
    method: 'POST',
    url: '/public/graphql',
    payload: { query: `mutation { updatePipeline(input: { pipelineId: "${P.done}", name: "${name}" }) { pipeline { id name } } }` }
  })
  const res = await rename('Shipped')
  t.notOk(res.json().errors, res.body)
  t.equal(res.json().data.updatePipeline.pipeline.name, 'Shipped')
  const again = await rename('Done')
  t.equal(again.json().data.updatePipeline.pipeline.name, 'Done')
})

// totalCount alone is counted on the placements (and the label and assignee lists): no issue row
// read for sums nobody asked; asking pipelineCounts, directly or through a fragment, reads them.
t.test('totalCount without pipelineCounts counts without the issue rows, and agrees with it', async (t) => {
  const counted = (filters: string, fields: string, extra = '') =>
    `{ searchIssuesByPipeline(pipelineId: "${P.todo}", filters: ${filters}, first: 2) { ${fields} } }${extra}`
  const sums = 'pipelineCounts { issuesCount pullRequestsCount sumEstimates }'
  const countStatement = async (query: string) => {
    executed.length = 0
    const res = await gql(app, 'alice', query, { fresh: Math.random() })
    t.notOk(res.errors, query)
    return { found: res.data.searchIssuesByPipeline, statement: executed.find((s) => /count\(\*\).* from "placements"/.test(s)) ?? '' }
  }
  for (const filters of ['{}', '{ labels: { in: ["bug"] } }', '{ matchType: all, labels: { in: ["bug", "ui"] } }', '{ labels: { nin: ["bug"] } }', '{ assignees: { in: ["alice"] } }', '{ displayType: prs }']) {
    const alone = await countStatement(counted(filters, 'totalCount'))
    const both = await countStatement(counted(filters, `totalCount ${sums}`))
    const viaFragment = await countStatement(counted(filters, 'totalCount ...sums', ` fragment sums on IssueConnection { ${sums} }`))
    t.equal(alone.found.totalCount, both.found.totalCount, `${filters}: the same total`)
    t.same(viaFragment.found, both.found, `${filters}: pipelineCounts through a fragment`)
    t.equal(both.found.pipelineCounts.issuesCount + both.found.pipelineCounts.pullRequestsCount, both.found.totalCount)
    t.match(both.statement, /"issues"/, `${filters}: with pipelineCounts the count reads the issues`)
    t.match(viaFragment.statement, /"issues"/, `${filters}: also through a fragment`)
    // displayType tests the issue's own row: the count needs it either way
    if (filters.includes('displayType')) t.match(alone.statement, /"issues"/, `${filters}: needs the issue rows`)
    else t.notMatch(alone.statement, /"issues"/, `${filters}: totalCount alone reads no issue row`)
  }
  const estimates = await countStatement(counted('{}', `totalCount ${sums}`))
  t.ok(estimates.found.pipelineCounts.sumEstimates > 0, 'estimates summed')
})

// A workspace's pipelines each with `issues { totalCount }` (a client's column headers): the
// workspace's repositories read once, and the counts in two statements (the first pipeline's at
// once, the others grouped), each equal to the pipeline's own count.
t.test('a workspace\'s pipelines with their counts: two count statements, the repositories read once', async (t) => {
  const filters = ['', '(repositoryId: "' + encodeId('Repository', REPO) + '")']
  for (const filter of filters) {
    executed.length = 0
    const res = await gql(app, 'alice', `{ workspace(id: "${WS_OLD}") { pipelinesConnection(first: 20) { nodes { id issues${filter} { totalCount } } } } }`, { fresh: Math.random() })
    t.notOk(res.errors)
    const nodes = res.data.workspace.pipelinesConnection.nodes as Array<{ id: string, issues: { totalCount: number } }>
    t.ok(nodes.length >= 3, 'the workspace\'s pipelines')
    t.ok(nodes.some((n) => n.issues.totalCount > 0), 'some with cards')
    const counts = executed.filter((s) => /count\(\*\).* from "placements"/.test(s))
    t.equal(counts.length, 2, `${filter || 'no filter'}: the first pipeline's count, then one for the others`)
    t.match(counts[1], /group by "p"."pipeline_id"/)
    t.equal(executed.filter((s) => /from "workspace_repositories" where "workspace_id" in/.test(s)).length, 1, 'the workspace\'s repositories read once')
    for (const node of nodes) {
      const own = await gql(app, 'alice', `{ node(id: "${node.id}") { ... on Pipeline { issues${filter} { totalCount } } } }`, { fresh: Math.random() })
      t.equal(own.data.node.issues.totalCount, node.issues.totalCount, `${filter || 'no filter'}: ${node.id} counted alone`)
    }
  }
})

t.test('counts asked together are each pipeline\'s own, for a viewer who cannot read every repository and for filters on the issue row', async (t) => {
  const pipes = [P.todo, P.doing, P.done]
  const filters = ['{}', '{ labels: { in: ["bug", "ui"] } }', '{ matchType: any, labels: { in: ["bug", "ui"] } }', '{ labels: { nin: ["bug"] }, assignees: { in: ["zed"] } }',
    '{ displayType: issues }', '{ labels: { in: ["bug"] }, displayType: prs }']
  for (const user of ['alice', 'bob'] as const) {
    for (const filter of filters) {
      executed.length = 0
      const together = await gql(app, user, `{ ${pipes.map((p, i) => `a${i}: searchIssuesByPipeline(pipelineId: "${p}", filters: ${filter}, first: 1) { totalCount }`).join(' ')} }`, { fresh: Math.random() })
      t.notOk(together.errors, filter)
      // On PostgreSQL each alias's pipeline is read on a connection of its own and may come back in another turn: counted apart, or together.
      if (sqlite && !filter.includes('displayType')) t.equal(executed.filter((s) => /count\(\*\).* from "placements"/.test(s)).length, 2, `${user} ${filter}: the first alias's count, then the others'`)
      for (const [i, p] of pipes.entries()) {
        const alone = await gql(app, user, `{ a: searchIssuesByPipeline(pipelineId: "${p}", filters: ${filter}, first: 1) { totalCount } }`, { fresh: Math.random() })
        t.equal(together.data[`a${i}`].totalCount, alone.data.a.totalCount, `${user} ${filter} ${p}: ${String(alone.data.a.totalCount)}`)
      }
    }
  }
  const counts = async (user: 'alice' | 'bob') => (await gql(app, user, `{ workspace(id: "${WS_OLD}") { pipelinesConnection(first: 20) { nodes { issues { totalCount } } } } }`, { fresh: Math.random() }))
    .data.workspace.pipelinesConnection.nodes.reduce((sum: number, n: { issues: { totalCount: number } }) => sum + n.issues.totalCount, 0)
  t.ok(await counts('bob') < await counts('alice'), 'bob\'s counts leave out the repository only alice can read')
})
