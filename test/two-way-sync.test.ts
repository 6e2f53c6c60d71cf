import t, { type Test } from 'tap'
import { once } from 'node:events'
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { buildApp } from '../app.js'
import { deliver, SECRET } from './deliveries.js'
import { formReceiver } from './receiver.js'
import { ADMIN_TOKEN, build, buildWithSql, SECRET_KEY, testFixture, type App } from './helper.js'

const OWN = 7 // the token's own account on the fake host

/** A GitHub-shaped host that records label writes; `refuse` makes the next answers fail. */
async function fakeHost (t: Test) {
  const writes: string[] = []
  const refusals: Array<{ status: number, headers?: Record<string, string>, message: string }> = []
  const hang = { on: false }
  const server = createServer((req, res) => {
    let body = ''
    req.on('data', (d) => { body += String(d) })
    req.on('end', () => {
      res.setHeader('content-type', 'application/json')
      if (req.url === '/user') {
        const second = req.headers.authorization === 'Bearer ghp_second'
        return res.end(JSON.stringify(second ? { id: OWN + 1, login: 'second-bot' } : { id: OWN, login: 'planning-bot' }))
      }
      const refusal = refusals.shift()
      if (refusal !== undefined) {
        res.writeHead(refusal.status, refusal.headers ?? {})
        return res.end(JSON.stringify({ message: refusal.message, documentation_url: 'x'.repeat(5000) }))
      }
      writes.push(`${req.method} ${decodeURIComponent(req.url!)}${body === '' ? '' : ` ${body}`}`)
      if (hang.on) return
      const sent = body === '' ? {} : JSON.parse(body)
      const described = (number: number) => ({
        number,
        title: sent.title ?? 'Sync me',
        state: sent.state ?? 'open',
        updated_at: new Date().toISOString(),
        labels: (sent.labels ?? []).map((name: string) => ({ name, color: 'ededed' })),
        assignees: (sent.assignees ?? []).map((login: string) => ({ login, avatar_url: `https://avatars.example/${login}` }))
      })
      if (req.method === 'POST' && req.url === '/repos/team/svc/issues') return res.end(JSON.stringify(described(41)))
      const edited = /^\/repos\/team\/svc\/issues\/(\d+)$/.exec(req.url!)
      if (req.method === 'PATCH' && edited !== null) return res.end(JSON.stringify(described(Number(edited[1]))))
      res.end(req.method === 'DELETE' ? '' : '[]')
    })
  })
  server.listen(0, '127.0.0.1')
  await once(server, 'listening')
  t.teardown(() => { server.closeAllConnections(); server.close() })
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, writes, refusals, hang }
}

const repo = { id: 6000, name: 'svc', full_name: 'team/svc', owner: { login: 'team', id: 70 }, html_url: 'https://github.com/team/svc', updated_at: '2026-01-01T00:00:00Z' }
let clock = Date.parse('2026-01-02T00:00:00Z')
const issue = (extra: object = {}) => ({ number: 1, title: 'Sync me', state: 'open', updated_at: new Date(clock += 1000).toISOString(), labels: [], assignees: [], ...extra })

async function waitFor (check: () => boolean | Promise<boolean>, ms = 8000): Promise<void> {
  const deadline = Date.now() + ms
  while (!await check()) {
    if (Date.now() > deadline) throw new Error('timed out')
    await new Promise((resolve) => setTimeout(resolve, 25))
  }
}

/** A connection to the fake host, issue 1 of team/svc on a workspace with labelled pipelines Doing and Done. */
async function setUp (t: Test, app: App, hostUrl: string) {
  const connection = (await app.admin({ method: 'POST', url: '/admin/connections', payload: { kind: 'github', secret: SECRET, api_url: hostUrl, token: 'ghp_writer' } })).json().id as string
  t.same((await deliver(app, connection, 'issues', { action: 'opened', repository: repo, issue: issue(), sender: { id: 42, login: 'someone' } })).json(), { result: 'handled' })
  const ws = (await app.admin({ method: 'POST', url: '/admin/workspaces', payload: { name: 'Synced', repositories: [6000], pipelines: ['Inbox', 'Doing', 'Done'] } })).json()
  await app.admin({ method: 'PUT', url: '/admin/repositories/6000/permissions/alice', payload: { permission: 'admin' } })
  await app.admin({ method: 'PUT', url: '/admin/repositories/6000/permissions/bob', payload: { permission: 'write' } })
  const [inbox, doing, done] = (ws.pipelines as Array<{ id: string }>).map((p) => p.id)
  const label = async (pipeline: string, hostLabel: string | null, who: 'alice' | 'bob' = 'alice') =>
    await app.as(who, { method: 'PATCH', url: `/p2/workspaces/${ws.id}/pipelines/${pipeline}`, payload: { host_label: hostLabel } })
  const move = async (pipeline: string) => await app.as('bob', { method: 'POST', url: '/p1/repositories/6000/issues/1/moves', payload: { pipeline_id: pipeline, position: 'top' } })
  const where = async () => ((await app.as('bob', { url: '/p1/repositories/6000/issues/1' })).json().pipeline?.pipeline_id as string)
  return { connection, ws: ws.id as string, inbox, doing, done, label, move, where }
}

