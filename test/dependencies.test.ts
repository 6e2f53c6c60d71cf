import t from 'tap'
import Database from 'better-sqlite3'
import { recordSent } from './pg.js'
import { build, buildWithSql, REPO, OTHER_REPO, PRIVATE_REPO, TOKENS } from './helper.js'

const dep = (a: [number, number], b: [number, number]) => ({
  blocking: { repo_id: a[0], issue_number: a[1] },
  blocked: { repo_id: b[0], issue_number: b[1] }
})

t.test('create, list, delete', async (t) => {
  const app = await build(t)
  const created = await app.as('alice', { method: 'POST', url: '/p1/dependencies', payload: dep([REPO, 1], [REPO, 2]) })
  t.equal(created.statusCode, 200)
  t.same(created.json(), dep([REPO, 1], [REPO, 2]))
  t.same((await app.as('alice', { method: 'POST', url: '/p1/dependencies', payload: dep([REPO, 1], [REPO, 2]) })).json(), dep([REPO, 1], [REPO, 2]), 'an existing pair is not duplicated')
  await app.as('alice', { method: 'POST', url: '/p1/dependencies', payload: dep([OTHER_REPO, 1], [REPO, 2]) })
  await app.as('alice', { method: 'POST', url: '/p1/dependencies', payload: dep([REPO, 3], [PRIVATE_REPO, 1]) })
  await app.as('alice', { method: 'POST', url: '/p1/dependencies', payload: dep([OTHER_REPO, 2], [OTHER_REPO, 3]) })
  t.same((await app.as('alice', { url: `/p1/repositories/${REPO}/dependencies` })).json(), {
    dependencies: [dep([REPO, 1], [REPO, 2]), dep([OTHER_REPO, 1], [REPO, 2]), dep([REPO, 3], [PRIVATE_REPO, 1])]
  })
  t.same((await app.as('bob', { url: `/p1/repositories/${REPO}/dependencies` })).json(), {
    dependencies: [dep([REPO, 1], [REPO, 2]), dep([OTHER_REPO, 1], [REPO, 2])]
  }, 'only pairs readable on both sides')
  t.same((await app.as('carol', { url: `/p1/repositories/${REPO}/dependencies` })).json(), { dependencies: [dep([REPO, 1], [REPO, 2])] })
  t.equal((await app.as('dave', { url: `/p1/repositories/${REPO}/dependencies` })).statusCode, 404)

  const removed = await app.as('bob', { method: 'DELETE', url: '/p1/dependencies', payload: dep([REPO, 1], [REPO, 2]) })
  t.equal(removed.statusCode, 204)
  t.equal(removed.body, '')
  const gone = await app.as('bob', { method: 'DELETE', url: '/p1/dependencies', payload: dep([REPO, 1], [REPO, 2]) })
  t.equal(gone.statusCode, 404)
  t.match(gone.json().message, /no such dependency/)
})

t.test('permissions: write on both repositories', async (t) => {
  const app = await build(t)
  const readOnlySide = await app.as('bob', { method: 'POST', url: '/p1/dependencies', payload: dep([REPO, 1], [OTHER_REPO, 1]) })
  t.equal(readOnlySide.statusCode, 403)
  t.match(readOnlySide.json().message, new RegExp(`repository ${OTHER_REPO}`))
  t.equal((await app.as('bob', { method: 'POST', url: '/p1/dependencies', payload: dep([PRIVATE_REPO, 1], [REPO, 1]) })).statusCode, 404)
  t.equal((await app.as('carol', { method: 'POST', url: '/p1/dependencies', payload: dep([REPO, 1], [REPO, 2]) })).statusCode, 403)
  await app.as('alice', { method: 'POST', url: '/p1/dependencies', payload: dep([REPO, 1], [OTHER_REPO, 1]) })
  t.equal((await app.as('bob', { method: 'DELETE', url: '/p1/dependencies', payload: dep([REPO, 1], [OTHER_REPO, 1]) })).statusCode, 403)
})

