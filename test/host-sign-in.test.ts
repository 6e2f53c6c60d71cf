import t, { type Test } from 'tap'
import type { LightMyRequestResponse } from 'fastify'
import { runAdminCommand } from '../cli/admin.js'
import { deliver, SECRET } from './deliveries.js'
import { SEALED_PREFIX } from '../db/engine/secret-box.js'
import { sqliteKysely } from '../db/engine/sqlite.js'
import { build, REPO, SECRET_KEY, WS_NEW, type App } from './helper.js'
import { startHostOAuth, type HostPerson } from './host-oauth.js'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

const PUBLIC_URL = 'http://planning.test'
const CLIENT = { id: 'Iv1.fake-client', secret: 'fake-oauth-client-secret-0123456789' }
const github = await startHostOAuth('github', CLIENT)
const gitea = await startHostOAuth('gitea', CLIENT)
t.teardown(async () => { await github.close(); await gitea.close() })

const OCTO: HostPerson = { id: 501, login: 'octo-alice' }
const STRANGER: HostPerson = { id: 777, login: 'stranger' }

async function app (t: Test, signup: 'closed' | 'open' | 'host' = 'closed'): Promise<App> {
  return await build(t, { hosts: { allowPrivate: true }, signIn: { publicUrl: PUBLIC_URL, signup } })
}

async function connect (a: App, kind: 'github' | 'gitea', webUrl: string, oauth = true): Promise<string> {
  const res = await a.admin({
    method: 'POST',
    url: '/admin/connections',
    payload: { kind, web_url: webUrl, secret: SECRET, ...(oauth ? { oauth_client_id: CLIENT.id, oauth_client_secret: CLIENT.secret } : {}) }
  })
  if (res.statusCode !== 201) throw new Error(res.body)
  return res.json().id
}

/** The cookie a login set in the browser, binding its state to it (docs/sign-in.md, "Sessions"). */
const attemptCookie = (start: LightMyRequestResponse): string => {
  const cookie = start.cookies.find((c) => c.name === 'planning_sign_in')
  if (cookie === undefined) throw new Error(`no sign-in cookie (${start.statusCode})`)
  return `planning_sign_in=${cookie.value}`
}
/** A login's state and the cookie that goes with it. */
const begin = async (a: App, connection: string) => {
  const start = await a.inject({ url: `/auth/host/${connection}/login` })
  return { start, state: new URL(String(start.headers.location)).searchParams.get('state')!, cookie: attemptCookie(start) }
}

/** Our login, the host's consent page, and back to our callback (in the same browser: with the login's cookie). */
async function signIn (a: App, host: typeof github, connection: string, as: HostPerson | 'deny') {
  const start = await a.inject({ url: `/auth/host/${connection}/login?return_to=/board` })
  if (start.statusCode !== 303) throw new Error(`login answered ${start.statusCode}: ${start.body}`)
  const callback = host.authorize(String(start.headers.location), as)
  const cookie = attemptCookie(start)
  return { start, callback, cookie, answer: await a.inject({ url: callback.slice(PUBLIC_URL.length), headers: { cookie } }) }
}
const sessionCookie = (answer: LightMyRequestResponse): string => {
  const cookie = answer.cookies.find((c) => c.name === 'planning_session')
  if (cookie === undefined) throw new Error(`no session cookie (${answer.statusCode}: ${answer.body.slice(0, 300)})`)
  return `planning_session=${cookie.value}`
}
const audit = async (a: App) => (await a.admin({ url: '/admin/audit?limit=500' })).json().entries as Array<{ action: string, actor: string, target: string | null, detail: Record<string, unknown> }>

