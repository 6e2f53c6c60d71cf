import { Type } from '@sinclair/typebox'
import t, { type Test } from 'tap'
import { randomBytes } from 'node:crypto'
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { join } from 'node:path'
import { PassThrough, Readable } from 'node:stream'
import { setTimeout as sleep } from 'node:timers/promises'
import { setFlagsFromString } from 'node:v8'
import { runInNewContext } from 'node:vm'
import { hostedProgressLine, runAdminCommand, type TokenSource } from '../cli/admin.js'
import { createHostFetch } from '../services/host-fetch.js'
import { DomainEvents } from '../db/domain-events.js'
import { postgresKysely } from '../db/engine/postgres.js'
import { SecretBox } from '../db/engine/secret-box.js'
import { createStore, openSqliteStore, type PlanningStore } from '../db/store.js'
import { hostedTokenContext } from '../db/issue-host/hosted-imports.js'
import { createHostedImport, hostedImport, HostedImporter } from '../services/hosted-import/index.js'
import { HostedClient } from '../services/hosted-import/client.js'
import { build, testFixture, SECRET_KEY, OTHER_REPO, REPO, WS_OLD } from './helper.js'
import { FAST, hostImported, LOCAL, MOVER, sameAnswers, source, start, until } from './hosted-source.js'
import { TEST_DATABASE_URL, testSchema } from './pg.js'

t.test('requests are spaced, and a 403 of the rate limit is waited out until its reset', async (t) => {
  const { url } = await source(t, { max: 3, timeWindow: 3000 }, false)
  const app = await build(t, { fixture: hostImported(), hosts: LOCAL, hostedImport: { ...FAST, requestsPerMinute: 600 } })
  const seen = new Set<string>()
  const began = Date.now()
  const job = await until(app, (await start(app, { api_url: url, token: MOVER, repositories: [REPO] })).id, ['done', 'failed'], seen)
  t.equal(job.state, 'done', job.error)
  // workspaces, two boards, epics, dependencies, release reports, two start dates
  t.equal(job.estimated_requests, 8)
  t.ok(seen.has('waiting'), 'the state said it was waiting')
  t.ok(job.waited_seconds >= 1, `waited ${job.waited_seconds} s`)
  t.ok(job.requests > 8, `${job.requests} requests: the refused ones were made again`)
  t.ok(Date.now() - began >= (job.requests - 1) * 100, 'never closer than 60 s / requestsPerMinute')
})

t.test('a source that never answers, or fails, is retried and then given up on', async (t) => {
  let hits = 0
  const hanging: Server = createServer((request, response) => {
    hits++
    if (request.url?.includes('boom') === true) response.writeHead(502).end('{}')
    if (request.url?.includes('huge') === true) response.writeHead(200, { 'content-type': 'application/json' }).end(`[${'0,'.repeat(100_000)}0]`)
    if (request.url?.includes('nul') === true) response.writeHead(200, { 'content-type': 'application/json' }).end('[{"id":"5d0a7a9741fd098f6b7f58a1","name":"Eng\\u0000ineering"}]')
  })
  await new Promise<void>((resolve) => hanging.listen(0, '127.0.0.1', resolve))
  t.teardown(() => { hanging.closeAllConnections(); hanging.close() })
  const url = `http://127.0.0.1:${(hanging.address() as AddressInfo).port}`
  const app = await build(t, { fixture: hostImported(), hosts: LOCAL, hostedImport: { ...FAST, timeoutMs: 150, attempts: 3, maxBodyBytes: 100_000 } })
  const job = await until(app, (await start(app, { api_url: url, token: MOVER, repositories: [REPO] })).id)
  t.match(job, { state: 'failed', error: /no answer in time \(after 3 attempts\)/, requests: 3 })
  t.ok(hits >= 1 && hits <= 3, 'never more than the attempts')
  const failing = await until(app, (await start(app, { api_url: `${url}/boom`, token: MOVER, repositories: [REPO] })).id)
  t.match(failing, { state: 'failed', error: /answered 502 \(after 3 attempts\)/ })
  const huge = await until(app, (await start(app, { api_url: `${url}/huge`, token: MOVER, repositories: [REPO] })).id)
  t.match(huge, { state: 'failed', error: /answer is larger than 100000 bytes/, requests: 1 })
  const nul = await until(app, (await start(app, { api_url: `${url}/nul`, token: MOVER, repositories: [REPO] })).id)
  t.match(nul, { state: 'failed', error: /unexpected answer \(\/0\/name: a text holds a NUL character\)/, requests: 1 }, 'a NUL in a name is refused before the store sees it')
})