t.test('cycles are refused: self, direct, long chains, across repositories', async (t) => {
  const app = await build(t)
  const post = (a: [number, number], b: [number, number]) => app.as('alice', { method: 'POST', url: '/p1/dependencies', payload: dep(a, b) })
  const self = await post([REPO, 1], [REPO, 1])
  t.equal(self.statusCode, 400)
  t.match(self.json().message, /cannot block itself/)
  t.equal((await post([REPO, 1], [REPO, 2])).statusCode, 200)
  const direct = await post([REPO, 2], [REPO, 1])
  t.equal(direct.statusCode, 400)
  t.match(direct.json().message, /would create a cycle/)
  for (let n = 2; n < 6; n++) t.equal((await post([REPO, n], [REPO, n + 1])).statusCode, 200)
  t.equal((await post([REPO, 6], [REPO, 1])).statusCode, 400, 'a chain of six')
  t.equal((await post([REPO, 6], [OTHER_REPO, 1])).statusCode, 200)
  t.equal((await post([OTHER_REPO, 1], [PRIVATE_REPO, 1])).statusCode, 200)
  const cross = await post([PRIVATE_REPO, 1], [REPO, 3])
  t.equal(cross.statusCode, 400, 'a cycle through three repositories')
  t.equal((await post([REPO, 1], [PRIVATE_REPO, 1])).statusCode, 200, 'a diamond is no cycle')
})

t.test('other refusals', async (t) => {
  const app = await build(t)
  await app.admin({ method: 'POST', url: '/admin/repositories', payload: { id: 88, owner: 'acme', name: 'island' } })
  await app.admin({ method: 'PUT', url: '/admin/repositories/88/permissions/alice', payload: { permission: 'admin' } })
  await app.admin({ method: 'POST', url: '/admin/repositories/88/issues', payload: { number: 1, title: 'x' } })
  const apart = await app.as('alice', { method: 'POST', url: '/p1/dependencies', payload: dep([REPO, 1], [88, 1]) })
  t.equal(apart.statusCode, 400)
  t.match(apart.json().message, /not in the same workspace/)
  const unknown = await app.as('alice', { method: 'POST', url: '/p1/dependencies', payload: dep([REPO, 1], [REPO, 99]) })
  t.equal(unknown.statusCode, 404)
  t.match(unknown.json().message, /blocked issue 99 not found/)
  for (const payload of [{}, { blocking: { repo_id: REPO, issue_number: 1 } }, dep([REPO, 0], [REPO, 1]), { blocking: { repo_id: 'a', issue_number: 1 }, blocked: { repo_id: REPO, issue_number: 2 } }]) {
    t.equal((await app.as('alice', { method: 'POST', url: '/p1/dependencies', payload })).statusCode, 400, JSON.stringify(payload))
  }
  t.equal((await app.as('alice', { method: 'DELETE', url: '/p1/dependencies' })).statusCode, 400, 'DELETE needs the body')
})

t.test('concurrent inserts that together would close a cycle: exactly one of each pair is made, the lock sent with the statement after it (and on PostgreSQL its commit)', async (t) => {
  const app = await build(t)
  // On PostgreSQL the lock goes with the insert's statement as EXECUTE once a connection has parsed it, and the commit
  // with them (db/engine/postgres-round-trips.ts).
  const sent = recordSent(t)
  type Side = [number, number]
  const post = async (a: Side, b: Side, method: 'POST' | 'DELETE' = 'POST') => (await app.as('alice', { method, url: '/p1/dependencies', payload: dep(a, b) })).statusCode
  const pairs: Array<[Side, Side]> = [[[REPO, 1], [REPO, 2]], [[REPO, 3], [OTHER_REPO, 1]], [[OTHER_REPO, 2], [REPO, 4]], [[REPO, 5], [REPO, 6]]]
  for (let round = 0; round < 6; round++) {
    const codes = await Promise.all(pairs.flatMap(([x, y]) => [post(x, y), post(y, x)]))
    for (let i = 0; i < pairs.length; i++) t.same([codes[2 * i], codes[2 * i + 1]].sort(), [200, 400], `round ${round}, pair ${i}: one made, the reverse refused`)
    t.equal((await app.as('alice', { url: `/p1/repositories/${REPO}/dependencies` })).json().dependencies.length, pairs.length, 'one edge per pair')
    for (let i = 0; i < pairs.length; i++) {
      const [x, y] = pairs[i]
      const [from, to] = codes[2 * i] === 200 ? [x, y] : [y, x]
      t.equal(await post(from, to, 'DELETE'), 204)
    }
  }
  if (process.env.TEST_DATABASE_URL !== undefined) {
    t.ok(sent.some((text) => /^BEGIN ISOLATION LEVEL READ COMMITTED; (SET LOCAL statement_timeout = \d+; )?SELECT pg_advisory_xact_lock\(hashtext\('dependencies'\)\); EXECUTE planning_\w+\(.*\); COMMIT$/s.test(text)),
      'begin, lock, the checked insert and its commit in one round trip')
  }
})

