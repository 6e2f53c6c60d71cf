import t, { type Test } from 'tap'
import { once } from 'node:events'
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import { join } from 'node:path'
import { build, SECRET_KEY } from './helper.js'
import { TEST_DATABASE_URL, testSchema } from './pg.js'
import { DomainEvents } from '../db/domain-events.js'
import { postgresKysely } from '../db/engine/postgres.js'
import { SecretBox } from '../db/engine/secret-box.js'
import { createStore, openSqliteStore, type PlanningStore } from '../db/store.js'
import { createHostFetch } from '../services/host-fetch.js'
import { Importer } from '../services/importer.js'

/** The fake hosts listen on 127.0.0.1: the tests allow private host addresses. */
const local = { hosts: { allowPrivate: true } }

/**
 * A GitHub-shaped REST API on 127.0.0.1: the repository, a page of milestones, three pages of
 * issues and pull requests (Link headers), collaborators with permissions. `gate` can hold or
 * refuse a request (rate limits, a hang for the crash test).
 */
async function fakeHost (t: Test, gate: (req: IncomingMessage, res: ServerResponse) => boolean = () => true) {
  const requests: string[] = []
  const issues = Array.from({ length: 6 }, (_, i) => ({
    number: i + 1,
    title: `Imported ${i + 1}`,
    state: i === 5 ? 'closed' : 'open',
    updated_at: '2026-03-01T00:00:00Z',
    body: i === 0 ? 'Imported *description*' : null,
    ...(i % 3 === 2 ? { pull_request: { url: 'x' } } : {})
  }))
  const server = createServer((req, res) => {
    requests.push(req.url!)
    if (!gate(req, res)) return
    const url = new URL(req.url!, 'http://x')
    const page = Number(url.searchParams.get('page') ?? 1)
    const base = `http://${req.headers.host}${url.pathname}`
    const send = (body: unknown, next?: number) => {
      res.setHeader('content-type', 'application/json')
      res.setHeader('x-ratelimit-remaining', '4999')
      if (next !== undefined) res.setHeader('link', `<${base}?page=${next}>; rel="next", <${base}?page=3>; rel="last"`)
      res.end(JSON.stringify(body))
    }
    if (url.pathname === '/repos/acme/imported') return send({ id: 5151, name: 'imported', full_name: 'acme/imported', html_url: 'https://github.com/acme/imported', owner: { login: 'acme' } })
    if (url.pathname.endsWith('/milestones')) return send([{ number: 1, title: 'v1' }])
    if (url.pathname.endsWith('/issues')) return send(issues.slice((page - 1) * 2, page * 2), page < 3 ? page + 1 : undefined)
    if (url.pathname.endsWith('/collaborators')) return send([{ id: 501, login: 'imp-user', permissions: { admin: false, maintain: false, push: true, triage: true, pull: true } }])
    res.statusCode = 404
    res.end('{}')
  })
  server.listen(0, '127.0.0.1')
  await once(server, 'listening')
  t.teardown(() => { server.closeAllConnections(); server.close() })
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, requests }
}

async function waitFor (check: () => Promise<boolean>, ms = 15_000): Promise<void> {
  const deadline = Date.now() + ms
  while (!await check()) {
    if (Date.now() > deadline) throw new Error('timed out')
    await new Promise((resolve) => setTimeout(resolve, 50))
  }
}

