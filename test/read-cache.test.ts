import t from 'tap'
import { ReadCache } from '../plugins/core/read-cache.js'
import { build, OTHER_REPO, P, REPO, testFixture, TOKENS, WS_OLD } from './helper.js'

const wsId = (w: number) => `ws${String(w).padStart(4, '0')}`.padEnd(24, '0')
const entry = (version: number, size: number) => ({ version, body: Buffer.alloc(size), etag: '"x"', bytes: size })

t.test('the cache keeps what fits in its bytes, least recently used out first', async (t) => {
  const cache = new ReadCache(1000)
  cache.set('a', entry(1, 400))
  cache.set('b', entry(1, 400))
  t.ok(cache.get('a', 1), 'a is used: b is now the oldest')
  cache.set('c', entry(1, 400))
  t.equal(cache.peek('b'), undefined, 'b went to make room')
  t.ok(cache.peek('a'))
  t.ok(cache.peek('c'))
  t.same(cache.stats, { hits: 0, misses: 0, evictions: 1, beforeRouting: 0, bytes: 800, entries: 2, limit: 1000 })
  t.equal(cache.get('a', 2), undefined, 'an entry made at another version is no answer')
  cache.set('a', entry(2, 100))
  t.equal(cache.stats.bytes, 500, 'a replaced entry gives its bytes back')
  cache.set('huge', entry(2, 1001))
  t.equal(cache.peek('huge'), undefined, 'an answer bigger than the whole bound is not kept')
  t.equal(cache.stats.entries, 2)
})

t.test('READ_CACHE_MB bounds what a server keeps however many boards are read', async (t) => {
  const metricsToken = 'metrics-token-0123456789'
  const workspaces = 40
  const repos = 5
  const app = await build(t, {
    readCacheMb: 1,
    metricsToken,
    fixture: {
      users: [{ login: 'alice', token: 'alice-token-123456' }],
      repositories: Array.from({ length: repos }, (_, r) => ({ id: r + 1, owner: 'acme', name: `r${r}`, permissions: { alice: 'read' } })),
      workspaces: Array.from({ length: workspaces }, (_, w) => ({ id: wsId(w), name: `W${w}`, repositories: Array.from({ length: repos }, (_, r) => r + 1), pipelines: ['New', 'Done'] })),
      issues: Array.from({ length: repos * 400 }, (_, i) => ({ repo_id: (i % repos) + 1, number: Math.floor(i / repos) + 1, title: `Issue ${i}`, estimate: 1 }))
    }
  })
  const headers = { 'x-authentication-token': 'alice-token-123456' }
  let answered = 0
  for (let w = 0; w < workspaces; w++) {
    for (let r = 1; r <= repos; r++) {
      const res = await app.inject({ url: `/p2/workspaces/${wsId(w)}/repositories/${r}/board`, headers })
      t.equal(res.statusCode, 200)
      answered += res.rawPayload.length
    }
  }
  const metrics = (await app.inject({ url: '/metrics', headers: { authorization: `Bearer ${metricsToken}` } })).body
  const value = (name: string) => Number(metrics.split('\n').find((line) => line.startsWith(`${name} `))?.split(' ')[1])
  t.ok(answered > 4 * 1024 * 1024, `${(answered / 1024 / 1024).toFixed(1)} MiB of distinct boards were answered`)
  t.ok(value('planning_read_cache_bytes') <= 1024 * 1024, `the cache holds ${value('planning_read_cache_bytes')} bytes, within 1 MiB`)
  t.ok(value('planning_read_cache_evictions_total') > 0, 'the oldest were dropped')
  t.equal(value('planning_read_cache_misses_total'), workspaces * repos)
  const again = await app.inject({ url: `/p2/workspaces/${wsId(workspaces - 1)}/repositories/${repos}/board`, headers })
  t.equal(again.statusCode, 200)
  const after = (await app.inject({ url: '/metrics', headers: { authorization: `Bearer ${metricsToken}` } })).body
  t.match(after, /^planning_read_cache_hits_total 1$/m, 'the most recent board is still kept')
})

