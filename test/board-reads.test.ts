import t from 'tap'
import Database from 'better-sqlite3'
import { join } from 'node:path'
import { build, OTHER_REPO, PRIVATE_REPO, REPO, WS_NEW, WS_OLD } from './helper.js'
import { createBoardReads } from '../db/board-reads.js'
import { createGraphReads } from '../db/graph-reads.js'
import { openSqliteStore } from '../db/store.js'

t.test('a workspace\'s readable repositories with their names', async (t) => {
  const app = await build(t)
  const alice = await app.as('alice', { url: `/p2/workspaces/${WS_OLD}/repositories` })
  t.equal(alice.statusCode, 200)
  t.same(alice.json().map((r: { id: number, owner: string, name: string, html_url: string }) => [r.id, `${r.owner}/${r.name}`, r.html_url]), [
    [REPO, 'acme/api', null],
    [OTHER_REPO, 'acme/web', null],
    [PRIVATE_REPO, 'acme/secret', null]
  ])
  t.same((await app.as('bob', { url: `/p2/workspaces/${WS_OLD}/repositories` })).json().map((r: { id: number }) => r.id), [REPO, OTHER_REPO], 'only what bob can read')
  t.same((await app.as('carol', { url: `/p2/workspaces/${WS_NEW}/repositories` })).json().map((r: { name: string }) => r.name), ['api'])
  const dave = await app.as('dave', { url: `/p2/workspaces/${WS_OLD}/repositories` })
  t.equal(dave.statusCode, 404, 'no readable repository: no workspace')
  t.match(dave.json(), { message: `workspace ${WS_OLD} not found` })
  t.equal((await app.as('alice', { url: '/p2/workspaces/nope/repositories' })).statusCode, 404)
  t.equal((await app.inject({ url: `/p2/workspaces/${WS_OLD}/repositories` })).statusCode, 401, 'a token is needed')
})

t.test('closed issues, highest number first, a page at a time', async (t) => {
  const app = await build(t)
  for (const n of [8, 9, 10]) {
    t.equal((await app.admin({ method: 'POST', url: `/admin/repositories/${REPO}/issues`, payload: { number: n, title: `Done ${n}`, state: 'closed' } })).statusCode, 201)
  }
  t.equal((await app.as('alice', { method: 'PUT', url: `/p1/repositories/${REPO}/issues/9/estimate`, payload: { estimate: 3 } })).statusCode, 200)
  const first = await app.as('carol', { url: `/p1/repositories/${REPO}/issues/closed?limit=2` })
  t.equal(first.statusCode, 200)
  t.same(first.json(), {
    data: [
      { issue_number: 10, title: 'Done 10', html_url: null, is_epic: false },
      { issue_number: 9, title: 'Done 9', html_url: null, is_epic: false, estimate: { value: 3 } }
    ],
    next_before: 9,
    total: 4
  })
  const second = (await app.as('carol', { url: `/p1/repositories/${REPO}/issues/closed?limit=2&before=9` })).json()
  t.same(second.data.map((i: { issue_number: number }) => i.issue_number), [8, 7], 'the next page')
  t.equal(second.next_before, null, 'the last page says so')
  t.same((await app.as('carol', { url: `/p1/repositories/${REPO}/issues/closed?before=7` })).json(), { data: [], next_before: null, total: 4 }, 'nothing below the oldest; the count is the whole repository\'s')
  t.equal((await app.as('carol', { url: `/p1/repositories/${REPO}/issues/closed` })).json().data.length, 4, '50 by default')
  const bad = await app.as('carol', { url: `/p1/repositories/${REPO}/issues/closed?limit=101` })
  t.equal(bad.statusCode, 400)
  t.match(bad.json().message, /limit/)
  t.equal((await app.as('carol', { url: `/p1/repositories/${REPO}/issues/closed?before=x` })).statusCode, 400)
  t.equal((await app.as('carol', { url: `/p1/repositories/${PRIVATE_REPO}/issues/closed` })).statusCode, 404, 'no read access: 404')
})

