import t from 'tap'
import { build, ADMIN_TOKEN, OTHER_REPO, PRIVATE_REPO, REPO, WS_NEW, WS_OLD, P } from './helper.js'

t.test('without ADMIN_TOKEN the admin API is for administrators only: that token is refused', async (t) => {
  const app = await build(t, { adminToken: undefined, fixture: null })
  const res = await app.inject({ url: '/admin/users', headers: { authorization: `Bearer ${ADMIN_TOKEN}` } })
  t.equal(res.statusCode, 401)
  t.equal((await app.inject({ url: '/admin/users' })).statusCode, 401)
})

t.test('a wrong or missing admin token gets 401', async (t) => {
  const app = await build(t, { fixture: null })
  t.equal((await app.inject({ url: '/admin/users' })).statusCode, 401)
  t.equal((await app.inject({ url: '/admin/users', headers: { authorization: 'Bearer wrong' } })).statusCode, 401)
  t.equal((await app.inject({ url: '/admin/users', headers: { 'x-authentication-token': ADMIN_TOKEN } })).statusCode, 401)
})

t.test('users, tokens, repositories and permissions', async (t) => {
  const app = await build(t, { fixture: null })
  const created = await app.admin({ method: 'POST', url: '/admin/users', payload: { login: 'erin' } })
  t.equal(created.statusCode, 201)
  t.match(created.json(), { login: 'erin', id: Number })
  t.equal((await app.admin({ method: 'POST', url: '/admin/users', payload: { login: 'ERIN' } })).statusCode, 409, 'logins are case-insensitive')
  t.equal((await app.admin({ method: 'POST', url: '/admin/users', payload: { login: 'bad login' } })).statusCode, 400)
  t.same((await app.admin({ url: '/admin/users' })).json().map((u: { login: string }) => u.login), ['erin'])

  const token = (await app.admin({ method: 'POST', url: '/admin/users/erin/token' })).json().token as string
  t.equal((await app.admin({ method: 'POST', url: '/admin/users/nobody/token' })).statusCode, 404)

  t.equal((await app.admin({ method: 'POST', url: '/admin/repositories', payload: { id: 55, owner: 'acme', name: 'tools' } })).statusCode, 201)
  t.equal((await app.admin({ method: 'POST', url: '/admin/repositories', payload: { id: 55, owner: 'acme', name: 'other' } })).statusCode, 409)
  const ws = await app.admin({ method: 'POST', url: '/admin/workspaces', payload: { name: 'Tools', repositories: [55], pipelines: ['Inbox', 'Doing'] } })
  t.equal(ws.statusCode, 201)
  t.match(ws.json(), { id: /^[0-9a-f]{24}$/, name: 'Tools', description: null, repositories: [55] })
  t.equal(ws.json().pipelines.length, 2)
  t.match(ws.json().pipelines[0].id, /^[0-9a-f]{24}$/)

  const board = async () => await app.inject({ url: '/p1/repositories/55/board', headers: { 'x-authentication-token': token } })
  t.equal((await board()).statusCode, 404, 'no permission yet')
  t.equal((await app.admin({ method: 'PUT', url: '/admin/repositories/55/permissions/erin', payload: { permission: 'push' } })).statusCode, 200)
  t.equal((await app.admin({ method: 'PUT', url: '/admin/repositories/55/permissions/erin', payload: { permission: 'owner' } })).statusCode, 400)
  t.equal((await board()).statusCode, 200)
  t.equal((await app.admin({ method: 'PUT', url: '/admin/repositories/55/permissions/erin', payload: { permission: 'none' } })).statusCode, 200)
  t.equal((await board()).statusCode, 404, 'permission revoked')
})

t.test('a deleted user\'s id is never given to the next one', async (t) => {
  const app = await build(t)
  const users = (await app.admin({ url: '/admin/users' })).json() as Array<{ id: number, login: string }>
  const newest = users.reduce((a, b) => (b.id > a.id ? b : a))
  t.equal((await app.admin({ method: 'DELETE', url: `/admin/users/${newest.login}` })).statusCode, 204)
  const created = await app.admin({ method: 'POST', url: '/admin/users', payload: { login: 'erin' } })
  t.equal(created.statusCode, 201)
  t.ok(created.json().id > newest.id, `the new user got ${String(created.json().id)}, not ${newest.id} again`)
})

