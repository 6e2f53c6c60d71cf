import t from 'tap'
import { setTimeout as sleep } from 'node:timers/promises'
import { build, P, REPO } from './helper.js'

const move = { method: 'POST' as const, url: `/p1/repositories/${REPO}/issues/1/moves`, payload: { pipeline_id: P.doing, position: 'top' } }
const withToken = (token: string) => ({ 'x-authentication-token': token })

t.test('GET /account names the user, the email and the credential', async (t) => {
  const app = await build(t)
  t.equal((await app.admin({ method: 'PATCH', url: '/admin/users/bob', payload: { email: 'Bob@example.com' } })).statusCode, 200)
  const me = await app.as('bob', { url: '/account' })
  t.equal(me.statusCode, 200)
  t.same(me.json(), { id: 2, login: 'bob', email: 'Bob@example.com', administrator: false, has_password: false, permissions: [{ repo_id: 1001, permission: 'write' }, { repo_id: 1002, permission: 'read' }], signed_in_with: { kind: 'legacy', scope: 'write' } })
  t.equal((await app.inject({ url: '/account' })).statusCode, 401)
})

t.test('tokens: made, shown once, listed, used, scoped and revoked', async (t) => {
  const app = await build(t)
  const made = await app.as('bob', { method: 'POST', url: '/account/tokens', payload: { name: 'ci', scope: 'write' } })
  t.equal(made.statusCode, 201)
  const token = made.json().token as string
  t.match(made.json(), { name: 'ci', scope: 'write', expires_at: null, last_used_at: null, legacy: false })
  t.ok(token.length >= 30)

  const listed = (await app.as('bob', { url: '/account/tokens' })).json() as Array<Record<string, unknown>>
  t.same(listed.map((x) => [x.name, x.legacy]), [['ci', false], ['legacy', true]])
  t.notOk(JSON.stringify(listed).includes(token), 'the value is never shown again')

  t.equal((await app.inject({ ...move, headers: withToken(token) })).statusCode, 200, 'a write token writes')
  const me = (await app.inject({ url: '/account', headers: withToken(token) })).json()
  t.same(me.signed_in_with, { kind: 'token', scope: 'write' })
  let used: unknown = null
  for (let i = 0; i < 20 && used === null; i++) {
    used = ((await app.as('bob', { url: '/account/tokens' })).json() as Array<Record<string, unknown>>)[0].last_used_at
    if (used === null) await sleep(25)
  }
  t.type(used, 'string', 'last_used_at is written down')

  const read = (await app.as('bob', { method: 'POST', url: '/account/tokens', payload: { name: 'dashboard', scope: 'read' } })).json().token as string
  t.equal((await app.inject({ url: `/p1/repositories/${REPO}/board`, headers: withToken(read) })).statusCode, 200, 'a read token reads')
  const refused = await app.inject({ ...move, headers: withToken(read) })
  t.equal(refused.statusCode, 403)
  t.match(refused.json().message, /scope read/)
  t.equal((await app.inject({ method: 'POST', url: '/account/tokens', payload: { name: 'x', scope: 'write' }, headers: withToken(read) })).statusCode, 403, 'a read token cannot make a write token')

  const id = made.json().id as string
  t.equal((await app.as('carol', { method: 'DELETE', url: `/account/tokens/${id}` })).statusCode, 404, 'another user\'s token is not found')
  t.equal((await app.as('bob', { method: 'DELETE', url: `/account/tokens/${id}` })).statusCode, 204)
  const gone = await app.inject({ url: `/p1/repositories/${REPO}/board`, headers: withToken(token) })
  t.equal(gone.statusCode, 401, 'a revoked token stops working at the next request')
  t.equal((await app.as('bob', { method: 'DELETE', url: `/account/tokens/${id}` })).statusCode, 404)
})

t.test('bad token requests get clear 4xx answers', async (t) => {
  const app = await build(t)
  const bad = async (payload: Record<string, unknown>) => await app.as('bob', { method: 'POST', url: '/account/tokens', payload })
  t.equal((await bad({ name: 'x', scope: 'admin' })).statusCode, 400)
  t.equal((await bad({ scope: 'read' })).statusCode, 400)
  t.equal((await bad({ name: '', scope: 'read' })).statusCode, 400)
  t.equal((await bad({ name: 'x', scope: 'read', expires_at: 'tomorrow' })).statusCode, 400)
  const past = await bad({ name: 'x', scope: 'read', expires_at: '2001-01-01T00:00:00Z' })
  t.equal(past.statusCode, 400)
  t.match(past.json().message, /future/)
})

