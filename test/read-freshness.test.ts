import t from 'tap'
import { buildApp } from '../app.js'
import { firstPostgresInstance, METRICS_TOKEN, REPO, TOKENS } from './helper.js'
import { postgresAnswers } from './pg.js'
import { ranOnce } from './once.js'

// Two instances on one PostgreSQL schema: reads through one see writes acknowledged by the other,
// while the change counter is read by coalesced queries under load (README, "Scale out").
const PG = process.env.TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test'
const why = ranOnce !== false ? ranOnce : await postgresAnswers(PG) ? undefined : `no PostgreSQL answers at ${PG} (set TEST_DATABASE_URL)`
// A thousand rounds take a few seconds on an idle machine; far longer on a busy one.
t.setTimeout(600_000)
const ROUNDS = Number(process.env.ROUNDS ?? 1000)
const READERS = 4

t.test(`${ROUNDS} times: an estimate acknowledged by A, then its issue read through B, with other reads going on`, { skip: why }, async (t) => {
  const { a, options, drop } = await firstPostgresInstance(t, PG, { databasePoolMax: 4 })
  const b = await buildApp(options)
  t.teardown(async () => {
    await Promise.all([a.close(), b.close()])
    await drop()
  })
  const headers = { 'x-authentication-token': TOKENS.alice }

  // Readers on both instances keep a counter query out nearly all the time, so a read of the test
  // almost always arrives while one is out: the case where an early answer would be stale.
  const state = { running: true }
  let background = 0
  // B is read over its socket, where unchanged reads are answered before routing.
  const onB = await b.listen({ host: '127.0.0.1', port: 0 })
  const read = async (app: typeof a, url: string): Promise<{ status: number, body: string }> => {
    if (app === a) return await app.inject({ url, headers }).then((res) => ({ status: res.statusCode, body: res.body }))
    const res = await fetch(onB + url, { headers })
    return { status: res.status, body: await res.text() }
  }
  const reader = async (app: typeof a, url: string) => {
    while (state.running) {
      // A read answered from what the instance holds needs no I/O: yield as a client's next request would.
      await new Promise((resolve) => setImmediate(resolve))
      const res = await read(app, url)
      if (res.status !== 200) throw new Error(`background read: ${res.status} ${res.body}`)
      background++
    }
  }
  const readers = Array.from({ length: READERS }, async (_, i) => await reader(i % 2 === 0 ? b : a, i % 4 < 2 ? `/p1/repositories/${REPO}/board` : `/p1/repositories/${REPO}/issues/2`))

  let stale = 0
  let writeMs = 0
  let readMs = 0
  try {
    for (let round = 1; round <= ROUNDS; round++) {
      const t0 = performance.now()
      const written = await a.inject({ method: 'PUT', url: `/p1/repositories/${REPO}/issues/1/estimate`, headers, payload: { estimate: round } })
      if (written.statusCode !== 200) throw new Error(`write ${round}: ${written.statusCode} ${written.body}`)
      const t1 = performance.now()
      const issue = await read(b, `/p1/repositories/${REPO}/issues/1`)
      writeMs += t1 - t0
      readMs += performance.now() - t1
      if ((JSON.parse(issue.body) as { estimate?: { value: number } }).estimate?.value !== round) stale++
    }
  } finally {
    state.running = false
    await Promise.all(readers)
  }
  t.comment(`write ${(writeMs / ROUNDS).toFixed(1)} ms, read ${(readMs / ROUNDS).toFixed(1)} ms`)
  t.equal(stale, 0, 'every read through B showed the write just acknowledged by A')
  t.ok(background > ROUNDS, `the readers kept going (${background} reads)`)
  const metrics = (await b.inject({ url: '/metrics', headers: { authorization: `Bearer ${METRICS_TOKEN}` } })).body
  const count = (name: string) => Number(metrics.split('\n').find((line) => line.startsWith(`${name} `))?.split(' ')[1])
  const [asked, queries, watched] = ['reads', 'queries', 'watched'].map((name) => count(`planning_change_counter_${name}_total`))
  t.ok(watched > asked / 2, `most of B's reads were answered from the counter it hears of (${watched} of ${asked}; ${queries} queries)`)
  const early = count('planning_read_cache_before_routing_total')
  t.ok(early > 0, `some of B's reads were answered before routing (${early})`)
})
