import t, { type Test } from 'tap'
import { once } from 'node:events'
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import { Octokit } from '@octokit/rest'
import { cleanReason, createHostFetch, describeHostError, hostError } from '../services/host-fetch.js'

async function server (t: Test, handle: (req: IncomingMessage, res: ServerResponse) => void) {
  const requests: string[] = []
  const s = createServer((req, res) => {
    requests.push(req.url!)
    handle(req, res)
  })
  s.listen(0, '127.0.0.1')
  await once(s, 'listening')
  t.teardown(() => { s.closeAllConnections(); s.close() })
  return { url: `http://127.0.0.1:${(s.address() as AddressInfo).port}`, requests }
}

const json = (res: ServerResponse, status: number, body: unknown): void => {
  res.statusCode = status
  res.setHeader('content-type', 'application/json')
  res.end(JSON.stringify(body))
}

t.test('loopback hosts are refused unless private addresses are allowed', async (t) => {
  const host = await server(t, (_req, res) => json(res, 200, { ok: true }))
  await t.rejects(createHostFetch()(`${host.url}/repos/a/b`), /loopback or private \(set HOST_ALLOW_PRIVATE=true/)
  t.same(host.requests, [], 'nothing was sent')
  await t.rejects(createHostFetch()('http://169.254.169.254/latest/meta-data'), /link-local/, 'link-local never, whatever the flag')
  await t.rejects(createHostFetch({ allowPrivate: true })('http://169.254.169.254/latest/meta-data'), /link-local/)
  await t.rejects(createHostFetch({ allowPrivate: true })('file:///etc/passwd'), /only http and https/)
  const answer = await createHostFetch({ allowPrivate: true })(`${host.url}/repos/a/b`)
  t.equal(answer.status, 200)
  t.same(await answer.json(), { ok: true })
  t.equal(answer.url, `${host.url}/repos/a/b`)
})

t.test('redirects: within the origin followed a few times, to another origin (another port) never', async (t) => {
  const elsewhere = await server(t, (_req, res) => json(res, 200, [{ id: 1, title: 'internal' }]))
  const host = await server(t, (req, res) => {
    if (req.url === '/away') {
      res.statusCode = 302
      res.setHeader('location', `${elsewhere.url}/internal`)
      return res.end()
    }
    if (req.url?.startsWith('/loop')) {
      res.statusCode = 301
      res.setHeader('location', `/loop${req.url.length}`)
      return res.end()
    }
    if (req.url === '/moved') {
      res.statusCode = 301
      res.setHeader('location', '/here')
      return res.end()
    }
    json(res, 200, { here: true, auth: req.headers.authorization })
  })
  const fetch = createHostFetch({ allowPrivate: true })
  await t.rejects(fetch(`${host.url}/away`, { headers: { authorization: 'token x' } }), /redirect to another origin \(not followed\)/)
  t.same(elsewhere.requests, [], 'the other port got nothing, the token included')
  const moved = await fetch(`${host.url}/moved`, { headers: { authorization: 'token x' } })
  t.same(await moved.json(), { here: true, auth: 'token x' }, 'a same-origin redirect is followed')
  await t.rejects(fetch(`${host.url}/loop`), /redirected more than 3 times/)
})

t.test('size and time are bounded', async (t) => {
  const host = await server(t, (req, res) => {
    if (req.url === '/big') {
      res.setHeader('content-type', 'application/json')
      res.write('[')
      for (let i = 0; i < 64; i++) res.write(`"${'x'.repeat(1024)}",`)
      return res.end('0]')
    }
    if (req.url === '/slow') return // never answers
    json(res, 200, [])
  })
  const fetch = createHostFetch({ allowPrivate: true, maxBodyBytes: 32 * 1024, timeoutMs: 300 })
  await t.rejects(fetch(`${host.url}/big`), /larger than 32768 bytes/)
  const started = Date.now()
  await t.rejects(fetch(`${host.url}/slow`), /no complete answer within 300 ms/)
  t.ok(Date.now() - started < 2000, 'the timeout holds')
  t.equal((await fetch(`${host.url}/small`)).status, 200)
})

t.test('through Octokit, a host error is told by status and a short reason only', async (t) => {
  const host = await server(t, (req, res) => {
    if (req.url!.startsWith('/repos/acme/text')) {
      res.statusCode = 500
      res.setHeader('content-type', 'text/plain')
      return res.end(`internal secrets ${'z'.repeat(100_000)}`)
    }
    json(res, 404, { message: `Not Found\u001b[31m\r\nInjected: yes ${'y'.repeat(5000)}`, documentation_url: 'https://docs', debug: 'internal detail' })
  })
  const log = { debug () {}, info () {}, warn () {}, error () {} }
  const octokit = new Octokit({ baseUrl: host.url, request: { fetch: createHostFetch({ allowPrivate: true }) }, log })
  const json404 = await octokit.request('GET /repos/{owner}/{repo}', { owner: 'acme', repo: 'json' }).catch((err: unknown) => err)
  t.same(hostError(json404), { status: 404, reason: 'Not Found' }, 'nothing of the body, not even its message')
  t.equal(describeHostError(json404), 'the host answered 404: Not Found')
  const text500 = await octokit.request('GET /repos/{owner}/{repo}', { owner: 'acme', repo: 'text' }).catch((err: unknown) => err)
  t.same(hostError(text500), { status: 500, reason: 'Internal Server Error' }, 'a body that is not JSON is not shown at all')
  t.equal(describeHostError(text500), 'the host answered 500: Internal Server Error')
  const refused = await new Octokit({ baseUrl: host.url, request: { fetch: createHostFetch() }, log }).request('GET /repos/{owner}/{repo}', { owner: 'a', repo: 'b' }).catch((err: unknown) => err)
  t.match(hostError(refused), { status: null, reason: /^refused: address 127\.0\.0\.1 is loopback or private/ })
  t.equal(cleanReason('a\u0000b\u202ec\n\nd'), 'a b c d')
})