t.test('pipeline labels: mapped by a workspace admin, written on moves, coalesced, moved by the host\'s label', async (t) => {
  const host = await fakeHost(t)
  const app = await build(t, { webhooks: { worker: false }, hosts: { allowPrivate: true }, sync: { retryBaseMs: 20, pollMs: 50 } })
  const s = await setUp(t, app, host.url)

  t.equal((await s.label(s.doing, 'status: doing', 'bob')).statusCode, 403, 'write is not enough')
  t.equal((await s.label(s.doing, 'status: doing')).statusCode, 204)
  t.equal((await s.label(s.done, 'Status: Doing')).statusCode, 409, 'two pipelines cannot name one label')
  t.equal((await s.label(s.done, 'status: done')).statusCode, 204)
  const listed = (await app.as('alice', { url: '/p2/workspaces' })).json().find((w: { id: string }) => w.id === s.ws)
  t.same(listed.pipelines.map((p: { host_label: string | null }) => p.host_label), [null, 'status: doing', 'status: done'])

  t.equal((await s.move(s.doing)).statusCode, 200)
  await waitFor(() => host.writes.length >= 1)
  t.same(host.writes, ['POST /repos/team/svc/issues/1/labels {"labels":["status: doing"]}'], 'the label is written')
  await s.move(s.done)
  await waitFor(() => host.writes.length >= 3)
  t.same(host.writes.slice(1), ['POST /repos/team/svc/issues/1/labels {"labels":["status: done"]}', 'DELETE /repos/team/svc/issues/1/labels/status: doing'], 'the other pipeline\'s label comes off')

  // Our own writes come back as deliveries from the token's account, late and out of order: nothing moves.
  host.writes.length = 0
  await s.move(s.doing)
  await s.move(s.done)
  for (const name of ['status: done', 'status: doing']) {
    const echo = await deliver(app, s.connection, 'issues', { action: 'labeled', repository: repo, issue: issue(), label: { name }, sender: { id: OWN, login: 'planning-bot' } })
    t.equal(echo.statusCode, 202, `our own "${name}" coming back changes nothing`)
  }
  t.equal(await s.where(), s.done, 'the card stays where it was moved last')
  await waitFor(async () => (await app.admin({ url: `/admin/connections/${s.connection}/outbox` })).json().length === 0 && host.writes.length > 0)
  t.match(host.writes.at(-2) ?? host.writes.at(-1), /status: done|status: doing/)
  t.ok(host.writes.filter((w) => w.startsWith('POST')).at(-1)!.includes('status: done'), 'the last label written is the last pipeline\'s')

  // Someone else labels the issue on the host: the card follows.
  const theirs = await deliver(app, s.connection, 'issues', { action: 'labeled', repository: repo, issue: issue({ labels: [{ name: 'status: doing', color: 'fbca04' }] }), label: { name: 'status: doing' }, sender: { id: 42, login: 'someone' } })
  t.same(theirs.json(), { result: 'handled' })
  t.equal(await s.where(), s.doing, 'moved to the labelled pipeline')
  const bulk = (await app.as('bob', { url: '/p1/repositories/6000/issues?issue_numbers=1' })).json()[0]
  t.same(bulk.labels, [{ name: 'status: doing', color: 'fbca04' }], 'the host\'s labels in the bulk read')
  t.same(bulk.assignees, [])
  t.same((await deliver(app, s.connection, 'issues', { action: 'unlabeled', repository: repo, issue: issue(), label: { name: 'status: doing' }, sender: { id: 42, login: 'someone' } })).json(), { result: 'handled' })
  t.equal(await s.where(), s.doing, 'unlabeled moves nothing')
})