t.test('a request\'s timeout fires even when the garbage collector runs while it waits', async (t) => {
  // An AbortSignal.timeout composed with AbortSignal.any is collected by a full GC on Node 20, and
  // a source that never answers then held the import forever.
  setFlagsFromString('--expose-gc')
  const gc = runInNewContext('gc') as () => void
  const silent: Server = createServer(() => {})
  await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve))
  t.teardown(() => { silent.closeAllConnections(); silent.close() })
  const client = new HostedClient({
    apiUrl: `http://127.0.0.1:${(silent.address() as AddressInfo).port}`,
    token: 'token',
    fetch: createHostFetch(LOCAL),
    timeoutMs: 300,
    attempts: 1,
    signal: new AbortController().signal,
    onRequest: async () => {},
    onWait: async () => {},
    onWaited: async () => {}
  })
  const answer = client.get('/p1/workspaces', Type.Unknown()).then(() => 'answered', (err: Error) => err.message)
  for (let i = 0; i < 5; i++) {
    gc()
    await sleep(20)
  }
  const late = sleep(5000, undefined, { ref: false }).then(() => 'still waiting after 5 s')
  t.equal(await Promise.race([answer, late]), 'GET /p1/workspaces: no answer in time (after 1 attempts)')
})

/** One database for two instances: a file, or a PostgreSQL schema. */
async function shared (t: Test): Promise<{ database?: string, databaseUrl?: string, databaseSchema?: string }> {
  if (TEST_DATABASE_URL !== undefined) {
    const { schema, drop } = await testSchema(TEST_DATABASE_URL)
    t.teardown(drop)
    return { databaseUrl: TEST_DATABASE_URL, databaseSchema: schema }
  }
  return { database: join(t.testdir({}), 'planning.db') }
}

/** A host fetch whose requests stop being answered after `answered` of them (the instance is then stopped half-way). */
function stallingAfter (answered: number) {
  const hostFetch = createHostFetch(LOCAL)
  const seen = { count: 0 }
  const fetch = async (input: string, init: RequestInit): Promise<Response> => {
    if (++seen.count > answered) await new Promise((_resolve, reject) => init.signal?.addEventListener('abort', () => reject(init.signal?.reason)))
    return await hostFetch(input, init)
  }
  return { seen, fetch }
}

/** A store of its own on that database (with the tests' SECRET_KEY), beside the apps using it. */
async function sideStore (t: Test, database: Awaited<ReturnType<typeof shared>>): Promise<PlanningStore> {
  const secrets = SecretBox.fromStrings(SECRET_KEY)
  if (database.databaseUrl !== undefined) {
    const db = postgresKysely({ url: database.databaseUrl, schema: database.databaseSchema, poolMax: 2 })
    t.teardown(async () => await db.destroy())
    return createStore(db, new DomainEvents(), secrets)
  }
  const store = await openSqliteStore(database.database!, undefined, secrets)
  t.teardown(async () => await store.close())
  return store
}

/** The token column as stored. */
const storedToken = async (store: PlanningStore, id: string): Promise<string | null> =>
  (await store.db.selectFrom('hosted_imports').select('token').where('id', '=', id).executeTakeFirstOrThrow()).token

t.test('a crash in the middle: another instance with the same SECRET_KEY goes on from the item it reached; the token is erased at the end', async (t) => {
  const { app: hosted, url } = await source(t)
  const database = await shared(t)
  const stalling = stallingAfter(6)
  const first = await build(t, { ...database, fixture: hostImported(), hosts: LOCAL, hostedImport: { ...FAST, fetch: stalling.fetch, timeoutMs: 60_000 } })
  const { id } = await start(first, { api_url: url, token: MOVER, repositories: [REPO, OTHER_REPO] })
  for (let i = 0; i < 500 && stalling.seen.count <= 6; i++) await sleep(20)
  const half = (await first.admin({ url: `/admin/hosted-imports/${id}` })).json()
  t.equal(half.state, 'running')
  const side = await sideStore(t, database)
  const sealed = await storedToken(side, id)
  t.match(sealed, /^enc:v1:/, 'kept encrypted with SECRET_KEY')
  t.notMatch(sealed, MOVER)
  t.equal(side.secrets.open(sealed!, hostedTokenContext(id)), MOVER)
  t.throws(() => side.secrets.open(sealed!, hostedTokenContext('0'.repeat(24))), 'bound to its import: it does not open for another')
  await first.close()

  // Another process: only the SECRET_KEY is shared.
  const second = await build(t, { ...database, fixture: null, hosts: LOCAL, hostedImport: { ...FAST } })
  const job = await until(second, id)
  t.equal(job.state, 'done', job.error)
  t.ok(job.requests <= job.estimated_requests + 2, `${job.requests} requests for ${job.estimated_requests} estimated: nothing read twice but the item in flight`)
  t.equal(await storedToken(side, id), null, 'the token is erased when the import is done')
  await second.admin({ method: 'PUT', url: `/admin/repositories/${OTHER_REPO}/permissions/bob`, payload: { permission: 'read' } })
  await sameAnswers(t, hosted, second, false)
})

