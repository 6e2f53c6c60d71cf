import t from 'tap'
import type { LightMyRequestResponse } from 'fastify'
import { once } from 'node:events'
import { Writable } from 'node:stream'
import { createServer, type AddressInfo } from 'node:net'
import { join } from 'node:path'
import type { SetupLink } from '../app.js'
import { TEST_DATABASE_URL, testSchema } from './pg.js'
import { postgresKysely } from '../db/engine/postgres.js'
import { sqliteKysely } from '../db/engine/sqlite.js'
import { createUsersRepository } from '../db/users.js'
import { build, buildWithSql, OTHER_REPO, PRIVATE_REPO, REPO, WS_NEW, WS_OLD, type App } from './helper.js'

const PUBLIC_URL = 'http://planning.test'
const origin = { origin: PUBLIC_URL }
const app = async (t: Parameters<typeof build>[0]): Promise<App> => await build(t, { signIn: { publicUrl: PUBLIC_URL } })
const cookieOf = (res: LightMyRequestResponse): string => {
  const cookie = res.cookies.find((c) => c.name === 'planning_session')
  if (cookie === undefined) throw new Error(`no session cookie (${res.statusCode}: ${res.body.slice(0, 300)})`)
  return `planning_session=${cookie.value}`
}
const tokenOf = (url: string): string => url.slice(url.lastIndexOf('/') + 1)

t.test('invites: who may make them, one use, exactly the permission on every repository of the workspace', async (t) => {
  const a = await app(t)
  // alice is admin of every repository of WS_OLD; bob only writes; dave reads nothing there.
  t.equal((await a.as('bob', { method: 'POST', url: '/invites', payload: { workspace_id: WS_OLD, permission: 'read' } })).statusCode, 403)
  t.equal((await a.as('dave', { method: 'POST', url: '/invites', payload: { workspace_id: WS_OLD, permission: 'read' } })).statusCode, 404)
  t.equal((await a.as('alice', { method: 'POST', url: '/invites', payload: { workspace_id: WS_OLD, permission: 'owner' } })).statusCode, 400)
  const made = await a.as('alice', { method: 'POST', url: '/invites', payload: { workspace_id: WS_OLD, permission: 'write', email: 'erin@example.com' } })
  t.equal(made.statusCode, 201)
  const invite = made.json()
  t.match(invite, { id: String, workspace_id: WS_OLD, permission: 'write', email: 'erin@example.com', created_by: 'user:alice' })
  t.match(invite.url, /^http:\/\/planning\.test\/invite\/[\w-]{20,}$/)
  const days = (Date.parse(invite.expires_at) - Date.now()) / 86_400_000
  t.ok(days > 6.9 && days <= 7, '7 days')

  const listed = (await a.as('alice', { url: `/invites?workspace_id=${WS_OLD}` })).json()
  t.equal(listed.length, 1)
  t.notOk('url' in listed[0], 'the link is shown once')
  t.equal((await a.as('bob', { url: `/invites?workspace_id=${WS_OLD}` })).statusCode, 403)

  const token = tokenOf(invite.url)
  const page = await a.inject({ url: `/invite/${token}` })
  t.equal(page.statusCode, 200)
  t.match(page.body, /<label for="field-login">Login<\/label>/)
  t.match(page.body, /<label for="field-password">Password<\/label>/)
  t.match(page.body, /<button type="submit">Join<\/button>/)
  t.match(page.headers['content-security-policy'], /default-src 'none'/)
  t.equal(page.headers['referrer-policy'], 'strict-origin', 'the link (its token) never leaves in a Referer; the form\'s Origin is sent')

  t.equal((await a.inject({ method: 'POST', url: '/auth/join', payload: { token, login: 'erin', password: 'erin-password-1' } })).statusCode, 403, 'Origin rule')
  const short = await a.inject({ method: 'POST', url: '/auth/join', headers: origin, payload: { token, login: 'erin', password: 'short' } })
  t.equal(short.statusCode, 400)
  t.match(short.json().message, /at least 10 characters/)
  t.equal((await a.inject({ method: 'POST', url: '/auth/join', headers: origin, payload: { token, login: 'bob', password: 'erin-password-1' } })).statusCode, 400, 'a taken login; the invite stays usable')
  const joined = await a.inject({ method: 'POST', url: '/auth/join', headers: origin, payload: { token, login: 'erin', password: 'erin-password-1' } })
  t.equal(joined.statusCode, 201)
  t.match(joined.json(), { login: 'erin', administrator: false, workspace_id: WS_OLD })
  const cookie = cookieOf(joined)
  t.match((await a.inject({ url: '/account', headers: { cookie } })).json(), { login: 'erin', email: 'erin@example.com' })
  for (const repo of [REPO, OTHER_REPO, PRIVATE_REPO]) {
    t.same((await a.admin({ url: `/admin/repositories/${repo}/permissions` })).json().find((p: { login: string }) => p.login === 'erin'), { login: 'erin', permission: 'write' })
  }

  const again = await a.inject({ method: 'POST', url: '/auth/join', headers: origin, payload: { token, login: 'erin2', password: 'erin-password-1' } })
  t.equal(again.statusCode, 410)
  const used = await a.inject({ url: `/invite/${token}` })
  t.equal(used.statusCode, 410)
  t.match(used.body, /cannot be used any more/)
  t.equal((await a.inject({ url: '/invite/unknown-token' })).statusCode, 404)
  t.same((await a.as('alice', { url: `/invites?workspace_id=${WS_OLD}` })).json(), [], 'no longer pending')

  const other = (await a.admin({ method: 'POST', url: '/invites', payload: { workspace_id: WS_NEW, permission: 'read' } }))
  t.equal(other.statusCode, 401, 'ADMIN_TOKEN is for /admin only')
  const second = (await a.as('alice', { method: 'POST', url: '/invites', payload: { workspace_id: WS_NEW, permission: 'read' } })).json()
  t.equal((await a.as('alice', { method: 'DELETE', url: `/invites/${second.id}` })).statusCode, 204)
  t.equal((await a.inject({ url: `/invite/${tokenOf(second.url)}` })).statusCode, 404, 'withdrawn')
})