t.test('a connection carries an OAuth app: set, shown as has_oauth, never its secret; the button is offered', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'host-sign-in-'))
  t.teardown(() => rmSync(dir, { recursive: true, force: true }))
  const file = join(dir, 'planning.db')
  const a = await build(t, { database: file, hosts: { allowPrivate: true }, signIn: { publicUrl: PUBLIC_URL } })
  const created = await a.admin({ method: 'POST', url: '/admin/connections', payload: { kind: 'github', web_url: github.webUrl, oauth_client_id: CLIENT.id, oauth_client_secret: CLIENT.secret } })
  t.equal(created.statusCode, 201)
  const id = created.json().id
  t.match(created.json(), { has_oauth: true, oauth_client_id: CLIENT.id, sign_in_callback_path: `/auth/host/${id}/callback` })
  const plain = await connect(a, 'gitea', gitea.webUrl, false)
  t.equal((await a.admin({ method: 'POST', url: '/admin/connections', payload: { kind: 'github', oauth_client_id: 'x' } })).statusCode, 400, 'an id without its secret')

  const listed = await a.admin({ url: '/admin/connections' })
  t.notOk(listed.body.includes(CLIENT.secret), 'the secret is never shown')
  t.same(listed.json().map((c: { has_oauth: boolean }) => c.has_oauth), [true, false])
  const exported = await runAdminCommand(file, ['connections'], undefined, { config: { secretKey: SECRET_KEY } })
  t.match(exported, [{ id, has_oauth: true }])
  const { db } = sqliteKysely(file)
  const stored = await db.selectFrom('connections').select('oauth_client_secret').where('id', '=', id).executeTakeFirstOrThrow()
  await db.destroy()
  t.ok(stored.oauth_client_secret?.startsWith(SEALED_PREFIX), 'sealed at rest')
  t.notOk(stored.oauth_client_secret?.includes(CLIENT.secret))

  t.same((await a.inject({ url: '/auth/providers' })).json(), {
    providers: [{ id: `host:${id}`, name: `Sign in with GitHub (${new URL(github.webUrl).host})`, login_url: `/auth/host/${id}/login` }], token: true
  })
  const half = await a.admin({ method: 'PATCH', url: `/admin/connections/${plain}`, payload: { oauth_client_id: 'only-the-id' } })
  t.equal(half.statusCode, 400)
  t.match(half.json().message, /go together/)
  t.equal((await a.admin({ method: 'PATCH', url: `/admin/connections/${plain}`, payload: {} })).statusCode, 400, 'an empty change')
  const set = await a.admin({ method: 'PATCH', url: `/admin/connections/${plain}`, payload: { oauth_client_id: CLIENT.id, oauth_client_secret: CLIENT.secret } })
  t.equal(set.statusCode, 200)
  t.match(set.json(), { has_oauth: true, has_token: false })
  t.notOk(set.body.includes(CLIENT.secret))
  t.equal((await a.inject({ url: '/auth/providers' })).json().providers.length, 2)
  const cleared = await a.admin({ method: 'PATCH', url: `/admin/connections/${id}`, payload: { oauth_client_id: null, oauth_client_secret: null } })
  t.match(cleared.json(), { has_oauth: false, oauth_client_id: null })
  t.equal((await a.inject({ url: `/auth/host/${id}/login` })).statusCode, 404, 'no sign-in through it any more')
  t.equal((await a.admin({ method: 'PATCH', url: '/admin/connections/000000000000000000000000', payload: { token: null } })).statusCode, 404)
  const updated = (await audit(a)).find((e) => e.action === 'connection.updated')
  t.ok(updated)
  t.notOk(JSON.stringify(await audit(a)).includes(CLIENT.secret), 'the audit log keeps no secret')

  const none = await build(t, { hosts: { allowPrivate: true } })
  await connect(none, 'github', github.webUrl)
  t.same((await none.inject({ url: '/auth/providers' })).json().providers, [], 'without PUBLIC_URL there is no callback to offer')
})

