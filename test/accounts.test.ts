import t from 'tap'
import type { LightMyRequestResponse } from 'fastify'
import { build, REPO, testFixture, TOKENS, type App } from './helper.js'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { openSqliteStore } from '../db/store.js'
import { loadFixture } from '../services/fixtures.js'
import { hashPassword, verifyPassword } from '../services/passwords.js'

const PUBLIC_URL = 'http://planning.test'
const origin = { origin: PUBLIC_URL }
const app = async (t: Parameters<typeof build>[0], extra: Parameters<typeof build>[1] = {}): Promise<App> =>
  await build(t, { signIn: { publicUrl: PUBLIC_URL }, ...extra })

const cookieOf = (res: LightMyRequestResponse): string => {
  const cookie = res.cookies.find((c) => c.name === 'planning_session')
  if (cookie === undefined) throw new Error(`no session cookie (${res.statusCode}: ${res.body.slice(0, 200)})`)
  return `planning_session=${cookie.value}`
}
const signIn = async (a: App, login: string, password: string) =>
  await a.inject({ method: 'POST', url: '/auth/password', headers: origin, payload: { login, password } })
const setPassword = async (a: App, login: keyof typeof TOKENS, password: string) => {
  const res = await a.as(login, { method: 'POST', url: '/account/password', payload: { new_password: password } })
  if (res.statusCode !== 204) throw new Error(`could not set the password: ${res.body}`)
}

t.test('passwords: scrypt with salt and parameters, checked in constant time', async (t) => {
  const hash = await hashPassword('correct horse battery')
  t.match(hash, /^scrypt\$16384\$8\$1\$[\w-]+\$[\w-]+$/)
  t.not(await hashPassword('correct horse battery'), hash, 'salted')
  t.ok(await verifyPassword('correct horse battery', hash))
  t.notOk(await verifyPassword('correct horse batterY', hash))
  t.notOk(await verifyPassword('anything', undefined))
  t.notOk(await verifyPassword('anything', 'md5$abc'))
})

t.test('sign in with a password: session cookie, same 401 for a wrong password and an unknown login, Origin rule', async (t) => {
  const a = await app(t)
  const short = await a.as('alice', { method: 'POST', url: '/account/password', payload: { new_password: 'short' } })
  t.equal(short.statusCode, 400)
  t.match(short.json().message, /at least 10 characters/)
  await setPassword(a, 'alice', 'alice-password-1')
  t.equal((await a.as('alice', { url: '/account' })).json().has_password, true)

  const wrong = await signIn(a, 'alice', 'not-her-password')
  const unknown = await signIn(a, 'nobody', 'not-her-password')
  t.equal(wrong.statusCode, 401)
  t.equal(unknown.statusCode, 401)
  t.equal(wrong.json().message, unknown.json().message, 'the answer does not tell whether the login exists')
  t.equal((await signIn(a, 'bob', 'no-password-set')).statusCode, 401, 'a user without a password cannot sign in with one')

  const foreign = await a.inject({ method: 'POST', url: '/auth/password', headers: { origin: 'https://evil.example' }, payload: { login: 'alice', password: 'alice-password-1' } })
  t.equal(foreign.statusCode, 403)
  t.notOk(foreign.cookies.some((c) => c.name === 'planning_session'))

  const ok = await signIn(a, 'ALICE', 'alice-password-1')
  t.equal(ok.statusCode, 200)
  t.same(ok.json(), { id: 1, login: 'alice', administrator: false })
  const set = ok.cookies.find((c) => c.name === 'planning_session')!
  t.match(set, { httpOnly: true, sameSite: 'Lax', path: '/' })
  const cookie = cookieOf(ok)
  t.match((await a.inject({ url: '/account', headers: { cookie } })).json(), { login: 'alice', signed_in_with: { kind: 'session' } })
  t.equal((await a.inject({ url: `/p1/repositories/${REPO}/board`, headers: { cookie } })).statusCode, 200)

  const users = (await a.admin({ url: '/admin/users' })).json() as Array<{ login: string, last_sign_in_at: string | null, administrator: boolean }>
  t.match(users.find((u) => u.login === 'alice'), { administrator: false, last_sign_in_at: /^\d{4}-/ })
  t.match(users.find((u) => u.login === 'bob'), { last_sign_in_at: null })

  t.equal((await a.inject({ method: 'POST', url: '/auth/logout', headers: { cookie, ...origin } })).statusCode, 204)
  t.equal((await a.inject({ url: '/account', headers: { cookie } })).statusCode, 401, 'signed out on the server')

  const audit = (await a.admin({ url: '/admin/audit?limit=100' })).json().entries as Array<{ action: string, target: string, detail: Record<string, unknown> }>
  t.equal(audit.filter((e) => e.action === 'sign_in.refused').length, 3, 'each refusal once')
  t.ok(audit.some((e) => e.action === 'sign_in.succeeded' && e.target === 'user:alice' && e.detail.provider === 'password'))
  t.notOk(JSON.stringify(audit).includes('alice-password-1'), 'never logged')
})