t.test('an invite grants only what its maker may still grant: not a repository added since that they do not administer, nothing once they are gone', async (t) => {
  const a = await app(t)
  const invite = (await a.as('alice', { method: 'POST', url: '/invites', payload: { workspace_id: WS_NEW, permission: 'admin' } })).json()
  const orphan = (await a.as('alice', { method: 'POST', url: '/invites', payload: { workspace_id: WS_NEW, permission: 'write' } })).json()
  // A repository alice has no permission on joins the workspace after the invite was made.
  const added = (await a.admin({ method: 'POST', url: '/admin/repositories', payload: { owner: 'acme', name: 'payroll' } })).json()
  t.equal((await a.admin({ method: 'PATCH', url: `/admin/workspaces/${WS_NEW}`, payload: { add_repositories: [added.id] } })).statusCode, 200)
  const joined = await a.inject({ method: 'POST', url: '/auth/join', headers: origin, payload: { token: tokenOf(invite.url), login: 'frank', password: 'frank-password-1' } })
  t.equal(joined.statusCode, 201, joined.body)
  const permission = async (repo: number) => (await a.admin({ url: `/admin/repositories/${repo}/permissions` })).json().find((p: { login: string }) => p.login === 'frank')
  t.same(await permission(REPO), { login: 'frank', permission: 'admin' }, 'what alice administers')
  t.equal(await permission(added.id), undefined, 'not the repository alice cannot grant')

  t.equal((await a.admin({ method: 'DELETE', url: '/admin/users/alice' })).statusCode, 204)
  const refused = await a.inject({ method: 'POST', url: '/auth/join', headers: origin, payload: { token: tokenOf(orphan.url), login: 'gina', password: 'gina-password-1' } })
  t.equal(refused.statusCode, 410)
  t.match(refused.json().message, /no longer has an account/)
})

