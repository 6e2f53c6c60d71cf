import t, { type Test } from 'tap'
import { once } from 'node:events'
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { Readable } from 'node:stream'
import { Migrator, type Migration } from 'kysely'
import { buildApp } from '../app.js'
import { migrate, migrations } from '../db/engine/migrations/index.js'
import { sqliteKysely } from '../db/engine/sqlite.js'
import { deliver, SECRET, sign } from './deliveries.js'
import { ADMIN_TOKEN, build, REPO, SECRET_KEY, TOKENS, testFixture, type App } from './helper.js'
import { TEST_DATABASE_URL, testSchema } from './pg.js'

const when = '2026-01-01T00:00:00Z'
const repository = (id: number, owner: string, name: string, extra: object = {}) =>
  ({ id, name, full_name: `${owner}/${name}`, owner: { login: owner, id: 77 }, html_url: `https://github.com/${owner}/${name}`, updated_at: when, ...extra })
const issue = (number: number, extra: object = {}) => ({ number, title: `Issue ${number}`, state: 'open', updated_at: when, ...extra })

async function connect (app: App, payload: object = {}): Promise<string> {
  const res = await app.admin({ method: 'POST', url: '/admin/connections', payload: { kind: 'github', secret: SECRET, ...payload } })
  if (res.statusCode !== 201) throw new Error(res.body)
  return res.json().id
}

const repositories = async (app: App) => (await app.admin({ url: '/admin/repositories' })).json() as Array<{ id: number, owner: string, name: string, html_url: string | null }>
const canEstimate = async (app: App, login: keyof typeof TOKENS, repo = REPO) =>
  (await app.as(login, { method: 'PUT', url: `/p1/repositories/${repo}/issues/1/estimate`, payload: { estimate: 2 } })).statusCode

t.test('a delivery reads and writes only repositories bound to its connection', async (t) => {
  const app = await build(t)
  const [one, two] = [await connect(app), await connect(app)]

  // The fixture's repository is nobody's: a member event naming it (by id and name) changes nothing.
  const raise = { action: 'edited', repository: repository(REPO, 'acme', 'api'), member: { id: 3, login: 'carol' }, changes: { permission: { from: 'read', to: 'admin' } } }
  t.equal((await deliver(app, one, 'member', raise)).statusCode, 202, 'ignored')
  t.equal(await canEstimate(app, 'carol'), 403, 'carol is not raised')

  t.same((await deliver(app, one, 'issues', { action: 'opened', repository: repository(5000, 'team', 'tool'), issue: issue(1) })).json(), { result: 'handled' })
  t.same((await app.admin({ url: `/admin/connections/${one}/repositories` })).json(),
    [{ repo_id: 5000, platform_repo_id: 5000, owner: 'team', name: 'tool', html_url: 'https://github.com/team/tool' }], 'GitHub\'s free id is kept')

  const hostile = await deliver(app, two, 'repository', { action: 'renamed', repository: repository(5000, 'evil', 'pwned', { html_url: 'javascript:alert(1)//' }) })
  t.equal(hostile.statusCode, 400, 'a javascript: URL is refused')
  t.match(hostile.json().message, /repository\/html_url/)
  t.same((await deliver(app, two, 'repository', { action: 'renamed', repository: repository(5000, 'evil', 'pwned') })).json(), { result: 'handled' })
  const after = await repositories(app)
  t.match(after.find((r) => r.id === 5000), { owner: 'team', name: 'tool', html_url: 'https://github.com/team/tool' }, 'connection one\'s repository is unchanged')
  const theirs = (await app.admin({ url: `/admin/connections/${two}/repositories` })).json()
  t.equal(theirs.length, 1)
  t.not(theirs[0].repo_id, 5000, 'connection two got a repository of its own, under an id allocated here')

  const takeover = { action: 'added', repositories_added: [{ id: 5001, full_name: 'team/tool' }] }
  t.equal((await deliver(app, two, 'installation_repositories', takeover)).statusCode, 202, 'the name is taken by another connection\'s repository')
  t.equal((await app.admin({ url: `/admin/connections/${one}/repositories` })).json()[0].repo_id, 5000, 'still bound to connection one')

  const wipe = { action: 'deleted', repository: repository(REPO, 'acme', 'api') }
  t.equal((await deliver(app, two, 'repository', wipe)).statusCode, 202, 'deleting a repository made here is ignored')
  t.equal((await app.as('alice', { url: `/p1/repositories/${REPO}/issues/1` })).statusCode, 200, 'it and its issues stay')
  t.same((await deliver(app, one, 'repository', { action: 'deleted', repository: repository(5000, 'team', 'tool') })).json(), { result: 'handled' })
  t.notOk((await repositories(app)).some((r) => r.id === 5000), 'its own connection deletes it')
})

