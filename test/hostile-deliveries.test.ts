import t, { type Test } from 'tap'
import { once } from 'node:events'
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { deliver, SECRET } from './deliveries.js'
import { build, testFixture, type App } from './helper.js'

// Hostile webhook deliveries and host answers: what a connection's secret or a host can and cannot do (docs/connections.md).

const repo = (extra: object = {}) => ({ id: 6000, name: 'svc', full_name: 'team/svc', owner: { login: 'team', id: 70 }, html_url: 'https://github.com/team/svc', updated_at: '2026-01-01T00:00:00Z', ...extra })
let clock = Date.parse('2026-01-02T00:00:00Z')
const issue = (extra: object = {}) => ({ number: 1, title: 'Sync me', state: 'open', updated_at: new Date(clock += 1000).toISOString(), ...extra })

async function connect (app: App, payload: object = {}): Promise<string> {
  const res = await app.admin({ method: 'POST', url: '/admin/connections', payload: { kind: 'github', secret: SECRET, ...payload } })
  if (res.statusCode !== 201) throw new Error(res.body)
  return res.json().id as string
}

/** A GitHub-shaped host answering GET /user with the given body. */
async function userHost (t: Test, user: object) {
  const server = createServer((req, res) => {
    res.setHeader('content-type', 'application/json')
    res.end(req.url === '/user' ? JSON.stringify(user) : '[]')
  })
  server.listen(0, '127.0.0.1')
  await once(server, 'listening')
  t.teardown(() => { server.closeAllConnections(); server.close() })
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`
}

t.test('a delivered title, label or milestone title holding a NUL is a 400, never a 500 (PostgreSQL cannot store NUL)', async (t) => {
  const app = await build(t, { webhooks: { worker: false } })
  const id = await connect(app)
  const cases: Array<[string, string, object]> = [
    ['title', 'issues', { action: 'opened', repository: repo(), issue: issue({ title: 'a\u0000b' }) }],
    ['label name', 'issues', { action: 'opened', repository: repo(), issue: issue({ number: 2, labels: [{ name: 'bug\u0000', color: 'ededed' }] }) }],
    ['milestone title', 'milestone', { action: 'created', repository: repo(), milestone: { number: 1, title: 'v1\u0000', updated_at: '2026-01-03T00:00:00Z' } }]
  ]
  for (const [what, event, payload] of cases) {
    const res = await deliver(app, id, event, payload)
    t.equal(res.statusCode, 400, `${what}: ${res.body}`)
  }
})

t.test('the host\'s GET /user answer with a NUL in its login does not make deliveries fail with a 500', async (t) => {
  const host = await userHost(t, { id: 7, login: 'bot\u0000' })
  const app = await build(t, { webhooks: { worker: false }, hosts: { allowPrivate: true } })
  const id = await connect(app, { api_url: host, token: 'ghp_x' })
  const res = await deliver(app, id, 'issues', { action: 'opened', repository: repo(), issue: issue(), sender: { id: 42, login: 'someone' } })
  t.equal(res.statusCode, 200, res.body)
})

t.test('a hosted-import placeholder is not taken over by a GitHub Enterprise connection (another id space)', async (t) => {
  // Placeholder 77 stands for github.com repository 77 (the hosted service keeps github.com ids).
  const fixture = { ...testFixture(), repositories: [...testFixture().repositories, { id: 77, owner: 'unknown', name: '77', placeholder: true }] }
  const app = await build(t, { fixture, webhooks: { worker: false } })
  const ghe = await connect(app, { web_url: 'https://ghe.example.com' })
  const res = await deliver(app, ghe, 'repository', { action: 'created', repository: repo({ id: 77, name: 'other', owner: { login: 'corp' }, html_url: 'https://ghe.example.com/corp/other' }) })
  t.equal(res.statusCode, 200)
  const placeholder = (await app.admin({ url: '/admin/repositories' })).json().find((r: { id: number }) => r.id === 77)
  t.match(placeholder, { owner: 'unknown', name: '77' }, 'GHE repository 77 is not github.com repository 77')
})

t.test('a placeholder taken over by a forged delivery can then be deleted with everything planned on it', async (t) => {
  // Any GitHub connection's secret (say, one leaked from a repository's webhook settings) reaches every placeholder.
  const fixture = {
    ...testFixture(),
    repositories: [...testFixture().repositories, { id: 77, owner: 'unknown', name: '77', placeholder: true }],
    issues: [...testFixture().issues, { repo_id: 77, number: 1, title: 'imported' }]
  }
  const app = await build(t, { fixture, webhooks: { worker: false } })
  const other = await connect(app)
  const forged = repo({ id: 77, name: 'mine', owner: { login: 'mallory' }, html_url: 'https://github.com/mallory/mine', updated_at: '2030-01-01T00:00:00Z' })
  await deliver(app, other, 'repository', { action: 'created', repository: forged })
  await deliver(app, other, 'repository', { action: 'deleted', repository: forged })
  const issues = await app.admin({ url: '/admin/repositories/77/issues' })
  t.equal(issues.statusCode, 200, 'the imported repository and its planning data are still here')
})

t.test('a member delivery naming another repository\'s owner/name next to a bound id does not grant the other repository\'s permission', async (t) => {
  // The host: mallory is admin of her own mallory/own, and only a reader of team/svc.
  const server = createServer((req, res) => {
    res.setHeader('content-type', 'application/json')
    if (req.url === '/user') return res.end(JSON.stringify({ id: 7, login: 'planning-bot' }))
    if (req.url === '/repos/mallory/own/collaborators/mallory/permission') return res.end(JSON.stringify({ permission: 'admin' }))
    if (req.url === '/repos/team/svc/collaborators/mallory/permission') return res.end(JSON.stringify({ permission: 'read' }))
    res.statusCode = 404
    res.end('{}')
  })
  server.listen(0, '127.0.0.1')
  await once(server, 'listening')
  t.teardown(() => { server.closeAllConnections(); server.close() })
  const app = await build(t, { webhooks: { worker: false }, hosts: { allowPrivate: true } })
  const id = await connect(app, { api_url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, token: 'ghp_x' })
  const mallory = { id: 99, login: 'mallory' }
  t.equal((await deliver(app, id, 'member', { action: 'added', repository: repo(), member: mallory })).statusCode, 200)
  const linked = await app.admin({ method: 'PUT', url: '/admin/users/dave/identities', payload: { connection_id: id, platform_user_id: 99 } })
  t.equal(linked.statusCode, 200, linked.body)
  t.equal((await app.as('dave', { url: '/p1/repositories/6000/webhooks' })).statusCode, 403, 'dave (mallory) reads team/svc only')
  // Forged with the connection's secret: team/svc's id, mallory/own's name.
  const forged = repo({ name: 'own', owner: { login: 'mallory' }, html_url: 'https://github.com/mallory/own' })
  await deliver(app, id, 'member', { action: 'edited', repository: forged, member: mallory })
  t.equal((await app.as('dave', { url: '/p1/repositories/6000/webhooks' })).statusCode, 403, 'still not admin of team/svc (the host was asked about mallory/own)')
})

t.test('a GitHub repository id at the top of the safe range does not push the ids allocated here past it', async (t) => {
  const app = await build(t, { webhooks: { worker: false } })
  const github = await connect(app)
  const gitea = await connect(app, { kind: 'gitea', web_url: 'https://git.example.org' })
  const huge = repo({ id: Number.MAX_SAFE_INTEGER, name: 'huge', owner: { login: 'far' }, html_url: 'https://github.com/far/huge' })
  t.equal((await deliver(app, github, 'repository', { action: 'created', repository: huge })).statusCode, 200)
  for (const n of [5, 6]) {
    const tools = repo({ id: n, name: `tools${n}`, owner: { login: 'ops' }, html_url: `https://git.example.org/ops/tools${n}` })
    t.equal((await deliver(app, gitea, 'repository', { action: 'created', repository: tools }, { kind: 'gitea' })).statusCode, 200)
  }
  const bound = (await app.admin({ url: `/admin/connections/${gitea}/repositories` })).json() as Array<{ repo_id: number }>
  t.equal(bound.length, 2, 'both Gitea repositories are bound')
  for (const b of bound) {
    t.ok(Number.isSafeInteger(b.repo_id), `repo_id ${b.repo_id} is a safe integer`)
    t.equal((await app.admin({ url: `/admin/repositories/${b.repo_id}/issues` })).statusCode, 200, `repository ${b.repo_id} can be addressed`)
  }
})

