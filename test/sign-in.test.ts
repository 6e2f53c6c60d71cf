import t, { type Test } from 'tap'
import type { LightMyRequestResponse } from 'fastify'
import { setTimeout as sleep } from 'node:timers/promises'
import WebSocket from 'ws'
import { buildApp } from '../app.js'
import { ADMIN_TOKEN, build, buildWithSql, P, REPO, testFixture, TOKENS, WS_NEW, type App } from './helper.js'
import { postgresAnswers, testSchema } from './pg.js'
import { hashToken } from '../db/users.js'
import { Browser, CLIENT, PUBLIC_URL, startProvider } from './oidc-provider.js'

const move = { method: 'POST' as const, url: `/p1/repositories/${REPO}/issues/1/moves`, payload: { pipeline_id: P.doing, position: 'top' } }

const provider = await startProvider()
t.teardown(provider.close)

async function app (t: Test, signIn: Record<string, unknown> = {}): Promise<App> {
  const built = await build(t, {
    signIn: { publicUrl: PUBLIC_URL, oidc: { issuer: provider.issuer, clientId: CLIENT.id, clientSecret: CLIENT.secret, scopes: 'openid profile email' }, oidcLinkByEmail: true, ...signIn }
  })
  await built.admin({ method: 'PATCH', url: '/admin/users/alice', payload: { email: 'alice@example.com' } })
  return built
}

/** The cookie a login set in the browser, binding its state to it (docs/sign-in.md, "Sessions"). */
const attemptCookie = (start: LightMyRequestResponse): string => {
  const cookie = start.cookies.find((c) => c.name === 'planning_sign_in')
  if (cookie === undefined) throw new Error(`no sign-in cookie (${start.statusCode})`)
  return `planning_sign_in=${cookie.value}`
}

/** The whole browser round: our login URL, the provider's pages, back to our callback (with the login's cookie). */
async function signIn (app: App, login: string, browser = new Browser(), returnTo = '/board'): Promise<{ callback: string, answer: LightMyRequestResponse, cookie: string }> {
  const start = await app.inject({ url: `/auth/oidc/login?return_to=${returnTo}` })
  if (start.statusCode !== 303) throw new Error(`login answered ${start.statusCode}: ${start.body}`)
  const callback = await browser.signIn(String(start.headers.location), login)
  const cookie = attemptCookie(start)
  return { callback, cookie, answer: await app.inject({ url: callback.slice(PUBLIC_URL.length), headers: { cookie } }) }
}
const sessionCookie = (answer: LightMyRequestResponse): string => {
  const cookie = answer.cookies.find((c) => c.name === 'planning_session')
  if (cookie === undefined) throw new Error(`no session cookie (${answer.statusCode}: ${answer.body.slice(0, 200)})`)
  return `planning_session=${cookie.value}`
}

/** How the chat's live feed answers an upgrade: its first frame's type, or the HTTP status that refused it. */
async function liveFeed (address: string, headers: Record<string, string>, query = ''): Promise<string> {
  const socket = new WebSocket(`${address.replace('http', 'ws')}/api/v1/ws${query}`, { headers })
  try {
    return await new Promise((resolve, reject) => {
      socket.once('message', (raw) => resolve(String(JSON.parse(String(raw)).type)))
      socket.once('unexpected-response', (_request, response) => resolve(`HTTP ${String(response.statusCode)}`))
      socket.once('error', reject)
    })
  } finally {
    socket.terminate()
  }
}

t.test('the chat live feed: a session cookie alone opens it only from this server\'s pages; a token from anywhere', async (t) => {
  const a = await app(t)
  const cookie = sessionCookie((await signIn(a, 'alice')).answer)
  const address = await a.listen({ host: '127.0.0.1', port: 0 })
  t.equal(await liveFeed(address, { cookie, origin: 'https://evil.example' }), 'HTTP 403', 'a foreign Origin is refused before the upgrade')
  t.equal(await liveFeed(address, { cookie }), 'HTTP 403', 'no Origin at all is refused too, as for writes')
  t.equal(await liveFeed(address, { cookie, origin: PUBLIC_URL }), 'welcome')
  t.equal(await liveFeed(address, { origin: 'https://evil.example' }, `?access_token=${TOKENS.carol}`), 'welcome', 'a token is no ambient credential')
  t.equal(await liveFeed(address, { cookie, origin: 'https://evil.example', 'x-authentication-token': TOKENS.carol }), 'welcome')
  const refused = await a.inject({ url: '/api/v1/ws', headers: { cookie, origin: 'https://evil.example' } })
  t.match(refused.json(), { statusCode: 403, message: `a live feed opened with a session cookie must come from this server's pages (Origin ${new URL(PUBLIC_URL).origin})` })
})