t.test('platform ids are not local ids: a Gitea user 1 is not alice', async (t) => {
  const app = await build(t)
  const gitea = (await app.admin({ method: 'POST', url: '/admin/connections', payload: { kind: 'gitea', web_url: 'https://git.example.org', secret: SECRET } })).json().id
  const tools = { id: 1, name: 'tools', full_name: 'ops/tools', owner: { id: 1, login: 'ops', username: 'ops' }, html_url: 'https://git.example.org/ops/tools', updated_at: when }
  const added = await deliver(app, gitea, 'collaborator', { action: 'added', repository: tools, collaborator: { id: 1, login: 'giteaadmin', username: 'giteaadmin' }, permission: 'read' }, { kind: 'gitea' })
  t.same(added.json(), { result: 'handled' })
  t.same((await app.admin({ url: '/admin/users' })).json()[0], { id: 1, login: 'alice', email: null, administrator: false, last_sign_in_at: null }, 'alice keeps her login')
  t.equal(await canEstimate(app, 'alice'), 200, 'her token and permission are untouched')
  t.same((await app.admin({ url: `/admin/connections/${gitea}/identities` })).json(), [{ connection_id: gitea, platform_user_id: 1, login: 'giteaadmin', user: null }])
  const bound = (await app.admin({ url: `/admin/connections/${gitea}/repositories` })).json()
  t.match(bound, [{ platform_repo_id: 1, owner: 'ops', name: 'tools' }])
  t.ok(bound[0].repo_id > 1003, 'the repository got an id allocated here')

  // Linking is the admin's (or sign-in's) decision; the identity's permission follows the link.
  t.equal((await app.admin({ method: 'PUT', url: '/admin/users/dave/identities', payload: { connection_id: gitea, platform_user_id: 1 } })).statusCode, 200)
  t.equal((await app.as('dave', { url: `/p1/repositories/${bound[0].repo_id}/epics` })).statusCode, 200, 'dave reads through the link')
  t.equal((await app.admin({ method: 'PUT', url: '/admin/users/carol/identities', payload: { connection_id: gitea, platform_user_id: 1 } })).statusCode, 409, 'one local user per identity')
  t.equal((await app.admin({ method: 'DELETE', url: `/admin/users/dave/identities/${gitea}` })).statusCode, 204)
  t.equal((await app.as('dave', { url: `/p1/repositories/${bound[0].repo_id}/epics` })).statusCode, 404, 'unlinked: the access goes')
  t.same((await app.admin({ url: '/admin/users/dave/identities' })).json(), [])
})

/** A host that answers the permission API from a table the test changes. */
async function permissionHost (t: Test) {
  const permissions = new Map<string, string>()
  const asked: string[] = []
  const server = createServer((req, res) => {
    asked.push(req.url!)
    const m = /\/collaborators\/([^/]+)\/permission$/.exec(req.url!)
    const permission = m === null ? undefined : permissions.get(decodeURIComponent(m[1]))
    res.setHeader('content-type', 'application/json')
    if (permission === undefined) {
      res.statusCode = 404
      res.end('{"message":"Not Found"}')
      return
    }
    res.end(JSON.stringify({ permission, role_name: permission }))
  })
  server.listen(0, '127.0.0.1')
  await once(server, 'listening')
  t.teardown(() => { server.closeAllConnections(); server.close() })
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, permissions, asked }
}