t.test('the invite page\'s form: errors next to the field, then signed in and on to the workspace\'s board', async (t) => {
  const a = await app(t)
  const invite = (await a.as('alice', { method: 'POST', url: '/invites', payload: { workspace_id: WS_NEW, permission: 'read' } })).json()
  const token = tokenOf(invite.url)
  const form = (payload: string) => a.inject({ method: 'POST', url: `/invite/${token}`, headers: { ...origin, 'content-type': 'application/x-www-form-urlencoded' }, payload })
  const bad = await form('login=frank&password=short')
  t.equal(bad.statusCode, 400)
  t.match(bad.body, /id="field-password"[^>]*aria-invalid="true" aria-describedby="field-password-hint field-password-error"/)
  t.match(bad.body, /id="field-password-error">a password must be at least 10 characters long/)
  t.match(bad.body, /value="frank"/, 'the login is kept')
  const ok = await form('login=frank&password=frank-password-1')
  t.equal(ok.statusCode, 303)
  t.equal(ok.headers.location, `/?board=${WS_NEW}`)
  const cookie = cookieOf(ok)
  t.equal((await a.inject({ url: `/p1/repositories/${REPO}/board`, headers: { cookie } })).statusCode, 200)
  t.equal((await a.inject({ url: `/p1/repositories/${OTHER_REPO}/board`, headers: { cookie } })).statusCode, 404, 'only that workspace')
  t.equal((await a.inject({ method: 'POST', url: `/p1/repositories/${REPO}/issues/1/moves`, headers: { cookie, ...origin }, payload: { pipeline_id: 'pipe-now', position: 'top' } })).statusCode, 403, 'read only')
  t.equal((await form('login=frank2&password=frank-password-1')).statusCode, 410)
})

t.test('password reset without mail: a one-use link made by an administrator', async (t) => {
  const a = await app(t)
  t.equal((await a.admin({ method: 'PATCH', url: '/admin/users/alice', payload: { administrator: true } })).statusCode, 200)
  const made = await a.as('alice', { method: 'POST', url: '/admin/users/bob/password-reset' })
  t.equal(made.statusCode, 201)
  t.match(made.json().url, /^http:\/\/planning\.test\/reset\/[\w-]+$/)
  const hours = (Date.parse(made.json().expires_at) - Date.now()) / 3_600_000
  t.ok(hours > 23.9 && hours <= 24)
  t.equal((await a.as('carol', { method: 'POST', url: '/admin/users/bob/password-reset' })).statusCode, 403)
  t.equal((await a.as('alice', { method: 'POST', url: '/admin/users/nobody/password-reset' })).statusCode, 404)
  const token = tokenOf(made.json().url)
  const page = await a.inject({ url: `/reset/${token}` })
  t.equal(page.statusCode, 200)
  t.match(page.body, /<label for="field-password">Password<\/label>/)
  t.match(page.body, /<button type="submit">Set password<\/button>/)
  const done = await a.inject({ method: 'POST', url: '/auth/reset', headers: origin, payload: { token, password: 'bob-new-password' } })
  t.equal(done.statusCode, 200)
  t.match(done.json(), { login: 'bob' })
  t.equal((await a.inject({ method: 'POST', url: '/auth/password', headers: origin, payload: { login: 'bob', password: 'bob-new-password' } })).statusCode, 200)
  t.equal((await a.inject({ method: 'POST', url: '/auth/reset', headers: origin, payload: { token, password: 'bob-other-password' } })).statusCode, 410)
  t.equal((await a.inject({ url: `/reset/${token}` })).statusCode, 410)
  const audit = (await a.admin({ url: '/admin/audit?limit=50' })).json().entries as Array<{ actor: string, action: string }>
  t.ok(audit.some((e) => e.action === 'password_reset.created' && e.actor === 'user:alice'))
  t.notOk(JSON.stringify(audit).includes(token), 'the link is never logged')
})