t.test('quick moves coalesce: ten moves between two labelled pipelines make one label write, the last pipeline\'s', async (t) => {
  const host = await fakeHost(t)
  const app = await build(t, { webhooks: { worker: false }, hosts: { allowPrivate: true }, sync: { retryBaseMs: 20, pollMs: 50, coalesceMs: 1500 } })
  const s = await setUp(t, app, host.url)
  t.equal((await s.label(s.doing, 'status: doing')).statusCode, 204)
  t.equal((await s.label(s.done, 'status: done')).statusCode, 204)
  for (let i = 0; i < 10; i++) t.equal((await s.move(i % 2 === 0 ? s.doing : s.done)).statusCode, 200)
  await waitFor(async () => (await app.admin({ url: `/admin/connections/${s.connection}/outbox` })).json().length === 0 && host.writes.length > 0)
  // One write when the moves fit in the window; a slow run may split them in two, never more.
  const posts = host.writes.filter((w) => w.startsWith('POST'))
  t.ok(posts.length <= 2 && host.writes.length <= 3, `${host.writes.length} calls to the host: ${host.writes.join('; ')}`)
  t.equal(posts.at(-1), 'POST /repos/team/svc/issues/1/labels {"labels":["status: done"]}', 'the last label written is the last pipeline\'s')
})

t.test('the outbox: coalesced while the writer is stopped, the host\'s refusals and rate limit, kept across a restart', async (t) => {
  const host = await fakeHost(t)
  const database = `${t.testdir({})}/sync.db`
  const options = {
    database,
    adminToken: ADMIN_TOKEN,
    secretKey: SECRET_KEY,
    documentation: false as const,
    webhooks: { worker: false },
    hosts: { allowPrivate: true },
    rateLimit: { max: 10_000, timeWindow: 60_000 }
  }
  const first = await buildApp({ ...options, sync: { worker: false } }) as App
  t.teardown(async () => { await first.close() })
  first.admin = async (opts) => await first.inject({ ...opts, headers: { authorization: `Bearer ${ADMIN_TOKEN}`, ...opts.headers } })
  first.as = async (login, opts) => await first.inject({ ...opts, headers: { 'x-authentication-token': `${login}-token-${login === 'bob' || login === 'dave' ? '1234567' : '123456'}`, ...opts.headers } })
  await first.admin({ method: 'POST', url: '/admin/import', payload: testFixture() })
  const s = await setUp(t, first, host.url)
  await s.label(s.doing, 'status: doing')
  await s.label(s.done, 'status: done')
  for (let i = 0; i < 10; i++) t.equal((await s.move(i % 2 === 0 ? s.doing : s.done)).statusCode, 200)
  const pending = (await first.admin({ url: `/admin/connections/${s.connection}/outbox` })).json()
  t.match(pending, [{ repo_id: 6000, issue_number: 1, status: 'pending', attempts: 0 }], 'ten moves, one pending write')
  await first.close()

  // Started again: the write goes out, after the host's rate limit and a refusal.
  host.refusals.push({ status: 403, headers: { 'x-ratelimit-remaining': '0', 'x-ratelimit-reset': String(Math.ceil(Date.now() / 1000)) }, message: 'API rate limit exceeded' })
  host.refusals.push({ status: 500, message: 'boom' })
  const second = await buildApp({ ...options, sync: { retryBaseMs: 20, pollMs: 50 } }) as App
  t.teardown(async () => { await second.close() })
  await second.ready()
  await waitFor(() => host.writes.length >= 1, 10_000)
  // One write when the moves fit in the window; a slow run may split them in two, never more.
  const posts = host.writes.filter((w) => w.startsWith('POST'))
  t.ok(posts.length <= 2 && host.writes.length <= 3, `${host.writes.length} calls to the host: ${host.writes.join('; ')}`)
  t.equal(posts.at(-1), 'POST /repos/team/svc/issues/1/labels {"labels":["status: done"]}', 'the last label written is the last pipeline\'s')
  // The write is marked done just after the host has answered it.
  const outbox = async () => (await second.inject({ url: `/admin/connections/${s.connection}/outbox`, headers: { authorization: `Bearer ${ADMIN_TOKEN}` } })).json()
  await waitFor(async () => (await outbox()).length === 0)
  t.same(await outbox(), [], 'nothing left')
  t.equal(host.writes.length, 1, 'and no second write')
})

