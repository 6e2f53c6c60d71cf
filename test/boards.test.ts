import t from 'tap'
import Database from 'better-sqlite3'
import { build, testFixture, REPO, OTHER_REPO, PRIVATE_REPO, WS_OLD, WS_NEW, P, type App } from './helper.js'

type BoardIssueJson = { issue_number: number, position?: number, estimate?: { value: number }, is_epic: boolean }
type BoardJson = { pipelines: Array<{ id: string, name: string, issues: BoardIssueJson[] }> }

async function board (app: App, url = `/p1/repositories/${REPO}/board`): Promise<BoardJson> {
  const res = await app.as('alice', { url })
  if (res.statusCode !== 200) throw new Error(res.body)
  return res.json()
}
const numbers = (b: BoardJson, pipeline: string) => b.pipelines.find((p) => p.id === pipeline)!.issues.map((i) => i.issue_number)

t.test('workspaces of a repository, oldest first', async (t) => {
  const app = await build(t)
  const res = await app.as('carol', { url: `/p2/repositories/${REPO}/workspaces` })
  t.equal(res.statusCode, 200)
  t.same(res.json(), [
    { id: WS_OLD, name: 'Engineering', description: null, repositories: [REPO] },
    { id: WS_NEW, name: 'Roadmap', description: 'Plans', repositories: [REPO] }
  ])
  t.equal((await app.as('dave', { url: `/p2/repositories/${REPO}/workspaces` })).statusCode, 404)
})

t.test('boards list the repository\'s open issues in board order', async (t) => {
  const app = await build(t)
  await app.as('alice', { method: 'PUT', url: `/p1/repositories/${REPO}/issues/2/estimate`, payload: { estimate: 3 } })
  const b = await board(app)
  t.same(b.pipelines.map((p) => [p.id, p.name]), [[P.todo, 'To Do'], [P.doing, 'Doing'], [P.done, 'Done']])
  t.same(numbers(b, P.todo), [1, 2, 3, 4, 5, 6], 'closed #7 is absent; other repositories are absent')
  t.same(b.pipelines[0].issues[1], { issue_number: 2, is_epic: false, estimate: { value: 3 } })
  t.same(b.pipelines[0].issues[0], { issue_number: 1, is_epic: false }, 'no position before prioritization, no estimate key')
  const p2 = await board(app, `/p2/workspaces/${WS_NEW}/repositories/${REPO}/board`)
  t.same(p2.pipelines.map((p) => p.name), ['Ideas', 'Now'])
  const other = await board(app, `/p2/workspaces/${WS_OLD}/repositories/${OTHER_REPO}/board`)
  t.same(numbers(other, P.todo), [1, 2, 3])
  t.equal((await app.as('alice', { url: `/p2/workspaces/${WS_NEW}/repositories/${OTHER_REPO}/board` })).statusCode, 404, 'repository not in that workspace')
  t.equal((await app.as('alice', { url: `/p2/workspaces/ffffffffffffffffffffffff/repositories/${REPO}/board` })).statusCode, 404)
  t.equal((await app.as('bob', { url: `/p2/workspaces/${WS_OLD}/repositories/${PRIVATE_REPO}/board` })).statusCode, 404)
  const lonely = await app.admin({ method: 'POST', url: '/admin/repositories', payload: { id: 77, owner: 'acme', name: 'lonely' } })
  t.equal(lonely.statusCode, 201)
  await app.admin({ method: 'PUT', url: '/admin/repositories/77/permissions/alice', payload: { permission: 'read' } })
  const none = await app.as('alice', { url: '/p1/repositories/77/board' })
  t.equal(none.statusCode, 404)
  t.match(none.json().message, /in no workspace/)
})