t.test('GitHub-shaped: a linked identity signs in, the session works on /account; state is single-use', async (t) => {
  const a = await app(t)
  const id = await connect(a, 'github', github.webUrl)
  t.equal((await a.admin({ method: 'PUT', url: '/admin/users/alice/identities', payload: { connection_id: id, platform_user_id: OCTO.id } })).statusCode, 200)

  const { start, callback, answer, cookie: attempt } = await signIn(a, github, id, OCTO)
  const sent = new URL(String(start.headers.location))
  t.equal(`${sent.origin}${sent.pathname}`, `${github.webUrl}/login/oauth/authorize`)
  t.equal(sent.searchParams.get('redirect_uri'), `${PUBLIC_URL}/auth/host/${id}/callback`)
  t.equal(sent.searchParams.get('code_challenge_method'), 'S256')
  t.ok(sent.searchParams.get('state'))
  t.equal(answer.statusCode, 303)
  t.equal(answer.headers.location, '/board')
  const cookie = sessionCookie(answer)
  t.match(answer.cookies.find((c) => c.name === 'planning_session'), { httpOnly: true, sameSite: 'Lax' })
  t.match((await a.inject({ url: '/account', headers: { cookie } })).json(), { login: 'alice', signed_in_with: { kind: 'session' } })
  t.equal((await a.inject({ url: `/p1/repositories/${REPO}/board`, headers: { cookie } })).statusCode, 200)
  t.same(github.seen.userAuthorization.slice(-1)[0].split(' ')[0], 'Bearer')
  const sentToken = github.seen.tokenRequests.slice(-1)[0]
  t.match(sentToken, { client_id: CLIENT.id, client_secret: CLIENT.secret, grant_type: 'authorization_code' })
  t.ok(sentToken.code_verifier, 'the PKCE verifier goes with the code')

  const replay = await a.inject({ url: callback.slice(PUBLIC_URL.length), headers: { cookie: attempt } })
  t.equal(replay.statusCode, 400, 'the same state twice')
  t.match(replay.body, /unknown, has expired or was used/)
  const wrong = await a.inject({ url: `/auth/host/${id}/callback?code=abc&state=not-ours` })
  t.equal(wrong.statusCode, 400)
  t.notOk(wrong.cookies.some((c) => c.name === 'planning_session'))

  // A state begun for another connection does not finish on this one.
  const other = await connect(a, 'github', github.webUrl)
  const otherStart = await begin(a, other)
  const elsewhere = github.authorize(String(otherStart.start.headers.location), OCTO)
  t.equal((await a.inject({ url: elsewhere.slice(PUBLIC_URL.length).replace(other, id), headers: { cookie: otherStart.cookie } })).statusCode, 400)

  // The used code again, with a fresh state of ours: the host refuses it (GitHub: 200 with an error).
  const fresh = await begin(a, id)
  const code = new URL(callback).searchParams.get('code')!
  const used = await a.inject({ url: `/auth/host/${id}/callback?code=${code}&state=${encodeURIComponent(fresh.state)}`, headers: { cookie: fresh.cookie } })
  t.equal(used.statusCode, 400)
  t.match(used.body, /the host refused: bad_verification_code/)

  const identities = (await a.admin({ url: `/admin/connections/${id}/identities` })).json()
  t.same(identities, [{ connection_id: id, platform_user_id: OCTO.id, login: OCTO.login, user: 'alice' }], 'the host named the identity')
  const entries = await audit(a)
  t.match(entries.find((e) => e.action === 'sign_in.succeeded'), { actor: 'user:alice', detail: { provider: 'host', connection_id: id, platform_user_id: OCTO.id } })
  t.ok(entries.filter((e) => e.action === 'sign_in.refused').reduce((sum, e) => sum + Number(e.detail.count), 0) >= 3, 'refusals counted')
  t.notOk(JSON.stringify(entries).includes(code), 'no code in the audit log')
})

t.test('login CSRF: a callback URL opened in a browser that did not start the sign-in is refused', async (t) => {
  const a = await app(t)
  const id = await connect(a, 'github', github.webUrl)
  t.equal((await a.admin({ method: 'PUT', url: '/admin/users/alice/identities', payload: { connection_id: id, platform_user_id: OCTO.id } })).statusCode, 200)
  const attacker = await begin(a, id)
  t.match(attacker.start.cookies.find((c) => c.name === 'planning_sign_in'), { httpOnly: true, sameSite: 'Lax', path: '/auth/', maxAge: 600 })
  const callback = github.authorize(String(attacker.start.headers.location), OCTO).slice(PUBLIC_URL.length)
  for (const headers of [{}, { cookie: (await begin(a, id)).cookie }]) {
    const victim = await a.inject({ url: callback, headers })
    t.equal(victim.statusCode, 400)
    t.match(victim.body, /unknown, has expired or was used/)
    t.notOk(victim.cookies.some((c) => c.name === 'planning_session'), 'no session in the victim\'s browser')
  }
  t.match((await audit(a)).find((e) => e.action === 'sign_in.refused'), { detail: { provider: 'host', reason: 'state not started in this browser' } })
  const own = await a.inject({ url: callback, headers: { cookie: attacker.cookie } })
  t.equal(own.statusCode, 303, 'the browser that started it finishes it')
})

