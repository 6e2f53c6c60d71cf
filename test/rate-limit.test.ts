import t from 'tap'
import { createHmac } from 'node:crypto'
import { setTimeout as sleep } from 'node:timers/promises'
import { build, REPO, TOKENS, type App } from './helper.js'

t.test('every response carries the rate-limit headers and Date', async (t) => {
  // The window may start while the app is built (a slow machine takes over a second for that).
  const before = Math.floor(Date.now() / 1000)
  const app = await build(t, { rateLimit: { max: 50, timeWindow: 60_000 } })
  const ok = await app.as('alice', { url: `/p1/repositories/${REPO}/board` })
  const notFound = await app.as('alice', { url: '/no/such/route' })
  const unauthorized = await app.inject({ url: `/p1/repositories/${REPO}/board` })
  const invalid = await app.as('alice', { url: '/p1/repositories/abc/board' })
  const after = Math.ceil(Date.now() / 1000)
  for (const res of [ok, notFound, invalid]) {
    t.equal(res.headers['x-ratelimit-limit'], '50')
    const reset = Number(res.headers['x-ratelimit-reset'])
    t.ok(reset >= before + 59 && reset <= after + 61, `reset ${reset} is UTC epoch seconds at the window end (${before + 60}-${after + 60})`)
    t.ok(Date.parse(String(res.headers.date)) > 0, 'Date header')
  }
  t.equal(ok.headers['x-ratelimit-used'], '1', 'the admin import before is not counted, and alice has her own budget')
  t.equal(notFound.headers['x-ratelimit-used'], '2')
  t.equal(invalid.headers['x-ratelimit-used'], '3')
  t.equal(unauthorized.statusCode, 401)
  t.ok(unauthorized.headers['x-ratelimit-used'], 'headers on a 401 too')
})

t.test('limits are per token and give 403 past the limit, then reset', async (t) => {
  const app = await build(t, { rateLimit: { max: 3, timeWindow: 2000 }, fixture: null })
  const imported = await app.admin({ method: 'POST', url: '/admin/import', payload: (await import('./helper.js')).testFixture() })
  t.equal(imported.statusCode, 200)
  const url = `/p1/repositories/${REPO}/issues/1`
  for (let i = 1; i <= 3; i++) {
    const res = await app.as('carol', { url })
    t.equal(res.statusCode, 200)
    t.equal(res.headers['x-ratelimit-used'], String(i))
  }
  const over = await app.as('carol', { url })
  t.equal(over.statusCode, 403)
  t.match(over.json(), { statusCode: 403, error: 'Forbidden', message: /rate limit exceeded/ })
  t.equal(over.headers['x-ratelimit-used'], '4')
  t.equal((await app.as('alice', { url })).statusCode, 200, 'another token has its own budget')
  t.equal((await app.inject({ url: `${url}?access_token=${TOKENS.carol}` })).statusCode, 403, 'same token by query string')
  await sleep(2100)
  const again = await app.as('carol', { url })
  t.equal(again.statusCode, 200)
  t.equal(again.headers['x-ratelimit-used'], '1', 'the window reset')
})

t.test('the issue host\'s deliveries and the admin API are outside the per-address budget', async (t) => {
  const app = await build(t, { rateLimit: { max: 100, timeWindow: 60_000 }, webhooks: { worker: false } })
  const secret = 'a-webhook-secret-for-tests'
  const created = await app.admin({ method: 'POST', url: '/admin/connections', payload: { kind: 'github', secret } })
  t.equal(created.statusCode, 201, created.body)
  for (let i = 0; i < 105; i++) await app.inject({ url: `/p1/repositories/${REPO}/board` })
  const anonymous = await app.inject({ url: `/p1/repositories/${REPO}/board` })
  t.equal(anonymous.statusCode, 403, 'the address has spent its budget')
  const body = JSON.stringify({ zen: 'Keep it logically awesome.', hook_id: 1 })
  const delivery = await app.inject({
    method: 'POST',
    url: `/integrations/${created.json().id as string}/webhook`,
    headers: { 'content-type': 'application/json', 'x-github-event': 'ping', 'x-github-delivery': 'd-1', 'x-hub-signature-256': `sha256=${createHmac('sha256', secret).update(body).digest('hex')}` },
    payload: body
  })
  t.equal(delivery.statusCode, 200, 'a signed delivery from the same address is still taken')
  t.equal(delivery.headers['x-ratelimit-used'], undefined, 'and not counted')
  const admin = await app.admin({ url: '/admin/users' })
  t.equal(admin.statusCode, 200, 'so is the admin API')
  t.equal(admin.headers['x-ratelimit-used'], undefined)
  t.equal((await app.as('alice', { url: `/p1/repositories/${REPO}/board` })).statusCode, 200, 'a token has its own budget')
})

async function spend (app: App, forwardedFor: string, times: number): Promise<string[]> {
  const used: string[] = []
  for (let i = 0; i < times; i++) {
    const res = await app.inject({ url: `/p1/repositories/${REPO}/board`, headers: { 'x-forwarded-for': forwardedFor } })
    used.push(`${res.statusCode}:${String(res.headers['x-ratelimit-used'])}`)
  }
  return used
}

t.test('TRUST_PROXY: clients behind the proxies it names are told apart; otherwise X-Forwarded-For is ignored', async (t) => {
  const rateLimit = { max: 2, timeWindow: 60_000 }
  const direct = await build(t, { rateLimit, fixture: null })
  t.same([...await spend(direct, '203.0.113.1', 2), ...await spend(direct, '203.0.113.2', 1)], ['401:1', '401:2', '403:3'],
    'not trusted: one budget for the socket\'s address, whatever the header says')
  for (const trustProxy of [['10.0.0.0/8', '127.0.0.0/8'], true]) {
    const proxied = await build(t, { rateLimit, fixture: null, trustProxy })
    const first = await spend(proxied, '203.0.113.1', 3)
    const second = await spend(proxied, '198.51.100.7, 203.0.113.2', 1)
    t.same([...first, ...second], ['401:1', '401:2', '403:3', '401:1'], `trustProxy ${JSON.stringify(trustProxy)}: one budget per client`)
  }
  const otherProxy = await build(t, { rateLimit, fixture: null, trustProxy: ['10.0.0.0/8'] })
  t.same([...await spend(otherProxy, '203.0.113.1', 2), ...await spend(otherProxy, '203.0.113.2', 1)], ['401:1', '401:2', '403:3'],
    'a peer that is not a named proxy cannot choose its address')
  const twoHops = await build(t, { rateLimit, fixture: null, trustProxy: 2 })
  t.same([...await spend(twoHops, '198.51.100.7, 203.0.113.1', 2), ...await spend(twoHops, '198.51.100.8, 203.0.113.1', 1)], ['401:1', '401:2', '401:1'],
    'two hops: the address before the second proxy is the client')
})