t.test('a host that refuses for good: the write is failed and shown with its answer', async (t) => {
  const host = await fakeHost(t)
  const app = await build(t, { webhooks: { worker: false }, hosts: { allowPrivate: true }, sync: { retryBaseMs: 20, pollMs: 50 } })
  const s = await setUp(t, app, host.url)
  await s.label(s.doing, 'status: doing')
  host.refusals.push({ status: 403, message: 'Resource not accessible by integration' })
  await s.move(s.doing)
  await waitFor(async () => (await app.admin({ url: `/admin/connections/${s.connection}/outbox` })).json()[0]?.status === 'failed')
  const [entry] = (await app.admin({ url: `/admin/connections/${s.connection}/outbox` })).json()
  t.match(entry, { status: 'failed', last_status_code: 403, last_error: 'the issue host answered 403: Resource not accessible by integration' })
  t.ok(entry.last_error.length < 300, 'the host\'s long body is not kept')
})

t.test('acting on the host: new issues, close and reopen, edits; 502 and 504 change nothing; no connection, no token', async (t) => {
  const host = await fakeHost(t)
  const app = await build(t, { webhooks: { worker: false }, hosts: { allowPrivate: true }, sync: { worker: false, timeoutMs: 500 } })
  const s = await setUp(t, app, host.url)
  const created = await app.as('bob', { method: 'POST', url: '/p1/repositories/6000/issues', payload: { title: 'From the board', labels: ['bug'], assignees: ['carol-gh'], pipeline_id: s.doing, estimate: 3 } })
  t.equal(created.statusCode, 201)
  t.match(created.json(), { issue_number: 41, title: 'From the board', labels: [{ name: 'bug', color: 'ededed' }], assignees: [{ login: 'carol-gh' }], estimate: { value: 3 }, pipeline: { pipeline_id: s.doing } })
  t.match(host.writes.at(-1), /^POST \/repos\/team\/svc\/issues \{"title":"From the board","labels":\["bug"\],"assignees":\["carol-gh"\]\}/)
  const echo = await deliver(app, s.connection, 'issues', { action: 'opened', repository: repo, issue: issue({ number: 41, title: 'From the board' }), sender: { id: OWN, login: 'planning-bot' } })
  t.equal(echo.statusCode, 202, 'the host\'s own "opened" changes nothing')

  const closed = await app.as('bob', { method: 'POST', url: '/p1/repositories/6000/issues/41/close' })
  t.match(closed.json(), { status: 'closed' })
  t.match(host.writes.at(-1), /^PATCH \/repos\/team\/svc\/issues\/41 \{"state":"closed"\}/)
  t.match((await app.as('bob', { method: 'POST', url: '/p1/repositories/6000/issues/41/reopen' })).json(), { status: 'open', pipeline: { pipeline_id: s.doing } }, 'back to its last pipeline')
  const edited = await app.as('bob', { method: 'PATCH', url: '/p1/repositories/6000/issues/41', payload: { title: 'Renamed', labels: ['bug', 'ui'] } })
  t.match(edited.json(), { title: 'Renamed', labels: [{ name: 'bug' }, { name: 'ui' }] })

  host.refusals.push({ status: 403, message: 'Resource not accessible by integration' })
  const refused = await app.as('bob', { method: 'POST', url: '/p1/repositories/6000/issues/41/close' })
  t.equal(refused.statusCode, 502)
  t.equal(refused.json().message, 'the issue host answered 403: Resource not accessible by integration')
  t.match((await app.as('bob', { url: '/p1/repositories/6000/issues?issue_numbers=41' })).json()[0], { status: 'open' }, 'nothing changed')
  host.hang.on = true
  const hung = await app.as('bob', { method: 'PATCH', url: '/p1/repositories/6000/issues/41', payload: { title: 'Never' } })
  t.equal(hung.statusCode, 504)
  t.match((await app.as('bob', { url: '/p1/repositories/6000/issues?issue_numbers=41' })).json()[0], { title: 'Renamed' })
  host.hang.on = false

  t.equal((await app.as('carol', { method: 'POST', url: '/p1/repositories/6000/issues/41/close' })).statusCode, 404, 'no read access: 404')
  const local = await app.as('alice', { method: 'POST', url: '/p1/repositories/1001/issues', payload: { title: 'Here only' } })
  t.match(local.json(), { issue_number: 8, title: 'Here only' }, 'a repository with no connection: the next free number')
  const tokenless = (await app.admin({ method: 'POST', url: '/admin/connections', payload: { kind: 'github', secret: SECRET } })).json().id
  await deliver(app, tokenless, 'issues', { action: 'opened', repository: { ...repo, id: 6001, name: 'ro', full_name: 'team/ro' }, issue: issue() })
  await app.admin({ method: 'PUT', url: '/admin/repositories/6001/permissions/bob', payload: { permission: 'write' } })
  const noToken = await app.as('bob', { method: 'POST', url: '/p1/repositories/6001/issues/1/close' })
  t.equal(noToken.statusCode, 409)
  t.match(noToken.json().message, /has no API token/)
})

