import t from 'tap'
import { Agent, request } from 'node:http'
import { connect } from 'node:net'
import { Writable } from 'node:stream'
import { build, METRICS_TOKEN, P, REPO, TOKENS, type App } from './helper.js'

// GraphQL reads answered before routing (docs/graphql.md, "Kept answers") happen only on the
// server's socket: these tests listen on 127.0.0.1 and post over kept-alive connections.
const SEARCH = JSON.stringify({ query: `{ searchIssuesByPipeline(pipelineId: "${P.todo}", filters: {}, first: 10) { totalCount nodes { number title estimate { value } } } }` })
const VIEWER = JSON.stringify({ query: '{ viewer { id name } }' })

interface Answer { status: number, headers: Record<string, string>, order: string[], body: string }

function poster (origin: string) {
  const agent = new Agent({ keepAlive: true, maxSockets: 1 })
  t.teardown(() => { agent.destroy() })
  /** `chunked`: the body in two writes without a length; `split`: in two writes with it. */
  return async (body: string | Buffer, headers: Record<string, string> = {}, path = '/public/graphql', chunked = false, split = false): Promise<Answer> => {
    const sent: Record<string, string | number> = { 'x-authentication-token': TOKENS.alice, 'content-type': 'application/json', ...headers }
    if (!chunked) sent['content-length'] = Buffer.byteLength(body)
    return await new Promise((resolve, reject) => {
      const req = request(origin + path, { method: 'POST', agent, headers: sent }, (res) => {
        const chunks: Buffer[] = []
        res.on('data', (chunk: Buffer) => chunks.push(chunk))
        res.on('end', () => {
          const all: Record<string, string> = {}
          const order: string[] = []
          for (let i = 0; i < res.rawHeaders.length; i += 2) {
            all[res.rawHeaders[i].toLowerCase()] = res.rawHeaders[i + 1]
            order.push(res.rawHeaders[i].toLowerCase())
          }
          resolve({ status: res.statusCode!, headers: all, order, body: Buffer.concat(chunks).toString() })
        })
      })
      req.on('error', reject)
      if (chunked || split) {
        // Two writes: without a length the body goes chunked.
        const half = Math.floor(body.length / 2)
        req.write(body.slice(0, half))
        setTimeout(() => { req.end(body.slice(half)) }, 5)
      } else {
        req.end(body)
      }
    })
  }
}

async function listening (app: App) {
  return poster(await app.listen({ host: '127.0.0.1', port: 0 }))
}

async function metric (app: App, name: string): Promise<number> {
  const metrics = (await app.inject({ url: '/metrics', headers: { authorization: `Bearer ${METRICS_TOKEN}` } })).body
  return Number(metrics.split('\n').find((line) => line.startsWith(`${name} `))?.split(' ')[1])
}
const beforeRouting = async (app: App) => await metric(app, 'planning_graphql_cache_before_routing_total')

/** The headers that must not differ between two answers of the same read (Date and the rate-limit count do). */
function fixedHeaders (answer: Answer): Record<string, string> {
  const { date, 'x-ratelimit-used': _used, 'x-ratelimit-remaining': _remaining, ...rest } = answer.headers
  return rest
}

t.test('a read the routes answered from kept bytes is answered before routing, with the same bytes and headers', async (t) => {
  const app = await build(t, { metricsToken: METRICS_TOKEN })
  const post = await listening(app)
  const first = await post(SEARCH)
  t.equal(first.status, 200)
  t.equal(await beforeRouting(app), 0, 'the first takes the routes, which run the document and keep its answer')
  const early = await post(SEARCH)
  t.equal(await beforeRouting(app), 1, 'the second is answered before routing')
  // A chunked body is the routes' to read: their answer from the kept bytes.
  const routed = await post(SEARCH, {}, '/public/graphql', true)
  t.equal(await beforeRouting(app), 1)
  t.equal(early.status, 200)
  t.equal(early.body, routed.body, 'the same bytes')
  t.equal(early.body, first.body)
  t.same(fixedHeaders(early), fixedHeaders(routed), 'the same headers (rate limit, type, length)')
  t.same(fixedHeaders(early), fixedHeaders(first))
  t.same(early.order, routed.order, 'in the same order')
  t.same(early.order, first.order)
  const used = [first, early, routed].map((a) => Number(a.headers['x-ratelimit-used']))
  t.same(used.map((n) => n - used[0]), [0, 1, 2], 'each one counted')
  t.same([first, early, routed].map((a) => Number(a.headers['x-ratelimit-remaining']) + Number(a.headers['x-ratelimit-used'])),
    [10_000, 10_000, 10_000], 'what is left of the budget, as the routes say it')

  const hits = await metric(app, 'planning_graphql_cache_hits_total')
  await post(SEARCH)
  t.equal(await metric(app, 'planning_graphql_cache_hits_total'), hits + 1, 'counted as a hit')
  const metrics = (await app.inject({ url: '/metrics', headers: { authorization: `Bearer ${METRICS_TOKEN}` } })).body
  t.match(metrics, /planning_http_request_duration_seconds_count\{method="POST",route="\/public\/graphql",status="200"\} 4/, 'timed per route like the others')

  // The other URL and a Bearer token: the same, each remembered on its own.
  const slash = []
  for (let i = 0; i < 3; i++) slash.push(await post(SEARCH, {}, '/public/graphql/'))
  t.equal(await beforeRouting(app), 4, 'the trailing-slash URL: remembered on its own, from its first read')
  t.equal(slash[2].body, first.body)
  for (let i = 0; i < 3; i++) t.equal((await post(SEARCH, { authorization: `Bearer ${TOKENS.alice}`, 'x-authentication-token': '' })).body, first.body)
  t.equal(await beforeRouting(app), 7, 'a Bearer token is answered before routing too')
})