t.test('moves: top, bottom, indexes and numeric strings', async (t) => {
  const app = await build(t)
  const move = async (n: number, pipeline: string, position: unknown, url = `/p1/repositories/${REPO}/issues/${n}/moves`) =>
    await app.as('bob', { method: 'POST', url, payload: { pipeline_id: pipeline, position } })
  const res = await move(3, P.doing, 'top')
  t.equal(res.statusCode, 200)
  t.equal(res.body, '', 'empty body')
  t.notOk(res.headers['content-type'], 'no JSON content type')
  await move(5, P.doing, 'bottom')
  await move(1, P.doing, 1)
  await move(6, P.doing, '0')
  await move(2, P.doing, 99)
  let b = await board(app)
  t.same(numbers(b, P.doing), [6, 3, 1, 5, 2])
  t.same(numbers(b, P.todo), [4])
  await move(2, P.doing, 2)
  await move(6, P.doing, 'bottom')
  b = await board(app)
  t.same(numbers(b, P.doing), [3, 2, 1, 5, 6], 'reorders in the same pipeline keep the others in order')
  const positions = b.pipelines[1].issues.map((i) => i.position!)
  t.ok(positions.every((p) => Number.isSafeInteger(p) && p >= 0), 'positions are non-negative integers')
  t.same([...positions].sort((a, b) => a - b), positions, 'increasing in board order')
  t.notSame(positions, [0, 1, 2, 3, 4], 'positions are not array indexes')

  const p2 = await move(4, P.now, 'top', `/p2/workspaces/${WS_NEW}/repositories/${REPO}/issues/4/moves`)
  t.equal(p2.statusCode, 200)
  t.same(numbers(await board(app, `/p2/workspaces/${WS_NEW}/repositories/${REPO}/board`), P.now), [4])
  t.same(numbers(await board(app), P.todo), [4], 'p2 moves leave the oldest workspace alone')
})

t.test('move refusals', async (t) => {
  const app = await build(t)
  const url = `/p1/repositories/${REPO}/issues/1/moves`
  const cases: Array<[string, unknown, number, RegExp, string?]> = [
    ['unknown pipeline', { pipeline_id: 'nope', position: 'top' }, 400, /pipeline_id nope is not a pipeline of workspace/],
    ['pipeline of another workspace', { pipeline_id: P.now, position: 'top' }, 400, new RegExp(`not a pipeline of workspace ${WS_OLD}`)],
    ['bad word', { pipeline_id: P.doing, position: 'middle' }, 400, /position must be "top", "bottom" or a 0-based index/],
    ['negative index', { pipeline_id: P.doing, position: -1 }, 400, /position/],
    ['negative string', { pipeline_id: P.doing, position: '-1' }, 400, /position/],
    ['fraction', { pipeline_id: P.doing, position: 1.5 }, 400, /position/],
    ['missing position', { pipeline_id: P.doing }, 400, /position/],
    ['missing pipeline', { position: 0 }, 400, /pipeline_id/],
    ['wrong type', { pipeline_id: 5, position: 0 }, 400, /pipeline_id/],
    ['unknown issue', { pipeline_id: P.doing, position: 0 }, 404, /issue 99 not found/, `/p1/repositories/${REPO}/issues/99/moves`],
    ['non-numeric issue', { pipeline_id: P.doing, position: 0 }, 400, /params\/issue_number/, `/p1/repositories/${REPO}/issues/x/moves`],
    ['p2 repository not in workspace', { pipeline_id: P.now, position: 0 }, 404, /does not hold repository/, `/p2/workspaces/${WS_NEW}/repositories/${OTHER_REPO}/issues/1/moves`],
    ['p2 unknown workspace', { pipeline_id: P.now, position: 0 }, 404, /not found/, `/p2/workspaces/nowhere/repositories/${REPO}/issues/1/moves`]
  ]
  for (const [name, payload, status, message, at] of cases) {
    const res = await app.as('alice', { method: 'POST', url: at ?? url, payload: payload as object })
    t.equal(res.statusCode, status, name)
    t.match(res.json().message, message, name)
  }
  t.equal((await app.as('carol', { method: 'POST', url, payload: { pipeline_id: P.doing, position: 0 } })).statusCode, 403)
  t.equal((await app.as('dave', { method: 'POST', url, payload: { pipeline_id: P.doing, position: 0 } })).statusCode, 404)
  t.same(numbers(await board(app), P.todo), [1, 2, 3, 4, 5, 6], 'nothing moved')
})