t.test('membership deliveries are a trigger: with a token, the host\'s answer is stored', async (t) => {
  const host = await permissionHost(t)
  const app = await build(t, { hosts: { allowPrivate: true } })
  const id = await connect(app, { api_url: host.url, token: 'ghp_reader' })
  const repo = repository(6000, 'team', 'svc')
  await deliver(app, id, 'issues', { action: 'opened', repository: repo, issue: issue(1) })
  t.equal((await app.admin({ method: 'PUT', url: '/admin/users/carol/identities', payload: { connection_id: id, platform_user_id: 900 } })).statusCode, 200)
  const member = (action: string, to?: string) => ({ action, repository: repo, member: { id: 900, login: 'carol-gh' }, ...(to === undefined ? {} : { changes: { permission: { to } } }) })

  host.permissions.set('carol-gh', 'admin')
  t.same((await deliver(app, id, 'member', member('added', 'admin'))).json(), { result: 'handled' })
  t.equal(await canEstimate(app, 'carol', 6000), 200, 'admin, as the host says')
  host.permissions.delete('carol-gh')
  t.same((await deliver(app, id, 'member', member('removed'))).json(), { result: 'handled' })
  t.equal(await canEstimate(app, 'carol', 6000), 404, 'removed')
  const replay = await deliver(app, id, 'member', member('added', 'admin'))
  t.same(replay.json(), { result: 'handled' }, 'a replayed "added admin" under a new delivery id')
  t.equal(await canEstimate(app, 'carol', 6000), 404, 'changes nothing: the host says she is not a collaborator')
  t.ok(host.asked.every((u) => u === '/repos/team/svc/collaborators/carol-gh/permission'), 'the host was asked about her, on that repository')

  // Without a token there is no one to ask: the delivery applies as sent (documented).
  const blind = await connect(app)
  const other = repository(6001, 'team', 'web')
  await deliver(app, blind, 'member', { action: 'added', repository: other, member: { id: 901, login: 'dave-gh' }, changes: { permission: { to: 'write' } } })
  await app.admin({ method: 'PUT', url: '/admin/users/dave/identities', payload: { connection_id: blind, platform_user_id: 901 } })
  t.equal((await app.as('dave', { method: 'POST', url: '/p1/repositories/6001/issues/1/moves', payload: { pipeline_id: 'x', position: 0 } })).statusCode !== 403, true, 'write applied as sent')
})

t.test('a host that does not answer the permission API: 502 and nothing changed', async (t) => {
  const app = await build(t, { hosts: { allowPrivate: true } })
  const id = await connect(app, { api_url: 'http://127.0.0.1:9', token: 'ghp_reader' })
  const res = await deliver(app, id, 'member', { action: 'added', repository: repository(6100, 'team', 'x'), member: { id: 5, login: 'someone' } })
  t.equal(res.statusCode, 502)
  t.match(res.json().message, /could not be asked/)
  t.notOk((await repositories(app)).some((r) => r.id === 6100), 'nothing was created')
})

t.test('deliveries whose object carries updated_at: older is stale, missing or invalid is refused', async (t) => {
  const app = await build(t)
  const id = await connect(app)
  const repo = repository(7000, 'team', 'ordered')
  t.same((await deliver(app, id, 'issues', { action: 'opened', repository: repo, issue: issue(1, { updated_at: '2026-02-01T00:00:00Z' }) })).json(), { result: 'handled' })
  for (const [what, value] of [['missing', undefined], ['not a date', 'x'], ['not a real day', '2026-02-30T00:00:00Z']] as const) {
    const res = await deliver(app, id, 'issues', { action: 'edited', repository: repo, issue: { ...issue(1, { title: 'Garbage' }), updated_at: value } })
    t.equal(res.statusCode, 400, `updated_at ${what}`)
  }
  const renamed = await deliver(app, id, 'repository', { action: 'renamed', repository: { ...repo, name: 'renamed', updated_at: undefined } })
  t.equal(renamed.statusCode, 400, 'a repository event without updated_at')
  const old = await deliver(app, id, 'repository', { action: 'renamed', repository: { ...repo, name: 'renamed', updated_at: '2025-01-01T00:00:00Z' } })
  t.same(old.json(), { result: 'stale' }, 'an older repository description')
  t.equal((await app.admin({ method: 'PATCH', url: '/admin/repositories/7000/issues/1', payload: { state: 'open' } })).json().title, 'Issue 1', 'nothing stored')
  t.match((await repositories(app)).find((r) => r.id === 7000), { name: 'ordered' })
})