t.test('first start: a setup link while no administrator exists, a new one each start, one administrator from two submissions at once', async (t) => {
  // Two starts on one database: a file here, a schema of its own on PostgreSQL.
  const where = TEST_DATABASE_URL === undefined ? { database: join(t.testdir({}), 'planning.db') } : { databaseUrl: TEST_DATABASE_URL, databaseSchema: '' }
  if (TEST_DATABASE_URL !== undefined) {
    const made = await testSchema(TEST_DATABASE_URL)
    where.databaseSchema = made.schema
    t.teardown(made.drop)
  }
  const start = async (): Promise<{ a: App, link?: SetupLink }> => {
    let link: SetupLink | undefined
    const a = await build(t, { ...where, fixture: null, signIn: { publicUrl: PUBLIC_URL }, onSetupLink: (l) => { link = l } })
    return { a, link }
  }
  const first = await start()
  const second = await start()
  t.ok(first.link !== undefined && second.link !== undefined && first.link.token !== second.link.token, 'each start makes its own link')
  t.equal((await second.a.inject({ url: first.link!.path })).statusCode, 404, 'the link of an earlier start no longer works')
  const { token, path } = second.link!
  t.equal(path, `/setup/${token}`)

  const page = await second.a.inject({ url: path })
  t.equal(page.statusCode, 200)
  t.match(page.body, /<label for="field-login">Login<\/label>/)
  t.match(page.body, /<label for="field-email">Email<\/label>/)
  t.match(page.body, /<label for="field-password">Password<\/label>/)
  t.match(page.body, /<button type="submit">Create administrator<\/button>/)
  const form = (payload: string) => second.a.inject({ method: 'POST', url: path, headers: { ...origin, 'content-type': 'application/x-www-form-urlencoded' }, payload })
  const short = await form('login=root&email=root%40example.com&password=short')
  t.equal(short.statusCode, 400)
  t.match(short.body, /id="field-password"[^>]*aria-invalid="true" aria-describedby="field-password-hint field-password-error"/)
  t.match(short.body, /id="field-password-error">a password must be at least 10 characters long/)

  const early = (await second.a.admin({ method: 'POST', url: '/admin/repositories', payload: { owner: 'acme', name: 'early' } })).json().id as number
  // Two submissions at once (on both instances): exactly one administrator.
  const submit = (a: App, login: string) => a.inject({ method: 'POST', url: '/auth/setup', headers: origin, payload: { token, login, password: `${login}-password-1` } })
  const answers = await Promise.all([submit(first.a, 'root'), submit(second.a, 'other')])
  t.same(answers.map((r) => r.statusCode).sort(), [201, 410], answers.map((r) => r.body).join(' | '))
  const winner = answers.find((r) => r.statusCode === 201)!
  t.match(winner.json(), { administrator: true })
  const users = (await second.a.admin({ url: '/admin/users' })).json() as Array<{ login: string, administrator: boolean }>
  t.same(users.map((u) => [u.login, u.administrator]), [[winner.json().login, true]], 'one user, an administrator')
  const account = (await second.a.inject({ url: '/account', headers: { cookie: cookieOf(winner) } })).json()
  t.match(account, { login: winner.json().login }, 'signed in')
  t.same(account.permissions, [{ repo_id: early, permission: 'admin' }], 'with admin on what was here before them')

  const gone = await second.a.inject({ url: path })
  t.equal(gone.statusCode, 410)
  t.match(gone.body, /cannot be used any more/)
  t.equal((await form('login=late&password=late-password-1')).statusCode, 410)
  const third = await start()
  t.equal(third.link, undefined, 'no link once an administrator exists')
})

