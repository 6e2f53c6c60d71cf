import t from 'tap'
import { createHmac } from 'node:crypto'
import { createServer, type IncomingHttpHeaders, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import { join } from 'node:path'
import type { Test } from 'tap'
import { build, REPO, OTHER_REPO, WS_OLD, P, type App } from './helper.js'

interface Received { headers: IncomingHttpHeaders, body: string, fields: Record<string, string>, at: number }

/** A real HTTP receiver on 127.0.0.1; `answer` decides each response (default 200). */
async function receiver (t: Test, answer: (n: number, res: ServerResponse) => void = (_n, res) => res.end('ok')) {
  const received: Received[] = []
  let waiters: Array<() => void> = []
  const server = createServer((req, res) => {
    let body = ''
    req.on('data', (d) => { body += String(d) })
    req.on('end', () => {
      received.push({ headers: req.headers, body, fields: Object.fromEntries(new URLSearchParams(body)), at: Date.now() })
      waiters.forEach((w) => w())
      answer(received.length, res)
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  t.teardown(() => { server.closeAllConnections(); server.close() })
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`,
    received,
    server,
    async waitFor (count: number, timeoutMs = 10_000): Promise<Received[]> {
      const deadline = Date.now() + timeoutMs
      while (received.length < count) {
        if (Date.now() > deadline) throw new Error(`expected ${count} deliveries, got ${received.length}`)
        await new Promise<void>((resolve) => { waiters.push(resolve); setTimeout(resolve, 50) })
        waiters = []
      }
      return received
    }
  }
}

const fast = { allowPrivate: true, retryBaseMs: 20, retryMaxMs: 200, timeoutMs: 2000, maxAttempts: 4 }

async function addHook (app: App, url: string, extra: object = {}, repo = REPO) {
  const res = await app.as('alice', { method: 'POST', url: `/p1/repositories/${repo}/webhooks`, payload: { url, ...extra } })
  if (res.statusCode !== 201) throw new Error(res.body)
  return res.json() as { id: string }
}

const move = async (app: App, n: number, pipeline: string, position: unknown = 'top') =>
  await app.as('bob', { method: 'POST', url: `/p1/repositories/${REPO}/issues/${n}/moves`, payload: { pipeline_id: pipeline, position } })
const estimate = async (app: App, n: number, value: number | null) =>
  await app.as('bob', { method: 'PUT', url: `/p1/repositories/${REPO}/issues/${n}/estimate`, payload: { estimate: value } })

t.test('configuration: admin only, URL checks, secret never echoed', async (t) => {
  const app = await build(t, { webhooks: fast })
  const created = await app.as('alice', { method: 'POST', url: `/p1/repositories/${REPO}/webhooks`, payload: { url: 'https://hooks.example.com/x', description: 'CI', secret: 'shh-its-a-secret' } })
  t.equal(created.statusCode, 201)
  t.match(created.json(), { id: /^[0-9a-f]{24}$/, repo_id: REPO, url: 'https://hooks.example.com/x', description: 'CI', created_at: String })
  t.notOk('secret' in created.json())
  t.notOk((await app.as('alice', { url: `/p1/repositories/${REPO}/webhooks` })).body.includes('shh'), 'nor listed')
  t.equal((await app.as('alice', { url: `/p1/repositories/${REPO}/webhooks` })).json().length, 1)
  for (const [url, message] of [['ftp://x.example.com/', /http or https/], ['not a url', /absolute http or https URL/], ['http://user:pw@x.example.com/', /credentials/], ['http://169.254.169.254/latest', /link-local|metadata/]] as const) {
    const res = await app.as('alice', { method: 'POST', url: `/p1/repositories/${REPO}/webhooks`, payload: { url } })
    t.equal(res.statusCode, 400, url)
    t.match(res.json().message, message)
  }
  t.equal((await app.as('bob', { method: 'POST', url: `/p1/repositories/${REPO}/webhooks`, payload: { url: 'https://x.example.com' } })).statusCode, 403, 'write is not admin')
  t.equal((await app.as('bob', { url: `/p1/repositories/${REPO}/webhooks` })).statusCode, 403)
  t.equal((await app.as('dave', { url: `/p1/repositories/${REPO}/webhooks` })).statusCode, 404)
  const id = created.json().id
  t.equal((await app.as('bob', { url: `/p1/webhooks/${id}/deliveries` })).statusCode, 403)
  t.equal((await app.as('dave', { method: 'DELETE', url: `/p1/webhooks/${id}` })).statusCode, 404)
  t.equal((await app.as('alice', { method: 'DELETE', url: `/p1/webhooks/${id}` })).statusCode, 204)
  t.equal((await app.as('alice', { method: 'DELETE', url: `/p1/webhooks/${id}` })).statusCode, 404)
})

t.test('payloads: form-encoded strings, one POST per event per webhook', async (t) => {
  const app = await build(t, { webhooks: fast })
  const hook = await receiver(t)
  const second = await receiver(t)
  await addHook(app, hook.url)
  await addHook(app, second.url)
  await addHook(app, hook.url.replace('/hook', '/other-repo'), {}, OTHER_REPO)
  await move(app, 1, P.doing)
  await move(app, 2, P.doing, 'top')
  await move(app, 1, P.doing, 0)
  await estimate(app, 1, 8)
  await estimate(app, 1, null)
  const got = await hook.waitFor(4)
  await second.waitFor(4)
  for (const r of got) t.equal(r.headers['content-type'], 'application/x-www-form-urlencoded')
  const common = {
    github_url: '', organization: 'acme', repo: 'api', user_name: 'bob', issue_number: '1', issue_title: 'Issue 1'
  }
  t.same(got[0].fields, { type: 'issue_transfer', ...common, to_pipeline_name: 'Doing', from_pipeline_name: 'To Do', workspace_id: WS_OLD, workspace_name: 'Engineering' })
  t.equal(got[1].fields.issue_number, '2')
  t.same(got[2].fields, { type: 'issue_reprioritized', ...common, to_pipeline_name: 'Doing', from_position: '1', to_position: '0', workspace_id: WS_OLD, workspace_name: 'Engineering' })
  t.same(got[3].fields, { type: 'estimate_set', ...common, estimate: '8' })
  const all = await hook.waitFor(5)
  t.same(all[4].fields, { type: 'estimate_cleared', ...common })
  t.equal(hook.received.length, 5, 'the other repository\'s webhook got nothing from these')
  t.equal(new Set(all.map((r) => r.headers['x-planning-delivery'])).size, 5, 'one delivery id per delivery')
  t.same(all.map((r) => r.headers['x-planning-event']), ['issue_transfer', 'issue_transfer', 'issue_reprioritized', 'estimate_set', 'estimate_cleared'])
})

t.test('signature: HMAC-SHA256 of the raw body with the secret', async (t) => {
  const app = await build(t, { webhooks: fast })
  const signed = await receiver(t)
  const unsigned = await receiver(t)
  await addHook(app, signed.url, { secret: 'webhook-secret-1' })
  await addHook(app, unsigned.url)
  await estimate(app, 3, 5)
  const [r] = await signed.waitFor(1)
  const expected = 'sha256=' + createHmac('sha256', 'webhook-secret-1').update(r.body).digest('hex')
  t.equal(r.headers['x-planning-signature-256'], expected)
  const [u] = await unsigned.waitFor(1)
  t.notOk(u.headers['x-planning-signature-256'], 'no signature without a secret')
})

t.test('retries after 500s and timeouts keep the delivery id, then the log shows it', async (t) => {
  const app = await build(t, { webhooks: { ...fast, timeoutMs: 300 } })
  const hook = await receiver(t, (n, res) => {
    if (n === 1) {
      res.statusCode = 500
      res.end('boom')
    } else if (n === 2) {
      setTimeout(() => res.end('late'), 1000)
    } else {
      res.end('ok')
    }
  })
  const { id } = await addHook(app, hook.url)
  await estimate(app, 2, 3)
  const got = await hook.waitFor(3)
  t.equal(new Set(got.map((r) => r.headers['x-planning-delivery'])).size, 1, 'same delivery id on every attempt')
  t.ok(got[1].at - got[0].at >= 10, 'backoff between attempts')
  let log: Array<Record<string, unknown>> = []
  for (let i = 0; i < 50; i++) {
    log = (await app.as('alice', { url: `/p1/webhooks/${id}/deliveries` })).json()
    if (log[0]?.status === 'delivered') break
    await new Promise((resolve) => setTimeout(resolve, 50))
  }
  t.match(log[0], { event_type: 'estimate_set', status: 'delivered', attempts: 3, last_status_code: 200, last_error: null, next_attempt_at: null, delivered_at: String })
})

t.test('a delivery that keeps failing is marked failed after the last attempt', async (t) => {
  const app = await build(t, { webhooks: { ...fast, maxAttempts: 3 } })
  const hook = await receiver(t, (_n, res) => { res.statusCode = 503; res.end() })
  const { id } = await addHook(app, hook.url)
  await estimate(app, 2, 1)
  await hook.waitFor(3)
  let entry: Record<string, unknown> = {}
  for (let i = 0; i < 50 && entry.status !== 'failed'; i++) {
    await new Promise((resolve) => setTimeout(resolve, 50))
    entry = (await app.as('alice', { url: `/p1/webhooks/${id}/deliveries` })).json()[0]
  }
  t.match(entry, { status: 'failed', attempts: 3, last_status_code: 503, last_error: 'receiver answered 503' })
  await new Promise((resolve) => setTimeout(resolve, 300))
  t.equal(hook.received.length, 3, 'no more attempts')
})

t.test('deliveries to one webhook keep the order of the events', async (t) => {
  const app = await build(t, { webhooks: fast })
  const hook = await receiver(t, (n, res) => {
    if (n === 1) {
      res.statusCode = 500
      res.end()
    } else {
      setTimeout(() => res.end(), 5)
    }
  })
  await addHook(app, hook.url)
  for (let v = 1; v <= 6; v++) await estimate(app, 4, v)
  const got = await hook.waitFor(7)
  t.same(got.map((r) => r.fields.estimate), ['1', '1', '2', '3', '4', '5', '6'], 'the retry of the first goes before the second')
})

t.test('a slow receiver blocks neither other webhooks nor the API', async (t) => {
  const app = await build(t, { webhooks: { ...fast, timeoutMs: 5000 } })
  const slow = await receiver(t, (_n, res) => setTimeout(() => res.end(), 3000))
  const quick = await receiver(t)
  await addHook(app, slow.url)
  await addHook(app, quick.url)
  const started = Date.now()
  t.equal((await estimate(app, 5, 2)).statusCode, 200)
  await estimate(app, 5, 3)
  t.ok(Date.now() - started < 1000, 'requests answer at once')
  await quick.waitFor(2, 2000)
  t.ok(Date.now() - started < 2500, 'the quick receiver got both while the slow one still holds the first')
  t.equal(slow.received.length, 1)
})

t.test('pending deliveries survive a restart', async (t) => {
  const database = join(t.testdir({}), 'planning.db')
  const hook = await receiver(t)
  const port = (hook.server.address() as AddressInfo).port
  const first = await build(t, { database, webhooks: { ...fast, retryBaseMs: 60_000 } })
  // Nothing listens on the hook's port while the first app runs: the attempt fails and waits a minute.
  await new Promise<void>((resolve) => hook.server.close(() => resolve()))
  await addHook(first, `http://127.0.0.1:${port}/hook`)
  await estimate(first, 6, 13)
  const { id } = (await first.as('alice', { url: `/p1/repositories/${REPO}/webhooks` })).json()[0]
  let entry: Record<string, unknown> = {}
  for (let i = 0; i < 50 && entry.attempts !== 1; i++) {
    await new Promise((resolve) => setTimeout(resolve, 50))
    entry = (await first.as('alice', { url: `/p1/webhooks/${id}/deliveries` })).json()[0]
  }
  t.match(entry, { status: 'pending', attempts: 1, last_error: /ECONNREFUSED/ })
  await first.close()

  await new Promise<void>((resolve) => hook.server.listen(port, '127.0.0.1', resolve))
  const db = (await import('better-sqlite3')).default(database)
  db.prepare('UPDATE webhook_deliveries SET next_attempt_at = 0').run()
  db.close()
  const second = await build(t, { database, fixture: null, webhooks: fast })
  const [r] = await hook.waitFor(1)
  t.same(r.fields.estimate, '13', 'delivered after the restart')
  t.equal(r.headers['x-planning-delivery'], entry.id)
  await second.close()
})

t.test('refused addresses: loopback without WEBHOOK_ALLOW_PRIVATE, metadata never', async (t) => {
  const app = await build(t, { webhooks: { ...fast, allowPrivate: false } })
  const loopback = await app.as('alice', { method: 'POST', url: `/p1/repositories/${REPO}/webhooks`, payload: { url: 'http://127.0.0.1:9/hook' } })
  t.equal(loopback.statusCode, 400)
  t.match(loopback.json().message, /WEBHOOK_ALLOW_PRIVATE/)
  const { id } = await addHook(app, 'http://localhost:9/hook')
  await estimate(app, 2, 5)
  let entry: Record<string, unknown> = {}
  for (let i = 0; i < 50 && entry.status !== 'failed'; i++) {
    await new Promise((resolve) => setTimeout(resolve, 50))
    entry = (await app.as('alice', { url: `/p1/webhooks/${id}/deliveries` })).json()[0] ?? {}
  }
  t.match(entry, { status: 'failed', attempts: 1, last_error: /refused: address .* loopback or private/ }, 'checked at send time, not retried')

  const open = await build(t, { webhooks: fast })
  const meta = await open.as('alice', { method: 'POST', url: `/p1/repositories/${REPO}/webhooks`, payload: { url: 'http://[fe80::1]/x' } })
  t.equal(meta.statusCode, 400, 'link-local refused even with private targets allowed')
})

t.test('a refused change writes no delivery', async (t) => {
  const app = await build(t, { webhooks: fast })
  const hook = await receiver(t)
  const { id } = await addHook(app, hook.url)
  t.equal((await move(app, 1, 'no-such-pipeline')).statusCode, 400)
  t.equal((await estimate(app, 99, 1)).statusCode, 404)
  await new Promise((resolve) => setTimeout(resolve, 200))
  t.same((await app.as('alice', { url: `/p1/webhooks/${id}/deliveries` })).json(), [])
  t.equal(hook.received.length, 0)
})

t.test('50 hanging receivers do not delay a healthy webhook', async (t) => {
  const app = await build(t, { webhooks: { ...fast, timeoutMs: 400, maxAttempts: 50 } })
  // Accepts connections and never answers.
  const hanging = createServer(() => {})
  await new Promise<void>((resolve) => hanging.listen(0, '127.0.0.1', resolve))
  t.teardown(() => { hanging.closeAllConnections(); hanging.close() })
  const hangingUrl = `http://127.0.0.1:${(hanging.address() as AddressInfo).port}/stuck`
  for (let i = 0; i < 50; i++) await addHook(app, `${hangingUrl}/${i}`)
  const healthy = await receiver(t)
  await addHook(app, healthy.url, {}, OTHER_REPO)
  for (let v = 1; v <= 3; v++) await estimate(app, 1, v)
  // Past the first timeouts: the hanging webhooks are now retrying.
  await new Promise((resolve) => setTimeout(resolve, 700))
  for (const round of [1, 2]) {
    const sent = Date.now()
    const res = await app.as('alice', { method: 'PUT', url: `/p1/repositories/${OTHER_REPO}/issues/1/estimate`, payload: { estimate: round } })
    t.equal(res.statusCode, 200)
    const [got] = (await healthy.waitFor(round, 1000)).slice(round - 1)
    t.ok(got.at - sent < 1000, `round ${round}: the healthy delivery arrived in ${got.at - sent} ms`)
  }
  const { id } = (await app.as('alice', { url: `/p1/repositories/${REPO}/webhooks` })).json()[0]
  const [first] = (await app.as('alice', { url: `/p1/webhooks/${id}/deliveries?limit=3` })).json().slice(-1)
  t.match(first, { status: 'pending', last_error: /timed out after 400 ms/ }, 'the stuck delivery shows its timeouts')
})

t.test('the deliveries log pages back past the newest 100', async (t) => {
  const app = await build(t, { webhooks: { ...fast, worker: false } })
  const { id } = await addHook(app, 'http://127.0.0.1:9/never')
  for (let v = 1; v <= 120; v++) await estimate(app, 2, v)
  const first = await app.as('alice', { url: `/p1/webhooks/${id}/deliveries` })
  t.equal(first.json().length, 100)
  const link = /<([^>]+)>; rel="next"/.exec(String(first.headers.link))
  t.ok(link, 'a Link header points to the next page')
  const second = await app.as('alice', { url: link![1] })
  t.equal(second.json().length, 20)
  t.equal(second.headers.link, undefined, 'the last page has no next link')
  const ids = [...first.json(), ...second.json()].map((d: { id: string }) => d.id)
  t.equal(new Set(ids).size, 120, 'every delivery once')
  const small = await app.as('alice', { url: `/p1/webhooks/${id}/deliveries?limit=2&before=${ids[117]}` })
  t.same(small.json().map((d: { id: string }) => d.id), ids.slice(118, 120))
  const bad = await app.as('alice', { url: `/p1/webhooks/${id}/deliveries?before=nope` })
  t.equal(bad.statusCode, 400)
  t.match(bad.json().message, /querystring\/before/)
})

t.test('another repository\'s webhook is as unknown as a missing one', async (t) => {
  const app = await build(t, { webhooks: { ...fast, worker: false } })
  const { id } = await addHook(app, 'http://127.0.0.1:9/x', {}, OTHER_REPO)
  const unknown = await app.as('carol', { method: 'DELETE', url: '/p1/webhooks/ffffffffffffffffffffffff' })
  const hidden = await app.as('carol', { method: 'DELETE', url: `/p1/webhooks/${id}` })
  t.equal(hidden.statusCode, 404)
  t.equal(hidden.json().message, `webhook ${id} not found`)
  t.equal(unknown.json().message, 'webhook ffffffffffffffffffffffff not found')
  t.equal((await app.as('carol', { url: `/p1/webhooks/${id}/deliveries` })).statusCode, 404)
})