t.test('payloads are checked before they touch the store', async (t) => {
  const app = await build(t)
  const id = await connect(app)
  const repo = repository(8000, 'team', 'checked')
  const before = (await repositories(app)).length
  const bad: Array<[string, string, object]> = [
    ['a repository without an id', 'issues', { action: 'opened', repository: { ...repo, id: undefined }, issue: issue(1) }],
    ['a negative id', 'issues', { action: 'opened', repository: { ...repo, id: -5 }, issue: issue(1) }],
    ['a fractional id', 'issues', { action: 'opened', repository: { ...repo, id: 1.5 }, issue: issue(1) }],
    ['an id past the safe integers', 'issues', { action: 'opened', repository: { ...repo, id: 2 ** 60 }, issue: issue(1) }],
    ['an issue without a number', 'issues', { action: 'opened', repository: repo, issue: { ...issue(1), number: undefined } }],
    ['a title of 2,000 characters', 'issues', { action: 'opened', repository: repo, issue: issue(1, { title: 'x'.repeat(2000) }) }],
    ['html_url not a URL', 'issues', { action: 'opened', repository: { ...repo, html_url: 'not a url' }, issue: issue(1) }],
    ['a member without a login', 'member', { action: 'added', repository: repo, member: { id: 4 } }],
    ['a login that is not one', 'member', { action: 'added', repository: repo, member: { id: 4, login: '../x' } }],
    ['a state that is not one', 'issues', { action: 'opened', repository: repo, issue: issue(1, { state: 'gone' }) }]
  ]
  for (const [what, event, payload] of bad) {
    const res = await deliver(app, id, event, payload)
    t.equal(res.statusCode, 400, what)
    t.match(res.json().message, /^the delivery is not valid: /)
  }
  t.equal((await repositories(app)).length, before, 'nothing was created')
  t.same((await app.admin({ url: `/admin/connections/${id}/identities` })).json(), [], 'nor an identity')
})

t.test('the receiver: unknown connections and unsigned deliveries are answered before the body is read; 25 MiB at most', async (t) => {
  const app = await build(t)
  const id = await connect(app)
  // A body that never ends: the answer must come without it.
  const endless = () => new Readable({ read () { this.push('{"x":"') } })
  const post = async (connection: string, headers: Record<string, string>) => await Promise.race([
    app.inject({ method: 'POST', url: `/integrations/${connection}/webhook`, headers: { 'content-type': 'application/json', 'x-github-event': 'issues', ...headers }, payload: endless() }),
    new Promise<never>((_resolve, reject) => setTimeout(() => reject(new Error('the body was waited for')), 3000))
  ])
  t.equal((await post('aaaaaaaaaaaaaaaaaaaaaaaa', { 'x-hub-signature-256': sign('x') })).statusCode, 404, 'unknown connection')
  t.equal((await post(id, {})).statusCode, 401, 'unsigned')
  const big = Buffer.alloc(25 * 1024 * 1024 + 10, 0x20)
  const tooBig = await app.inject({ method: 'POST', url: `/integrations/${id}/webhook`, headers: { 'content-type': 'application/json', 'x-github-event': 'issues', 'x-hub-signature-256': sign('x') }, payload: big })
  t.equal(tooBig.statusCode, 413, 'over 25 MiB')
})

t.test('first sight is an upsert: simultaneous deliveries for new repositories all land', async (t) => {
  const apps: App[] = []
  if (TEST_DATABASE_URL !== undefined) {
    // Two instances on one schema, as behind a load balancer.
    const { schema, drop } = await testSchema(TEST_DATABASE_URL)
    for (let i = 0; i < 2; i++) {
      const app = await buildApp({
        databaseUrl: TEST_DATABASE_URL,
        databaseSchema: schema,
        databasePoolMax: 6,
        adminToken: ADMIN_TOKEN,
        secretKey: SECRET_KEY,
        documentation: false,
        rateLimit: { max: 100_000, timeWindow: 60_000 },
        webhooks: { worker: false }
      }) as App
      await app.ready()
      app.admin = async (opts) => await app.inject({ ...opts, headers: { authorization: `Bearer ${ADMIN_TOKEN}`, ...opts.headers } })
      apps.push(app)
    }
    t.teardown(async () => { for (const app of apps) await app.close(); await drop() })
    await apps[0].admin({ method: 'POST', url: '/admin/import', payload: testFixture() })
  } else {
    apps.push(await build(t, { webhooks: { worker: false } }))
  }
  const id = await connect(apps[0])
  const sent = []
  for (let r = 0; r < 12; r++) {
    for (let n = 1; n <= 5; n++) {
      sent.push(deliver(apps[(r + n) % apps.length], id, 'issues', { action: 'opened', repository: repository(9000 + r, 'race', `repo-${r}`), issue: issue(n) }))
    }
  }
  const answers = await Promise.all(sent)
  t.same(answers.map((a) => a.statusCode).filter((s) => s !== 200), [], 'every delivery answered 200')
  const bound = (await apps[0].admin({ url: `/admin/connections/${id}/repositories` })).json() as Array<{ repo_id: number }>
  t.equal(bound.length, 12, 'each repository once')
  for (const { repo_id: repoId } of bound) {
    const issues = await apps[0].admin({ method: 'PATCH', url: `/admin/repositories/${repoId}/issues/5`, payload: { state: 'open' } })
    t.equal(issues.statusCode, 200, `repository ${repoId} has its fifth issue`)
  }
})