t.test('10 failures in 10 minutes lock the login for 10 minutes: 429 with Retry-After, each wrong password audited, the locked refusals counted', async (t) => {
  const a = await app(t)
  await setPassword(a, 'bob', 'bob-password-12')
  for (let i = 0; i < 10; i++) t.equal((await signIn(a, 'bob', `wrong-${i}-password`)).statusCode, 401)
  const locked = await signIn(a, 'bob', 'bob-password-12')
  t.equal(locked.statusCode, 429, 'even the right password while locked')
  const retry = Number(locked.headers['retry-after'])
  t.ok(retry > 540 && retry <= 600, `Retry-After ${retry}`)
  t.equal((await signIn(a, 'Bob', 'bob-password-12')).statusCode, 429, 'logins compare case-insensitively')
  t.equal((await signIn(a, 'carol', 'whatever-password')).statusCode, 401, 'other logins are not locked')
  const audit = (await a.admin({ url: '/admin/audit?limit=100' })).json().entries as Array<{ action: string, target: string, detail: Record<string, unknown> }>
  const refusals = audit.filter((e) => e.action === 'sign_in.refused' && e.target === 'login:bob')
  t.equal(refusals.length, 10, 'one entry per wrong password')
  t.ok(refusals.every((e) => e.detail.provider === 'password' && e.detail.count === undefined), 'each on its own, not counted per hour like provider callbacks')
  t.match(refusals[0].detail.reason, /locked for 10 minutes/, 'the tenth says it locked the login')
  for (let i = 0; i < 20; i++) await signIn(a, 'bob', 'bob-password-12')
  const after = (await a.admin({ url: '/admin/audit?limit=100' })).json().entries as Array<{ action: string, target: string, detail: Record<string, unknown> }>
  const lockedOut = after.filter((e) => e.action === 'sign_in.locked_out')
  t.equal(lockedOut.length, 1, 'the refusals of a locked login are one counted entry, not one a request')
  t.match(lockedOut[0], { target: 'login:bob', detail: { provider: 'password', reason: 'locked out after too many failures', count: 22 } })
  t.equal(after.filter((e) => e.action === 'sign_in.refused' && e.target === 'login:bob').length, 10, 'and no more refusal entries')
})