t.test('the host\'s label and assignee changes: in the events feed and to webhooks that ask, never in the legacy events', async (t) => {
  const host = await fakeHost(t)
  const { url: hookUrl, received } = await formReceiver(t)
  const app = await build(t, { webhooks: { allowPrivate: true, retryBaseMs: 20 }, hosts: { allowPrivate: true }, sync: { retryBaseMs: 20, pollMs: 50 } })
  const s = await setUp(t, app, host.url)
  const hook = await app.as('alice', {
    method: 'POST',
    url: '/p1/repositories/6000/webhooks',
    payload: { url: hookUrl, events: ['issue_labeled', 'issue_unlabeled', 'issue_assigned', 'issue_unassigned'] }
  })
  t.equal(hook.statusCode, 201, hook.body)
  const someone = { id: 42, login: 'someone' }
  const bug = { name: 'bug', color: 'd73a4a' }
  await deliver(app, s.connection, 'issues', { action: 'labeled', label: bug, repository: repo, issue: issue({ labels: [bug] }), sender: someone })
  await deliver(app, s.connection, 'issues', { action: 'assigned', repository: repo, issue: issue({ labels: [bug], assignees: [{ login: 'dana', avatar_url: null }] }), sender: someone })
  await deliver(app, s.connection, 'issues', { action: 'unlabeled', label: bug, repository: repo, issue: issue({ assignees: [{ login: 'dana', avatar_url: null }] }), sender: someone })

  const feed = (await app.as('bob', { url: '/p1/repositories/6000/events' })).json().data as Array<Record<string, unknown>>
  t.same(feed.filter((e) => e.type !== 'transferIssue').map((e) => ({ type: e.type, label: e.label, assignee: e.assignee, issue_number: e.issue_number })), [
    { type: 'labelIssue', label: { name: 'bug' }, assignee: undefined, issue_number: 1 },
    { type: 'assignIssue', label: undefined, assignee: { login: 'dana' }, issue_number: 1 },
    { type: 'unlabelIssue', label: { name: 'bug' }, assignee: undefined, issue_number: 1 }
  ])
  const legacy = (await app.as('bob', { url: '/p1/repositories/6000/issues/1/events' })).json() as Array<{ type: string }>
  t.ok(legacy.every((e) => e.type === 'estimateIssue' || e.type === 'transferIssue'), 'the hosted API\'s events list keeps its two types')

  await waitFor(() => received.length >= 3)
  t.same(received.map((r) => [r.type, r.label ?? r.assignee, r.issue_number, r.user_name]), [
    ['issue_labeled', 'bug', '1', ''], ['issue_assigned', 'dana', '1', ''], ['issue_unlabeled', 'bug', '1', '']
  ])
  const again = await deliver(app, s.connection, 'issues', { action: 'edited', repository: repo, issue: issue({ assignees: [{ login: 'dana', avatar_url: null }] }), sender: someone })
  t.equal(again.statusCode, 200)
  const after = (await app.as('bob', { url: '/p1/repositories/6000/events' })).json().data as unknown[]
  t.equal(after.length, feed.length, 'an edit that changes no label or assignee adds no event')
})

