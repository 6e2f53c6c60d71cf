import t from 'tap'
import { build, type App, OTHER_REPO, PRIVATE_REPO, REPO, testFixture, WS_NEW, WS_OLD } from './helper.js'
import { FAST, hostImported, LOCAL, MOVER, sameAnswers, source, start, until } from './hosted-source.js'

t.test('an import makes every board, epic, dependency, report and start date the same; a second run changes nothing', async (t) => {
  const { app: hosted, url } = await source(t)
  const app = await build(t, { fixture: hostImported(), hosts: LOCAL, hostedImport: FAST })
  const started = await start(app, { api_url: url, token: MOVER, repositories: [REPO, OTHER_REPO], closed_issues: true, issue_events: true })
  t.match(started, { state: 'queued', requests: 0, estimated_requests: 2 * 4 + 2 + 1 + 7 })
  const job = await until(app, started.id)
  t.equal(job.state, 'done', job.error)
  // workspaces (2) + boards (2 + 1) + epic lists (2) + epics (2) + dependencies (2) + report lists (2) + reports (2 × 2)
  // + start dates (2 milestones of REPO; OTHER_REPO, a placeholder, probed: 1 and 2, then 3 to 7 without)
  // + closed issue data (1) + events (7 issues of REPO, then 3 of OTHER_REPO)
  t.equal(job.estimated_requests, 2 + 3 + 2 + 2 + 2 + 2 + 4 + 2 + 7 + 1 + 7 + 3)
  t.equal(job.requests, job.estimated_requests, 'the known number of requests')
  t.match(job, { workspaces: 2, epics: 2, dependencies: 2, release_reports: 2, milestone_start_dates: 2 })
  t.ok(job.issues_placed > 0 && job.estimates >= 2 && job.issue_events > 5)
  t.same(job.warnings, ['milestone 1001/2: no start date could be looked up'], 'a probe that finds nothing is no warning')

  // The placeholder: OTHER_REPO was not here; bob may read it, as on the source.
  t.match((await app.admin({ url: '/admin/repositories' })).json(), [{ id: REPO, owner: 'acme' }, { id: OTHER_REPO, owner: 'unknown', name: String(OTHER_REPO) }])
  t.same((await app.admin({ url: `/admin/repositories/${OTHER_REPO}/issues` })).json().map((i: any) => [i.number, i.title]), [[1, ''], [2, ''], [3, '']], 'issues with the number only')
  await app.admin({ method: 'PUT', url: `/admin/repositories/${OTHER_REPO}/permissions/bob`, payload: { permission: 'read' } })
  const started2 = await app.as('bob', { url: `/p1/repositories/${OTHER_REPO}/milestones/2/start_date` })
  t.equal(started2.statusCode, 200, 'the placeholder\'s milestone came with its start date')
  t.match((await app.admin({ url: `/admin/repositories/${OTHER_REPO}/milestones` })).json(), [{ number: 2, title: '' }], 'made with its number only')
  await sameAnswers(t, hosted, app, true)
  t.notOk((await app.admin({ url: `/admin/repositories/${PRIVATE_REPO}/issues` })).statusCode === 200, 'what was not asked for is not brought')

  // Again, with nothing changed on the hosted side: nothing changes here.
  const everything = { api_url: url, token: MOVER, repositories: [REPO, OTHER_REPO], closed_issues: true, issue_events: true }
  const again = await until(app, (await start(app, everything)).id)
  t.match(again, { state: 'done', workspaces: 0, pipelines: 0, issues_placed: 0, estimates: 0, epics: 0, dependencies: 0, release_reports: 0, milestone_start_dates: 0, issue_events: 0 })
  await sameAnswers(t, hosted, app, true)

  // A change on the hosted side comes over, and only it.
  const move = await hosted.as('alice', { method: 'POST', url: `/p2/workspaces/${WS_OLD}/repositories/${REPO}/issues/6/moves`, payload: { pipeline_id: 'pipe-done', position: 'top' } })
  t.equal(move.statusCode, 200)
  const third = await until(app, (await start(app, { api_url: url, token: MOVER, repositories: [REPO, OTHER_REPO] })).id)
  t.match(third, { state: 'done', issues_placed: 1, epics: 0, release_reports: 0 })
  await sameAnswers(t, hosted, app, false)
})

t.test('an id used here for something else stops that workspace with a warning; the rest goes on', async (t) => {
  const { app: hosted, url } = await source(t, undefined, false)
  const fixture = { ...hostImported(), workspaces: [{ id: WS_NEW, name: 'Ours', repositories: [], pipelines: [{ id: 'our-lane', name: 'Lane' }] }] }
  const app = await build(t, { fixture, hosts: LOCAL, hostedImport: FAST })
  const job = await until(app, (await start(app, { api_url: url, token: MOVER, repositories: [REPO] })).id)
  t.equal(job.state, 'done')
  t.match(job.warnings, [new RegExp(`workspace ${WS_NEW} \\(Roadmap\\): the id is used here by workspace 'Ours'; skipped`)])
  t.equal(job.workspaces, 1)
  const board = async (a: App) => (await a.as('alice', { url: `/p2/workspaces/${WS_OLD}/repositories/${REPO}/board` })).json()
  t.same(await board(app), await board(hosted), 'the other workspace came over')
  t.match((await app.admin({ url: '/admin/workspaces' })).json().find((w: any) => w.id === WS_NEW), { name: 'Ours', repositories: [] }, 'ours is untouched')
})