t.test('reads that arrive in one turn of the event loop share one read of the change counter', async (t) => {
  const metricsToken = 'metrics-token-0123456789'
  const app = await build(t, { metricsToken, fixture: testFixture() })
  const headers = { 'x-authentication-token': TOKENS.alice }
  const counts = async () => {
    const metrics = (await app.inject({ url: '/metrics', headers: { authorization: `Bearer ${metricsToken}` } })).body
    const count = (name: string) => Number(metrics.split('\n').find((line) => line.startsWith(`${name} `))?.split(' ')[1])
    return { asked: count('planning_change_counter_reads_total'), reads: count('planning_change_counter_queries_total') }
  }
  const url = `/p1/repositories/${REPO}/issues/1`
  const first = await app.inject({ url, headers })
  t.equal(first.statusCode, 200)
  const before = await counts()
  const answers = await Promise.all(Array.from({ length: 20 }, async () => await app.inject({ url, headers })))
  t.same(answers.map((a) => a.body), Array(20).fill(first.body), 'every read answered, from the kept bytes')
  const after = await counts()
  t.equal(after.asked - before.asked, 20, 'each request asked for the counter once')
  t.ok(after.reads - before.reads <= 2, `one read answered them (${after.reads - before.reads})`)
  const written = await app.inject({ method: 'PUT', url: `${url}/estimate`, headers, payload: { estimate: 8 } })
  t.equal(written.statusCode, 200)
  t.equal((await app.inject({ url, headers })).json().estimate.value, 8, 'the next turn reads the counter again and sees the write')
})

t.test('a write confined to one repository keeps the others\' cached answers; the written one is read fresh', async (t) => {
  const metricsToken = 'metrics-token-0123456789'
  const app = await build(t, { metricsToken, fixture: testFixture() })
  const headers = { 'x-authentication-token': TOKENS.alice }
  const misses = async () => {
    const metrics = (await app.inject({ url: '/metrics', headers: { authorization: `Bearer ${metricsToken}` } })).body
    return Number(metrics.split('\n').find((line) => line.startsWith('planning_read_cache_misses_total '))?.split(' ')[1])
  }
  const board = (repo: number) => `/p2/workspaces/${WS_OLD}/repositories/${repo}/board`
  const read = async (url: string) => {
    const res = await app.inject({ url, headers })
    t.equal(res.statusCode, 200, url)
    return res.body
  }
  const otherBoard = await read(board(OTHER_REPO))
  const otherIssue = await read(`/p1/repositories/${OTHER_REPO}/issues/1`)
  await read(board(REPO))
  const before = await misses()

  t.equal((await app.inject({ method: 'PUT', url: `/p1/repositories/${REPO}/issues/1/estimate`, headers, payload: { estimate: 5 } })).statusCode, 200)
  t.equal(await read(board(OTHER_REPO)), otherBoard, 'the other repository\'s board is the same')
  t.equal(await read(`/p1/repositories/${OTHER_REPO}/issues/1`), otherIssue)
  t.equal(await misses(), before, 'both answered from what was kept')
  const written = JSON.parse(await read(board(REPO))) as { pipelines: Array<{ issues: Array<{ issue_number: number, estimate?: { value: number } }> }> }
  t.same(written.pipelines.flatMap((p) => p.issues).find((i) => i.issue_number === 1)?.estimate, { value: 5 }, 'the written repository\'s board shows the estimate')
  t.equal(await misses(), before + 1, 'it was built again')

  t.equal((await app.inject({ method: 'POST', url: `/p1/repositories/${REPO}/issues/2/moves`, headers, payload: { pipeline_id: P.done, position: 'top' } })).statusCode, 200)
  t.equal(await read(board(OTHER_REPO)), otherBoard)
  const moved = JSON.parse(await read(board(REPO))) as { pipelines: Array<{ id: string, issues: Array<{ issue_number: number }> }> }
  t.equal(moved.pipelines.find((p) => p.id === P.done)?.issues[0]?.issue_number, 2, 'the move is on the written repository\'s board')
  t.equal(await misses(), before + 2)

  t.equal((await app.inject({ method: 'POST', url: '/p1/dependencies', headers, payload: { blocking: { repo_id: REPO, issue_number: 3 }, blocked: { repo_id: OTHER_REPO, issue_number: 2 } } })).statusCode, 200)
  t.equal(await read(board(OTHER_REPO)), otherBoard, 'a dependency touches both sides, but no board row: the board is sent as kept')
  t.equal(await misses(), before + 2)
  t.equal(await read(`/p1/repositories/${OTHER_REPO}/issues/1`), otherIssue, 'its issue data, not a board, is built again')
  t.equal(await misses(), before + 3)

  // A write that says nothing of its reach (a pipeline's host label) drops every kept answer.
  t.equal((await app.inject({ method: 'PATCH', url: `/p2/workspaces/${WS_OLD}/pipelines/${P.todo}`, headers, payload: { host_label: 'todo' } })).statusCode, 204)
  t.equal(await read(board(OTHER_REPO)), otherBoard)
  t.equal(await misses(), before + 4, 'built again after a write of any reach')
})