t.test('providers are listed for the board page', async (t) => {
  const a = await app(t)
  t.same((await a.inject({ url: '/auth/providers' })).json(), { providers: [{ id: 'oidc', name: 'Sign in with OpenID Connect', login_url: '/auth/oidc/login' }], token: true })
  const none = await build(t)
  t.same((await none.inject({ url: '/auth/providers' })).json(), { providers: [], token: true })
  t.equal((await none.inject({ url: '/auth/oidc/login' })).statusCode, 404)
})

t.test('the whole code flow: login, consent, callback, session, Origin on writes, logout', async (t) => {
  const a = await app(t)
  const start = await a.inject({ url: '/auth/oidc/login' })
  const sent = new URL(String(start.headers.location))
  t.equal(sent.searchParams.get('code_challenge_method'), 'S256')
  t.ok(sent.searchParams.get('state')); t.ok(sent.searchParams.get('nonce'))
  t.equal(sent.searchParams.get('redirect_uri'), `${PUBLIC_URL}/auth/oidc/callback`)

  const { answer } = await signIn(a, 'alice')
  t.equal(answer.statusCode, 303)
  t.equal(answer.headers.location, '/board')
  const set = answer.cookies.find((c) => c.name === 'planning_session')!
  t.match(set, { httpOnly: true, sameSite: 'Lax', path: '/' })
  t.notOk(set.secure, 'not Secure on an http:// PUBLIC_URL')
  const cookie = sessionCookie(answer)

  const me = await a.inject({ url: '/account', headers: { cookie } })
  t.match(me.json(), { login: 'alice', signed_in_with: { kind: 'session', scope: 'write' } })
  t.equal((await a.inject({ url: `/p1/repositories/${REPO}/board`, headers: { cookie } })).statusCode, 200)

  const foreign = await a.inject({ ...move, headers: { cookie, origin: 'https://evil.example' } })
  t.equal(foreign.statusCode, 403)
  t.match(foreign.json().message, /Origin/)
  t.equal((await a.inject({ ...move, headers: { cookie } })).statusCode, 403, 'no Origin at all is refused too')
  t.equal((await a.inject({ ...move, headers: { cookie, origin: PUBLIC_URL } })).statusCode, 200)

  const probe = await a.inject({ url: '/auth/session', headers: { cookie } })
  t.same(probe.json(), { signed_in: true, user: { id: me.json().id, login: 'alice' }, signed_in_with: { kind: 'session', scope: 'write' } }, 'the session probe names the person')
  t.equal(probe.headers['cache-control'], 'no-store')

  for (const origin of ['https://evil.example', undefined]) {
    const refused = await a.inject({ method: 'POST', url: '/auth/logout', headers: { cookie, ...(origin === undefined ? {} : { origin }) } })
    t.equal(refused.statusCode, 403, `logout from ${origin ?? 'no Origin'} is refused`)
    t.match(refused.json().message, /Origin/)
    t.notOk(refused.cookies.some((c) => c.name === 'planning_session'), 'the cookie is not cleared')
  }
  t.equal((await a.inject({ url: '/account', headers: { cookie } })).statusCode, 200, 'still signed in')
  t.equal((await a.inject({ method: 'POST', url: '/auth/logout', headers: { cookie, origin: PUBLIC_URL } })).statusCode, 204)
  t.equal((await a.inject({ method: 'POST', url: '/auth/logout' })).statusCode, 204, 'without a session: nothing to end')
  const after = await a.inject({ url: '/account', headers: { cookie } })
  t.equal(after.statusCode, 401)
  t.match(after.json().message, /session/)
  const ended = await a.inject({ url: '/auth/session', headers: { cookie } })
  t.equal(ended.statusCode, 200, 'the probe answers 200 after the session ended')
  t.same(ended.json(), { signed_in: false })

  const actions = (await a.admin({ url: '/admin/audit' })).json().entries.map((e: { action: string }) => e.action)
  t.ok(actions.includes('sign_in.succeeded'))
  t.ok(actions.includes('session.ended'))
  t.notOk(JSON.stringify((await a.admin({ url: '/admin/audit?limit=500' })).json()).includes(cookie.split('=')[1]), 'no session id in the audit log')
})