t.test('another viewer, a write, a revoked token, a removed permission: the next request takes the routes', async (t) => {
  const app = await build(t, { metricsToken: METRICS_TOKEN })
  const post = await listening(app)
  for (let i = 0; i < 3; i++) t.equal(JSON.parse((await post(VIEWER)).body).data.viewer.name, 'alice')
  t.equal(await beforeRouting(app), 2)
  const carol = { 'x-authentication-token': TOKENS.carol }
  const seen = []
  for (let i = 0; i < 3; i++) seen.push(JSON.parse((await post(VIEWER, carol)).body).data.viewer.name)
  t.same(seen, ['carol', 'carol', 'carol'], 'the same bytes from another viewer: their own answer')
  t.equal(await beforeRouting(app), 4, 'hers answered before routing once the routes answered her')

  for (let i = 0; i < 3; i++) await post(SEARCH, carol)
  const before = JSON.parse((await post(SEARCH, carol)).body)
  t.equal(await beforeRouting(app), 7)
  t.equal((await app.as('alice', { method: 'PUT', url: `/p1/repositories/${REPO}/issues/1/estimate`, payload: { estimate: 8 } })).statusCode, 200)
  const after = JSON.parse((await post(SEARCH, carol)).body)
  t.equal(await beforeRouting(app), 7, 'after a write the routes run the document')
  t.not(JSON.stringify(after), JSON.stringify(before))
  t.same(after.data.searchIssuesByPipeline.nodes.find((n: { number: number }) => n.number === 1).estimate, { value: 8 }, 'the write is seen')
  await post(SEARCH, carol)
  t.equal(await beforeRouting(app), 8, 'then it is kept and answered before routing again')

  t.equal((await app.admin({ method: 'PUT', url: `/admin/repositories/${REPO}/permissions/carol`, payload: { permission: 'none' } })).statusCode, 200)
  const hidden = JSON.parse((await post(SEARCH, carol)).body)
  t.not(JSON.stringify(hidden), JSON.stringify(after), 'a removed permission takes effect on the next request')
  t.notOk(JSON.stringify(hidden).includes('Issue 1'), 'nothing of the repository shown')
  t.equal((await app.admin({ method: 'DELETE', url: '/admin/users/alice/token' })).statusCode, 204)
  t.equal((await post(VIEWER)).status, 401, 'a revoked token takes effect on the next request')
  t.equal(await beforeRouting(app), 8, 'none of these answered before routing')
})

t.test('past the rate limit the answer is the routes\' refusal, and the count goes on from the early answers', async (t) => {
  const app = await build(t, { metricsToken: METRICS_TOKEN, rateLimit: { max: 4, timeWindow: 60_000 } })
  const post = await listening(app)
  const answers = []
  for (let i = 0; i < 6; i++) answers.push(await post(VIEWER))
  t.same(answers.map((a) => a.headers['x-ratelimit-used']), ['1', '2', '3', '4', '5', '6'])
  t.same(answers.map((a) => a.headers['x-ratelimit-remaining']), ['3', '2', '1', '0', '0', '0'])
  t.same(answers.slice(4).map((a) => JSON.parse(a.body).errors[0].extensions.code), ['RATE_LIMITED', 'RATE_LIMITED'])
  t.equal(await beforeRouting(app), 3, 'the second to the fourth were answered before routing')
})