t.test('an import pages through the host, waits out a rate limit, and is idempotent', async (t) => {
  let limited = 0
  const host = await fakeHost(t, (req, res) => {
    // The second issues page first meets an exhausted rate limit, then a secondary limit.
    if (req.url!.includes('/issues') && req.url!.includes('page=2') && limited < 2) {
      limited++
      res.statusCode = limited === 1 ? 403 : 429
      res.setHeader('content-type', 'application/json')
      if (limited === 1) {
        res.setHeader('x-ratelimit-remaining', '0')
        res.setHeader('x-ratelimit-reset', String(Math.ceil(Date.now() / 1000)))
      } else {
        res.setHeader('retry-after', '1')
      }
      res.end(JSON.stringify({ message: 'API rate limit exceeded' }))
      return false
    }
    return true
  })
  const app = await build(t, local)
  const connection = (await app.admin({ method: 'POST', url: '/admin/connections', payload: { kind: 'github', web_url: 'https://github.com', api_url: host.url, token: 'ghp_test' } })).json()
  await app.admin({ method: 'POST', url: '/admin/workspaces', payload: { name: 'Imported', repositories: [], pipelines: ['Inbox', 'Done'] } })
  const started = await app.admin({ method: 'POST', url: `/admin/connections/${connection.id}/imports`, payload: { repository: 'acme/imported' } })
  t.equal(started.statusCode, 202)
  t.match(started.json(), { id: /^[0-9a-f]{24}$/, state: 'queued' })
  const status = async () => (await app.admin({ url: `/admin/imports/${started.json().id}` })).json()
  t.equal((await app.as('alice', { url: '/p1/repositories/1001/board' })).statusCode, 200, 'the API answers while the import runs')
  await waitFor(async () => (await status()).state === 'done')
  t.match(await status(), { state: 'done', repo_id: 5151, issues: 4, pull_requests: 2, milestones: 1, collaborators: 1, error: null })
  t.equal(limited, 2, 'the limited page was asked again after waiting')
  t.ok(host.requests.every((r) => !r.includes('access_token')), 'the token travels in a header')

  const repos = (await app.admin({ url: '/admin/repositories' })).json()
  t.match(repos.find((r: { id: number }) => r.id === 5151), { owner: 'acme', name: 'imported', html_url: 'https://github.com/acme/imported', connection_id: connection.id }, 'listed with the connection it came through')
  t.ok(repos.filter((r: { id: number }) => r.id !== 5151).every((r: { connection_id: string | null }) => r.connection_id === null), 'the fixture\'s repositories with none')
  // The collaborator is an identity of the connection; linked to a local user, its permission applies.
  await app.admin({ method: 'POST', url: '/admin/users', payload: { login: 'imp-user' } })
  await app.admin({ method: 'PUT', url: '/admin/users/imp-user/identities', payload: { connection_id: connection.id, platform_user_id: 501 } })
  const token = (await app.admin({ method: 'POST', url: '/admin/users/imp-user/token' })).json().token
  const issue = await app.inject({ url: '/p1/repositories/5151/issues/3', headers: { 'x-authentication-token': token } })
  t.equal(issue.statusCode, 200, 'the collaborator reads (push → write) and the pull request is an issue')
  t.equal(issue.json().status, 'open')
  const closed = await app.inject({ url: '/p1/repositories/5151/issues/6', headers: { 'x-authentication-token': token } })
  t.equal(closed.json().status, 'closed', 'closed issues come too')
  const described = await app.inject({ url: '/p1/repositories/5151/issues/1', headers: { 'x-authentication-token': token } })
  t.equal(described.json().body, 'Imported *description*', 'the description comes with the issue')

  const again = await app.admin({ method: 'POST', url: `/admin/connections/${connection.id}/imports`, payload: { repository: 'acme/imported' } })
  await waitFor(async () => (await app.admin({ url: `/admin/imports/${again.json().id}` })).json().state === 'done')
  const workspaces = await app.admin({ method: 'POST', url: '/admin/workspaces', payload: { name: 'Check', repositories: [5151], pipelines: ['All'] } })
  t.equal(workspaces.statusCode, 201)
  const board = await app.inject({ url: `/p2/workspaces/${workspaces.json().id}/repositories/5151/board`, headers: { 'x-authentication-token': token } })
  t.same(board.json().pipelines[0].issues.map((i: { issue_number: number }) => i.issue_number), [1, 2, 3, 4, 5], 'run twice: nothing doubled (the closed one is off the board)')
  const marked = await app.inject({ url: '/p1/repositories/5151/issues?issue_numbers=1,2,3,4,5,6', headers: { 'x-authentication-token': token } })
  const marks = marked.json().map((i: { issue_number: number, pull_request: boolean }) => [i.issue_number, i.pull_request])
  t.same(marks, [[1, false], [2, false], [3, true], [4, false], [5, false], [6, true]], 'the listing\'s pull requests are marked as such')
})

/** A fake host that holds the third page of issues unanswered until `release()` (a crash mid-import). */
async function hostHoldingPage3 (t: Test) {
  const hold = { on: true }
  const held: ServerResponse[] = []
  const host = await fakeHost(t, (req, res) => {
    if (hold.on && req.url!.includes('/issues') && req.url!.includes('page=3')) {
      held.push(res)
      return false
    }
    return true
  })
  t.teardown(() => held.forEach((res) => res.destroy()))
  return { host, held, release: () => { hold.on = false } }
}