t.test('any sequence of moves matches a simple list model', async (t) => {
  const app = await build(t, { fixture: null })
  const issues = Array.from({ length: 40 }, (_, i) => ({ repo_id: 5, number: i + 1, title: `#${i + 1}` }))
  const pipelines = ['m1', 'm2', 'm3']
  await app.admin({
    method: 'POST',
    url: '/admin/import',
    payload: {
      users: [{ login: 'alice', token: 'alice-token-123456' }],
      repositories: [{ id: 5, owner: 'o', name: 'model', permissions: { alice: 'write' } }],
      workspaces: [{ name: 'M', repositories: [5], pipelines: pipelines.map((id) => ({ id, name: id })) }],
      issues
    }
  })
  const model: Record<string, number[]> = { m1: issues.map((i) => i.number), m2: [], m3: [] }
  let seed = 42
  const random = (n: number) => { seed = (seed * 1103515245 + 12345) % 2147483648; return seed % n }
  for (let step = 0; step < 300; step++) {
    const number = 1 + random(40)
    const target = pipelines[random(3)]
    const roll = random(10)
    // Many moves to index 1 exhaust the room between two neighbours and force respacing.
    const position: 'top' | 'bottom' | number = roll === 0 ? 'top' : roll === 1 ? 'bottom' : roll < 6 ? 1 : random(45)
    const from = Object.keys(model).find((p) => model[p].includes(number))!
    model[from].splice(model[from].indexOf(number), 1)
    const list = model[target]
    const index = position === 'top' ? 0 : position === 'bottom' ? list.length : Math.min(position, list.length)
    list.splice(index, 0, number)
    const res = await app.inject({
      method: 'POST',
      url: `/p1/repositories/5/issues/${number}/moves`,
      headers: { 'x-authentication-token': 'alice-token-123456' },
      payload: { pipeline_id: target, position: typeof position === 'number' && random(2) === 0 ? String(position) : position }
    })
    if (res.statusCode !== 200) throw new Error(res.body)
  }
  const b = (await app.inject({ url: '/p1/repositories/5/board', headers: { 'x-authentication-token': 'alice-token-123456' } })).json() as BoardJson
  for (const p of pipelines) {
    t.same(numbers(b, p), model[p], `pipeline ${p} matches the model`)
    const positions = b.pipelines.find((x) => x.id === p)!.issues.filter((i) => i.position !== undefined).map((i) => i.position!)
    t.equal(new Set(positions).size, positions.length, 'positions are distinct')
  }
})

t.test('board and issue reads run a fixed number of queries', async (t) => {
  const executed: string[] = []
  const db = new Database(':memory:', { verbose: (sql) => executed.push(String(sql)) })
  const app = await build(t, { database: db })
  t.teardown(() => db.close())
  // A token's first use in a minute writes down last_used_at (docs/sign-in.md, "Tokens"): not part
  // of a read. A write after it empties the caches again.
  await app.as('alice', { url: '/account' })
  await app.as('alice', { method: 'PUT', url: `/p1/repositories/${REPO}/issues/1/estimate`, payload: { estimate: 1 } })
  const count = async (url: string) => {
    executed.length = 0
    const res = await app.as('alice', { url })
    t.equal(res.statusCode, 200)
    return executed.length
  }
  const smallBoard = await count(`/p1/repositories/${REPO}/board`)
  const smallIssue = await count(`/p1/repositories/${REPO}/issues/1`)
  for (let n = 100; n < 160; n++) {
    await app.admin({ method: 'POST', url: `/admin/repositories/${REPO}/issues`, payload: { number: n, title: `n${n}` } })
  }
  await app.as('alice', { method: 'PUT', url: `/p1/repositories/${REPO}/issues/1/estimate`, payload: { estimate: 2 } })
  // The issues were added by writes that name their rows: the board kept in memory reads those only.
  const bigBoard = await count(`/p1/repositories/${REPO}/board`)
  t.ok(bigBoard <= smallBoard, `no more statements with 10x the issues (${bigBoard}, against ${smallBoard} for the first read)`)
  t.equal(await count(`/p1/repositories/${REPO}/issues/1`), smallIssue)
  t.ok(smallBoard <= 8, `board read uses ${smallBoard} statements`)
})