t.test('bodies the routes refuse or read otherwise, writes, CORS and reads that record views take the routes', async (t) => {
  const app = await build(t, { metricsToken: METRICS_TOKEN })
  const post = await listening(app)
  for (let i = 0; i < 3; i++) await post(VIEWER)
  t.equal(await beforeRouting(app), 2)
  const kept = (await post(VIEWER)).body
  t.equal(await beforeRouting(app), 3)

  const same = async (body: string | Buffer, headers: Record<string, string> = {}, chunked = false) => {
    const answer = await post(body, headers, '/public/graphql', chunked)
    return { status: answer.status, same: answer.body === kept, body: answer.body }
  }
  t.match(await same(VIEWER.replace('{ viewer', '{  viewer')), { status: 200 }, 'one byte more: another document, run by the routes')
  t.match(await same(VIEWER, {}, true), { status: 200, same: true }, 'a chunked body: the routes answer it')
  t.match(await same(VIEWER.slice(0, -1)), { status: 400 }, 'bad JSON: 400')
  t.match(await same(JSON.stringify({ query: ['{ viewer { id name } }'] })), { status: 400 }, 'a query that is not a string: 400')
  t.match(await same(`{"__proto__": {"x": 1}, ${VIEWER.slice(1)}`), { status: 400 }, 'a prototype key: 400')
  t.match(await same(VIEWER, { 'content-type': 'text/plain' }), { status: 415 }, 'another content type: 415')
  t.match(await same(VIEWER, { origin: 'https://viewer.example' }), { status: 200, same: true }, 'CORS: the routes add its headers')
  t.match(await same(VIEWER, { 'x-forwarded-host': 'elsewhere.example' }), { status: 200 }, 'through a proxy')
  t.match(await same(VIEWER, { 'content-encoding': 'identity' }), { status: 200, same: true }, 'a declared encoding')
  const long = JSON.stringify({ query: `{ viewer { id name } }${' '.repeat(17 * 1024)}` })
  for (let i = 0; i < 3; i++) t.match(await same(long), { status: 200, same: true }, 'a body over 16 KiB: read by the routes only')
  for (let i = 0; i < 3; i++) t.match(await same(VIEWER, {}, false), { status: 200, same: true })
  t.equal(await beforeRouting(app), 6, 'of all these only the three plain repeats were answered before routing')

  // A mutation is never kept: every one runs.
  const estimate = (n: number) => JSON.stringify({ query: `mutation { setEstimate(input: { issueId: "${issueId}", value: ${n} }) { clientMutationId } }` })
  const issue = JSON.parse((await post(JSON.stringify({ query: `{ issueByInfo(repositoryGhId: ${REPO}, issueNumber: 2) { id } }` }))).body)
  const issueId = issue.data.issueByInfo.id as string
  const writes = await metric(app, 'planning_graphql_cache_misses_total')
  for (let i = 0; i < 3; i++) t.equal((await post(estimate(5))).status, 200)
  t.equal(await metric(app, 'planning_graphql_cache_misses_total'), writes + 3, 'each mutation ran')
  t.equal(await beforeRouting(app), 6)

  // workspace(id) records a view each time its kept answer is sent: never before routing.
  const workspace = JSON.stringify({ query: '{ viewer { id } recentlyViewedWorkspaces { nodes { id } } }' })
  for (let i = 0; i < 3; i++) t.equal((await post(workspace)).status, 200)
  const opened = JSON.stringify({ query: `{ workspace(id: "${'aaaaaaaaaaaaaaaaaaaaaaa1'}") { name } }` })
  for (let i = 0; i < 4; i++) t.equal(JSON.parse((await post(opened)).body).data.workspace.name, 'Engineering')
  t.equal(await beforeRouting(app), 6, 'answers that record a view or show recent views take the routes')
})

t.test('a body in two packets is read whole; a client gone mid-body leaves the server answering', async (t) => {
  const app = await build(t, { metricsToken: METRICS_TOKEN })
  const post = await listening(app)
  const first = await post(SEARCH)
  const split = await post(SEARCH, {}, '/public/graphql', false, true)
  t.equal(await beforeRouting(app), 1, 'a body in two packets, its length declared: answered before routing')
  t.equal(split.body, first.body)
  const { port } = app.server.address() as { port: number }
  for (const sent of [SEARCH.slice(0, 20), '']) {
    const socket = connect(port, '127.0.0.1')
    await new Promise((resolve) => socket.once('connect', resolve))
    socket.write(`POST /public/graphql HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nX-Authentication-Token: ${TOKENS.alice}\r\n` +
      `Content-Length: ${Buffer.byteLength(SEARCH)}\r\n\r\n${sent}`)
    await new Promise((resolve) => setTimeout(resolve, 50))
    socket.destroy()
  }
  const after = await post(SEARCH)
  t.equal(after.status, 200)
  t.equal(after.body, first.body, 'the next request is answered as before')
  t.equal(await beforeRouting(app), 2)
})

