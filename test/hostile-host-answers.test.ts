import t, { type Test } from 'tap'
import { once } from 'node:events'
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import { deliver, SECRET } from './deliveries.js'
import { build, PRIVATE_REPO, type App } from './helper.js'

// Acting on the issue host with hostile or wrong answers and inputs (docs/connections.md, "Two-way sync").

/** A GitHub-shaped host; `answer` may take over any request (return true when it did). */
async function fakeHost (t: Test, answer?: (req: IncomingMessage, res: ServerResponse, body: string) => boolean) {
  const writes: string[] = []
  const server = createServer((req, res) => {
    let body = ''
    req.on('data', (d) => { body += String(d) })
    req.on('end', () => {
      res.setHeader('content-type', 'application/json')
      if (req.url === '/user') return res.end(JSON.stringify({ id: 7, login: 'planning-bot' }))
      writes.push(`${req.method} ${req.url}`)
      if (answer?.(req, res, body) === true) return
      const sent = body === '' ? {} : JSON.parse(body)
      res.end(JSON.stringify({ number: 41, title: sent.title ?? 'x', state: sent.state ?? 'open', updated_at: new Date().toISOString(), labels: [], assignees: [] }))
    })
  })
  server.listen(0, '127.0.0.1')
  await once(server, 'listening')
  t.teardown(() => { server.closeAllConnections(); server.close() })
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, writes }
}

const repo = { id: 6000, name: 'svc', full_name: 'team/svc', owner: { login: 'team', id: 70 }, html_url: 'https://github.com/team/svc', updated_at: '2026-01-01T00:00:00Z' }

async function setUp (app: App, hostUrl: string) {
  const connection = (await app.admin({ method: 'POST', url: '/admin/connections', payload: { kind: 'github', secret: SECRET, api_url: hostUrl, token: 'ghp_writer' } })).json().id as string
  const opened = await deliver(app, connection, 'issues', { action: 'opened', repository: repo, issue: { number: 1, title: 'One', state: 'open', updated_at: '2026-01-02T00:00:00Z' } })
  if (opened.statusCode !== 200) throw new Error(opened.body)
  await app.admin({ method: 'POST', url: '/admin/workspaces', payload: { name: 'Synced', repositories: [6000], pipelines: ['Inbox', 'Doing'] } })
  await app.admin({ method: 'PUT', url: '/admin/repositories/6000/permissions/bob', payload: { permission: 'write' } })
  // A workspace bob cannot read: it holds only PRIVATE_REPO.
  const hidden = (await app.admin({ method: 'POST', url: '/admin/workspaces', payload: { name: 'Hidden plans', repositories: [PRIVATE_REPO], pipelines: ['Secret lane'] } })).json()
  return { connection, hidden: hidden as { id: string, pipelines: Array<{ id: string }> } }
}

t.test('a new issue naming a pipeline of a workspace the user cannot read: no trace of that workspace, and nothing written to the host', async (t) => {
  const host = await fakeHost(t)
  const app = await build(t, { webhooks: { worker: false }, hosts: { allowPrivate: true }, sync: { worker: false } })
  const { hidden } = await setUp(app, host.url)
  const unknown = await app.as('bob', { method: 'POST', url: '/p1/repositories/6000/issues', payload: { title: 'A', pipeline_id: 'no-such-pipeline' } })
  const secret = await app.as('bob', { method: 'POST', url: '/p1/repositories/6000/issues', payload: { title: 'B', pipeline_id: hidden.pipelines[0].id } })
  t.equal(secret.statusCode, unknown.statusCode, `the same answer as an unknown pipeline (${unknown.body} / ${secret.body})`)
  t.notOk(secret.body.includes(hidden.id), 'the hidden workspace\'s id is not named')
  t.same(host.writes, [], 'an issue that cannot be placed as asked is not opened on the host (no half-written change)')
})

t.test('the host\'s permission answer is bounded in size like every other host answer', async (t) => {
  const host = await fakeHost(t, (req, res) => {
    if (!String(req.url).includes('/collaborators/')) return false
    res.end(JSON.stringify({ permission: 'admin', padding: 'x'.repeat(4 * 1024 * 1024) }))
    return true
  })
  const app = await build(t, { webhooks: { worker: false }, hosts: { allowPrivate: true }, sync: { worker: false } })
  const { connection } = await setUp(app, host.url)
  const res = await deliver(app, connection, 'member', { action: 'added', repository: repo, member: { id: 99, login: 'mallory' } })
  t.equal(res.statusCode, 502, `a 4 MiB answer is refused as too large (${res.body})`)
})

t.test('the host\'s answer to an edit of issue 1 that describes another issue does not change or make that other issue', async (t) => {
  const host = await fakeHost(t) // answers every write with issue 41
  const app = await build(t, { webhooks: { worker: false }, hosts: { allowPrivate: true }, sync: { worker: false } })
  await setUp(app, host.url)
  const res = await app.as('bob', { method: 'PATCH', url: '/p1/repositories/6000/issues/1', payload: { title: 'Renamed' } })
  t.not(res.statusCode, 200, `an answer for the wrong issue is refused (${res.body})`)
  t.equal((await app.as('bob', { url: '/p1/repositories/6000/issues/41' })).statusCode, 404, 'issue 41 was not made by an answer about issue 1')
})