t.test('changing a password needs the current one and ends the other sessions', async (t) => {
  const a = await app(t)
  await setPassword(a, 'carol', 'carol-password-1')
  const first = cookieOf(await signIn(a, 'carol', 'carol-password-1'))
  const second = cookieOf(await signIn(a, 'carol', 'carol-password-1'))
  const change = (cookie: string, payload: Record<string, string>) => a.inject({ method: 'POST', url: '/account/password', headers: { cookie, ...origin }, payload })
  t.equal((await change(first, { new_password: 'carol-password-2' })).statusCode, 400, 'current_password required')
  t.match((await change(first, { current_password: 'nope-nope-nope', new_password: 'carol-password-2' })).json().message, /current_password/)
  t.equal((await a.inject({ method: 'POST', url: '/account/password', headers: { cookie: first }, payload: { current_password: 'carol-password-1', new_password: 'carol-password-2' } })).statusCode, 403, 'Origin rule')
  t.equal((await change(first, { current_password: 'carol-password-1', new_password: 'carol-password-2' })).statusCode, 204)
  t.equal((await a.inject({ url: '/account', headers: { cookie: first } })).statusCode, 200, 'this session stays')
  t.equal((await a.inject({ url: '/account', headers: { cookie: second } })).statusCode, 401, 'the other one ended')
  t.equal((await signIn(a, 'carol', 'carol-password-1')).statusCode, 401)
  t.equal((await signIn(a, 'carol', 'carol-password-2')).statusCode, 200)
})

t.test('administrators: set through PATCH, never the last one removed or demoted, may use /admin/* with a session or token', async (t) => {
  const a = await app(t)
  t.equal((await a.as('alice', { url: '/admin/users' })).statusCode, 403, 'not an administrator yet')
  t.equal((await a.admin({ method: 'PATCH', url: '/admin/users/alice', payload: { administrator: true } })).statusCode, 200)
  const users = await a.as('alice', { url: '/admin/users' })
  t.equal(users.statusCode, 200)
  t.match(users.json()[0], { login: 'alice', administrator: true, last_sign_in_at: null })

  t.equal((await a.as('alice', { method: 'PATCH', url: '/admin/users/alice', payload: { administrator: false } })).statusCode, 409, 'the last administrator')
  t.equal((await a.as('alice', { method: 'DELETE', url: '/admin/users/alice' })).statusCode, 409)
  t.equal((await a.as('alice', { method: 'PATCH', url: '/admin/users/bob', payload: {} })).statusCode, 400)
  const made = await a.as('alice', { method: 'PATCH', url: '/admin/users/bob', payload: { administrator: true, email: 'bob@example.com' } })
  t.match(made.json(), { login: 'bob', administrator: true, email: 'bob@example.com' })
  t.equal((await a.as('bob', { method: 'PATCH', url: '/admin/users/alice', payload: { administrator: false } })).statusCode, 200)
  t.equal((await a.as('alice', { url: '/admin/users' })).statusCode, 403, 'demoted at once')
  t.equal((await a.as('carol', { url: '/admin/users' })).statusCode, 403)

  // An administrator's read token reads only; a session writes from this server's pages only.
  const read = (await a.as('bob', { method: 'POST', url: '/account/tokens', payload: { name: 'r', scope: 'read' } })).json().token as string
  t.equal((await a.inject({ url: '/admin/users', headers: { 'x-authentication-token': read } })).statusCode, 200)
  t.equal((await a.inject({ method: 'POST', url: '/admin/users', headers: { 'x-authentication-token': read }, payload: { login: 'erin' } })).statusCode, 403)
  await setPassword(a, 'bob', 'bob-password-12')
  const cookie = cookieOf(await signIn(a, 'bob', 'bob-password-12'))
  t.equal((await a.inject({ method: 'POST', url: '/admin/users', headers: { cookie }, payload: { login: 'erin' } })).statusCode, 403, 'no Origin')
  t.equal((await a.inject({ method: 'POST', url: '/admin/users', headers: { cookie, ...origin }, payload: { login: 'erin' } })).statusCode, 201)

  const audit = (await a.as('bob', { url: '/admin/audit?limit=100' })).json().entries as Array<{ actor: string, action: string, target: string }>
  t.match(audit.find((e) => e.action === 'user.created'), { actor: 'user:bob' }, 'the audit log names the person')
  t.ok(audit.some((e) => e.action === 'user.updated' && e.actor === 'user:alice' && e.target === 'user:bob'))
})