t.test('the session probe answers 200 when nobody is signed in, and names a token\'s user', async (t) => {
  const none = await build(t)
  const anonymous = await none.inject({ url: '/auth/session' })
  t.equal(anonymous.statusCode, 200)
  t.same(anonymous.json(), { signed_in: false })
  t.same((await none.inject({ url: '/auth/session', headers: { cookie: 'planning_session=nothing-like-it' } })).json(), { signed_in: false }, 'an unknown cookie: not signed in')
  t.same((await none.inject({ url: '/auth/session', headers: { 'x-authentication-token': 'not-a-token' } })).json(), { signed_in: false }, 'a refused token: not signed in')
  const alice = await none.as('alice', { url: '/auth/session' })
  t.match(alice.json(), { signed_in: true, user: { login: 'alice' }, signed_in_with: { kind: 'legacy' } })
})

t.test('an expired session is refused', async (t) => {
  const a = await app(t, { sessionMaxDays: 1.5 / 86_400 })
  const cookie = sessionCookie((await signIn(a, 'alice')).answer)
  t.equal((await a.inject({ url: '/account', headers: { cookie } })).statusCode, 200)
  await sleep(1600)
  const late = await a.inject({ url: '/account', headers: { cookie } })
  t.equal(late.statusCode, 401)
  t.match(late.json().message, /ended/)
})

t.test('wrong state, replayed code and a tampered ID token are refused', async (t) => {
  const a = await app(t)
  const wrong = await a.inject({ url: '/auth/oidc/callback?code=abc&state=not-ours' })
  t.equal(wrong.statusCode, 400)
  t.match(wrong.body, /unknown, has expired or was used/)

  const { callback, answer, cookie } = await signIn(a, 'alice')
  t.equal(answer.statusCode, 303)
  const replay = await a.inject({ url: callback.slice(PUBLIC_URL.length), headers: { cookie } })
  t.equal(replay.statusCode, 400, 'the same callback twice: its state is used')
  // The used code with a fresh state of ours: the provider refuses it.
  const freshStart = await a.inject({ url: '/auth/oidc/login' })
  const fresh = new URL(String(freshStart.headers.location)).searchParams.get('state')!
  const code = new URL(callback).searchParams.get('code')!
  const replayed = await a.inject({
    url: `/auth/oidc/callback?code=${encodeURIComponent(code)}&state=${encodeURIComponent(fresh)}&iss=${encodeURIComponent(provider.issuer)}`,
    headers: { cookie: attemptCookie(freshStart) }
  })
  t.equal(replayed.statusCode, 400)
  t.match(replayed.body, /could not be completed/)
  t.notOk(replayed.cookies.some((c) => c.name === 'planning_session'))

  provider.tamper(true)
  try {
    const tampered = (await signIn(a, 'alice')).answer
    t.equal(tampered.statusCode, 400)
    t.match(tampered.body, /did not pass the checks/)
    t.notOk(tampered.cookies.some((c) => c.name === 'planning_session'))
  } finally {
    provider.tamper(false)
  }
  const refused = (await a.admin({ url: '/admin/audit' })).json().entries.filter((e: { action: string }) => e.action === 'sign_in.refused')
  t.ok(refused.reduce((sum: number, e: { detail: { count: number } }) => sum + e.detail.count, 0) >= 3)
})