t.test('an unchanged board is served again without reading the rows; any write refreshes it', async (t) => {
  const executed: string[] = []
  const db = new Database(':memory:', { verbose: (sql) => executed.push(String(sql)) })
  const app = await build(t, { database: db })
  t.teardown(() => db.close())
  const reads = async () => {
    executed.length = 0
    const res = await app.as('alice', { url: `/p1/repositories/${REPO}/board` })
    return { board: res.json() as BoardJson, rowReads: executed.filter((sql) => sql.includes('from "placements" as "p" inner join "issues"')).length }
  }
  t.equal((await reads()).rowReads, 1)
  t.equal((await reads()).rowReads, 0, 'nothing written: no row read')
  await app.as('alice', { method: 'PUT', url: `/p1/repositories/${REPO}/issues/6/estimate`, payload: { estimate: 2 } })
  const after = await reads()
  t.equal(after.rowReads, 1, 'a write anywhere refreshes it')
  t.same(after.board.pipelines[0].issues.find((i) => i.issue_number === 6)?.estimate, { value: 2 })
})

t.test('a write by another connection (the admin CLI) refreshes a cached board', async (t) => {
  const { join } = await import('node:path')
  const { runAdminCommand } = await import('../cli/admin.js')
  const database = join(t.testdir({}), 'planning.db')
  const app = await build(t, { database })
  t.same(numbers(await board(app), P.todo), [1, 2, 3, 4, 5, 6])
  await runAdminCommand(database, ['close-issue', String(REPO), '2'])
  t.same(numbers(await board(app), P.todo), [1, 3, 4, 5, 6], 'the closed issue is gone at once')
})

t.test('moves to deep indexes of a large pipeline match a list model, with other writes in between', async (t) => {
  const { join } = await import('node:path')
  const { runAdminCommand } = await import('../cli/admin.js')
  const database = join(t.testdir({}), 'planning.db')
  const app = await build(t, { fixture: null, database })
  const size = 2000
  const token = 'alice-token-123456'
  await app.admin({
    method: 'POST',
    url: '/admin/import',
    payload: {
      users: [{ login: 'alice', token }],
      repositories: [{ id: 5, owner: 'o', name: 'model', permissions: { alice: 'write' } }],
      workspaces: [{ name: 'M', repositories: [5], pipelines: [{ id: 'deep', name: 'Deep' }, { id: 'side', name: 'Side' }] }],
      issues: Array.from({ length: size + 1 }, (_, i) => ({ repo_id: 5, number: i + 1, title: `#${i + 1}` }))
    }
  })
  const model: Record<string, number[]> = { deep: Array.from({ length: size + 1 }, (_, i) => i + 1), side: [] }
  const closed = new Set<number>()
  let seed = 7
  const random = (n: number) => { seed = (seed * 1103515245 + 12345) % 2147483648; return seed % n }
  const check = async (when: string) => {
    const b = (await app.inject({ url: '/p1/repositories/5/board', headers: { 'x-authentication-token': token } })).json() as BoardJson
    t.same(numbers(b, 'deep'), model.deep, `deep pipeline matches the model ${when}`)
    t.same(numbers(b, 'side'), model.side, `side pipeline matches the model ${when}`)
  }
  for (let step = 0; step < 240; step++) {
    const number = 1 + random(size)
    if (closed.has(number)) continue
    const target = random(6) === 0 ? 'side' : 'deep'
    const from = model.deep.includes(number) ? 'deep' : 'side'
    model[from].splice(model[from].indexOf(number), 1)
    const index = random(model[target].length + 2)
    model[target].splice(Math.min(index, model[target].length), 0, number)
    const res = await app.inject({
      method: 'POST',
      url: `/p1/repositories/5/issues/${number}/moves`,
      headers: { 'x-authentication-token': token },
      payload: { pipeline_id: target, position: index }
    })
    if (res.statusCode !== 200) throw new Error(res.body)
    // Writes that are not moves, in this process and in another, between the moves.
    if (step % 40 === 13) await app.inject({ method: 'PUT', url: `/p1/repositories/5/issues/${number}/estimate`, headers: { 'x-authentication-token': token }, payload: { estimate: 3 } })
    if (step % 80 === 71) {
      closed.add(model.deep[1000])
      await runAdminCommand(database, ['close-issue', '5', String(model.deep[1000])])
      model.deep.splice(1000, 1)
    }
    if (step % 60 === 59) await check(`after ${step + 1} moves`)
  }
})

