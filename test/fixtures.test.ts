import t from 'tap'
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { Writable } from 'node:stream'
import { openSqliteFile } from '../db/engine/sqlite.js'
import { openSqliteStore } from '../db/store.js'
import { demoFixturePath, loadFixture, readFixtureFile } from '../services/fixtures.js'
import { build, REPO, testFixture } from './helper.js'

const counts = (db: ReturnType<typeof openSqliteFile>) =>
  ['users', 'repositories', 'issues', 'workspaces', 'pipelines', 'placements', 'milestones', 'permissions']
    .map((table) => (db.prepare(`SELECT count(*) AS n FROM ${table}`).get() as { n: number }).n)

t.test('a fixture loads everything in one go', async (t) => {
  const db = openSqliteFile(':memory:')
  const store = await openSqliteStore(db)
  t.same(await loadFixture(store, testFixture()), {
    users: 4, repositories: 3, milestones: 1, issues: 11, workspaces: 2, issue_events: 0, epics: 0, dependencies: 0, release_reports: 0, zenhub_epics: 0
  })
  const placements = db.prepare('SELECT count(*) AS n FROM placements').get() as { n: number }
  t.equal(placements.n, 11 + 7, 'one placement per issue per workspace holding its repository')
  db.close()
})

t.test('an invalid fixture changes nothing and says where the problem is', async (t) => {
  const db = openSqliteFile(':memory:')
  const store = await openSqliteStore(db)
  const before = counts(db)
  const bad = testFixture()
  ;(bad.issues[8] as { repo_id: number }).repo_id = 777
  await t.rejects(loadFixture(store, bad), { statusCode: 404, message: /issues\[8\]: repository 777 not found/ })
  t.same(counts(db), before, 'all or nothing')

  const unknownLogin = testFixture()
  ;(unknownLogin.repositories[0].permissions as Record<string, string>).zed = 'read'
  await t.rejects(loadFixture(store, unknownLogin), { message: /repositories\[0\]\.permissions: unknown login 'zed'/ })
  await t.rejects(loadFixture(store, { users: [{ login: 'x' }, { login: 'x' }] }), { message: /users\[1\]: login 'x' already exists/ })
  await t.rejects(loadFixture(store, { issues: [{ repo_id: 1, number: 'one', title: 'x' }] }), { message: /\/issues\/0\/number/ })
  await t.rejects(loadFixture(store, { teams: [] }), { message: /invalid fixture/ })
  t.same(counts(db), before)
  db.close()
})

t.test('the admin import answers 400 naming the problem, and 200 with counts', async (t) => {
  const app = await build(t, { fixture: null })
  const bad = await app.admin({ method: 'POST', url: '/admin/import', payload: { workspaces: [{ name: 'x', repositories: [5], pipelines: ['a'] }] } })
  t.equal(bad.statusCode, 400)
  t.match(bad.json().message, /workspaces\[0\]: repository 5 does not exist/)
  const ok = await app.admin({ method: 'POST', url: '/admin/import', payload: testFixture() })
  t.equal(ok.statusCode, 200)
  t.equal(ok.json().issues, 11)
  t.equal((await app.admin({ method: 'POST', url: '/admin/import', payload: testFixture() })).statusCode, 409, 'merging the same users twice conflicts')
})

t.test('SEED_FILE fills an empty database at start-up, and only an empty one', async (t) => {
  const dir = t.testdir({})
  const seed = join(dir, 'seed.json')
  writeFileSync(seed, JSON.stringify(testFixture()))
  const database = join(dir, 'planning.db')
  const first = await build(t, { database, seedFile: seed, fixture: null })
  t.equal((await first.as('alice', { url: `/p1/repositories/${REPO}/issues/1` })).statusCode, 200)
  await first.close()
  const again = await build(t, { database, seedFile: seed, fixture: null })
  t.equal((await again.as('alice', { url: `/p1/repositories/${REPO}/issues/1` })).statusCode, 200, 'a second start does not load it twice')
})

t.test('a broken SEED_FILE stops start-up with a clear message', async (t) => {
  const dir = t.testdir({ 'seed.json': '{"users": [' })
  await t.rejects(build(t, { seedFile: join(dir, 'seed.json'), fixture: null }), /not valid JSON/)
})

t.test('the bundled demo is valid and realistic', async (t) => {
  const demo = readFixtureFile(demoFixturePath())
  t.equal(demo.repositories?.length, 2)
  t.equal(demo.workspaces?.length, 2)
  t.ok((demo.issues?.length ?? 0) >= 25)
  t.ok(demo.issues?.some((i) => i.state === 'closed'))
  t.ok((demo.milestones?.length ?? 0) >= 1)
  const lines: string[] = []
  const app = await build(t, { demo: true, fixture: null, publicUrl: 'http://planning.test', logLevel: 'info', logStream: new Writable({ write (chunk, _enc, done) { lines.push(String(chunk)); done() } }) })
  const logged = lines.map((l) => JSON.parse(l).msg as string).find((m) => m.startsWith('try it: curl'))
  t.match(logged, /' http:\/\/planning\.test\/p1\/repositories\/103707262\/board$/, 'a ready-to-paste curl line is logged, on publicUrl')
  const token = /X-Authentication-Token: ([^']+)'/.exec(logged ?? '')?.[1] ?? ''
  const board = await app.inject({ url: '/p1/repositories/103707262/board', headers: { 'x-authentication-token': token } })
  t.equal(board.statusCode, 200, 'the logged demo token works')
  const issues = board.json().pipelines.flatMap((p: { issues: unknown[] }) => p.issues)
  t.ok(issues.length >= 10)
  t.ok(board.json().pipelines.filter((p: { issues: unknown[] }) => p.issues.length > 0).length >= 3, 'issues across pipelines')
  // Lived in: every feature has something to show.
  const read = async (url: string) => { const r = await app.inject({ url, headers: { 'x-authentication-token': token } }); t.equal(r.statusCode, 200, url); return r.json() }
  t.ok(demo.issues?.some((i) => (i.labels?.length ?? 0) > 0) && demo.issues?.some((i) => (i.assignees?.length ?? 0) > 0), 'labels and assignees')
  t.ok(demo.milestones?.some((m) => m.start_date !== undefined), 'a milestone start date')
  t.ok((await read('/p1/repositories/103707262/epics')).epic_issues.length >= 1, 'an epic')
  t.ok((await read('/p1/repositories/103707262/dependencies')).dependencies.length >= 2, 'blocking dependencies')
  t.equal((await read('/p1/reports/release/demo-release-v1')).title, 'v1.0', 'a release report')
  const sprints = await read('/p2/workspaces/5d0a7a9741fd098f6b7f58ac/sprints') as Array<{ id: string, issues_total: number }>
  t.ok(sprints.some((s) => s.issues_total > 0), 'a sprint plan with issues in it')
  t.ok((await read('/p2/sprints/demo-sprint-1/burndown')).days.length > 0, 'and a burndown')
})