t.test('an invite past its 7 days and a reset link past its 24 hours answer 410; every link is kept as a digest only', async (t) => {
  const { app: a, sql } = await buildWithSql(t, { signIn: { publicUrl: PUBLIC_URL } })
  t.equal((await a.admin({ method: 'PATCH', url: '/admin/users/alice', payload: { administrator: true } })).statusCode, 200)
  const invite = (await a.as('alice', { method: 'POST', url: '/invites', payload: { workspace_id: WS_OLD, permission: 'write' } })).json()
  const reset = (await a.as('alice', { method: 'POST', url: '/admin/users/bob/password-reset' })).json()
  const tokens = [tokenOf(invite.url), tokenOf(reset.url)]
  const kept = JSON.stringify(await sql('SELECT * FROM account_links'))
  t.ok(tokens.every((token) => !kept.includes(token)), 'neither link is in the database, only its digest')

  // Both links a moment past their end, as 7 days and 24 hours later.
  await sql('UPDATE account_links SET expires_at = ?', [Date.now() - 1000])
  const invitePage = await a.inject({ url: `/invite/${tokens[0]}` })
  t.equal(invitePage.statusCode, 410, 'the expired invite\'s page')
  t.match(invitePage.body, /has expired; ask for a new one/, 'says so clearly')
  t.equal((await a.inject({ method: 'POST', url: '/auth/join', headers: origin, payload: { token: tokens[0], login: 'erin', password: 'erin-password-1' } })).statusCode, 410, 'and refuses the join')
  t.same((await a.as('alice', { url: `/invites?workspace_id=${WS_OLD}` })).json(), [], 'no longer pending')
  t.equal((await a.inject({ url: `/reset/${tokens[1]}` })).statusCode, 410, 'the expired reset link\'s page')
  t.equal((await a.inject({ method: 'POST', url: '/auth/reset', headers: origin, payload: { token: tokens[1], password: 'bob-new-password' } })).statusCode, 410, 'and refuses the new password')
  t.equal((await a.inject({ method: 'POST', url: '/auth/password', headers: origin, payload: { login: 'bob', password: 'bob-new-password' } })).statusCode, 401, 'which was not set')
  t.notOk((await a.admin({ url: '/admin/users' })).json().some((u: { login: string }) => u.login === 'erin'), 'nobody joined')
})

/** A minimal SMTP server on 127.0.0.1 keeping each message it takes (no TLS, no auth). */
async function smtpServer (t: Parameters<typeof build>[0]): Promise<{ port: number, mails: Array<{ to: string, body: string }> }> {
  const mails: Array<{ to: string, body: string }> = []
  const server = createServer((socket) => {
    let buffer = ''
    let body: string[] | null = null
    let to = ''
    socket.write('220 test ESMTP\r\n')
    socket.on('data', (chunk) => {
      buffer += chunk.toString('utf8')
      for (let at = buffer.indexOf('\r\n'); at >= 0; at = buffer.indexOf('\r\n')) {
        const line = buffer.slice(0, at)
        buffer = buffer.slice(at + 2)
        if (body !== null) {
          if (line === '.') {
            // Quoted-printable soft breaks undone, so a long link reads whole.
            mails.push({ to, body: body.join('\n').replace(/=\n/g, '').replace(/=3D/g, '=') })
            body = null
            socket.write('250 queued\r\n')
          } else body.push(line)
          continue
        }
        const verb = line.slice(0, 4).toUpperCase()
        if (verb === 'RCPT') to = /<([^>]*)>/.exec(line)?.[1] ?? ''
        if (verb === 'DATA') { body = []; socket.write('354 go on\r\n') } else if (verb === 'QUIT') socket.end('221 bye\r\n')
        else socket.write('250 ok\r\n')
      }
    })
    socket.on('error', () => {})
  })
  server.listen(0, '127.0.0.1')
  await once(server, 'listening')
  t.teardown(() => { server.close() })
  return { port: (server.address() as AddressInfo).port, mails }
}