t.test('a move takes a bounded number of statements, whatever the pipeline holds', async (t) => {
  const executed: string[] = []
  const db = new Database(':memory:', { verbose: (sql) => executed.push(String(sql)) })
  const app = await build(t, { database: db })
  t.teardown(() => db.close())
  const move = async (n: number, position: number) => {
    executed.length = 0
    const res = await app.as('alice', { method: 'POST', url: `/p1/repositories/${REPO}/issues/${n}/moves`, payload: { pipeline_id: P.todo, position } })
    t.equal(res.statusCode, 200)
    const begin = executed.findIndex((sql) => /^begin/i.test(sql.trim()))
    return executed.slice(begin + 1).filter((sql) => !/^(commit|rollback)/i.test(sql.trim())).length
  }
  await move(2, 4)
  // The issue with where it stands, the target and the counter in one query, the placement, the
  // planning stamp, the webhooks to tell, the counter bump; the pipeline's order is kept from the last move.
  const count = await move(3, 0)
  t.ok(count <= 5, `a move within a pipeline: ${count} statements in its transaction`)
  t.same(numbers(await board(app), P.todo), [3, 1, 4, 5, 2, 6], 'the moves took effect')
})

t.test('paged boards: every pipeline\'s first rows are the whole board\'s first, each repository\'s own, whatever the pipelines share', async (t) => {
  const app = await build(t)
  // Both repositories' issues share the workspace's pipelines: moved apart and back together, then read in pages.
  for (const [repo, n, pipeline, position] of [[REPO, 4, P.doing, 'top'], [REPO, 2, P.doing, 'bottom'], [OTHER_REPO, 1, P.doing, 'top'], [REPO, 5, P.todo, 0]] as const) {
    const res = await app.as('alice', { method: 'POST', url: `/p2/workspaces/${WS_OLD}/repositories/${repo}/issues/${n}/moves`, payload: { pipeline_id: pipeline, position } })
    t.equal(res.statusCode, 200, res.body)
  }
  for (const repo of [REPO, OTHER_REPO]) {
    const whole = await board(app, `/p2/workspaces/${WS_OLD}/repositories/${repo}/board`)
    for (const limit of [1, 2, 3]) {
      const page = (await app.as('alice', { url: `/p2/workspaces/${WS_OLD}/repositories/${repo}/board?limit=${limit}` })).json()
      t.same(page.pipelines.map((p: any) => [p.id, p.issues.map((i: any) => i.issue_number), p.next_after === null]),
        whole.pipelines.map((p) => [p.id, numbers(whole, p.id).slice(0, limit), numbers(whole, p.id).length <= limit]), `repository ${repo}, limit ${limit}`)
    }
  }
})