t.test('a repository an administrator makes is theirs to administer; one made with ADMIN_TOKEN is nobody\'s', async (t) => {
  const a = await app(t)
  t.equal((await a.admin({ method: 'PATCH', url: '/admin/users/carol', payload: { administrator: true } })).statusCode, 200)
  const mine = await a.as('carol', { method: 'POST', url: '/admin/repositories', payload: { owner: 'team', name: 'planning' } })
  t.equal(mine.statusCode, 201)
  const theirs = (await a.admin({ method: 'POST', url: '/admin/repositories', payload: { owner: 'team', name: 'other' } })).json()
  const permissions = (await a.as('carol', { url: '/account' })).json().permissions as Array<{ repo_id: number, permission: string }>
  t.match(permissions.find((p) => p.repo_id === mine.json().id), { permission: 'admin' }, 'admin on the one carol made, at once')
  t.notOk(permissions.some((p) => p.repo_id === theirs.id), 'nothing on the one ADMIN_TOKEN made')
  t.same((await a.admin({ url: `/admin/repositories/${theirs.id as number}/permissions` })).json(), [], 'which nobody holds')
})

t.test('without ADMIN_TOKEN administrators still reach /admin/*', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'accounts-'))
  t.teardown(() => { rmSync(dir, { recursive: true, force: true }) })
  const file = join(dir, 'planning.db')
  const store = await openSqliteStore(file)
  await loadFixture(store, testFixture())
  await store.transaction(async (s) => { await s.accounts.setAdministrator(1, true) })
  await store.close()
  const a = await build(t, { database: file, adminToken: undefined, fixture: null })
  t.equal((await a.as('alice', { url: '/admin/users' })).statusCode, 200)
  t.equal((await a.as('bob', { url: '/admin/users' })).statusCode, 403)
  t.equal((await a.inject({ url: '/admin/users' })).statusCode, 401)
})

t.test('with ADMIN_TOKEN set, it still works and administrators too; a removed administrator\'s session and tokens end at once', async (t) => {
  const a = await app(t)
  t.equal((await a.admin({ method: 'PATCH', url: '/admin/users/alice', payload: { administrator: true } })).statusCode, 200)
  t.equal((await a.admin({ method: 'PATCH', url: '/admin/users/bob', payload: { administrator: true } })).statusCode, 200)
  t.equal((await a.as('alice', { url: '/admin/users' })).statusCode, 200)
  await setPassword(a, 'bob', 'bob-password-12')
  const session = cookieOf(await signIn(a, 'bob', 'bob-password-12'))
  const made = (await a.as('bob', { method: 'POST', url: '/account/tokens', payload: { name: 'laptop', scope: 'write' } })).json().token as string
  const board = `/p1/repositories/${REPO}/board`
  t.equal((await a.inject({ url: board, headers: { cookie: session } })).statusCode, 200)
  t.equal((await a.inject({ url: board, headers: { 'x-authentication-token': made } })).statusCode, 200, 'read once, so the credentials are cached')
  t.equal((await a.admin({ method: 'DELETE', url: '/admin/users/bob' })).statusCode, 204)
  t.equal((await a.inject({ url: board, headers: { cookie: session } })).statusCode, 401, 'the removed person\'s session ends at once')
  t.equal((await a.inject({ url: board, headers: { 'x-authentication-token': made } })).statusCode, 401, 'and their token')
  t.equal((await a.inject({ url: board, headers: { 'x-authentication-token': TOKENS.bob } })).statusCode, 401, 'and the token the fixture gave them')
  t.equal((await a.admin({ method: 'DELETE', url: '/admin/users/alice' })).statusCode, 409, 'the last one stays')
  const audit = (await a.admin({ url: '/admin/audit?limit=10' })).json().entries as Array<{ actor: string, action: string }>
  t.equal(audit.find((e) => e.action === 'user.deleted')?.actor, 'admin')
})