t.test('a refused token fails the import with a clear message; bad requests are refused', async (t) => {
  const { url } = await source(t, undefined, false)
  const app = await build(t, { fixture: hostImported(), hosts: LOCAL, hostedImport: FAST })
  const job = await until(app, (await start(app, { api_url: url, token: 'not-a-token-at-all', repositories: [REPO] })).id)
  t.match(job, { state: 'failed', error: /refused the token \(401\)/, requests: 1 })
  for (const payload of [{ token: MOVER, repositories: [] }, { token: MOVER, repositories: [REPO], api_url: 'ftp://x' }, { repositories: [REPO] }]) {
    const res = await app.admin({ method: 'POST', url: '/admin/hosted-imports', payload })
    t.equal(res.statusCode, 400, res.body)
  }
  t.equal((await app.admin({ url: '/admin/hosted-imports/nope' })).statusCode, 404)
  t.equal((await app.inject({ method: 'POST', url: '/admin/hosted-imports', payload: { token: MOVER, repositories: [REPO] } })).statusCode, 401)
})

t.test('a board of 1,200 issues comes over whole in a few statements per 500 issues, not several per issue', async (t) => {
  const ws = 'b1gb0a4db0a4db0a4db0a4d1'
  const repo = 880
  const lanes = ['lane-a', 'lane-b', 'lane-c']
  const { app: hosted, url } = await source(t, undefined, false)
  const big = {
    repositories: [{ id: repo, owner: 'acme', name: 'big', permissions: { alice: 'admin', mover: 'read' } }],
    workspaces: [{ id: ws, name: 'Big', description: null, repositories: [repo], pipelines: lanes.map((id) => ({ id, name: id })) }],
    issues: Array.from({ length: 1200 }, (_, i) => ({
      repo_id: repo, number: i + 1, title: `Issue ${i + 1}`, pipelines: { [ws]: lanes[i % 3] }, ...(i % 4 === 0 ? { estimate: 1 + (i % 5) } : {})
    }))
  }
  t.equal((await hosted.admin({ method: 'POST', url: '/admin/import', payload: big })).statusCode, 200)
  // Positions given on the hosted side: ranks to keep.
  for (const [number, position] of [[7, 0], [600, 1], [1199, 0]]) {
    const moved = await hosted.as('alice', { method: 'POST', url: `/p2/workspaces/${ws}/repositories/${repo}/issues/${number}/moves`, payload: { pipeline_id: 'lane-b', position } })
    t.equal(moved.statusCode, 200)
  }

  const sqlite = process.env.TEST_DATABASE_URL === undefined
  const executed: string[] = []
  let database: unknown
  if (sqlite) {
    const { default: Database } = await import('better-sqlite3')
    const db = new Database(':memory:', { verbose: (text) => executed.push(String(text)) })
    t.teardown(() => db.close())
    database = db
  }
  const own = database === undefined ? {} : { database: database as never }
  const app = await build(t, { ...own, fixture: { users: hostImported().users }, hosts: LOCAL, hostedImport: FAST })
  executed.length = 0
  const job = await until(app, (await start(app, { api_url: url, token: MOVER, repositories: [repo] })).id)
  t.equal(job.state, 'done', job.error)
  t.match(job, { workspaces: 1, warnings: [] })
  t.equal(job.estimates, 300, 'every estimate')
  if (sqlite) {
    const writes = executed.filter((s) => /^\s*(insert|update|delete)/i.test(s))
    t.ok(writes.length < 150, `${writes.length} writing statements for 1,200 issues`)
  }
  await app.admin({ method: 'PUT', url: `/admin/repositories/${repo}/permissions/alice`, payload: { permission: 'read' } })
  const board = async (a: App) => (await a.as('alice', { url: `/p2/workspaces/${ws}/repositories/${repo}/board` })).json()
  const theirs = await board(hosted)
  t.equal(theirs.pipelines.reduce((n: number, p: any) => n + p.issues.length, 0), 1200)
  t.same(await board(app), theirs, 'the same board: pipelines, order, positions and estimates')
  const again = await until(app, (await start(app, { api_url: url, token: MOVER, repositories: [repo] })).id)
  t.match(again, { state: 'done', issues_placed: 0, estimates: 0 }, 'a second run changes nothing')
})

t.test('a source naming issues of repositories not imported (epic children, dependency ends, report issues) makes nothing there: left out with a warning, the warnings bounded', async (t) => {
  const { url } = await source(t)
  // The repository the source names in its epic and dependency is here too (a local one, no issues yet).
  const other = testFixture().repositories.find((r) => r.id === OTHER_REPO)!
  const fixture = { ...hostImported(), repositories: [...hostImported().repositories, other] }
  const app = await build(t, { fixture, hosts: LOCAL, hostedImport: { ...FAST, maxWarnings: 2 } })
  const before = (await app.admin({ url: `/admin/repositories/${OTHER_REPO}/issues` })).json().map((i: any) => i.number)
  const job = await until(app, (await start(app, { api_url: url, token: MOVER, repositories: [REPO] })).id)
  t.equal(job.state, 'done', job.error)
  t.same((await app.admin({ url: `/admin/repositories/${OTHER_REPO}/issues` })).json().map((i: any) => i.number), before, 'no issue made in the repository not imported')
  t.match(job.warnings.join('\n'), new RegExp(`epic ${REPO}#1: ${OTHER_REPO}#1 left out \\(repositories not imported\\)`))
  t.match(job.warnings.join('\n'), new RegExp(`dependency ${OTHER_REPO}#2 blocks ${REPO}#4: left out \\(a repository not imported\\)`))
  t.equal(job.warnings.length, 3, 'two kept word for word')
  t.match(job.warnings[2], /^… and \d+ more$/, 'the rest counted')
})