t.test('the migration carries bound repositories and delivery-made users over as identities', async (t) => {
  const dir = t.testdir({})
  const { db } = sqliteKysely(`${dir}/old.db`)
  t.teardown(async () => { await db.destroy() })
  // The schema as it was before identities.
  const old = Object.fromEntries(Object.entries(migrations('sqlite')).filter(([name]) => name < '005')) as Record<string, Migration>
  const migrator = new Migrator({ db, provider: { getMigrations: async () => old } })
  t.equal((await migrator.migrateToLatest()).error, undefined)
  const raw = db as any
  await raw.insertInto('users').values([{ id: 1, login: 'alice', token_hash: null, created_at: when }, { id: 39652351, login: 'hacktocat', token_hash: null, created_at: when }]).execute()
  await raw.insertInto('connections').values({ id: 'c1', kind: 'github', web_url: 'https://github.com', api_url: 'https://api.github.com', secret: 's'.repeat(20), token: null, created_at: when }).execute()
  await raw.insertInto('repositories').values([
    { id: 186853002, owner: 'Codertocat', name: 'Hello-World', html_url: 'https://github.com/Codertocat/Hello-World', connection_id: 'c1' },
    { id: 1001, owner: 'acme', name: 'api', html_url: null, connection_id: null }
  ]).execute()
  await raw.insertInto('permissions').values([{ user_id: 39652351, repo_id: 186853002, level: 2 }, { user_id: 1, repo_id: 1001, level: 3 }]).execute()

  await migrate(db, 'sqlite')
  const repos = await raw.selectFrom('repositories').select(['id', 'connection_id', 'platform_repo_id']).orderBy('id').execute()
  t.same(repos, [{ id: 1001, connection_id: null, platform_repo_id: null }, { id: 186853002, connection_id: 'c1', platform_repo_id: 186853002 }], 'bound repositories keep their id as the platform\'s')
  t.same(await raw.selectFrom('host_identities').select(['connection_id', 'platform_user_id', 'login', 'user_id']).execute(),
    [{ connection_id: 'c1', platform_user_id: 39652351, login: 'hacktocat', user_id: null }],
    'the delivery-made user is an identity whose equal-id link 021-upgrade-links leaves for an administrator to confirm')
  t.same(await raw.selectFrom('identity_permissions').selectAll().execute(), [{ connection_id: 'c1', platform_user_id: 39652351, repo_id: 186853002, level: 2 }])
  t.same(await raw.selectFrom('permissions').select(['user_id', 'repo_id', 'level']).orderBy('user_id').execute(),
    [{ user_id: 1, repo_id: 1001, level: 3 }, { user_id: 39652351, repo_id: 186853002, level: 2 }], 'no permission lost')
})

t.test('the CLI lists bindings and identities and links them', async (t) => {
  const database = `${t.testdir({})}/cli.db`
  const app = await buildApp({ database, adminToken: ADMIN_TOKEN, secretKey: SECRET_KEY, documentation: false, webhooks: { worker: false } }) as App
  app.admin = async (opts) => await app.inject({ ...opts, headers: { authorization: `Bearer ${ADMIN_TOKEN}`, ...opts.headers } })
  await app.admin({ method: 'POST', url: '/admin/import', payload: testFixture() })
  const id = await connect(app)
  await deliver(app, id, 'member', { action: 'added', repository: repository(4400, 'team', 'cli'), member: { id: 55, login: 'dave-gh' }, changes: { permission: { to: 'read' } } })
  await app.close()
  const { runAdminCommand } = await import('../cli/admin.js')
  const cli = { config: { secretKey: SECRET_KEY } }
  t.match(await runAdminCommand(database, ['bindings', id], () => {}, cli), [{ repo_id: 4400, platform_repo_id: 4400, owner: 'team', name: 'cli' }])
  t.match(await runAdminCommand(database, ['link-identity', 'dave', id, '55'], () => {}, cli), { platform_user_id: 55, login: 'dave-gh', user: 'dave' })
  t.match(await runAdminCommand(database, ['identities', id], () => {}, cli), [{ platform_user_id: 55, user: 'dave' }])
  await t.rejects(runAdminCommand(database, ['link-identity', 'dave', id, 'x'], () => {}, cli), /platform_user_id must be a positive integer/)
  t.match(await runAdminCommand(database, ['unlink-identity', 'dave', id], () => {}, cli), { unlinked: 'dave' })
})
