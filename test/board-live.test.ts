import t from 'tap'
import type { AddressInfo } from 'node:net'
import { open, waitFor, type Live } from './sse.js'
import { build, PRIVATE_REPO, REPO, TOKENS, WS_NEW, WS_OLD, type App } from './helper.js'

async function listen (app: App): Promise<string> {
  await app.listen({ port: 0, host: '127.0.0.1' })
  return `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`
}

const sleep = async (ms: number) => await new Promise((resolve) => setTimeout(resolve, ms))
const changes = (live: Live) => live.events.filter((e) => e.event === 'change').length

t.test('a change anywhere on the workspace\'s board reaches its open streams, only where the reader can see it', async (t) => {
  const app = await build(t)
  const base = await listen(app)
  const alice = await open(base, `/p2/workspaces/${WS_OLD}/live`, { 'x-authentication-token': TOKENS.alice })
  const carol = await open(base, `/p2/workspaces/${WS_OLD}/live?access_token=${TOKENS.carol}`)
  t.teardown(() => { alice.close(); carol.close() })
  t.equal(alice.res.statusCode, 200)
  t.match(alice.res.headers['content-type'], /^text\/event-stream/)
  t.equal(alice.res.headers['cache-control'], 'no-cache, no-transform')
  t.ok(await waitFor(alice, 'ready', 1) && await waitFor(carol, 'ready', 1), 'both streams say they are ready')

  // Only alice reads the private repository: its change reaches her stream, and nothing reaches carol's.
  const estimate = await app.as('alice', { method: 'PUT', url: `/p1/repositories/${PRIVATE_REPO}/issues/1/estimate`, payload: { estimate: 3 } })
  t.equal(estimate.statusCode, 200)
  t.ok(await waitFor(alice, 'change', 1), 'alice hears of the private repository\'s change')
  await sleep(2500)
  t.equal(changes(carol), 0, 'carol hears nothing of a repository she cannot read')

  // A change she can see reaches her.
  const move = await app.as('bob', { method: 'PUT', url: `/p1/repositories/${REPO}/issues/2/estimate`, payload: { estimate: 5 } })
  t.equal(move.statusCode, 200)
  t.ok(await waitFor(carol, 'change', 1), 'carol hears of the change on the repository she reads')
  t.ok(await waitFor(alice, 'change', 2), 'and so does alice')

  // A new issue lands in the first pipeline of each workspace holding its repository.
  const before = changes(carol)
  const created = await app.admin({ method: 'POST', url: `/admin/repositories/${REPO}/issues`, payload: { number: 50, title: 'Fresh' } })
  t.equal(created.statusCode, 201)
  t.ok(await waitFor(carol, 'change', before + 1), 'a new issue is a change')
  // A new title changes no board, but the page shows titles.
  const renamed = await app.admin({ method: 'PATCH', url: `/admin/repositories/${REPO}/issues/3`, payload: { title: 'Renamed on the host' } })
  t.equal(renamed.statusCode, 200)
  t.ok(await waitFor(carol, 'change', before + 2), 'a new title is a change')
})

t.test('who may open a stream, and how many', async (t) => {
  // A spy on every request the app answers, the stream's own reads of the board included.
  const boardReads: string[] = []
  const app = await build(t, { beforeReady: (app) => app.addHook('onRequest', async (request) => { boardReads.push(request.url) }) })
  const base = await listen(app)
  const refused = async (path: string, headers: Record<string, string> = {}) => {
    const live = await open(base, path, headers)
    const text = await live.ended
    return { status: live.res.statusCode, message: (JSON.parse(text) as { message: string }).message }
  }
  t.match(await refused(`/p2/workspaces/${WS_OLD}/live`), { status: 401 })
  t.match(await refused(`/p2/workspaces/${WS_OLD}/live`, { 'x-authentication-token': TOKENS.dave }), { status: 404, message: `workspace ${WS_OLD} not found` })
  t.match(await refused('/p2/workspaces/ffffffffffffffffffffffff/live', { 'x-authentication-token': TOKENS.alice }), { status: 404 })
  t.match(await refused('/p2/workspaces/not-an-id/live', { 'x-authentication-token': TOKENS.alice }), { status: 404 })

  const open10 = await Promise.all(Array.from({ length: 10 }, async () => await open(base, `/p2/workspaces/${WS_NEW}/live`, { 'x-authentication-token': TOKENS.bob })))
  t.teardown(() => { for (const live of open10) live.close() })
  t.same(open10.map((l) => l.res.statusCode), Array(10).fill(200))
  boardReads.length = 0
  t.match(await refused(`/p2/workspaces/${WS_NEW}/live`, { 'x-authentication-token': TOKENS.bob }), { status: 429, message: /at most 10 live streams per user/ })
  t.same(boardReads.filter((url) => !url.endsWith('/live')), [], 'a refused stream reads no board')
  // Another user is not held back by bob's streams.
  const carol = await open(base, `/p2/workspaces/${WS_NEW}/live`, { 'x-authentication-token': TOKENS.carol })
  t.equal(carol.res.statusCode, 200)
  carol.close()
  // A closed stream gives its place back.
  open10[0].close()
  await sleep(200)
  const again = await open(base, `/p2/workspaces/${WS_NEW}/live`, { 'x-authentication-token': TOKENS.bob })
  t.equal(again.res.statusCode, 200)
  again.close()
})