t.test('the token needs SECRET_KEY: refused without it; another key is refused at start, and a token that does not open fails the import, erasing it', async (t) => {
  const { url } = await source(t, undefined, false)
  const database = await shared(t)
  const keyless = await build(t, { ...database, fixture: hostImported(), hosts: LOCAL, hostedImport: FAST, secretKey: undefined })
  const refused = await keyless.admin({ method: 'POST', url: '/admin/hosted-imports', payload: { api_url: url, token: MOVER, repositories: [REPO] } })
  t.equal(refused.statusCode, 400)
  t.match(refused.json().message, /needs SECRET_KEY on the server \(make one with `openssl rand -base64 32`\)/)
  t.notMatch(refused.body, MOVER)
  const side = await sideStore(t, database)
  t.equal(await side.db.selectFrom('hosted_imports').select('id').executeTakeFirst(), undefined, 'nothing recorded')
  await keyless.close()

  const stalling = stallingAfter(0)
  const first = await build(t, { ...database, fixture: null, hosts: LOCAL, hostedImport: { ...FAST, fetch: stalling.fetch, timeoutMs: 60_000 } })
  const { id } = await start(first, { api_url: url, token: MOVER, repositories: [REPO] })
  for (let i = 0; i < 500 && stalling.seen.count === 0; i++) await sleep(20)
  await first.close()
  const otherKey = randomBytes(32).toString('base64')
  await t.rejects(build(t, { ...database, fixture: null, hosts: LOCAL, hostedImport: FAST, secretKey: otherKey }), /SECRET_KEY is not this database's key/,
    'an instance with another key is refused at start, before it touches the import')
  // A token sealed with another key all the same (as an older version's instance could store it): the import fails, erasing it.
  await side.db.updateTable('hosted_imports').set({ token: SecretBox.fromStrings(otherKey).seal(MOVER, hostedTokenContext(id)) }).where('id', '=', id).execute()
  const other = await build(t, { ...database, fixture: null, hosts: LOCAL, hostedImport: FAST })
  const job = await until(other, id)
  t.match(job, { state: 'failed', error: /the token cannot be read \(.*neither SECRET_KEY nor SECRET_KEY_PREVIOUS\): every instance needs the same SECRET_KEY; start a new import/ })
  t.equal(await storedToken(side, id), null, 'the token is erased when the import fails')
})