t.test('paged boards: each pipeline\'s first rows with its totals, then the next pages by cursor; the whole board unchanged without limit', async (t) => {
  const app = await build(t)
  await app.as('alice', { method: 'PUT', url: `/p1/repositories/${REPO}/issues/2/estimate`, payload: { estimate: 3 } })
  await app.as('alice', { method: 'PUT', url: `/p1/repositories/${REPO}/issues/5/estimate`, payload: { estimate: 2 } })
  const whole = await app.as('alice', { url: `/p1/repositories/${REPO}/board` })
  t.notOk(whole.body.includes('issues_total') || whole.body.includes('next_after'), 'no paging fields without limit')
  const url = `/p2/workspaces/${WS_OLD}/repositories/${REPO}/board`
  const first = await app.as('alice', { url: `${url}?limit=2` })
  t.equal(first.statusCode, 200, first.body)
  t.same(first.json().pipelines.map((p: any) => [p.id, p.issues.map((i: any) => i.issue_number), p.issues_total, p.points_total, p.next_after]), [
    [P.todo, [1, 2], 6, 5, 2], [P.doing, [], 0, 0, null], [P.done, [], 0, 0, null]
  ])
  t.same(first.json().pipelines[0].issues[1], { issue_number: 2, is_epic: false, estimate: { value: 3 } }, 'cards as the whole board has them')
  const pages: number[] = [1, 2]
  let after: number | null = 2
  while (after !== null) {
    const res = await app.as('alice', { url: `${url}?limit=2&pipeline_id=${P.todo}&after=${after}` })
    t.equal(res.statusCode, 200, res.body)
    const [pipeline] = res.json().pipelines
    t.equal(res.json().pipelines.length, 1, 'a next page is one pipeline\'s')
    t.equal(pipeline.issues_total, 6)
    pages.push(...pipeline.issues.map((i: any) => i.issue_number))
    after = pipeline.next_after
  }
  t.same(pages, numbers(whole.json(), P.todo), 'the pages together are the pipeline in board order')
  await app.as('alice', { method: 'POST', url: `/p1/repositories/${REPO}/issues/6/moves`, payload: { pipeline_id: P.doing, position: 'top' } })
  const moved = (await app.as('alice', { url: `${url}?limit=2` })).json()
  t.same(moved.pipelines.map((p: any) => [p.issues.map((i: any) => i.issue_number), p.issues_total]), [[[1, 2], 5], [[6], 1], [[], 0]], 'a move shows at once')
  const oldest = (await app.as('alice', { url: `/p1/repositories/${REPO}/board?limit=1&pipeline_id=${P.doing}` })).json()
  t.same(oldest, { pipelines: [{ id: P.doing, name: 'Doing', issues: [{ issue_number: 6, is_epic: false, position: oldest.pipelines[0].issues[0].position }], issues_total: 1, points_total: 0, next_after: null }] })
  for (const [query, message] of [
    ['after=2', /after needs limit/],
    ['limit=2&after=2', /after needs pipeline_id/],
    [`limit=2&pipeline_id=${P.todo}&after=6`, /issue 6 is not open in pipeline/],
    ['limit=2&pipeline_id=nope', /pipeline_id nope is not a pipeline/],
    ['limit=0', /limit/],
    ['limit=1001', /limit/],
    [`limit=2&pipeline_id=${P.todo}&after=100000000000000000000`, /after/]
  ] as const) {
    const res = await app.as('alice', { url: `${url}?${query}` })
    t.equal(res.statusCode, 400, query)
    t.match(res.json().message, message, query)
  }
  t.equal((await app.as('dave', { url: `/p2/workspaces/${WS_OLD}/repositories/${PRIVATE_REPO}/board?limit=2` })).statusCode, 404, 'no page of a board you cannot read')
})