t.test('with the request log at info, an answer before routing writes the lines the routes write', async (t) => {
  const lines: Array<Record<string, unknown>> = []
  const logStream = new Writable({ write (chunk, _enc, done) { lines.push(JSON.parse(String(chunk))); done() } })
  const app = await build(t, { metricsToken: METRICS_TOKEN, logLevel: 'info', logStream })
  const post = await listening(app)
  const reads = () => {
    const ids = lines.filter((line) => (line.req as { url?: string } | undefined)?.url === '/public/graphql').map((line) => line.reqId)
    return ids.map((id) => lines.filter((line) => line.reqId === id))
  }
  for (let i = 0; i < 3; i++) t.equal((await post(VIEWER)).status, 200)
  t.equal(await beforeRouting(app), 2)
  t.equal(reads().length, 3, 'each request logged')
  const [routed, early] = reads()
  const shape = (line: Record<string, unknown>) => ({ keys: Object.keys(line), msg: line.msg, req: line.req, res: line.res })
  t.same(early.map(shape), routed.map(shape), 'the same two lines, keys in the same order, the same request fields')
  t.equal(early.length, 2)
  t.notOk(JSON.stringify(lines).includes(TOKENS.alice), 'no token in the log')
})

t.test('with the request log at debug, every request takes the routes', async (t) => {
  const app = await build(t, { metricsToken: METRICS_TOKEN, logLevel: 'debug', logStream: new Writable({ write (_c, _e, done) { done() } }) })
  const post = await listening(app)
  for (let i = 0; i < 3; i++) t.equal((await post(VIEWER)).status, 200)
  t.equal(await beforeRouting(app), 0)
})

// A body the front would read but that never comes: the answer, if any, within the wait.
async function partialPost (port: number, token: string, waitMs: number): Promise<{ firstMs: number, status: string }> {
  const socket = connect(port, '127.0.0.1')
  await new Promise((resolve) => socket.once('connect', resolve))
  const started = Date.now()
  let text = ''
  let firstMs = -1
  socket.on('data', (d: Buffer) => { if (firstMs < 0) firstMs = Date.now() - started; text += String(d) })
  socket.on('error', () => {})
  socket.write('POST /public/graphql HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n' +
    `X-Authentication-Token: ${token}\r\nContent-Length: ${Buffer.byteLength(VIEWER)}\r\n\r\n${VIEWER.slice(0, 5)}`)
  await new Promise((resolve) => setTimeout(resolve, waitMs))
  socket.destroy()
  return { firstMs, status: text.slice(9, 12) }
}

t.test('the front reads a body only for a valid token whose viewer it knows and whose window has room: a refusal comes at once', async (t) => {
  const limits = { requestTimeoutMs: 3000, headersTimeoutMs: 1000 }
  const app = await build(t, { metricsToken: METRICS_TOKEN, rateLimit: { max: 3, timeWindow: 60_000 }, limits })
  const origin = await app.listen({ host: '127.0.0.1', port: 0 })
  const port = Number(new URL(origin).port)
  const post = poster(origin)
  const bad = await partialPost(port, 'not-a-token', 800)
  t.equal(bad.status, '401', 'an unknown token: the routes\' 401')
  t.ok(bad.firstMs >= 0 && bad.firstMs < 800, `at once, not at the request timeout (${bad.firstMs} ms)`)
  t.equal((await post(VIEWER)).status, 200)
  t.equal((await post(VIEWER)).status, 200)
  t.equal((await post(VIEWER)).status, 200)
  t.ok(await beforeRouting(app) >= 1, 'the viewer has answers the front knows')
  const over = await partialPost(port, TOKENS.alice, 800)
  t.equal(over.status, '200', 'past the limit: the routes\' refusal in GraphQL\'s shape')
  t.ok(over.firstMs >= 0 && over.firstMs < 800, `at once (${over.firstMs} ms)`)
  const other = await partialPost(port, TOKENS.bob, 800)
  t.equal(other.firstMs, -1, 'a viewer the front knows nothing of: the routes wait for the body, as without a front')
})
