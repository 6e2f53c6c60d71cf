import t from 'tap'
import { build, REPO, OTHER_REPO, PRIVATE_REPO, WS_OLD } from './helper.js'

// bob can read REPO and OTHER_REPO; PRIVATE_REPO is alice's alone: bob must see no trace of it.
const ref = (repo: number, n: number) => ({ repo_id: repo, issue_number: n })
const dep = (a: [number, number], b: [number, number]) => ({ blocking: ref(...a), blocked: ref(...b) })

t.test('workspace lists name only readable repositories', async (t) => {
  const app = await build(t)
  const [oldest] = (await app.as('bob', { url: `/p2/repositories/${REPO}/workspaces` })).json()
  t.equal(oldest.id, WS_OLD)
  t.same(oldest.repositories, [REPO, OTHER_REPO], 'the private repository is left out')
  t.same((await app.as('alice', { url: `/p2/repositories/${REPO}/workspaces` })).json()[0].repositories, [REPO, OTHER_REPO, PRIVATE_REPO])
})

t.test('release reports list only readable repositories', async (t) => {
  const app = await build(t)
  const created = await app.as('alice', {
    method: 'POST',
    url: `/p1/repositories/${REPO}/reports/release`,
    payload: { title: 'R', start_date: '2026-01-01T00:00:00Z', desired_end_date: '2026-02-01T00:00:00Z', repositories: [PRIVATE_REPO] }
  })
  t.same(created.json().repositories, [REPO, PRIVATE_REPO])
  const seen = await app.as('bob', { url: `/p1/reports/release/${created.json().release_id}` })
  t.equal(seen.statusCode, 200)
  t.same(seen.json().repositories, [REPO])
  const edited = await app.as('bob', { method: 'PATCH', url: `/p1/reports/release/${created.json().release_id}`, payload: { title: 'R2' } })
  t.same(edited.json().repositories, [REPO])
})

t.test('a dependency refused through an unreadable repository does not say why', async (t) => {
  const app = await build(t)
  t.equal((await app.as('alice', { method: 'POST', url: '/p1/dependencies', payload: dep([REPO, 1], [PRIVATE_REPO, 1]) })).statusCode, 200)
  t.equal((await app.as('alice', { method: 'POST', url: '/p1/dependencies', payload: dep([PRIVATE_REPO, 1], [REPO, 2]) })).statusCode, 200)
  const hidden = await app.as('bob', { method: 'POST', url: '/p1/dependencies', payload: dep([REPO, 2], [REPO, 1]) })
  t.equal(hidden.statusCode, 400)
  t.equal(hidden.json().message, 'this dependency is refused')
  const open = await app.as('alice', { method: 'POST', url: '/p1/dependencies', payload: dep([REPO, 2], [REPO, 1]) })
  t.match(open.json().message, /would create a cycle/, 'who can see the path is told')
  t.same((await app.as('bob', { url: `/p1/repositories/${REPO}/dependencies` })).json(), { dependencies: [] }, 'and nothing was written')
})

t.test('an epic loop through an unreadable repository does not say why', async (t) => {
  const app = await build(t)
  const convert = async (login: 'alice' | 'bob', repo: number, n: number, issues: object[]) =>
    await app.as(login, { method: 'POST', url: `/p1/repositories/${repo}/issues/${n}/convert_to_epic`, payload: { issues } })
  t.equal((await convert('alice', PRIVATE_REPO, 1, [ref(REPO, 3)])).statusCode, 200)
  t.equal((await convert('alice', REPO, 4, [ref(PRIVATE_REPO, 1)])).statusCode, 200)
  t.equal((await convert('alice', REPO, 3, [])).statusCode, 200)
  const update = async (login: 'alice' | 'bob') =>
    await app.as(login, { method: 'POST', url: `/p1/repositories/${REPO}/epics/3/update_issues`, payload: { add_issues: [ref(REPO, 4)], remove_issues: [] } })
  const hidden = await update('bob')
  t.equal(hidden.statusCode, 400)
  t.equal(hidden.json().message, `adding issue ${REPO}#4 is refused`)
  t.match((await update('alice')).json().message, /would make a loop/)
})