t.test('denied at the host, an unknown identity, SIGNUP=open', async (t) => {
  const a = await app(t)
  const id = await connect(a, 'github', github.webUrl)
  const denied = (await signIn(a, github, id, 'deny')).answer
  t.equal(denied.statusCode, 400)
  t.match(denied.body, /did not sign you in \(access_denied\)/)

  const unknown = (await signIn(a, github, id, STRANGER)).answer
  t.equal(unknown.statusCode, 403)
  t.match(unknown.body, /No account here/)
  t.match(unknown.body, /You signed in as stranger/)
  t.notOk(unknown.cookies.some((c) => c.name === 'planning_session'))
  t.match((await audit(a)).find((e) => e.action === 'sign_in.refused'), { target: `host:${id}:${STRANGER.id}`, detail: { reason: 'unknown identity' } })
  t.same((await a.admin({ url: `/admin/connections/${id}/identities` })).json(), [], 'a refused sign-in leaves no identity behind')

  const open = await app(t, 'open')
  const openId = await connect(open, 'github', github.webUrl)
  const made = (await signIn(open, github, openId, STRANGER)).answer
  t.equal(made.statusCode, 303)
  const me = (await open.inject({ url: '/account', headers: { cookie: sessionCookie(made) } })).json()
  t.equal(me.login, 'stranger')
  t.equal((await open.inject({ url: `/p1/repositories/${REPO}/board`, headers: { cookie: sessionCookie(made) } })).statusCode, 404, 'no permissions')
  const again = (await signIn(open, github, openId, STRANGER)).answer
  t.equal((await open.inject({ url: '/account', headers: { cookie: sessionCookie(again) } })).json().id, me.id, 'the same user next time')
})

t.test('Gitea-shaped: PKCE is checked, SIGNUP=host admits collaborators with their host permissions', async (t) => {
  const a = await app(t, 'host')
  const id = await connect(a, 'gitea', gitea.webUrl)
  const tools = { id: 1, name: 'tools', full_name: 'ops/tools', owner: { id: 1, login: 'ops', username: 'ops' }, html_url: `${gitea.webUrl}/ops/tools`, updated_at: '2026-01-01T00:00:00Z' }
  const member = { id: 42, login: 'gitea-dev' }
  const added = await deliver(a, id, 'collaborator', { action: 'added', repository: tools, collaborator: { ...member, username: member.login }, permission: 'write' }, { kind: 'gitea' })
  t.same(added.json(), { result: 'handled' })
  const change = (await audit(a)).find((e) => e.action === 'permission.changed')
  t.match(change, { actor: `host:${id}`, detail: { platform_user_id: 42, from: 'none', to: 'write', user: null } }, 'the host\'s permission change is audited')

  // A code obtained for one attempt, brought back with another attempt's state: its verifier does not match.
  const first = await a.inject({ url: `/auth/host/${id}/login` })
  const second = await begin(a, id)
  const code = new URL(gitea.authorize(String(first.headers.location), member)).searchParams.get('code')!
  const mismatched = await a.inject({ url: `/auth/host/${id}/callback?code=${code}&state=${encodeURIComponent(second.state)}`, headers: { cookie: second.cookie } })
  t.equal(mismatched.statusCode, 400)
  t.match(mismatched.body, /the host refused: invalid_grant/)

  const outsider = (await signIn(a, gitea, id, STRANGER)).answer
  t.equal(outsider.statusCode, 403, 'SIGNUP=host: not a collaborator')
  t.match(outsider.body, /not a collaborator/)

  const admitted = (await signIn(a, gitea, id, member)).answer
  t.equal(admitted.statusCode, 303)
  const cookie = sessionCookie(admitted)
  t.match((await a.inject({ url: '/account', headers: { cookie } })).json(), { login: 'gitea-dev', signed_in_with: { kind: 'session' } })
  const bound = (await a.admin({ url: `/admin/connections/${id}/repositories` })).json()[0].repo_id
  t.same((await a.admin({ url: `/admin/repositories/${bound}/permissions` })).json().find((p: { login: string }) => p.login === 'gitea-dev'),
    { login: 'gitea-dev', permission: 'write' }, 'the host\'s permission applies')
  t.same(gitea.seen.userAuthorization.slice(-1)[0].split(' ')[0], 'Bearer')

  // The host takes the permission back: audited, naming the linked user now.
  await deliver(a, id, 'collaborator', { action: 'removed', repository: tools, collaborator: { ...member, username: member.login } }, { kind: 'gitea' })
  t.match((await audit(a)).find((e) => e.action === 'permission.changed'), { detail: { from: 'write', to: 'none', user: 'gitea-dev' } })
  // The same answer again changes nothing, and writes no entry.
  const count = (await audit(a)).filter((e) => e.action === 'permission.changed').length
  await deliver(a, id, 'collaborator', { action: 'removed', repository: tools, collaborator: { ...member, username: member.login } }, { kind: 'gitea' })
  t.equal((await audit(a)).filter((e) => e.action === 'permission.changed').length, count)
})