t.test('every request goes through the issue-host fetch: private addresses only when allowed, metadata never', async (t) => {
  const { url } = await source(t, undefined, false)
  const database = await shared(t)
  const strict = await build(t, { ...database, fixture: hostImported(), hostedImport: FAST })
  const job = await until(strict, (await start(strict, { api_url: url, token: MOVER, repositories: [REPO] })).id)
  t.match(job, { state: 'failed', error: /the hosted service's address is refused: address 127\.0\.0\.1 is loopback or private \(set HOST_ALLOW_PRIVATE=true to allow it\)/, requests: 1 })
  t.equal(await storedToken(await sideStore(t, database), job.id), null)
  const open = await build(t, { fixture: hostImported(), hosts: LOCAL, hostedImport: FAST })
  for (const address of ['http://169.254.169.254/api', 'http://[fd00:ec2::254]', 'http://[::ffff:169.254.169.254]']) {
    const refused = await until(open, (await start(open, { api_url: address, token: MOVER, repositories: [REPO] })).id)
    t.match(refused, { state: 'failed', error: /the hosted service's address is refused: address .* (metadata service|link-local)/, requests: 1 }, address)
  }
  t.equal((await until(open, (await start(open, { api_url: url, token: MOVER, repositories: [REPO] })).id)).state, 'done', 'allowed with HOST_ALLOW_PRIVATE')
})

t.test('a database outage pauses the import: never failed for it, tried again with backoff, done once the database is back', async (t) => {
  const { url } = await source(t, undefined, false)
  // The app's own importer looks for unfinished imports only at start and then once in ten minutes.
  const database = await shared(t)
  const app = await build(t, { ...database, fixture: hostImported(), hosts: LOCAL, hostedImport: { ...FAST, leaseMs: 600_000 } })
  const store = await sideStore(t, database)
  const down = { on: true, tries: 0 }
  const transaction = (async (fn) => {
    if (!down.on) return await store.transaction(fn)
    down.tries++
    throw Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' })
  }) as PlanningStore['transaction']
  const importer = new HostedImporter({ ...store, transaction }, app.log, { ...FAST, backoffMs: 50, fetch: createHostFetch(LOCAL) })
  t.teardown(async () => await importer.stop())
  const { id } = await createHostedImport(store, { api_url: url, token: MOVER, repositories: [REPO] })
  importer.start(id)
  await sleep(1200)
  const during = await hostedImport(store, id)
  t.not(during.state, 'failed', 'not failed for the outage')
  t.ok(down.tries >= 3 && down.tries <= 6, `${down.tries} tries in 1.2 s: 50, 100, 200, 400 ms apart, no spinning`)
  t.match(await storedToken(store, id), /^enc:v1:/, 'the token is kept for the next try')
  down.on = false
  let job = during
  for (let i = 0; i < 400 && job.state !== 'done' && job.state !== 'failed'; i++) {
    await sleep(25)
    job = await hostedImport(store, id)
  }
  t.equal(job.state, 'done', job.error ?? 'done')
  t.match(job, { workspaces: 2, pipelines: 5 })
  t.equal(await storedToken(store, id), null)
  t.equal((await app.admin({ url: `/admin/hosted-imports/${id}` })).json().state, 'done')
})

t.test('npm run admin -- import-hosted: the token from HOSTED_TOKEN or standard input, a progress bar', async (t) => {
  const { app: hosted, url } = await source(t, undefined, false)
  const database = join(t.testdir({}), 'planning.db')
  const sink = new PassThrough()
  const lines: string[] = []
  const config = { secretKey: SECRET_KEY, hostAllowPrivate: true }
  const run = async (tokens: TokenSource, ...argv: string[]) => await runAdminCommand(database, argv, (line) => lines.push(line), { out: sink, tokens, config })
  const none = { env: {}, stdin: Readable.from([]) }
  await run(none, 'import', join(t.testdir({ 'f.json': JSON.stringify(hostImported()) }), 'f.json'))
  await t.rejects(run(none, 'import-hosted', '--api-url', url, '--token', MOVER, String(REPO)), /never takes the token on the command line/)
  await t.rejects(run(none, 'import-hosted', '--api-url', url, String(REPO)), /no token: set HOSTED_TOKEN or give it on standard input/)
  await t.rejects(run({ env: { HOSTED_TOKEN: MOVER }, stdin: Readable.from([]) }, 'import-hosted', '--api-url', 'file:///etc', String(REPO)), /--api-url must be an http/)
  const keyless = { env: { HOSTED_TOKEN: MOVER }, stdin: Readable.from([]) }
  await t.rejects(runAdminCommand(database, ['import-hosted', '--api-url', url, String(REPO)], () => {}, { out: sink, tokens: keyless }), /needs SECRET_KEY/)
  const began = Date.now()
  const job = await run({ env: {}, stdin: Readable.from([`${MOVER}\n`]) }, 'import-hosted', '--api-url', url, String(REPO)) as any
  t.match(job, { state: 'done', workspaces: 2, pipelines: 5 })
  t.ok(Date.now() - began >= (job.requests - 1) * 600, `${job.requests} requests at most 100 a minute`)
  t.match(lines.at(-1), /^\[#{20}\] \d+ of ~\d+ requests, done$/)
  const bob = { 'x-authentication-token': testFixture().users[1].token }
  const app = await build(t, { database, fixture: null })
  const board = `/p2/workspaces/${WS_OLD}/repositories/${REPO}/board`
  t.same((await app.inject({ url: board, headers: bob })).json(), (await hosted.as('bob', { url: board })).json())
  t.match(hostedProgressLine({ ...job, state: 'waiting', requests: 5, estimated_requests: 10, waited_seconds: 30 }), /^\[#{10}-{10}\] 5 of ~10 requests, waiting for the hosted rate limit to reset \(waited 30 s\)$/)
})