t.test('a refused insert writes nothing and leaves the counter; on PostgreSQL a made one is one round trip, and an existing pair leaves the counter too', async (t) => {
  // Recorded below the pool's wrappers, installed as each connection opens: before the app opens any.
  const sent = recordSent(t)
  const { app, sql } = await buildWithSql(t)
  const postgres = process.env.TEST_DATABASE_URL !== undefined
  const counter = async () => Number((await sql('SELECT value FROM change_counter'))[0].value)
  const post = async (a: [number, number], b: [number, number]) => (await app.as('alice', { method: 'POST', url: '/p1/dependencies', payload: dep(a, b) })).statusCode
  t.equal(await post([REPO, 1], [REPO, 2]), 200)
  t.equal(await post([REPO, 2], [REPO, 3]), 200)
  let before = await counter()
  sent.length = 0
  t.equal(await post([REPO, 3], [REPO, 4]), 200)
  t.equal(await counter(), before + 1, 'made: the counter moved once')
  // The transaction's statements: begin, lock, insert, commit (the request's auth is read from its cache).
  if (postgres) t.same(sent.filter((text) => /begin|commit|dependencies/i.test(text)).length, 1, `one round trip for the write: ${JSON.stringify(sent)}`)
  before = await counter()
  t.equal(await post([REPO, 4], [REPO, 1]), 400, 'a cycle of four')
  t.equal(await post([REPO, 4], [REPO, 99]), 404)
  t.equal(await counter(), before, 'refused: the counter where it was')
  t.equal(await post([REPO, 1], [REPO, 2]), 200, 'an existing pair')
  t.equal(await counter(), postgres ? before : before + 1, postgres ? 'nothing written, the counter where it was' : 'SQLite moves the counter with its empty write')
  t.equal((await app.as('alice', { url: `/p1/repositories/${REPO}/dependencies` })).json().dependencies.length, 3, 'three edges, none refused made')
})

t.test('the graph kept for cycle checks follows writes made elsewhere', async (t) => {
  const { join } = await import('node:path')
  const database = join(t.testdir({}), 'planning.db')
  const a = await build(t, { database })
  const b = await build(t, { database, fixture: null })
  const create = async (app: typeof a, from: number, to: number) =>
    await app.inject({ method: 'POST', url: '/p1/dependencies', headers: { 'x-authentication-token': TOKENS.alice }, payload: dep([REPO, from], [REPO, to]) })
  t.equal((await create(a, 1, 2)).statusCode, 200, 'A keeps the graph with 1 → 2')
  t.equal((await create(b, 2, 3)).statusCode, 200, 'B adds 2 → 3')
  const refused = await create(a, 3, 1)
  t.equal(refused.statusCode, 400, 'A sees the edge made through B: 3 → 1 would close a cycle')
  t.match(refused.json().message, /cycle/)
  t.equal((await b.inject({ method: 'DELETE', url: '/p1/dependencies', headers: { 'x-authentication-token': TOKENS.alice }, payload: dep([REPO, 2], [REPO, 3]) })).statusCode, 204)
  t.equal((await create(a, 3, 1)).statusCode, 200, 'and its removal')
})