t.test('the host cannot be reached, or answers nonsense: a page, never a 500', async (t) => {
  const a = await app(t)
  const id = await connect(a, 'github', 'http://127.0.0.1:9')
  const { state, cookie } = await begin(a, id)
  const answer = await a.inject({ url: `/auth/host/${id}/callback?code=x&state=${encodeURIComponent(state)}`, headers: { cookie } })
  t.equal(answer.statusCode, 400)
  t.match(answer.body, /could not be reached/)
  t.equal((await a.inject({ url: '/auth/host/not-a-connection/login' })).statusCode, 404)

  const closed = await build(t, { signIn: { publicUrl: PUBLIC_URL } })
  const blocked = await connect(closed, 'github', github.webUrl)
  const attempt = await begin(closed, blocked)
  const refused = await closed.inject({ url: `/auth/host/${blocked}/callback?code=x&state=${encodeURIComponent(attempt.state)}`, headers: { cookie: attempt.cookie } })
  t.equal(refused.statusCode, 400, 'the address policy holds: a private host address is refused without HOST_ALLOW_PRIVATE')
})

t.test('the CLI sets and clears a connection\'s OAuth app, the secret from the environment or standard input', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'host-sign-in-'))
  t.teardown(() => rmSync(dir, { recursive: true, force: true }))
  const db = join(dir, 'planning.db')
  const config = { secretKey: SECRET_KEY }
  const made = await runAdminCommand(db, ['connect', 'gitea', '--web-url', gitea.webUrl, '--oauth-client-id', CLIENT.id], undefined, { config, oauthClientSecret: CLIENT.secret }) as { id: string, has_oauth: boolean }
  t.equal(made.has_oauth, true)
  await t.rejects(runAdminCommand(db, ['connect', 'gitea', '--web-url', gitea.webUrl, '--oauth-client-id', CLIENT.id], undefined, { config }), /HOST_OAUTH_CLIENT_SECRET/)
  t.match(await runAdminCommand(db, ['set-oauth', made.id, '--clear'], undefined, { config }), { has_oauth: false })
  const set = await runAdminCommand(db, ['set-oauth', made.id, 'new-client'], undefined, { config, readStdin: async () => 'from-stdin-secret\n' })
  t.match(set, { has_oauth: true, oauth_client_id: 'new-client' })
  t.notOk(JSON.stringify(await runAdminCommand(db, ['connections'], undefined, { config })).includes('from-stdin-secret'))
  await t.rejects(runAdminCommand(db, ['set-oauth', made.id, 'has space'], undefined, { config, oauthClientSecret: 'x' }), /printable/)
})

t.test('from an invite page: the host\'s button returns to it, and an unknown identity joins with SIGNUP closed; not without the invite', async (t) => {
  const a = await app(t)
  const id = await connect(a, 'github', github.webUrl)
  const invite = (await a.as('alice', { method: 'POST', url: '/invites', payload: { workspace_id: WS_NEW, permission: 'read' } })).json()
  const path = `/invite/${String(invite.url).slice(String(invite.url).lastIndexOf('/') + 1)}`
  const login = `/auth/host/${id}/login?return_to=${encodeURIComponent(path)}`
  t.match((await a.inject({ url: path })).body, `<a href="${login}">Sign in with `)
  t.equal((await signIn(a, github, id, STRANGER)).answer.statusCode, 403, 'without the invite, SIGNUP=closed refuses as before')

  const start = await a.inject({ url: login })
  const back = github.authorize(String(start.headers.location), STRANGER)
  const answer = await a.inject({ url: back.slice(PUBLIC_URL.length), headers: { cookie: attemptCookie(start) } })
  t.equal(answer.statusCode, 303, answer.body)
  t.equal(answer.headers.location, `/?board=${WS_NEW}`, 'on the invite\'s board, joined')
  const cookie = sessionCookie(answer)
  t.equal((await a.inject({ url: `/p1/repositories/${REPO}/board`, headers: { cookie } })).statusCode, 200, 'read on the workspace\'s repository')
  t.equal((await a.inject({ url: path, headers: { cookie } })).statusCode, 410, 'the invite is used up')
  const start2 = await a.inject({ url: login })
  const back2 = github.authorize(String(start2.headers.location), { ...STRANGER, id: STRANGER.id + 1, login: 'stranger-two' })
  t.equal((await a.inject({ url: back2.slice(PUBLIC_URL.length), headers: { cookie: attemptCookie(start2) } })).statusCode, 403, 'a second identity through the used invite')
  t.match((await audit(a)).find((e) => e.action === 'user.created'), { target: 'user:stranger', detail: { via: 'host sign-in from an invite' } })
})