t.test('issues: created into the first pipeline, closed off the board, reopened where they were', async (t) => {
  const app = await build(t)
  const created = await app.admin({ method: 'POST', url: `/admin/repositories/${REPO}/issues`, payload: { number: 50, title: 'New one' } })
  t.equal(created.statusCode, 201)
  t.same(created.json(), { repo_id: REPO, number: 50, title: 'New one', state: 'open' })
  t.equal((await app.admin({ method: 'POST', url: `/admin/repositories/${REPO}/issues`, payload: { number: 50, title: 'again' } })).statusCode, 409)
  t.equal((await app.admin({ method: 'POST', url: '/admin/repositories/424242/issues', payload: { number: 1, title: 'x' } })).statusCode, 404)

  const numbersIn = async (pipeline: string): Promise<number[]> => {
    const board = (await app.as('alice', { url: `/p1/repositories/${REPO}/board` })).json()
    return board.pipelines.find((p: { id: string }) => p.id === pipeline).issues.map((i: { issue_number: number }) => i.issue_number)
  }
  t.ok((await numbersIn(P.todo)).includes(50), 'lands in the first pipeline')
  await app.as('alice', { method: 'POST', url: `/p1/repositories/${REPO}/issues/50/moves`, payload: { pipeline_id: P.doing, position: 'top' } })
  const closed = await app.admin({ method: 'PATCH', url: `/admin/repositories/${REPO}/issues/50`, payload: { state: 'closed', title: 'Renamed' } })
  t.same(closed.json(), { repo_id: REPO, number: 50, title: 'Renamed', state: 'closed' })
  t.notOk((await numbersIn(P.doing)).includes(50), 'closed issues are off the board')
  const data = (await app.as('alice', { url: `/p1/repositories/${REPO}/issues/50` })).json()
  t.equal(data.status, 'closed')
  t.equal(data.pipeline.pipeline_id, P.doing, 'issue data keeps the last pipeline')
  await app.admin({ method: 'PATCH', url: `/admin/repositories/${REPO}/issues/50`, payload: { state: 'open' } })
  t.equal((await numbersIn(P.doing))[0], 50, 'reopened at once into its last place')
  t.equal((await app.admin({ method: 'PATCH', url: `/admin/repositories/${REPO}/issues/50`, payload: {} })).statusCode, 400)
  t.equal((await app.admin({ method: 'PATCH', url: `/admin/repositories/${REPO}/issues/999`, payload: { state: 'open' } })).statusCode, 404)
})