t.test('at most 20 tokens per user', async (t) => {
  const app = await build(t)
  const made = await Promise.all(Array.from({ length: 22 }, async (_, i) =>
    await app.as('carol', { method: 'POST', url: '/account/tokens', payload: { name: `t${i}`, scope: 'read' } })))
  t.equal(made.filter((r) => r.statusCode === 201).length, 20)
  const refused = made.find((r) => r.statusCode !== 201)!
  t.equal(refused.statusCode, 409)
  t.match(refused.json().message, /at most 20/)
})

t.test('an expired token gets 401 saying so, even while cached', async (t) => {
  const app = await build(t)
  const expires = new Date(Date.now() + 1500).toISOString()
  const token = (await app.as('bob', { method: 'POST', url: '/account/tokens', payload: { name: 'short', scope: 'read', expires_at: expires } })).json().token as string
  const url = `/p1/repositories/${REPO}/board`
  t.equal((await app.inject({ url, headers: withToken(token) })).statusCode, 200)
  await sleep(Date.parse(expires) - Date.now() + 50)
  const late = await app.inject({ url, headers: withToken(token) })
  t.equal(late.statusCode, 401)
  t.match(late.json().message, /expired/)
})

t.test('admin: a user\'s tokens listed and revoked, the legacy one included; email on users', async (t) => {
  const app = await build(t)
  await app.as('bob', { method: 'POST', url: '/account/tokens', payload: { name: 'laptop', scope: 'write' } })
  const listed = await app.admin({ url: '/admin/users/bob/tokens' })
  t.same((listed.json() as Array<{ name: string }>).map((x) => x.name), ['laptop', 'legacy'])
  t.equal((await app.admin({ method: 'DELETE', url: '/admin/users/bob/tokens/legacy' })).statusCode, 204)
  t.equal((await app.as('bob', { url: '/account' })).statusCode, 401, 'the legacy token stops working')
  t.equal((await app.admin({ method: 'DELETE', url: '/admin/users/bob/tokens/legacy' })).statusCode, 404)
  t.equal((await app.admin({ method: 'DELETE', url: '/admin/users/nobody/tokens/legacy' })).statusCode, 404)
  const token = (await app.admin({ method: 'POST', url: '/admin/users/bob/token' })).json().token as string
  t.equal((await app.inject({ url: '/account', headers: withToken(token) })).json().signed_in_with.kind, 'legacy', 'a new admin-made token works as before')

  const created = await app.admin({ method: 'POST', url: '/admin/users', payload: { login: 'erin', email: 'erin@example.com' } })
  t.equal(created.statusCode, 201)
  t.match(created.json(), { login: 'erin', email: 'erin@example.com' })
  const taken = await app.admin({ method: 'POST', url: '/admin/users', payload: { login: 'frank', email: 'ERIN@example.com' } })
  t.equal(taken.statusCode, 409)
  t.match(taken.json().message, /email/)
  t.equal((await app.admin({ method: 'GET', url: '/admin/users' })).json().find((u: { login: string }) => u.login === 'frank'), undefined, 'nothing half-written')
  t.equal((await app.admin({ method: 'PATCH', url: '/admin/users/erin', payload: { email: 'not an email' } })).statusCode, 400)
  t.equal((await app.admin({ method: 'PATCH', url: '/admin/users/bob', payload: { email: 'erin@example.com' } })).statusCode, 409)
  t.match((await app.admin({ method: 'PATCH', url: '/admin/users/erin', payload: { email: null } })).json(), { email: null })
  t.equal((await app.admin({ method: 'PATCH', url: '/admin/users/bob', payload: { email: 'erin@example.com' } })).statusCode, 200, 'a cleared email is free again')
})

t.test('the fixture takes an email', async (t) => {
  const app = await build(t, { fixture: { users: [{ login: 'gil', token: 'gil-token-1234567', email: 'gil@example.com' }] } })
  t.match((await app.inject({ url: '/account', headers: withToken('gil-token-1234567') })).json(), { login: 'gil', email: 'gil@example.com' })
})
