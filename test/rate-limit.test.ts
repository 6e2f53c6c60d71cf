import t from 'tap'
import { setTimeout as sleep } from 'node:timers/promises'
import { build, REPO, TOKENS } from './helper.js'

t.test('every response carries the rate-limit headers and Date', async (t) => {
  const app = await build(t, { rateLimit: { max: 50, timeWindow: 60_000 } })
  const before = Math.floor(Date.now() / 1000)
  const ok = await app.as('alice', { url: `/p1/repositories/${REPO}/board` })
  const notFound = await app.as('alice', { url: '/no/such/route' })
  const unauthorized = await app.inject({ url: `/p1/repositories/${REPO}/board` })
  const invalid = await app.as('alice', { url: '/p1/repositories/abc/board' })
  for (const res of [ok, notFound, invalid]) {
    t.equal(res.headers['x-ratelimit-limit'], '50')
    const reset = Number(res.headers['x-ratelimit-reset'])
    t.ok(reset >= before + 59 && reset <= before + 61, 'reset is UTC epoch seconds at the window end')
    t.ok(Date.parse(String(res.headers.date)) > 0, 'Date header')
  }
  t.equal(ok.headers['x-ratelimit-used'], '1', 'the admin import before counted for the address, not for alice')
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