t.test('an import cut short by a crash goes on from the page it reached', async (t) => {
  const { host, held, release } = await hostHoldingPage3(t)
  const database = join(t.testdir({}), 'planning.db')
  const first = await build(t, { database, ...local })
  const connection = (await first.admin({ method: 'POST', url: '/admin/connections', payload: { kind: 'github', api_url: host.url } })).json()
  const started = (await first.admin({ method: 'POST', url: `/admin/connections/${connection.id}/imports`, payload: { repository: 'acme/imported' } })).json()
  await waitFor(async () => held.length > 0)
  t.match((await first.admin({ url: `/admin/imports/${started.id}` })).json(), { state: 'running', issues: 3, pull_requests: 1 }, 'two pages in when it stops')
  await first.close()
  release()
  const asked = host.requests.length
  const second = await build(t, { database, fixture: null, ...local })
  await waitFor(async () => (await second.admin({ url: `/admin/imports/${started.id}` })).json().state === 'done')
  t.match((await second.admin({ url: `/admin/imports/${started.id}` })).json(), { state: 'done', issues: 4, pull_requests: 2 }, 'every issue counted once')
  const after = host.requests.slice(asked)
  t.notOk(after.some((r) => r.includes('/issues') && !r.includes('page=3')), `resumed at page 3, not from the start (${after.join(', ')})`)
})

t.test('the admin CLI connects a host and imports a repository with a progress line', async (t) => {
  const host = await fakeHost(t)
  const { runAdminCommand } = await import('../cli/admin.js')
  const database = join(t.testdir({}), 'planning.db')
  const context = { config: { secretKey: SECRET_KEY, hostAllowPrivate: true }, hostToken: 'ghp_cli' }
  const made = await runAdminCommand(database, ['connect', 'github', '--api-url', host.url], () => {}, context) as { id: string, secret: string, webhook_path: string }
  t.match(made, { id: /^[0-9a-f]{24}$/, secret: String, webhook_path: `/integrations/${made.id}/webhook` })
  t.match(await runAdminCommand(database, ['connections'], () => {}, context), [{ id: made.id, kind: 'github', api_url: host.url, has_token: true }])
  t.notOk(JSON.stringify(await runAdminCommand(database, ['connections'], () => {}, context)).includes('ghp_cli'), 'the token is not shown')
  const lines: string[] = []
  const done = await runAdminCommand(database, ['import-repo', made.id, 'acme/imported'], (line) => lines.push(line), context)
  t.match(done, { state: 'done', issues: 4, pull_requests: 2, milestones: 1, collaborators: 1 })
  t.match(lines.at(-1), /acme\/imported: done, 4 issues, 2 pull requests, 1 milestones, 1 collaborators/)
  await t.rejects(runAdminCommand(database, ['connect', 'gitlab'], () => {}, context), /unknown kind 'gitlab'/)
  t.same(await runAdminCommand(database, ['disconnect', made.id], () => {}, context), { removed: made.id })
})