t.test('with a token, a rename or a delete is what the host says, not what a signed delivery claims', async (t) => {
  const gone = { on: false }
  const server = createServer((req, res) => {
    res.setHeader('content-type', 'application/json')
    if (req.url === '/user') return res.end(JSON.stringify({ id: 7, login: 'planning-bot' }))
    if (req.url === '/repositories/6000' && !gone.on) return res.end(JSON.stringify(repo({ name: 'svc-renamed', full_name: 'team/svc-renamed', html_url: 'https://github.com/team/svc-renamed' })))
    res.statusCode = 404
    res.end('{"message":"Not Found"}')
  })
  server.listen(0, '127.0.0.1')
  await once(server, 'listening')
  t.teardown(() => { server.closeAllConnections(); server.close() })
  const app = await build(t, { webhooks: { worker: false }, hosts: { allowPrivate: true } })
  const id = await connect(app, { api_url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, token: 'ghp_x' })
  t.equal((await deliver(app, id, 'issues', { action: 'opened', repository: repo(), issue: issue(), sender: { id: 42, login: 'someone' } })).statusCode, 200)
  const forged = repo({ name: 'pwned', owner: { login: 'mallory', id: 99 }, html_url: 'https://github.com/mallory/pwned', updated_at: '2030-01-01T00:00:00Z' })
  t.equal((await deliver(app, id, 'repository', { action: 'renamed', repository: forged })).statusCode, 200)
  const named = async () => ((await app.admin({ url: `/admin/connections/${id}/repositories` })).json() as Array<{ owner: string, name: string }>)
  t.match(await named(), [{ owner: 'team', name: 'svc-renamed' }], 'renamed to the host\'s name, not the delivery\'s')
  t.equal((await deliver(app, id, 'repository', { action: 'deleted', repository: forged })).statusCode, 202, 'a delete the host does not confirm is ignored')
  t.equal((await named()).length, 1)
  gone.on = true
  t.equal((await deliver(app, id, 'repository', { action: 'deleted', repository: repo({ updated_at: '2030-01-02T00:00:00Z' }) })).statusCode, 200)
  t.same(await named(), [], 'deleted once the host has it no more')
})