t.test('workspaces: rename, reorder and add pipelines, add and remove repositories', async (t) => {
  const app = await build(t)
  const res = await app.admin({
    method: 'PATCH',
    url: `/admin/workspaces/${WS_OLD}`,
    payload: {
      name: 'Eng',
      description: 'All of it',
      remove_repositories: [REPO],
      pipelines: [{ id: P.done, name: 'Shipped' }, { id: P.todo, name: 'To Do' }, { id: P.doing, name: 'Doing' }, { name: 'Later' }]
    }
  })
  t.equal(res.statusCode, 200)
  t.match(res.json(), { name: 'Eng', description: 'All of it' })
  t.same(res.json().pipelines.map((p: { name: string }) => p.name), ['Shipped', 'To Do', 'Doing', 'Later'])
  t.notOk(res.json().repositories.includes(REPO))
  const missing = await app.admin({ method: 'PATCH', url: `/admin/workspaces/${WS_OLD}`, payload: { pipelines: [{ id: P.done, name: 'x' }] } })
  t.equal(missing.statusCode, 400)
  t.match(missing.json().message, /cannot be removed/)
  t.equal((await app.admin({ method: 'PATCH', url: '/admin/workspaces/nope', payload: { name: 'x' } })).statusCode, 404)
  const unknown = await app.admin({ method: 'PATCH', url: `/admin/workspaces/${WS_OLD}`, payload: { name: 'Renamed', repositories: [REPO] } })
  t.equal(unknown.statusCode, 400, 'a property the admin API does not take is refused, not dropped')
  t.match(unknown.json().message, /^body\/repositories is not a property of this request \(it takes .*add_repositories/)
  t.equal((await app.admin({ url: '/admin/workspaces' })).json().find((w: { id: string }) => w.id === WS_OLD).name, 'Eng', 'and nothing changed')
  t.match((await app.admin({ method: 'POST', url: '/admin/users', payload: { login: 'zed', ['<x>'.repeat(40)]: 1 } })).json().message, /^body\/\?x\?/, 'an odd name is not echoed whole')
  const readd = await app.admin({ method: 'PATCH', url: `/admin/workspaces/${WS_OLD}`, payload: { add_repositories: [REPO] } })
  t.equal(readd.statusCode, 200)
  const board = (await app.as('alice', { url: `/p2/workspaces/${WS_OLD}/repositories/${REPO}/board` })).json()
  t.same(board.pipelines[0].issues.map((i: { issue_number: number }) => i.issue_number), [1, 2, 3, 4, 5, 6],
    're-added repository issues land in the first pipeline (closed #7 stays off)')
})

t.test('deleting a pipeline moves its issues to another one first, each with its event, in one transaction', async (t) => {
  const app = await build(t)
  const board = async () => (await app.as('alice', { url: `/p2/workspaces/${WS_OLD}/repositories/${REPO}/board` })).json() as { pipelines: Array<{ id: string, issues: Array<{ issue_number: number }> }> }
  const numbers = async (id: string) => (await board()).pipelines.find((p) => p.id === id)?.issues.map((i) => i.issue_number)
  await app.as('alice', { method: 'POST', url: `/p1/repositories/${REPO}/issues/1/moves`, payload: { pipeline_id: P.doing, position: 'top' } })
  const before = [...(await numbers(P.doing))!, ...(await numbers(P.todo))!]
  const url = (pipeline: string, destination?: string) => `/admin/workspaces/${WS_OLD}/pipelines/${pipeline}${destination === undefined ? '' : `?destination_pipeline_id=${destination}`}`
  t.equal((await app.admin({ method: 'DELETE', url: url(P.todo) })).statusCode, 400, 'the destination is required')
  t.match((await app.admin({ method: 'DELETE', url: url(P.todo, P.todo) })).json(), { statusCode: 400, message: /another pipeline/ })
  t.match((await app.admin({ method: 'DELETE', url: url(P.todo, P.ideas) })).json(), { statusCode: 400, message: /not a pipeline of workspace/ }, 'another workspace\'s pipeline')
  t.equal((await app.admin({ method: 'DELETE', url: url(P.ideas, P.doing) })).statusCode, 404)
  t.equal((await app.as('bob', { method: 'DELETE', url: url(P.todo, P.doing) })).statusCode, 403, 'administrators only')
  const done = await app.admin({ method: 'DELETE', url: url(P.todo, P.doing) })
  t.equal(done.statusCode, 200, done.body)
  t.notOk(done.json().pipelines.some((p: { id: string }) => p.id === P.todo), 'gone')
  t.same(await numbers(P.doing), before, 'its issues at the end of the destination, in their order')
  const events = (await app.as('alice', { url: `/p1/repositories/${REPO}/issues/2/events` })).json() as Array<{ type: string, from_pipeline?: { name: string }, to_pipeline?: { name: string } }>
  t.match(events.find((e) => e.type === 'transferIssue'), { from_pipeline: { name: 'To Do' }, to_pipeline: { name: 'Doing' } }, 'each move has its event')
  const audit = (await app.admin({ url: '/admin/audit?limit=5' })).json().entries
  t.match(audit[0], { action: 'pipeline.deleted', target: `workspace:${WS_OLD}` })

  // Two administrators at once, each deleting the other's destination: one wins, the other is told why.
  const crossed = await Promise.all([app.admin({ method: 'DELETE', url: url(P.doing, P.done) }), app.admin({ method: 'DELETE', url: url(P.done, P.doing) })])
  t.same(crossed.map((r) => r.statusCode).sort(), [200, 400], crossed.map((r) => r.body).join(' | '))
  t.equal((await board()).pipelines.length, 1, 'one pipeline left, holding every issue')
})

t.test('milestones can be created once', async (t) => {
  const app = await build(t)
  t.equal((await app.admin({ method: 'POST', url: `/admin/repositories/${REPO}/milestones`, payload: { number: 2, title: 'v2' } })).statusCode, 201)
  t.equal((await app.admin({ method: 'POST', url: `/admin/repositories/${REPO}/milestones`, payload: { number: 2, title: 'v2' } })).statusCode, 409)
})

t.test('the fuller admin surface: permissions, issues, milestones, workspaces; revoke, delete', async (t) => {
  const app = await build(t)
  t.same((await app.admin({ url: `/admin/repositories/${REPO}/permissions` })).json(), [
    { login: 'alice', permission: 'admin' }, { login: 'bob', permission: 'write' }, { login: 'carol', permission: 'read' }
  ])
  const issues = (await app.admin({ url: `/admin/repositories/${REPO}/issues` })).json()
  t.same(issues[6], { repo_id: REPO, number: 7, title: 'Closed one', state: 'closed' })
  t.match((await app.admin({ url: `/admin/repositories/${REPO}/milestones` })).json(), [{ repo_id: REPO, number: 1, title: 'v1.0', start_date: null }])
  t.same((await app.admin({ url: '/admin/workspaces' })).json().map((w: { name: string }) => w.name), ['Engineering', 'Roadmap'])
  t.equal((await app.admin({ url: '/admin/repositories/4444/issues' })).statusCode, 404)

  t.equal((await app.admin({ method: 'DELETE', url: '/admin/users/carol/token' })).statusCode, 204)
  t.equal((await app.as('carol', { url: `/p1/repositories/${REPO}/board` })).statusCode, 401, 'a revoked token stops working at once')
  t.equal((await app.admin({ method: 'DELETE', url: '/admin/users/bob' })).statusCode, 204)
  t.equal((await app.as('bob', { url: `/p1/repositories/${REPO}/board` })).statusCode, 401, 'a deleted user\'s token stops working')
  t.equal((await app.admin({ method: 'DELETE', url: '/admin/users/bob' })).statusCode, 404)
  t.equal((await app.admin({ method: 'DELETE', url: `/admin/repositories/${REPO}` })).statusCode, 204)
  t.equal((await app.as('alice', { url: `/p1/repositories/${REPO}/board` })).statusCode, 404, 'the repository is gone')
})

t.test('a repository made without an id lives here only: ids from 2^40 up, several at once all made', async (t) => {
  const app = await build(t, { fixture: null })
  const made = await Promise.all(['one', 'two', 'three', 'four'].map(async (name) => await app.admin({ method: 'POST', url: '/admin/repositories', payload: { owner: 'team', name } })))
  t.same(made.map((r) => r.statusCode), [201, 201, 201, 201])
  const ids = made.map((r) => r.json().id as number).sort((a, b) => a - b)
  t.same(ids, [2 ** 40, 2 ** 40 + 1, 2 ** 40 + 2, 2 ** 40 + 3], 'each its own id, in the local range')
  t.equal((await app.admin({ method: 'POST', url: '/admin/repositories', payload: { owner: 'team', name: 'one' } })).statusCode, 409, 'owner/name taken')
  t.equal((await app.admin({ method: 'POST', url: '/admin/repositories', payload: { id: 7, owner: 'host', name: 'x' } })).statusCode, 201, 'an id given is kept')
  const listed = (await app.admin({ url: '/admin/repositories' })).json() as Array<{ id: number, owner: string, name: string }>
  t.same(listed.map((r) => `${r.id} ${r.owner}/${r.name}`), ['7 host/x', ...ids.map((id, i) => `${id} team/${made.find((r) => r.json().id === id)!.json().name as string}`)].slice(0, 5))
  const ws = await app.admin({ method: 'POST', url: '/admin/workspaces', payload: { name: 'Here', repositories: [ids[0]], pipelines: ['Inbox'] } })
  t.equal(ws.statusCode, 201, 'a workspace may hold it')
})

t.test('a permission on every repository of a workspace, in one transaction', async (t) => {
  const app = await build(t)
  const on = async (repo: number) => ((await app.admin({ url: `/admin/repositories/${repo}/permissions` })).json() as Array<{ login: string, permission: string }>).find((p) => p.login === 'carol')?.permission
  const set = await app.admin({ method: 'PUT', url: `/admin/workspaces/${WS_OLD}/permissions/carol`, payload: { permission: 'write' } })
  t.equal(set.statusCode, 200)
  t.same(set.json(), { workspace_id: WS_OLD, login: 'carol', permission: 'write', repositories: [REPO, OTHER_REPO, PRIVATE_REPO] })
  t.same([await on(REPO), await on(OTHER_REPO), await on(PRIVATE_REPO)], ['write', 'write', 'write'], 'each of its repositories')
  t.equal((await app.admin({ method: 'PUT', url: `/admin/workspaces/${WS_NEW}/permissions/carol`, payload: { permission: 'none' } })).statusCode, 200)
  t.same([await on(REPO), await on(OTHER_REPO)], [undefined, 'write'], 'none takes it away on that workspace\'s repositories only')
  t.equal((await app.admin({ method: 'PUT', url: `/admin/workspaces/${WS_OLD}/permissions/nobody`, payload: { permission: 'read' } })).statusCode, 404)
  t.equal((await app.admin({ method: 'PUT', url: '/admin/workspaces/ffffffffffffffffffffffff/permissions/carol', payload: { permission: 'read' } })).statusCode, 404)
  t.equal((await app.admin({ method: 'PUT', url: `/admin/workspaces/${WS_OLD}/permissions/carol`, payload: { permission: 'owner' } })).statusCode, 400)
  t.equal((await app.as('carol', { method: 'PUT', url: `/admin/workspaces/${WS_OLD}/permissions/carol`, payload: { permission: 'admin' } })).statusCode, 403, 'administrators only')
  t.same([await on(REPO), await on(OTHER_REPO), await on(PRIVATE_REPO)], [undefined, 'write', 'write'], 'the refusals changed nothing')
  const audit = (await app.admin({ url: '/admin/audit?action=permission.set' })).json().entries as Array<{ actor: string, target: string, detail: { fields: unknown } }>
  t.match(audit, [{ actor: 'admin', target: 'user:carol', detail: { fields: { permission: 'none' } } }, { target: 'user:carol', detail: { fields: { permission: 'write' } } }], 'one audit entry a change')
})