t.test('imports reach only public hosts, follow no redirect elsewhere, and tell host errors briefly', async (t) => {
  const host = await fakeHost(t)
  const strict = await build(t)
  const connection = (await strict.admin({ method: 'POST', url: '/admin/connections', payload: { kind: 'github', api_url: host.url, token: 'ghp_strict' } })).json()
  const started = (await strict.admin({ method: 'POST', url: `/admin/connections/${connection.id}/imports`, payload: { repository: 'acme/imported' } })).json()
  await waitFor(async () => (await strict.admin({ url: `/admin/imports/${started.id}` })).json().state === 'failed')
  t.match((await strict.admin({ url: `/admin/imports/${started.id}` })).json().error, /^refused: address 127\.0\.0\.1 is loopback or private \(set HOST_ALLOW_PRIVATE=true/)
  t.same(host.requests, [], 'without HOST_ALLOW_PRIVATE the token never went to 127.0.0.1')

  for (const repository of ['../admin', 'acme/..', 'acme/.', 'acme/a/b', '-acme/x', 'ac me/x', 'acme/x?y']) {
    const res = await strict.admin({ method: 'POST', url: `/admin/connections/${connection.id}/imports`, payload: { repository } })
    t.equal(res.statusCode, 400, repository)
    t.match(res.json().message, /body\/repository/)
  }
  const dotted = await strict.admin({ method: 'POST', url: `/admin/connections/${connection.id}/imports`, payload: { repository: 'my.org/x' } })
  t.match(dotted.json(), { message: /'my\.org' is not a github owner name/ }, 'GitHub owners have no dots')
  t.equal(dotted.statusCode, 400)

  // Allowed to reach 127.0.0.1: a redirect to another port is still not followed, and an
  // error answer's body is not shown at all: its status and that status's reason phrase only.
  const inner = await fakeHost(t)
  const tricky = await fakeHost(t, (req, res) => {
    if (req.url!.startsWith('/repos/acme/imported/milestones')) {
      res.statusCode = 302
      res.setHeader('location', `${inner.url}${req.url}`)
      res.end()
      return false
    }
    if (req.url!.startsWith('/repos/acme/huge')) {
      res.statusCode = 502
      res.setHeader('content-type', 'application/json')
      res.end(JSON.stringify({ message: 'upstream down', trace: 'x'.repeat(2_000_000) }))
      return false
    }
    return true
  })
  const app = await build(t, local)
  const gitea = (await app.admin({ method: 'POST', url: '/admin/connections', payload: { kind: 'gitea', web_url: tricky.url, api_url: tricky.url, token: 'tok' } })).json()
  const redirected = (await app.admin({ method: 'POST', url: `/admin/connections/${gitea.id}/imports`, payload: { repository: 'acme/imported' } })).json()
  await waitFor(async () => (await app.admin({ url: `/admin/imports/${redirected.id}` })).json().state === 'failed')
  t.match((await app.admin({ url: `/admin/imports/${redirected.id}` })).json(), { error: 'the host answered 302 with a redirect to another origin (not followed)', milestones: 0 })
  t.same(inner.requests, [], 'the other port was never asked')
  const huge = (await app.admin({ method: 'POST', url: `/admin/connections/${gitea.id}/imports`, payload: { repository: 'acme/huge' } })).json()
  await waitFor(async () => (await app.admin({ url: `/admin/imports/${huge.id}` })).json().state === 'failed')
  t.equal((await app.admin({ url: `/admin/imports/${huge.id}` })).json().error, 'the host answered 502: Bad Gateway', 'nothing of the body, not even its message')
  const underscored = await app.admin({ method: 'POST', url: `/admin/connections/${gitea.id}/imports`, payload: { repository: 'my_org.x/y' } })
  t.equal(underscored.statusCode, 202, 'Gitea owners may hold dots and underscores')
})

/**
 * Instance A (the app) and instance B (an importer of its own, with its own connections to the
 * database) on one database: a SQLite file, or a PostgreSQL schema when TEST_DATABASE_URL is set.
 */
async function twoInstances (t: Test, leaseMs: number) {
  const file = join(t.testdir({}), 'planning.db')
  let database: Record<string, unknown> = { database: file }
  if (TEST_DATABASE_URL !== undefined) {
    const { schema, drop } = await testSchema(TEST_DATABASE_URL)
    t.teardown(drop)
    database = { databaseUrl: TEST_DATABASE_URL, databaseSchema: schema, databasePoolMax: 4 }
  }
  const a = await build(t, { ...database, hosts: { allowPrivate: true, importLeaseMs: leaseMs } })
  const secrets = SecretBox.fromStrings(SECRET_KEY)
  let store: PlanningStore & { close: () => Promise<void> }
  if (TEST_DATABASE_URL === undefined) store = await openSqliteStore(file, undefined, secrets)
  else {
    const db = postgresKysely({ url: TEST_DATABASE_URL, schema: database.databaseSchema as string, poolMax: 4 })
    store = { ...createStore(db, new DomainEvents(), secrets), close: async () => await db.destroy() }
  }
  const silent = { info () {}, warn () {}, error () {}, debug () {}, trace () {}, fatal () {}, child () { return silent }, level: 'silent', silent () {} }
  const b = new Importer(store, silent as never, { fetch: createHostFetch({ allowPrivate: true }), leaseMs })
  t.teardown(async () => {
    await b.stop()
    await store.close()
  })
  return { a, b, store }
}

t.test('an import runs in one instance: a resume elsewhere leaves it alone until its lease is given up or runs out', async (t) => {
  const { host, held, release } = await hostHoldingPage3(t)
  const { a, b, store } = await twoInstances(t, 600)
  const connection = (await a.admin({ method: 'POST', url: '/admin/connections', payload: { kind: 'github', api_url: host.url } })).json()
  const started = (await a.admin({ method: 'POST', url: `/admin/connections/${connection.id}/imports`, payload: { repository: 'acme/imported' } })).json()
  await waitFor(async () => held.length > 0)
  const asked = host.requests.length
  await b.resumeUnfinished() // what B does when it starts
  b.watch()
  await new Promise((resolve) => setTimeout(resolve, 1500)) // B looked twice more on its own; A renewed meanwhile
  t.equal(host.requests.length, asked, `B fetched nothing while A holds the import (${host.requests.slice(asked).join(', ')})`)
  t.match(await store.connections.requireImport(started.id), { state: 'running', issues: 3, pull_requests: 1 })

  // A stops (a deploy): it gives the lease up and B goes on from page 3.
  release()
  await a.close()
  await waitFor(async () => (await store.connections.requireImport(started.id)).state === 'done')
  t.match(await store.connections.requireImport(started.id), { state: 'done', issues: 4, pull_requests: 2, milestones: 1, collaborators: 1 }, 'every issue counted once')
  const pages = host.requests.filter((r) => r.includes('/issues'))
  t.same(pages.filter((r) => /[?&]page=1(&|$)/.test(r)).length, 1, 'page 1 fetched once')
  t.same(pages.filter((r) => /[?&]page=2(&|$)/.test(r)).length, 1, 'page 2 fetched once')

  // An instance that died holding an import: taken over only once the lease has run out.
  const connections = store.connections
  const orphan = await connections.createImport(connection.id, 'acme/imported')
  t.ok(await connections.claimImport(orphan.id, 'a-dead-instance', Date.now() + 1200))
  const before = host.requests.length
  await b.resumeUnfinished()
  await new Promise((resolve) => setTimeout(resolve, 700))
  t.equal(host.requests.length, before, 'not while the dead instance\'s lease holds')
  await waitFor(async () => (await connections.requireImport(orphan.id)).state === 'done')
  t.match(await connections.requireImport(orphan.id), { state: 'done', issues: 4, pull_requests: 2, lease_owner: null, lease_until: null })
})

t.test('a lease is claimed once, renewed only by its holder, and fences a holder that lost it', async (t) => {
  const { a, store } = await twoInstances(t, 60_000)
  const made = (await a.admin({ method: 'POST', url: '/admin/connections', payload: { kind: 'github' } })).json()
  const [ca, cb] = [store.connections, store.connections]
  const job = await cb.createImport(made.id, 'acme/x')
  const claims = await Promise.all([ca.claimImport(job.id, 'A', Date.now() + 60_000), cb.claimImport(job.id, 'B', Date.now() + 60_000)])
  t.same(claims.filter(Boolean).length, 1, 'of two claims at once, one wins')
  const [winner, loser] = claims[0] ? ['A', 'B'] : ['B', 'A']
  t.notOk(await cb.renewImport(job.id, loser, Date.now() + 60_000), 'the other cannot renew it')
  t.notOk(await cb.updateImport(job.id, { issues: 99 }, loser), 'nor write progress')
  t.same((await ca.unfinishedImports()).map((r) => r.id), [], 'a leased import is not offered for resuming')
  t.ok(await ca.renewImport(job.id, winner, Date.now() - 1), 'the holder renews (here: into the past, as if it stalled)')
  t.same((await ca.unfinishedImports()).map((r) => r.id), [job.id], 'a run-out lease is offered')
  t.ok(await cb.claimImport(job.id, loser, Date.now() + 60_000), 'and taken over')
  t.notOk(await ca.updateImport(job.id, { issues: 99 }, winner), 'the stalled holder writes nothing after that')
  t.notOk(await ca.renewImport(job.id, winner, Date.now() + 60_000))
  t.equal((await ca.requireImport(job.id)).issues, 0)
})