t.test('anonymous refusals are counted per address and hour into one audit entry', async (t) => {
  const { app: a, sql } = await buildWithSql(t, { signIn: { publicUrl: PUBLIC_URL, oidc: { issuer: provider.issuer, clientId: CLIENT.id, clientSecret: CLIENT.secret, scopes: 'openid' } } })
  const refusals = async () => ((await a.admin({ url: '/admin/audit?limit=500' })).json().entries as Array<{ action: string, address: string, at: string, detail: Record<string, unknown> }>)
    .filter((e) => e.action === 'sign_in.refused')
  for (let i = 0; i < 30; i++) {
    const url = i % 3 === 0 ? '/auth/oidc/callback?code=x&state=nope' : '/auth/oidc/callback?error=access_denied&state=nope'
    t.equal((await a.inject({ url, remoteAddress: '192.0.2.7' })).statusCode, 400)
  }
  await a.inject({ url: '/auth/oidc/callback?code=x', remoteAddress: '192.0.2.8' })
  const rows = await refusals()
  t.equal(rows.length, 2, 'one entry an address')
  const first = rows.find((e) => e.address === '192.0.2.7')!
  t.match(first.detail, { provider: 'oidc', count: 30, reasons: { 'state not started in this browser': 30 } })
  t.match(rows.find((e) => e.address === '192.0.2.8')!.detail, { count: 1 })

  // An hour later, a new entry.
  await sql('UPDATE audit_log SET at = ? WHERE action = ?', [new Date(Date.now() - 3_700_000).toISOString(), 'sign_in.refused'])
  await a.inject({ url: '/auth/oidc/callback?code=x', remoteAddress: '192.0.2.7' })
  const later = (await refusals()).filter((e) => e.address === '192.0.2.7')
  t.same(later.map((e) => e.detail.count), [1, 30], 'the next window counts afresh')
})

t.test('a sign-in under way is stored sealed with its state: no verifier, nonce or return path readable in the database', async (t) => {
  const { app: a, sql } = await buildWithSql(t, {
    signIn: { publicUrl: PUBLIC_URL, oidc: { issuer: provider.issuer, clientId: CLIENT.id, clientSecret: CLIENT.secret, scopes: 'openid profile email' }, oidcLinkByEmail: true }
  })
  await a.admin({ method: 'PATCH', url: '/admin/users/alice', payload: { email: 'alice@example.com' } })
  const start = await a.inject({ url: '/auth/oidc/login?return_to=/invite/pl_inv_secretinvitetoken0123456789' })
  const other = await a.inject({ url: '/auth/oidc/login?return_to=/board' })
  const location = new URL(String(start.headers.location))
  const rows = await sql('SELECT state_hash, provider, code_verifier, nonce, return_to FROM sign_in_attempts')
  t.equal(rows.length, 2)
  const stored = JSON.stringify(rows)
  t.notMatch(stored, 'secretinvitetoken', 'the invite link in return_to is not stored readable')
  t.notMatch(stored, location.searchParams.get('nonce')!, 'nor the nonce')
  t.notMatch(stored, location.searchParams.get('state')!, 'nor the state')
  for (const row of rows) {
    t.equal(row.provider, 'oidc')
    for (const field of ['code_verifier', 'nonce', 'return_to']) t.match(row[field], /^seal:v1:[A-Za-z0-9_-]{40,}$/, field)
  }

  // A field moved from another attempt does not open: that sign-in is refused like an unknown state.
  const mine = hashToken(`state:${location.searchParams.get('state')!}`)
  await sql('UPDATE sign_in_attempts SET return_to = ? WHERE state_hash = ?', [String(rows.find((r) => r.state_hash !== mine)!.return_to), mine])
  const moved = await a.inject({ url: (await new Browser().signIn(String(start.headers.location), 'alice')).slice(PUBLIC_URL.length), headers: { cookie: attemptCookie(start) } })
  t.equal(moved.statusCode, 400)
  t.match(moved.body, /unknown, has expired or was used/)
  t.notOk(moved.cookies.some((c) => c.name === 'planning_session'))
  // Nor does one put there in the clear: a row cannot be downgraded to a plain return path.
  const third = await a.inject({ url: '/auth/oidc/login?return_to=/board' })
  const thirdState = hashToken(`state:${new URL(String(third.headers.location)).searchParams.get('state')!}`)
  await sql('UPDATE sign_in_attempts SET return_to = ? WHERE state_hash = ?', ['https://evil.example/', thirdState])
  const plain = await a.inject({ url: (await new Browser().signIn(String(third.headers.location), 'alice')).slice(PUBLIC_URL.length), headers: { cookie: attemptCookie(third) } })
  t.equal(plain.statusCode, 400, 'a plain-text field refuses the sign-in')
  t.notOk(plain.cookies.some((c) => c.name === 'planning_session'))
  const untouched = await a.inject({ url: (await new Browser().signIn(String(other.headers.location), 'alice')).slice(PUBLIC_URL.length), headers: { cookie: attemptCookie(other) } })
  t.equal(untouched.statusCode, 303, 'the other sign-in finishes')
  t.equal(untouched.headers.location, '/board', 'to its own return path')
  t.ok(untouched.cookies.some((c) => c.name === 'planning_session'))
})