t.test('a refused edge never stays in the kept graph, even when the check read the graph after inserting it', async (t) => {
  const app = await build(t)
  const create = async (from: number, to: number) => (await app.as('alice', { method: 'POST', url: '/p1/dependencies', payload: dep([REPO, from], [REPO, to]) })).statusCode
  t.equal(await create(1, 2), 200)
  t.equal(await create(1, 3), 200)
  // Another write moves the counter: the next check reads the graph again, inside its transaction.
  t.equal((await app.as('alice', { method: 'PUT', url: `/p1/repositories/${REPO}/issues/4/estimate`, payload: { estimate: 3 } })).statusCode, 200)
  t.equal(await create(2, 1), 400, '2 → 1 closes a cycle with 1 → 2')
  t.equal(await create(3, 2), 200, '3 → 2 closes none: the refused 2 → 1 is not in the graph the next check uses')
})

t.test('a dependency insert takes a bounded number of statements, whatever the graph', async (t) => {
  const executed: string[] = []
  const db = new Database(':memory:', { verbose: (sql) => executed.push(String(sql)) })
  const app = await build(t, { database: db })
  t.teardown(() => db.close())
  await app.as('alice', { method: 'POST', url: '/p1/dependencies', payload: dep([REPO, 1], [REPO, 2]) })
  const statements = async (payload: object) => {
    executed.length = 0
    const res = await app.as('alice', { method: 'POST', url: '/p1/dependencies', payload })
    t.equal(res.statusCode, 200)
    // Within the write transaction: the request's token and permission reads are the auth's, cached until the next write.
    const begin = executed.findIndex((sql) => /^begin/i.test(sql.trim()))
    return executed.slice(begin + 1).filter((sql) => !/^(commit|rollback)/i.test(sql.trim())).length
  }
  const fresh = await statements(dep([REPO, 2], [REPO, 3]))
  // Both issues with what their events name, the workspace check, the webhooks to tell and the
  // counter in one query, the insert (it tells whether the pair existed), the planning stamp, the counter bump.
  t.ok(fresh <= 4, `a new dependency: ${fresh} statements in its transaction`)
  t.notOk(executed.some((sql) => /from "webhooks"/.test(sql) && !/exists/i.test(sql)), 'no query of its own for the webhooks')
  const again = await statements(dep([REPO, 2], [REPO, 3]))
  t.ok(again <= 3, `an existing pair: ${again} statements`)
  t.ok(again < fresh, 'an existing pair writes nothing')
})

t.test('the webhooks a dependency write or an estimate tells are those wanting its event, read with its issues', async (t) => {
  const app = await build(t, { webhooks: { worker: false, allowPrivate: true } })
  const hook = async (events?: string[]) => (await app.as('alice', { method: 'POST', url: `/p1/repositories/${REPO}/webhooks`, payload: { url: 'http://127.0.0.1:9/hook', ...(events === undefined ? {} : { events }) } })).json().id as string
  const removals = await hook(['dependency_removed'])
  const legacy = await hook()
  t.equal((await app.as('alice', { method: 'POST', url: '/p1/dependencies', payload: dep([REPO, 1], [REPO, 2]) })).statusCode, 200)
  t.equal((await app.as('alice', { method: 'DELETE', url: '/p1/dependencies', payload: dep([REPO, 1], [REPO, 2]) })).statusCode, 204)
  t.equal((await app.as('alice', { method: 'PUT', url: `/p1/repositories/${REPO}/issues/4/estimate`, payload: { estimate: 5 } })).statusCode, 200)
  const types = async (id: string) => ((await app.as('alice', { url: `/p1/webhooks/${id}/deliveries` })).json() as Array<{ event_type: string }>).map((d) => d.event_type)
  t.same(await types(removals), ['dependency_removed'], 'the removal only, not the insert nor the estimate')
  t.same(await types(legacy), ['estimate_set'], 'a webhook naming no events gets the estimate (one of the hosted four)')
})