t.test('paged boards filter on the server: title, labels, assignees, estimate; totals and pages of the filtered rows', async (t) => {
  const hosted: Record<number, object> = {
    2: { labels: [{ name: 'bug', color: null }] },
    3: { labels: [{ name: 'bug', color: null }], assignees: [{ login: 'octo', avatar_url: null }] },
    4: { labels: [{ name: 'ui', color: null }], title: 'Fix 100% of the_login' },
    5: { labels: [{ name: 'bug', color: null }, { name: 'ui', color: null }] },
    6: { assignees: [{ login: 'octo', avatar_url: null }, { login: 'mona', avatar_url: null }] }
  }
  const fixture = testFixture()
  const app = await build(t, { fixture: { ...fixture, issues: fixture.issues.map((i) => i.repo_id === REPO ? { ...i, ...hosted[i.number] } : i) } })
  await app.as('alice', { method: 'PUT', url: `/p1/repositories/${REPO}/issues/2/estimate`, payload: { estimate: 3 } })
  await app.as('alice', { method: 'PUT', url: `/p1/repositories/${REPO}/issues/5/estimate`, payload: { estimate: 2 } })
  const url = `/p2/workspaces/${WS_OLD}/repositories/${REPO}/board`
  const todo = async (query: string) => {
    const res = await app.as('alice', { url: `${url}?${query}` })
    t.equal(res.statusCode, 200, res.body)
    const pipeline = res.json().pipelines.find((p: any) => p.id === P.todo)
    return [pipeline.issues.map((i: any) => i.issue_number), pipeline.issues_total, pipeline.points_total, pipeline.next_after]
  }
  t.same(await todo('limit=1'), [[1], 6, 5, 1], 'unfiltered first')
  t.same(await todo('limit=1&label=bug'), [[2], 3, 5, 2], 'the filtered totals, kept apart from the unfiltered answer')
  t.same(await todo(`limit=1&label=bug&pipeline_id=${P.todo}&after=2`), [[3], 3, 5, 3])
  t.same(await todo(`limit=1&label=bug&pipeline_id=${P.todo}&after=3`), [[5], 3, 5, null], 'paging within the filter')
  t.same(await todo('limit=10&label=bug,ui'), [[2, 3, 4, 5], 4, 5, null], 'any of the labels')
  t.same(await todo('limit=10&label=ui&assignee=octo,mona'), [[], 0, 0, null], 'labels and assignees together')
  t.same(await todo('limit=10&label=bug&assignee=octo'), [[3], 1, 0, null])
  t.same(await todo('limit=10&assignee=mona'), [[6], 1, 0, null])
  t.same(await todo('limit=10&q=ISSUE'), [[1, 2, 3, 5, 6], 5, 5, null], 'title, case-insensitive')
  t.same(await todo(`limit=10&q=${encodeURIComponent('100%')}`), [[4], 1, 0, null])
  t.same(await todo(`limit=10&q=${encodeURIComponent('%')}`), [[4], 1, 0, null], 'wildcards taken literally')
  t.same(await todo('limit=10&q=_'), [[4], 1, 0, null])
  t.same(await todo(`limit=10&q=${encodeURIComponent('#5')}`), [[5], 1, 2, null], 'a number')
  t.same(await todo('limit=10&estimate=set'), [[2, 5], 2, 5, null])
  t.same(await todo('limit=10&estimate=none&label=bug'), [[3], 1, 0, null])
  t.same(await todo('limit=10&estimate=2-2.5'), [[5], 1, 2, null])
  await app.as('alice', { method: 'POST', url: `/p1/repositories/${REPO}/issues/5/moves`, payload: { pipeline_id: P.doing, position: 'top' } })
  const moved = (await app.as('alice', { url: `${url}?limit=10&label=bug` })).json()
  t.same(moved.pipelines.map((p: any) => [p.issues.map((i: any) => i.issue_number), p.issues_total, p.points_total]), [[[2, 3], 2, 3], [[5], 1, 2], [[], 0, 0]], 'a move shows at once')
  const many = Array.from({ length: 21 }, (_, i) => `l${i}`).join(',')
  for (const [query, message] of [
    ['label=bug', /querystring\/label needs limit/],
    ['q=x&format=csv', /querystring\/q needs limit/],
    [`limit=2&label=${many}`, /label/],
    ['limit=2&label=', /label/],
    ['limit=2&assignee=a,,b', /assignee/],
    [`limit=2&assignee=${'a'.repeat(101)}`, /assignee/],
    [`limit=2&q=${'a'.repeat(201)}`, /q/],
    ['limit=2&estimate=big', /estimate/],
    ['limit=2&estimate=1-', /estimate/]
  ] as const) {
    const res = await app.as('alice', { url: `${url}?${query}` })
    t.equal(res.statusCode, 400, query)
    t.match(res.json().message, message, query)
  }
})
