import t from 'tap'
import { nulAt } from '../schemas/formats.js'
import { build, TOKENS } from './helper.js'

/** A JSON value nested `levels` deep: about 100 KB at 50,000 levels, under the body limit. */
const nested = (levels: number, inner = '1') => '{"a":['.repeat(levels) + inner + ']}'.repeat(levels)

const PARAM_VALUES = ['1', '1001', 'abc', '-1', '0', '1.5', '99999999999999999999', '%00', 'aaaaaaaaaaaaaaaaaaaaaaa1', "1'%20OR%201=1"]
const BODIES: Array<string | undefined> = [
  undefined, '', 'null', '[]', '"x"', '5', '{}', '{"a":1}', '{', '{"estimate":"NaN"}',
  '{"issues":[{"repo_id":"x"}]}', '{"pipeline_id":null,"position":{}}', '{"title":[],"start_date":5}',
  '{"blocking":{"repo_id":1001,"issue_number":1},"blocked":{"repo_id":1001,"issue_number":1e400}}',
  JSON.stringify({ message: '\u0000\ud800', command: '!x\u0000', response: 'y'.repeat(600) }),
  JSON.stringify({ add_issues: Array(5).fill({ repo_id: 1001, issue_number: 1 }), remove_issues: 'x' }),
  nested(25_000)
]

t.test('no route answers 5xx to malformed input', async (t) => {
  const app = await build(t, { documentation: true })
  const doc = (await app.inject({ url: '/documentation/json' })).json() as { paths: Record<string, Record<string, unknown>> }
  let requests = 0
  const failures: string[] = []
  for (const [path, methods] of Object.entries(doc.paths)) {
    // Streams stay open (test/chat.test.ts and test/board-live.test.ts try them).
    if (path.startsWith('/documentation') || path.endsWith('/ws') || path.endsWith('/live')) continue
    for (const method of Object.keys(methods)) {
      for (const [i, value] of PARAM_VALUES.entries()) {
        const url = path.replace(/\{[^}]+\}/g, value)
        for (const body of i === 0 ? BODIES : [BODIES[6], BODIES[8]]) {
          const headers: Record<string, string> = path.startsWith('/admin')
            ? { authorization: 'Bearer test-admin-token-0123456789' }
            : { 'x-authentication-token': TOKENS.alice }
          if (body !== undefined) headers['content-type'] = 'application/json'
          const res = await app.inject({ method: method.toUpperCase() as 'GET', url, headers, payload: body })
          requests++
          if (res.statusCode >= 500) failures.push(`${method.toUpperCase()} ${url} ${body ?? ''} -> ${res.statusCode} ${res.body}`)
          else if (res.statusCode >= 400 && String(res.headers['content-type']).startsWith('text/html')) {
            // The browser's sign-in steps answer with a page that says what went wrong (docs/sign-in.md).
            const page = path.startsWith('/auth/') || /^\/(invite|reset|setup)\//.test(path)
            if (!page || res.body.length === 0) failures.push(`${method} ${url}: an HTML error outside the sign-in pages`)
          } else if (res.statusCode >= 400 && path === '/mcp') {
            // The MCP endpoint answers in JSON-RPC once a message reached it: the message is inside `error` (docs/mcp.md).
            const body = res.json()
            if (typeof body.message !== 'string' && typeof body.error?.message !== 'string') failures.push(`${method} ${url}: error without message`)
          } else if (res.statusCode >= 400 && typeof res.json().message !== 'string') failures.push(`${method} ${url}: error without message`)
        }
      }
    }
  }
  t.ok(requests > 1000, `${requests} requests`)
  t.same(failures, [], 'no 5xx, every error has a message')
})

t.test('a body nested deeper than the limit is a 400 naming it, on a JSON route', async (t) => {
  const app = await build(t)
  const headers = { 'x-authentication-token': TOKENS.alice, 'content-type': 'application/json' }
  for (const levels of [33, 50_000]) {
    const payload = nested(levels)
    t.ok(payload.length < 1024 * 1024, `${payload.length} bytes, under the body limit`)
    const res = await app.inject({ method: 'PUT', url: '/p1/repositories/1001/issues/1/estimate', headers, payload })
    t.equal(res.statusCode, 400, `${levels} levels`)
    t.match(res.json().message, /nests deeper than 64 levels/)
  }
  // 32 levels of {"a":[ ... ]} are 64: taken, and then the schema speaks.
  const res = await app.inject({ method: 'PUT', url: '/p1/repositories/1001/issues/1/estimate', headers, payload: nested(32) })
  t.equal(res.statusCode, 400)
  t.notMatch(res.json().message, /nests deeper/)
})

t.test('the NUL search walks a deep value without exhausting the stack', async (t) => {
  t.equal(nulAt(JSON.parse(nested(50_000, '"x\\u0000"'))), '/a/0'.repeat(50_000))
  t.equal(nulAt({ a: 'x', b: ['y', 'z\u0000'], c: '\u0000' }), '/b/1', 'the first in document order')
  t.equal(nulAt(JSON.parse(nested(50_000))), undefined)
})