t.test('login CSRF: the callback works only in the browser that started the sign-in', async (t) => {
  const a = await app(t)
  // The attacker starts a sign-in, signs in at the provider as themself, and keeps the callback URL unvisited.
  const start = await a.inject({ url: '/auth/oidc/login?return_to=/board' })
  const set = start.cookies.find((c) => c.name === 'planning_sign_in')
  t.match(set, { httpOnly: true, sameSite: 'Lax', path: '/auth/', maxAge: 600 }, 'a ten-minute cookie for the auth routes only')
  t.notOk(set?.secure, 'not Secure on an http:// PUBLIC_URL')
  const callback = await new Browser().signIn(String(start.headers.location), 'alice')
  // The victim's browser never started that sign-in: no cookie, or the cookie of a sign-in of its own.
  const victim = await a.inject({ url: callback.slice(PUBLIC_URL.length) })
  t.equal(victim.statusCode, 400, 'a state not bound to this browser is refused')
  t.match(victim.body, /unknown, has expired or was used/, 'the same page as an unknown state')
  t.notOk(victim.cookies.some((c) => c.name === 'planning_session'), 'no session is set in the victim\'s browser')
  const own = attemptCookie(await a.inject({ url: '/auth/oidc/login' }))
  const mixed = await a.inject({ url: callback.slice(PUBLIC_URL.length), headers: { cookie: own } })
  t.equal(mixed.statusCode, 400, 'another sign-in\'s cookie does not do either')
  t.notOk(mixed.cookies.some((c) => c.name === 'planning_session'))
  const refused = (await a.admin({ url: '/admin/audit' })).json().entries.filter((e: { action: string }) => e.action === 'sign_in.refused')
  t.match(refused[0], { actor: 'anonymous', detail: { provider: 'oidc', reason: 'state not started in this browser' } })

  // The attacker's own browser still finishes: the refusals above did not use up the state.
  const finished = await a.inject({ url: callback.slice(PUBLIC_URL.length), headers: { cookie: attemptCookie(start) } })
  t.equal(finished.statusCode, 303)
  t.match(finished.cookies.find((c) => c.name === 'planning_sign_in'), { value: '', path: '/auth/' }, 'the sign-in cookie is cleared')
})

t.test('return_to: a path of printable ASCII only, refused at login otherwise (never a 500 at the callback)', async (t) => {
  const a = await app(t)
  for (const bad of ['/board%C4%80', '/board%C3%A9', '//evil.example', '/%5Cevil.example', '/a%20b', 'https://evil.example/']) {
    t.equal((await a.inject({ url: `/auth/oidc/login?return_to=${bad}` })).statusCode, 400, bad)
  }
  const { answer } = await signIn(a, 'alice', new Browser(), '/board%3Fissue%3D1%23c')
  t.equal(answer.statusCode, 303)
  t.equal(answer.headers.location, '/board?issue=1#c')
})