t.test('a label made only of dots: refused with its field named, and never built into a host path; label changes are audited', async (t) => {
  const host = await fakeHost(t)
  const sync = { retryBaseMs: 20, pollMs: 50, maxAttempts: 1 }
  const { app, sql } = await buildWithSql(t, { webhooks: { worker: false }, hosts: { allowPrivate: true }, sync })
  const s = await setUp(t, app, host.url)
  for (const dots of ['.', '..', '...']) {
    const refused = await s.label(s.doing, dots)
    t.equal(refused.statusCode, 400, `'${dots}' is refused`)
    t.match(refused.json().message, /host_label must not be made only of dots/)
    const byAdmin = await app.admin({ method: 'PATCH', url: `/admin/workspaces/${s.ws}/pipelines/${s.doing}`, payload: { host_label: dots } })
    t.equal(byAdmin.statusCode, 400, `'${dots}' is refused on the admin API too`)
  }
  const fixture = await app.admin({ method: 'POST', url: '/admin/workspaces', payload: { name: 'Dots', repositories: [6000], pipelines: [{ name: 'A', host_label: '..' }] } })
  t.equal(fixture.statusCode, 400, 'and in a new workspace')
  t.equal((await s.label(s.doing, 'a.b')).statusCode, 204, 'dots among other characters are a label')

  // Label changes are in the audit log, with who made them and the label before.
  t.equal((await s.label(s.doing, 'status: doing')).statusCode, 204)
  t.equal((await app.admin({ method: 'PATCH', url: `/admin/workspaces/${s.ws}/pipelines/${s.doing}`, payload: { host_label: null } })).statusCode, 204)
  const audit = (await app.admin({ url: '/admin/audit?limit=50' })).json().entries as Array<{ actor: string, action: string, target: string, detail: Record<string, unknown> }>
  const changes = audit.filter((e) => e.action === 'pipeline.label_set').reverse()
  t.match(changes, [
    { actor: 'user:alice', target: `workspace:${s.ws}`, detail: { pipeline_id: s.doing, host_label: 'a.b', previous: null } },
    { actor: 'user:alice', detail: { host_label: 'status: doing', previous: 'a.b' } },
    { actor: 'admin', detail: { host_label: null, previous: 'status: doing' } }
  ])
  t.equal(changes.length, 3, 'one entry a change')
  t.notOk(audit.some((e) => e.action === 'admin.write' && String(e.detail.request).includes('/pipelines/')), 'the admin write is not audited twice')

  // A label stored before the check (or by any other way) is still never sent as a path.
  await sql('UPDATE pipelines SET host_label = ? WHERE id = ?', ['..', s.done])
  await s.label(s.doing, 'status: doing')
  await deliver(app, s.connection, 'issues', { action: 'labeled', repository: repo, issue: issue({ labels: [{ name: '..', color: 'ededed' }] }), label: { name: '..' }, sender: { id: 42, login: 'someone' } })
  t.equal(await s.where(), s.done)
  host.writes.length = 0
  await s.move(s.doing)
  await waitFor(async () => (await app.admin({ url: `/admin/connections/${s.connection}/outbox` })).json()[0]?.status === 'failed')
  const [entry] = (await app.admin({ url: `/admin/connections/${s.connection}/outbox` })).json()
  t.match(entry.last_error, /label '\.\.' cannot name a host resource/)
  t.same(host.writes, [], 'nothing was sent to the host, not even the label to add')
})

t.test('a new token: the old token\'s account is a person again, the new one\'s changes are our echoes', async (t) => {
  const host = await fakeHost(t)
  const app = await build(t, { webhooks: { worker: false }, hosts: { allowPrivate: true }, sync: { worker: false } })
  const s = await setUp(t, app, host.url)
  await s.label(s.doing, 'status: doing')
  await s.label(s.done, 'status: done')
  const labelled = async (name: string, sender: number) =>
    await deliver(app, s.connection, 'issues', { action: 'labeled', repository: repo, issue: issue({ labels: [{ name, color: 'ededed' }] }), label: { name }, sender: { id: sender, login: `u${sender}` } })
  t.equal((await labelled('status: doing', OWN)).statusCode, 202, 'the first token\'s account: our own echo')
  t.not(await s.where(), s.doing)

  t.equal((await app.admin({ method: 'PATCH', url: `/admin/connections/${s.connection}`, payload: { token: 'ghp_second' } })).statusCode, 200)
  t.same((await labelled('status: doing', OWN)).json(), { result: 'handled' }, 'the old account is a person now')
  t.equal(await s.where(), s.doing)
  t.equal((await labelled('status: done', OWN + 1)).statusCode, 202, 'the new token\'s account is ours')
  t.equal(await s.where(), s.doing)

  t.equal((await app.admin({ method: 'PATCH', url: `/admin/connections/${s.connection}`, payload: { token: null } })).statusCode, 200)
  t.same((await labelled('status: done', OWN + 1)).json(), { result: 'handled' }, 'no token: nobody\'s changes are echoes')
  t.equal(await s.where(), s.done)
  t.equal((await app.admin({ method: 'PATCH', url: `/admin/connections/${s.connection}`, payload: { token: 'ghp_writer' } })).statusCode, 200)
  t.same((await labelled('status: doing', OWN + 1)).json(), { result: 'handled' }, 'the cleared token\'s account was forgotten')
  t.equal((await labelled('status: done', OWN)).statusCode, 202)
  t.equal(await s.where(), s.doing)
})