t.test('many issues\' data at once is kept like one issue\'s: answered again from bytes until a write reaches its repository', async (t) => {
  const metricsToken = 'metrics-token-0123456789'
  const app = await build(t, { metricsToken, fixture: testFixture() })
  const headers = { 'x-authentication-token': TOKENS.alice }
  const metric = async (name: string) => {
    const metrics = (await app.inject({ url: '/metrics', headers: { authorization: `Bearer ${metricsToken}` } })).body
    return Number(metrics.split('\n').find((line) => line.startsWith(`${name} `))?.split(' ')[1])
  }
  const url = `/p1/repositories/${REPO}/issues?issue_numbers=2,1`
  const first = await app.inject({ url, headers })
  t.equal(first.statusCode, 200)
  t.same((first.json() as Array<{ issue_number: number }>).map((i) => i.issue_number), [2, 1], 'in the order asked')
  const [hits, misses] = [await metric('planning_read_cache_hits_total'), await metric('planning_read_cache_misses_total')]
  const again = await app.inject({ url, headers })
  t.equal(again.body, first.body)
  t.equal(again.headers.etag, first.headers.etag)
  t.equal((await app.inject({ url, headers: { ...headers, 'if-none-match': String(first.headers.etag) } })).statusCode, 304)
  t.equal(await metric('planning_read_cache_hits_total'), hits + 2, 'both from the kept bytes')

  t.equal((await app.inject({ method: 'PUT', url: `/p1/repositories/${OTHER_REPO}/issues/1/estimate`, headers, payload: { estimate: 3 } })).statusCode, 200)
  t.equal((await app.inject({ url, headers })).body, first.body, 'a write to another repository leaves it kept')
  t.equal(await metric('planning_read_cache_misses_total'), misses)
  t.equal((await app.inject({ method: 'PUT', url: `/p1/repositories/${REPO}/issues/1/estimate`, headers, payload: { estimate: 5 } })).statusCode, 200)
  const written = (await app.inject({ url, headers })).json() as Array<{ issue_number: number, estimate?: { value: number } }>
  t.same(written.find((i) => i.issue_number === 1)?.estimate, { value: 5 }, 'a write to its repository is shown')
  t.equal(await metric('planning_read_cache_misses_total'), misses + 1)

  // no read access: 404 whatever is kept; a bad list: 400 from the first read, never kept
  t.equal((await app.inject({ url, headers: { 'x-authentication-token': TOKENS.dave } })).statusCode, 404)
  const many = `/p1/repositories/${REPO}/issues?issue_numbers=${Array.from({ length: 101 }, (_, i) => i + 1).join(',')}`
  t.equal((await app.inject({ url: many, headers })).statusCode, 400)
  t.equal((await app.inject({ url: many, headers })).statusCode, 400)
})