t.test('SIGNUP: closed refuses an unknown identity, open makes a user; linking by verified email only when asked', async (t) => {
  const closed = await app(t, { oidcLinkByEmail: false })
  const refused = (await signIn(closed, 'newcomer')).answer
  t.equal(refused.statusCode, 403)
  t.match(refused.body, /No account here/)
  t.equal((await signIn(closed, 'alice')).answer.statusCode, 403, 'an email match does not link without OIDC_LINK_BY_EMAIL')

  const open = await app(t, { signup: 'open', oidcLinkByEmail: true })
  const made = (await signIn(open, 'newcomer')).answer
  t.equal(made.statusCode, 303)
  const me = (await open.inject({ url: '/account', headers: { cookie: sessionCookie(made) } })).json()
  t.match(me, { login: 'new-comer', email: 'newcomer@example.com' })
  t.equal((await open.inject({ url: `/p1/repositories/${REPO}/board`, headers: { cookie: sessionCookie(made) } })).statusCode, 404, 'a new user has no permissions')
  const again = (await signIn(open, 'newcomer')).answer
  t.equal((await open.inject({ url: '/account', headers: { cookie: sessionCookie(again) } })).json().id, me.id, 'the identity stays linked')

  const linked = (await signIn(open, 'alice')).answer
  t.equal((await open.inject({ url: '/account', headers: { cookie: sessionCookie(linked) } })).json().login, 'alice', 'a verified email links to its user')
  const unverified = (await signIn(open, 'unverified')).answer
  t.equal((await open.inject({ url: '/account', headers: { cookie: sessionCookie(unverified) } })).json().login, 'mallory', 'an unverified email never links')
  const actions = (await open.admin({ url: '/admin/audit?limit=500' })).json().entries.map((e: { action: string }) => e.action)
  t.ok(actions.includes('identity.linked'))
  t.ok(actions.includes('user.created'))
})

t.test('linking by email: an exact match only, and never to a user who has an identity at the issuer already', async (t) => {
  const a = await app(t)
  const other = (await signIn(a, 'alice-case')).answer
  t.equal(other.statusCode, 403, 'an email differing only in case does not link')
  t.match(other.body, /No account here/)
  const first = (await signIn(a, 'alice')).answer
  t.equal((await a.inject({ url: '/account', headers: { cookie: sessionCookie(first) } })).json().login, 'alice', 'the exact match links')
  const twin = (await signIn(a, 'alice-twin')).answer
  t.equal(twin.statusCode, 403, 'another subject of the same issuer with the same email does not get alice')
  t.equal((await signIn(a, 'alice-case')).answer.statusCode, 403)
  const again = (await signIn(a, 'alice')).answer
  t.equal((await a.inject({ url: '/account', headers: { cookie: sessionCookie(again) } })).json().login, 'alice', 'alice herself still signs in')

  const open = await app(t, { signup: 'open' })
  const made = (await signIn(open, 'alice-case')).answer
  t.not((await open.inject({ url: '/account', headers: { cookie: sessionCookie(made) } })).json().login, 'alice', 'with open sign-up: a new user, not alice')
})

t.test('a session made on one instance works on another (PostgreSQL), and logout ends it on both', async (t) => {
  const url = process.env.TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test'
  if (!await postgresAnswers(url)) {
    t.comment(`skipped: no PostgreSQL answers at ${url}`)
    return
  }
  const { schema, drop } = await testSchema(url)
  const oidc = { issuer: provider.issuer, clientId: CLIENT.id, clientSecret: CLIENT.secret, scopes: 'openid profile email' }
  const signInOptions = { publicUrl: PUBLIC_URL, oidc, oidcLinkByEmail: true }
  const options = {
    databaseUrl: url, databaseSchema: schema, databasePoolMax: 2, adminToken: ADMIN_TOKEN, documentation: false as const, signIn: signInOptions
  }
  const a = await buildApp(options) as App
  const b = await buildApp(options)
  t.teardown(async () => {
    await a.close()
    await b.close()
    await drop()
  })
  const admin = { authorization: `Bearer ${ADMIN_TOKEN}` }
  t.equal((await a.inject({ method: 'POST', url: '/admin/import', headers: admin, payload: testFixture() })).statusCode, 200)
  await a.inject({ method: 'PATCH', url: '/admin/users/alice', headers: admin, payload: { email: 'alice@example.com' } })

  const cookie = sessionCookie((await signIn(a, 'alice')).answer)
  t.equal((await b.inject({ url: '/account', headers: { cookie } })).json().login, 'alice', 'instance B serves the session A made')
  t.equal((await b.inject({ ...move, headers: { cookie, origin: PUBLIC_URL } })).statusCode, 200)
  t.equal((await a.inject({ method: 'POST', url: '/auth/logout', headers: { cookie, origin: PUBLIC_URL } })).statusCode, 204)
  t.equal((await b.inject({ url: '/account', headers: { cookie } })).statusCode, 401, 'ended on B at its next request')
})