t.test('with SMTP_URL, invites with an email and reset links are mailed too; a mail that fails still answers the link', async (t) => {
  const smtp = await smtpServer(t)
  const a = await build(t, { signIn: { publicUrl: PUBLIC_URL, mail: { url: `smtp://127.0.0.1:${smtp.port}`, from: 'planning@planning.test' } } })
  t.equal((await a.admin({ method: 'PATCH', url: '/admin/users/alice', payload: { administrator: true, email: 'alice@example.com' } })).statusCode, 200)
  const invite = (await a.as('alice', { method: 'POST', url: '/invites', payload: { workspace_id: WS_OLD, permission: 'write', email: 'erin@example.com' } })).json()
  t.match(invite, { mailed: true })
  t.equal(smtp.mails.length, 1)
  t.equal(smtp.mails[0].to, 'erin@example.com')
  t.match(smtp.mails[0].body, /From: planning@planning\.test/)
  t.match(smtp.mails[0].body, /Subject: You are invited to Engineering/)
  t.ok(smtp.mails[0].body.includes(invite.url), 'the link in the mail')
  t.match((await a.as('alice', { method: 'POST', url: '/invites', payload: { workspace_id: WS_OLD, permission: 'read' } })).json(), { mailed: false }, 'no email: no mail')
  t.equal(smtp.mails.length, 1)

  const reset = (await a.as('alice', { method: 'POST', url: '/admin/users/alice/password-reset' })).json()
  t.match(reset, { mailed: true })
  t.equal(smtp.mails[1].to, 'alice@example.com')
  t.ok(smtp.mails[1].body.includes(reset.url), 'the reset link in the mail')
  t.match((await a.as('alice', { method: 'POST', url: '/admin/users/bob/password-reset' })).json(), { mailed: false }, 'bob has no email')

  // Without PUBLIC_URL a link is built from the request's Host, which the client chooses: never mailed.
  const b = await build(t, { signIn: { mail: { url: `smtp://127.0.0.1:${smtp.port}`, from: 'planning@planning.test' } } })
  await b.admin({ method: 'PATCH', url: '/admin/users/alice', payload: { administrator: true, email: 'alice@example.com' } })
  const forged = await b.as('alice', { method: 'POST', url: '/invites', headers: { host: 'evil.example' }, payload: { workspace_id: WS_OLD, permission: 'write', email: 'erin@example.com' } })
  t.match(forged.json(), { mailed: false, mail_error: /only when PUBLIC_URL is set/, url: /^http:\/\/evil\.example\/invite\// })
  t.match((await b.as('alice', { method: 'POST', url: '/admin/users/alice/password-reset', headers: { host: 'evil.example' } })).json(), { mailed: false, mail_error: /PUBLIC_URL/ })
  t.equal(smtp.mails.length, 2, 'nothing more was mailed')
})

t.test('a mail server that does not answer: the invite is made and says the mail was not sent', async (t) => {
  const closed = createServer()
  closed.listen(0, '127.0.0.1')
  await once(closed, 'listening')
  const port = (closed.address() as AddressInfo).port
  closed.close()
  const a = await build(t, { signIn: { publicUrl: PUBLIC_URL, mail: { url: `smtp://127.0.0.1:${port}` } } })
  const made = await a.as('alice', { method: 'POST', url: '/invites', payload: { workspace_id: WS_OLD, permission: 'read', email: 'x@example.com' } })
  t.equal(made.statusCode, 201)
  t.match(made.json(), { mailed: false, mail_error: /the mail was not sent .*pass the link on by hand/, url: /\/invite\// })
  t.notOk(String(made.json().mail_error).includes(String(port)), 'the mail server\'s own words (its address) stay in the log')
})

t.test('someone signed in takes an invite with "Join as": at least the invited permission (never lowered), one use, audited', async (t) => {
  const a = await app(t)
  const sessionOf = async (login: 'bob' | 'carol') => {
    t.equal((await a.as(login, { method: 'POST', url: '/account/password', payload: { new_password: `${login}-password-1` } })).statusCode, 204)
    return cookieOf(await a.inject({ method: 'POST', url: '/auth/password', headers: origin, payload: { login, password: `${login}-password-1` } }))
  }
  const bob = await sessionOf('bob')
  const invite = (await a.as('alice', { method: 'POST', url: '/invites', payload: { workspace_id: WS_OLD, permission: 'read' } })).json()
  const token = tokenOf(invite.url)
  const page = await a.inject({ url: `/invite/${token}`, headers: { cookie: bob } })
  t.equal(page.statusCode, 200)
  t.match(page.body, /<button type="submit">Join as bob<\/button>/)
  t.match(page.body, new RegExp(`action="/invite/${token}/join"`))
  t.match(page.body, /where it holds a higher permission already, that stays/)
  t.notMatch(page.body, /field-password/, 'no login or password to choose')

  const join = async (cookie: string, headers: Record<string, string> = origin) =>
    await a.inject({ method: 'POST', url: `/invite/${token}/join`, headers: { ...headers, cookie, 'content-type': 'application/x-www-form-urlencoded' }, payload: '' })
  t.equal((await join(bob, {})).statusCode, 403, 'Origin rule')
  t.equal((await a.inject({ method: 'POST', url: `/invite/${token}/join`, headers: origin })).statusCode, 401, 'signed in only')
  const joined = await join(bob)
  t.equal(joined.statusCode, 303)
  t.equal(joined.headers.location, `/?board=${WS_OLD}`)
  const permission = async (repo: number) => (await a.admin({ url: `/admin/repositories/${repo}/permissions` })).json().find((p: { login: string }) => p.login === 'bob')
  t.same(await permission(REPO), { login: 'bob', permission: 'write' }, 'write stays write: an invite never lowers')
  t.same(await permission(OTHER_REPO), { login: 'bob', permission: 'read' })
  t.same(await permission(PRIVATE_REPO), { login: 'bob', permission: 'read' }, 'granted where bob had nothing')
  const used = await join(bob)
  t.equal(used.statusCode, 410)
  t.match(used.body, /cannot be used any more/)
  t.equal((await a.inject({ url: `/invite/${token}`, headers: { cookie: bob } })).statusCode, 410)
  const entry = (await a.admin({ url: '/admin/audit?action=invite.used' })).json().entries[0]
  t.match(entry, { actor: 'user:bob', action: 'invite.used', detail: { invite_id: invite.id, workspace_id: WS_OLD, permission: 'read', invited_by: 'user:alice', repositories_raised: 1 } })

  // Two takes of one invite at once: exactly one passes.
  const carol = await sessionOf('carol')
  const write = (await a.as('alice', { method: 'POST', url: '/invites', payload: { workspace_id: WS_NEW, permission: 'write' } })).json()
  const both = await Promise.all([bob, carol].map(async (cookie) =>
    (await a.inject({ method: 'POST', url: `/invite/${tokenOf(write.url)}/join`, headers: { ...origin, cookie, 'content-type': 'application/x-www-form-urlencoded' }, payload: '' })).statusCode))
  t.same([...both].sort(), [303, 410])
  const writers = (await a.admin({ url: `/admin/repositories/${REPO}/permissions` })).json().filter((p: { permission: string }) => p.permission === 'write')
  t.same(writers.map((p: { login: string }) => p.login).sort(), both[1] === 303 ? ['bob', 'carol'] : ['bob'], 'carol is write only if her take passed')
})

t.test('"Join as" takes the browser\'s session only: an API token, even read-scoped with the right Origin, is refused and grants nothing', async (t) => {
  const a = await app(t)
  const invite = (await a.as('alice', { method: 'POST', url: '/invites', payload: { workspace_id: WS_NEW, permission: 'admin' } })).json()
  const token = (await a.as('bob', { method: 'POST', url: '/account/tokens', payload: { name: 'dash', scope: 'read' } })).json().token as string
  const permission = async () => (await a.admin({ url: `/admin/repositories/${REPO}/permissions` })).json().find((p: { login: string }) => p.login === 'bob')
  const before = await permission()
  for (const credential of [{ authorization: `Bearer ${token}` }, { 'x-authentication-token': token }]) {
    const refused = await a.inject({
      method: 'POST', url: `/invite/${tokenOf(invite.url)}/join`, headers: { ...credential, ...origin, 'content-type': 'application/x-www-form-urlencoded' }, payload: ''
    })
    t.equal(refused.statusCode, 403, Object.keys(credential)[0])
    t.match(refused.body, /an API token cannot join an invite/)
  }
  t.same(await permission(), before, 'bob\'s permission unchanged')
  t.equal((await a.inject({ url: `/invite/${tokenOf(invite.url)}` })).statusCode, 200, 'the invite is still open')
})

t.test('the invite\'s grant never lowers in its statement: raising to read over a later admin keeps admin, and raises where less is held', async (t) => {
  // The repository on the database of an app (its fixture loaded), as the services call it.
  let database: Record<string, unknown> = { database: join(t.testdir({}), 'planning.db') }
  if (TEST_DATABASE_URL !== undefined) {
    const { schema, drop } = await testSchema(TEST_DATABASE_URL)
    t.teardown(drop)
    database = { databaseUrl: TEST_DATABASE_URL, databaseSchema: schema, databasePoolMax: 2 }
  }
  await build(t, database)
  const db = TEST_DATABASE_URL === undefined
    ? sqliteKysely(database.database as string).db
    : postgresKysely({ url: TEST_DATABASE_URL, schema: database.databaseSchema as string, poolMax: 2 })
  t.teardown(async () => await db.destroy())
  const users = createUsersRepository(db)
  const bob = (await users.byLogin('bob'))!
  const level = async () => (await users.levels(bob.id, [REPO])).get(REPO)
  await users.setPermission(bob.id, REPO, 'admin')
  await users.raisePermission(bob.id, REPO, 'read')
  t.equal(await level(), 3, 'admin kept')
  await users.setPermission(bob.id, REPO, 'read')
  await users.raisePermission(bob.id, REPO, 'write')
  t.equal(await level(), 2, 'read raised to write')
  await users.raisePermission(bob.id, PRIVATE_REPO, 'write')
  t.equal((await users.levels(bob.id, [PRIVATE_REPO])).get(PRIVATE_REPO), 2, 'made where nothing was held')
})

t.test('invite, reset and setup tokens never reach the request log: not in the path, not in a sign-in\'s return_to', async (t) => {
  const lines: string[] = []
  const logStream = new Writable({ write (chunk, _enc, done) { lines.push(String(chunk)); done() } })
  const a = await build(t, { signIn: { publicUrl: PUBLIC_URL }, logLevel: 'info', logStream })
  const token = tokenOf((await a.as('alice', { method: 'POST', url: '/invites', payload: { workspace_id: WS_NEW, permission: 'read' } })).json().url)
  const reset = tokenOf((await a.admin({ method: 'POST', url: '/admin/users/bob/password-reset' })).json().url)
  const urls = [
    `/invite/${token}`, `/invite/${token}/join`, `/reset/${reset}`, '/setup/setup-token-x',
    `/auth/oidc/login?return_to=/invite/${token}`, `/auth/host/1/login?x=1&return_to=${encodeURIComponent(`/invite/${token}`)}`,
    `/auth/oidc/login?return_to=%2Freset%2F${reset}`
  ]
  for (const url of urls) await a.inject({ method: url.endsWith('/join') ? 'POST' : 'GET', url, headers: origin })
  const log = lines.join('')
  for (const secret of [token, reset, 'setup-token-x']) t.notOk(log.includes(secret), `${secret.slice(0, 6)}… absent from the log`)
  t.match(log, '"url":"/invite/[REDACTED]"', 'the route\'s shape stays')
  t.match(log, '"url":"/invite/[REDACTED]/join"')
  t.match(log, '"url":"/auth/oidc/login?return_to=/invite/[REDACTED]"')
  t.match(log, '"url":"/reset/[REDACTED]"')
})