t.test('a sprint\'s issues, only of readable repositories', async (t) => {
  const app = await build(t)
  const starts = new Date(Date.now() + 3 * 86_400_000).toISOString().slice(0, 10)
  t.equal((await app.as('alice', { method: 'PUT', url: `/p2/workspaces/${WS_OLD}/sprint_config`, payload: { length_weeks: 2, starts_on: starts, time_zone: 'UTC', carry_over: true } })).statusCode, 200)
  const [sprint, next] = (await app.as('alice', { url: `/p2/workspaces/${WS_OLD}/sprints` })).json()
  const issues = [{ repo_id: REPO, issue_number: 3 }, { repo_id: PRIVATE_REPO, issue_number: 1 }, { repo_id: REPO, issue_number: 1 }]
  t.equal((await app.as('alice', { method: 'POST', url: `/p2/sprints/${sprint.id}/issues`, payload: { issues } })).statusCode, 200)
  const url = `/p2/sprints/${sprint.id}/issues`
  const alice = await app.as('alice', { url })
  t.equal(alice.statusCode, 200)
  t.same(alice.json(), { issues: [{ repo_id: REPO, issue_number: 1 }, { repo_id: REPO, issue_number: 3 }, { repo_id: PRIVATE_REPO, issue_number: 1 }] }, 'by repository and number')
  t.same((await app.as('bob', { url })).json(), { issues: [{ repo_id: REPO, issue_number: 1 }, { repo_id: REPO, issue_number: 3 }] }, 'not the issue bob cannot read')
  t.same((await app.as('bob', { url: `/p2/sprints/${next.id}/issues` })).json(), { issues: [] })
  t.equal((await app.as('dave', { url })).statusCode, 404, 'a sprint of a workspace you cannot read is not there')
  t.equal((await app.as('alice', { url: '/p2/sprints/ffffffffffffffffffffffff/issues' })).statusCode, 404)
  t.equal((await app.as('alice', { url: '/p2/sprints/not-an-id/issues' })).statusCode, 404)
})

t.test('closed issues are read through their own index, not every issue of the repositories (SQLite\'s plans)', async (t) => {
  const file = join(t.testdir(), 'closed.db')
  const store = await openSqliteStore(file)
  t.teardown(async () => await store.close())
  // Every statement the reads below run, with its values.
  const ran: Array<{ sql: string, values: unknown[] }> = []
  const prepare = Database.prototype.prepare
  Database.prototype.prepare = function (this: Database.Database, source: string) {
    const statement = prepare.call(this, source)
    for (const name of ['all', 'get', 'run', 'iterate'] as const) {
      const original = statement[name] as (...values: unknown[]) => unknown
      Object.assign(statement, { [name]: (...values: unknown[]) => { ran.push({ sql: source, values }); return original.apply(statement, values) } })
    }
    return statement
  } as typeof prepare
  try {
    const boards = createBoardReads(store.db)
    const graph = createGraphReads(store.db)
    const f = { repoIds: [REPO, OTHER_REPO] }
    await boards.closedCount(REPO)
    await boards.closed(REPO, 10)
    await boards.closed(REPO, 10, 5)
    await graph.closedCounts(WS_OLD, f)
    await graph.closedPage(WS_OLD, f, { limit: 10, fromEnd: false })
  } finally {
    Database.prototype.prepare = prepare
  }
  t.equal(ran.length, 5)
  const raw = new Database(file, { readonly: true })
  t.teardown(() => raw.close())
  for (const { sql, values } of ran) {
    const plan = (raw.prepare(`EXPLAIN QUERY PLAN ${sql}`).all(...values) as Array<{ detail: string }>).map((r) => r.detail).join(' | ')
    t.match(plan, /SEARCH i(ssues)? USING (COVERING )?INDEX issues_closed \(repo_id=\?/, `${sql.slice(0, 60)}…: ${plan}`)
  }
})
