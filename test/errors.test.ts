import t from 'tap'
import { build, REPO, P } from './helper.js'

const moveUrl = `/p1/repositories/${REPO}/issues/1/moves`

t.test('bad input always gets a 4xx in the one error shape, never a 500', async (t) => {
  const app = await build(t)
  const cases: Array<[string, Parameters<typeof app.as>[1], number, RegExp]> = [
    ['malformed JSON', { method: 'POST', url: moveUrl, headers: { 'content-type': 'application/json' }, payload: '{"pipeline_id":' }, 400, /not valid JSON/],
    ['missing body', { method: 'POST', url: moveUrl }, 400, /body must be object/],
    ['missing field', { method: 'POST', url: moveUrl, payload: { position: 'top' } }, 400, /pipeline_id/],
    ['wrong type', { method: 'PUT', url: `/p1/repositories/${REPO}/issues/1/estimate`, payload: { estimate: 'five' } }, 400, /body\/estimate/],
    ['negative estimate', { method: 'PUT', url: `/p1/repositories/${REPO}/issues/1/estimate`, payload: { estimate: -1 } }, 400, /body\/estimate/],
    ['non-numeric path id', { url: '/p1/repositories/abc/board' }, 400, /params\/repo_id must be integer/],
    ['negative path id', { url: `/p1/repositories/${REPO}/issues/-3` }, 400, /params\/issue_number/],
    ['zero path id', { url: '/p1/repositories/0/board' }, 400, /params\/repo_id/],
    ['huge path id', { url: '/p1/repositories/99999999999999999999/board' }, 400, /params\/repo_id/],
    ...['0x3ea', '1001.0', '1.001e3', '%201001', '0b1111101001', '01001', '+1001', '1001%20'].map((alias) =>
      [`path id alias ${alias}`, { url: `/p1/repositories/${alias}/board` }, 400, /params\/repo_id must be integer, written in decimal digits/] as [string, Parameters<typeof app.as>[1], number, RegExp]),
    ['query integer alias', { url: '/api/v1/messages?limit=0x10' }, 400, /querystring\/limit must be integer/],
    ['non-JSON body', { method: 'POST', url: moveUrl, headers: { 'content-type': 'text/plain' }, payload: 'top' }, 415, /Unsupported Media Type/],
    ['form body', { method: 'POST', url: moveUrl, headers: { 'content-type': 'application/x-www-form-urlencoded' }, payload: 'position=top' }, 415, /Unsupported Media Type/],
    ['oversized body', { method: 'POST', url: moveUrl, headers: { 'content-type': 'application/json' }, payload: JSON.stringify({ pipeline_id: P.doing, position: 'top', pad: 'x'.repeat(1_100_000) }) }, 413, /too large/i],
    ['unknown route', { url: '/p1/nothing/here' }, 404, /no route GET \/p1\/nothing\/here/],
    ['prototype pollution', { method: 'POST', url: moveUrl, headers: { 'content-type': 'application/json' }, payload: '{"__proto__":{"x":1},"pipeline_id":"a","position":"top"}' }, 400, /not valid JSON/]
  ]
  for (const [name, options, status, message] of cases) {
    const res = await app.as('alice', options)
    t.equal(res.statusCode, status, name)
    const body = res.json()
    t.same(Object.keys(body).sort(), ['error', 'message', 'statusCode'], `${name}: shape`)
    t.equal(body.statusCode, status, `${name}: statusCode field`)
    t.match(body.message, message, `${name}: message`)
  }
})

t.test('an empty body with a JSON content type counts as no body', async (t) => {
  const app = await build(t)
  const res = await app.as('alice', { method: 'POST', url: moveUrl, headers: { 'content-type': 'application/json' }, payload: '' })
  t.equal(res.statusCode, 400)
  t.match(res.json().message, /body must be object/)
})

t.test('a live-feed upgrade refused in plain HTTP (here 403, rate limited) has its socket ended: the server still closes', async (t) => {
  const { default: WebSocket } = await import('ws')
  const app = await build(t, { rateLimit: { max: 1, timeWindow: 60_000 }, fixture: null })
  const feed = `${(await app.listen({ host: '127.0.0.1', port: 0 })).replace('http', 'ws')}/api/v1/ws`
  const answers: string[] = []
  for (let i = 0; i < 2; i++) {
    const socket = new WebSocket(feed)
    socket.on('error', () => {})
    answers.push(await new Promise<string>((resolve) => {
      socket.on('unexpected-response', (request, response) => {
        request.destroy()
        resolve(`HTTP ${String(response.statusCode)}`)
      })
      socket.on('close', (code) => resolve(`closed ${code}`))
    }))
  }
  t.same(answers, ['closed 4001', 'HTTP 403'], 'the first counted and told it has no token; the second over the limit')
  const closed = await Promise.race([app.close().then(() => 'closed'), new Promise((resolve) => setTimeout(resolve, 3000, 'still open after 3 s'))])
  t.equal(closed, 'closed')
})