t.test('an invite page: the providers\' buttons return to it, and an unknown identity joins through it with SIGNUP closed', async (t) => {
  const a = await app(t)
  const invite = (await a.as('alice', { method: 'POST', url: '/invites', payload: { workspace_id: WS_NEW, permission: 'write' } })).json()
  const path = `/invite/${String(invite.url).slice(String(invite.url).lastIndexOf('/') + 1)}`
  const page = await a.inject({ url: path })
  t.match(page.body, `<a href="/auth/oidc/login?return_to=${encodeURIComponent(path)}">Sign in with OpenID Connect</a>`)
  t.match(page.body, /<button type="submit">Join<\/button>/, 'beside Login, Password and Join')

  const { answer } = await signIn(a, 'newcomer', new Browser(), path)
  t.equal(answer.statusCode, 303, answer.body)
  t.equal(answer.headers.location, `/?board=${WS_NEW}`, 'on the invite\'s board, joined')
  const cookie = sessionCookie(answer)
  t.equal((await a.inject({ url: `/p1/repositories/${REPO}/board`, headers: { cookie } })).statusCode, 200, 'the invite\'s permission')
  t.same((await a.admin({ url: `/admin/repositories/${REPO}/permissions` })).json().find((p: { login: string }) => p.login === 'new-comer'), { login: 'new-comer', permission: 'write' })
  t.equal((await a.inject({ url: path, headers: { cookie } })).statusCode, 410, 'the invite is used up')
  const created = (await a.admin({ url: '/admin/audit?action=user.created' })).json().entries
  t.match(created, [{ target: 'user:new-comer', detail: { via: 'oidc sign-in from an invite' } }])
  t.match((await a.admin({ url: '/admin/audit?action=invite.used' })).json().entries, [{ target: 'user:new-comer', detail: { permission: 'write', workspace_id: WS_NEW } }])
})

t.test('an existing user signing in from an invite page is not granted it: "Join as" does that', async (t) => {
  const a = await app(t)
  const invite = (await a.as('alice', { method: 'POST', url: '/invites', payload: { workspace_id: WS_NEW, permission: 'write' } })).json()
  const path = `/invite/${String(invite.url).slice(String(invite.url).lastIndexOf('/') + 1)}`
  const first = await signIn(a, 'newcomer', new Browser(), path)
  t.equal(first.answer.headers.location, `/?board=${WS_NEW}`)
  const second = (await a.as('alice', { method: 'POST', url: '/invites', payload: { workspace_id: WS_NEW, permission: 'admin' } })).json()
  const again = `/invite/${String(second.url).slice(String(second.url).lastIndexOf('/') + 1)}`
  const { answer } = await signIn(a, 'newcomer', new Browser(), again)
  t.equal(answer.headers.location, again, 'back on the invite page, signed in')
  const cookie = sessionCookie(answer)
  t.match((await a.inject({ url: again, headers: { cookie } })).body, /Join as new-comer/, 'still open')
  t.same((await a.admin({ url: `/admin/repositories/${REPO}/permissions` })).json().find((p: { login: string }) => p.login === 'new-comer'), { login: 'new-comer', permission: 'write' })
})