t.test('a reader who loses the workspace is told, and the stream ends', async (t) => {
  const app = await build(t)
  const base = await listen(app)
  const carol = await open(base, `/p2/workspaces/${WS_NEW}/live`, { 'x-authentication-token': TOKENS.carol })
  t.ok(await waitFor(carol, 'ready', 1))
  const ended = carol.ended
  const res = await app.admin({ method: 'PUT', url: `/admin/repositories/${REPO}/permissions/carol`, payload: { permission: 'none' } })
  t.equal(res.statusCode, 200)
  await ended
  t.match(carol.events.at(-1), { event: 'end', data: '{"reason":"the workspace is no longer readable"}' })
})

t.test('closing the server ends the open streams', async (t) => {
  const app = await build(t)
  const base = await listen(app)
  const alice = await open(base, `/p2/workspaces/${WS_OLD}/live`, { 'x-authentication-token': TOKENS.alice })
  t.ok(await waitFor(alice, 'ready', 1))
  const ended = alice.ended
  await app.close()
  await ended
  t.match(alice.events.at(-1), { event: 'end', data: '{"reason":"the server is shutting down"}' })
})

t.test('a look reads a few answers at a time, however many titles the board holds', async (t) => {
  // The look's own reads of the titles, as they start and end (a spy on the app's requests).
  let inFlight = 0
  let most = 0
  const titleReads: string[] = []
  const app = await build(t, {
    fixture: null,
    beforeReady: (app) => {
      app.addHook('onRequest', async (request) => {
        if (!request.url.includes('/issues?issue_numbers=')) return
        titleReads.push(request.url)
        most = Math.max(most, ++inFlight)
      })
      app.addHook('onResponse', async (request) => { if (request.url.includes('/issues?issue_numbers=')) inFlight-- })
    }
  })
  const imported = await app.admin({
    method: 'POST',
    url: '/admin/import',
    payload: {
      users: [{ login: 'alice', token: TOKENS.alice }],
      repositories: [7, 8].map((id) => ({ id, owner: 'o', name: `r${id}`, permissions: { alice: 'write' } })),
      workspaces: [{ id: WS_NEW, name: 'Many', repositories: [7, 8], pipelines: [{ id: 'many', name: 'Many' }] }],
      issues: [7, 8].flatMap((repo) => Array.from({ length: 500 }, (_, i) => ({ repo_id: repo, number: i + 1, title: `Issue ${i + 1}` })))
    }
  })
  t.equal(imported.statusCode, 200)
  const base = await listen(app)
  const alice = await open(base, `/p2/workspaces/${WS_NEW}/live`, { 'x-authentication-token': TOKENS.alice })
  t.teardown(() => { alice.close() })
  t.ok(await waitFor(alice, 'ready', 1))
  t.equal(titleReads.length, 10, 'the look read every title, 100 at a time')
  t.ok(most <= 4, `at most 4 title reads at once (${most})`)
  await sleep(1500)
  t.equal(titleReads.length, 10, 'with nothing written, the next look reads no title again')
  // A write to one repository (an estimate: its board) has only that repository's titles read again.
  titleReads.length = 0
  const written = await app.as('alice', { method: 'PUT', url: '/p1/repositories/8/issues/499/estimate', payload: { estimate: 3 } })
  t.equal(written.statusCode, 200)
  t.ok(await waitFor(alice, 'change', 1), 'an estimate is a change')
  t.same([...new Set(titleReads.map((url) => url.split('/issues?')[0]))], ['/p1/repositories/8'], 'the look read only the written repository\'s titles again')
  t.equal(titleReads.length, 5)
  // The titles still count: one renamed out of 1,000, in either repository, is a change.
  const renamed = await app.admin({ method: 'PATCH', url: '/admin/repositories/7/issues/499', payload: { title: 'Renamed' } })
  t.equal(renamed.statusCode, 200)
  t.ok(await waitFor(alice, 'change', 2), 'a new title is a change')
  const other = await app.admin({ method: 'PATCH', url: '/admin/repositories/8/issues/1', payload: { title: 'Renamed too' } })
  t.equal(other.statusCode, 200)
  t.ok(await waitFor(alice, 'change', 3), 'a new title in the other repository is a change')
})