t.test('SIGNUP closed: one invite makes one account through the providers, and none once its maker is gone', async (t) => {
  const a = await app(t)
  const tokenOf = (made: { url: string }): string => `/invite/${made.url.slice(made.url.lastIndexOf('/') + 1)}`
  const path = tokenOf((await a.as('alice', { method: 'POST', url: '/invites', payload: { workspace_id: WS_NEW, permission: 'read' } })).json())
  const logins = async (): Promise<string[]> => (await a.admin({ url: '/admin/users' })).json().map((u: { login: string }) => u.login)
  const before = (await logins()).length
  const first = await signIn(a, 'mallory', new Browser(), path)
  t.equal(first.answer.headers.location, `/?board=${WS_NEW}`)
  t.same((await a.admin({ url: `/admin/repositories/${REPO}/permissions` })).json().find((p: { login: string }) => p.login === 'user'), { login: 'user', permission: 'read' })
  for (const who of ['mallorytwo', 'mallorythree']) {
    const refused = await signIn(a, who, new Browser(), path)
    t.equal(refused.answer.statusCode, 403, `${who} refused`)
    t.match(refused.answer.body, /No account here/)
  }
  t.equal((await logins()).length, before + 1, 'one account, no more')
  t.same((await a.as('alice', { url: `/invites?workspace_id=${WS_NEW}` })).json(), [], 'the invite is used')

  const orphan = tokenOf((await a.as('alice', { method: 'POST', url: '/invites', payload: { workspace_id: WS_NEW, permission: 'write' } })).json())
  t.equal((await a.admin({ method: 'DELETE', url: '/admin/users/alice' })).statusCode, 204)
  t.equal((await signIn(a, 'mallorytwo', new Browser(), orphan)).answer.statusCode, 403, 'its maker is gone')
  t.equal((await logins()).length, before, 'nobody made (alice gone)')
})

t.test('SIGNUP closed without an open invite: no return path, a forged one, or an invite used or expired before the callback, refuses the new identity', async (t) => {
  const { app: a, sql } = await buildWithSql(t, {
    signIn: { publicUrl: PUBLIC_URL, oidc: { issuer: provider.issuer, clientId: CLIENT.id, clientSecret: CLIENT.secret, scopes: 'openid profile email' } }
  })
  t.equal((await signIn(a, 'newcomer')).answer.statusCode, 403, 'as before, without an invite')
  t.equal((await signIn(a, 'newcomer', new Browser(), '/invite/made-up-token')).answer.statusCode, 403, 'a forged invite path is no invite')
  t.equal((await a.inject({ url: '/auth/oidc/login?return_to=//evil.example/invite/x' })).statusCode, 400, 'a path elsewhere is never taken')

  const invite = async () => {
    const made = (await a.as('alice', { method: 'POST', url: '/invites', payload: { workspace_id: WS_NEW, permission: 'read' } })).json()
    return String(made.url).slice(String(made.url).lastIndexOf('/') + 1)
  }
  /** Starts at the invite page's button, does `meanwhile`, then comes back from the provider. */
  const roundAbout = async (token: string, meanwhile: () => Promise<unknown>) => {
    const start = await a.inject({ url: `/auth/oidc/login?return_to=/invite/${token}` })
    const callback = await new Browser().signIn(String(start.headers.location), 'newcomer')
    await meanwhile()
    return await a.inject({ url: callback.slice(PUBLIC_URL.length), headers: { cookie: attemptCookie(start) } })
  }
  const used = await invite()
  const refusedUsed = await roundAbout(used, async () =>
    await a.inject({ method: 'POST', url: '/auth/join', headers: { origin: PUBLIC_URL }, payload: { token: used, login: 'erin', password: 'erin-password-1' } }))
  t.equal(refusedUsed.statusCode, 403, 'the invite was used before the callback')
  t.match(refusedUsed.body, /No account here/)
  const expired = await invite()
  t.equal((await roundAbout(expired, async () => await sql('UPDATE account_links SET expires_at = ?', [Date.now() - 1000]))).statusCode, 403, 'it expired before the callback')
  const logins = (await a.admin({ url: '/admin/users' })).json().map((u: { login: string }) => u.login)
  t.notOk(logins.includes('new-comer'), 'nobody was made')
})
