import t from 'tap'
import { once } from 'node:events'
import WebSocket from 'ws'
import type { Test } from 'tap'
import Fastify from 'fastify'
import fp from 'fastify-plugin'
import { planningApi, serverOptions, type PlanningStore } from '../app.js'
import { ADMIN_TOKEN, build, testFixture, TOKENS, type App } from './helper.js'
import { TEST_DATABASE_URL, testSchema } from './pg.js'

type Login = keyof typeof TOKENS

const send = async (app: App, login: Login, message: unknown) =>
  await app.as(login, { method: 'POST', url: '/api/v1/messages/send', payload: { message } })
const createCommand = async (app: App, payload: object, login: Login = 'bob') =>
  await app.as(login, { method: 'POST', url: '/api/v1/commands', payload })
const texts = async (app: App, query = '') =>
  (await app.as('carol', { url: `/api/v1/messages${query}` })).json().data.map((m: { text: string }) => m.text)

t.test('send and read messages', async (t) => {
  const app = await build(t)
  const sent = await send(app, 'carol', '  hello chat  ')
  t.equal(sent.statusCode, 201)
  t.match(sent.json(), { id: Number, user: { id: 3, login: 'carol', role: 'viewer' }, text: 'hello chat', sent_at: String, source: 'user' })
  await send(app, 'bob', 'hi carol')
  const page = await app.as('dave', { url: '/api/v1/messages' })
  t.equal(page.statusCode, 200)
  t.same(page.json().data.map((m: { text: string, user: { role: string } }) => [m.text, m.user.role]), [['hello chat', 'viewer'], ['hi carol', 'moderator']])
  t.match(page.json().pagination, { limit: 50, before: null, has_older: false, has_newer: false })
  t.equal((await app.inject({ url: '/api/v1/messages', headers: { authorization: `Bearer ${TOKENS.dave}` } })).statusCode, 200, 'Bearer works')
  t.equal((await app.inject({ url: '/api/v1/messages' })).statusCode, 401)
  t.equal((await app.inject({ method: 'POST', url: '/api/v1/messages/send', payload: { message: 'x' } })).statusCode, 401)
})

t.test('pagination with limit, before and after', async (t) => {
  const app = await build(t, { chat: { sendLimit: { max: 100, windowMs: 30_000 } } })
  for (let i = 1; i <= 7; i++) await send(app, 'carol', `m${i}`)
  const latest = (await app.as('carol', { url: '/api/v1/messages?limit=3' })).json()
  t.same(latest.data.map((m: { text: string }) => m.text), ['m5', 'm6', 'm7'], 'the latest, oldest to newest')
  t.match(latest.pagination, { limit: 3, has_older: true, has_newer: false })
  const older = (await app.as('carol', { url: `/api/v1/messages?limit=3&before=${latest.pagination.before}` })).json()
  t.same(older.data.map((m: { text: string }) => m.text), ['m2', 'm3', 'm4'])
  t.match(older.pagination, { has_older: true, has_newer: true })
  const first = older.data[0].id - 1
  t.same(await texts(app, `?after=${first}&limit=2`), ['m2', 'm3'])
  t.same(await texts(app, `?after=${latest.pagination.after}`), [], 'nothing newer yet')
  for (const [query, message] of [['?limit=0', /limit/], ['?limit=101', /limit/], ['?limit=abc', /limit/], ['?before=1&after=2', /not both/], ['?before=-4', /before/], ['?after=x', /after/]] as const) {
    const res = await app.as('carol', { url: `/api/v1/messages${query}` })
    t.equal(res.statusCode, 400, query)
    t.match(res.json().message, message)
  }
})

t.test('send refusals: empty, too long, wrong type, rate limit', async (t) => {
  const app = await build(t)
  for (const [message, text] of [['', /empty/], ['   \n ', /empty/], ['x'.repeat(501), /longer than 500/], [5, /body\/message/]] as const) {
    const res = await send(app, 'carol', message)
    t.equal(res.statusCode, 400, JSON.stringify(message).slice(0, 20))
    t.match(res.json().message, text)
  }
  t.equal((await send(app, 'carol', '😀'.repeat(500))).statusCode, 201, '500 characters, counted as characters')
  t.equal((await app.as('carol', { method: 'POST', url: '/api/v1/messages/send', payload: {} })).statusCode, 400)
  for (let i = 0; i < 19; i++) t.equal((await send(app, 'dave', `spam ${i}`)).statusCode, 201)
  t.equal((await send(app, 'dave', 'spam 19')).statusCode, 201, 'the 20th is fine')
  const over = await send(app, 'dave', 'spam 20')
  t.equal(over.statusCode, 429)
  t.ok(Number(over.headers['retry-after']) >= 1 && Number(over.headers['retry-after']) <= 30, 'Retry-After in seconds')
  t.equal((await send(app, 'carol', 'others are not limited')).statusCode, 201)
})

t.test('blocked terms: plain and wildcard, moderators manage them', async (t) => {
  const app = await build(t)
  t.equal((await app.as('carol', { method: 'POST', url: '/api/v1/filters/terms', payload: { term: 'darn' } })).statusCode, 403)
  const added = await app.as('bob', { method: 'POST', url: '/api/v1/filters/terms', payload: { term: 'darn' } })
  t.equal(added.statusCode, 201)
  t.match(added.json(), { id: Number, term: 'darn' })
  t.equal((await app.as('bob', { method: 'POST', url: '/api/v1/filters/terms', payload: { term: 'DARN' } })).statusCode, 409)
  await app.as('bob', { method: 'POST', url: '/api/v1/filters/terms', payload: { term: 'spoil*' } })
  const blocked = await send(app, 'carol', 'oh DARN it')
  t.equal(blocked.statusCode, 422)
  t.match(blocked.json(), { statusCode: 422, error: 'Unprocessable Entity', message: "message blocked by the filter term 'darn'" })
  t.equal((await send(app, 'carol', 'no spoilers please')).statusCode, 422, 'wildcard')
  t.equal((await send(app, 'carol', 'darnation is a word')).statusCode, 201, 'whole words only')
  t.same((await app.as('bob', { url: '/api/v1/filters/terms' })).json().data.map((x: { term: string }) => x.term), ['darn', 'spoil*'])
  t.equal((await app.as('carol', { url: '/api/v1/filters/terms' })).statusCode, 403)
  t.equal((await app.as('bob', { method: 'DELETE', url: `/api/v1/filters/terms/${added.json().id}` })).statusCode, 204)
  t.equal((await app.as('bob', { method: 'DELETE', url: `/api/v1/filters/terms/${added.json().id}` })).statusCode, 404)
  t.equal((await send(app, 'carol', 'darn')).statusCode, 201)
})

t.test('a worst-case wildcard term cannot freeze the server', async (t) => {
  const app = await build(t)
  const tooMany = await app.as('bob', { method: 'POST', url: '/api/v1/filters/terms', payload: { term: '*a'.repeat(12) + '*b' } })
  t.equal(tooMany.statusCode, 400)
  t.match(tooMany.json().message, /body\/term must not hold more than 8 \* wildcards/)
  t.equal((await app.as('bob', { method: 'POST', url: '/api/v1/filters/terms', payload: { term: '*a*a*a*a*a*a*b' } })).statusCode, 201)
  const started = performance.now()
  const res = await send(app, 'carol', 'a'.repeat(500))
  t.equal(res.statusCode, 201, 'the message does not match and is sent')
  t.ok(performance.now() - started < 1000, 'answered at once')
})

t.test('commands: create, list, update, delete, duplicates, permissions', async (t) => {
  const app = await build(t)
  const created = await createCommand(app, { command: ' !discord ', response: 'Join us at example.org' })
  t.equal(created.statusCode, 201)
  t.match(created.json(), { id: Number, command: '!discord', response: 'Join us at example.org', cooldown_seconds: 30, permission: 'everyone', enabled: true, use_count: 0, created_at: String })
  t.equal(created.headers.location, `/api/v1/commands/${created.json().id}`)
  t.equal((await createCommand(app, { command: '!DISCORD', response: 'x' })).statusCode, 409, 'triggers compare case-insensitively')
  t.equal((await createCommand(app, { command: '!two words', response: 'x' })).statusCode, 400)
  t.equal((await createCommand(app, { command: '!x', response: '' })).statusCode, 400)
  t.equal((await createCommand(app, { command: '!x', response: 'y', permission: 'vip' })).statusCode, 400)
  t.equal((await createCommand(app, { command: '!x', response: 'y', cooldown_seconds: -1 })).statusCode, 400)
  t.equal((await createCommand(app, { command: '!x', response: 'y' }, 'carol')).statusCode, 403, 'viewers cannot')
  const id = created.json().id
  t.equal((await app.as('carol', { url: '/api/v1/commands' })).json().data.length, 1)
  t.equal((await app.as('carol', { url: `/api/v1/commands/${id}` })).json().command, '!discord')
  t.equal((await app.as('carol', { url: '/api/v1/commands/999' })).statusCode, 404)
  const patched = await app.as('bob', { method: 'PATCH', url: `/api/v1/commands/${id}`, payload: { response: 'New link', cooldown_seconds: 0, permission: 'moderator' } })
  t.match(patched.json(), { response: 'New link', cooldown_seconds: 0, permission: 'moderator' })
  await createCommand(app, { command: '!rules', response: 'Be nice' })
  t.equal((await app.as('bob', { method: 'PATCH', url: `/api/v1/commands/${id}`, payload: { command: '!Rules' } })).statusCode, 409)
  t.equal((await app.as('bob', { method: 'PATCH', url: `/api/v1/commands/${id}`, payload: {} })).statusCode, 400)
  t.equal((await app.as('carol', { method: 'PATCH', url: `/api/v1/commands/${id}`, payload: { enabled: false } })).statusCode, 403)
  t.equal((await app.as('bob', { method: 'DELETE', url: `/api/v1/commands/${id}` })).statusCode, 204)
  t.equal((await app.as('bob', { method: 'DELETE', url: `/api/v1/commands/${id}` })).statusCode, 404)
})

t.test('a trigger makes the bot answer, with cooldown, permission and use count', async (t) => {
  const app = await build(t)
  const { id } = (await createCommand(app, { command: '!hello', response: 'Hi {user}, use #{count}', cooldown_seconds: 1 })).json()
  await createCommand(app, { command: '!secret', response: 'mods only', permission: 'moderator', cooldown_seconds: 0 })
  await createCommand(app, { command: '!off', response: 'never', enabled: false })
  t.equal((await send(app, 'carol', '!HELLO there')).statusCode, 201)
  const after = await app.as('carol', { url: '/api/v1/messages' })
  t.same(after.json().data.map((m: { text: string, source: string, user: { login: string } }) => [m.source, m.user.login, m.text]),
    [['user', 'carol', '!HELLO there'], ['command', 'bot', 'Hi carol, use #1']])
  await send(app, 'dave', '!hello')
  t.equal((await texts(app)).length, 3, 'inside the cooldown: no answer')
  await new Promise((resolve) => setTimeout(resolve, 1100))
  await send(app, 'dave', '!hello')
  t.same((await texts(app)).slice(-1), ['Hi dave, use #2'])
  t.equal((await app.as('carol', { url: `/api/v1/commands/${id}` })).json().use_count, 2)
  await send(app, 'carol', '!secret')
  t.notOk((await texts(app)).includes('mods only'), 'viewers do not trigger moderator commands')
  await send(app, 'bob', '!secret')
  t.ok((await texts(app)).includes('mods only'))
  await send(app, 'carol', '!off')
  t.notOk((await texts(app)).includes('never'), 'disabled commands stay silent')
  await send(app, 'carol', 'say !hello')
  t.equal((await texts(app)).filter((x: string) => x.startsWith('Hi ')).length, 2, 'only the first word triggers')
})

t.test('moderation: roles, bans, timeouts, deletions', async (t) => {
  const app = await build(t)
  t.match((await app.as('dave', { url: '/api/v1/users/alice' })).json(), { login: 'alice', role: 'broadcaster', banned: false })
  t.equal((await app.as('dave', { url: '/api/v1/users/nobody' })).statusCode, 404)
  const ban = await app.as('bob', { method: 'POST', url: '/api/v1/users/dave/ban', payload: { reason: 'spam' } })
  t.equal(ban.statusCode, 200)
  t.match(ban.json(), { login: 'dave', banned: true, ban_reason: 'spam' })
  const banned = await send(app, 'dave', 'let me in')
  t.equal(banned.statusCode, 403)
  t.match(banned.json().message, /banned/)
  t.equal((await app.as('bob', { method: 'POST', url: '/api/v1/users/dave/unban' })).json().banned, false)
  t.equal((await send(app, 'dave', 'back')).statusCode, 201)
  const timeout = await app.as('bob', { method: 'POST', url: '/api/v1/users/dave/timeout', payload: { seconds: 1 } })
  t.ok(Date.parse(timeout.json().timed_out_until) > Date.now())
  t.match((await send(app, 'dave', 'x')).json(), { statusCode: 403, message: /timed out until/ })
  await new Promise((resolve) => setTimeout(resolve, 1100))
  t.equal((await send(app, 'dave', 'timeout over')).statusCode, 201)
  t.equal((await app.as('bob', { method: 'POST', url: '/api/v1/users/dave/timeout', payload: { seconds: 0 } })).statusCode, 400)
  t.equal((await app.as('carol', { method: 'POST', url: '/api/v1/users/dave/ban' })).statusCode, 403, 'viewers cannot ban')
  t.equal((await app.as('bob', { method: 'POST', url: '/api/v1/users/alice/ban' })).statusCode, 403, 'nobody bans the broadcaster')
  t.equal((await app.as('bob', { method: 'POST', url: '/api/v1/users/bob/ban' })).statusCode, 400)

  t.equal((await app.as('bob', { method: 'PUT', url: '/api/v1/users/carol/role', payload: { role: 'moderator' } })).statusCode, 403, 'the broadcaster appoints moderators')
  t.equal((await app.as('alice', { method: 'PUT', url: '/api/v1/users/carol/role', payload: { role: 'moderator' } })).json().role, 'moderator')
  t.equal((await app.as('carol', { method: 'POST', url: '/api/v1/users/bob/ban' })).statusCode, 403, 'moderators cannot ban moderators')
  t.equal((await app.as('alice', { method: 'POST', url: '/api/v1/users/bob/ban' })).statusCode, 200, 'the broadcaster can')

  const message = (await send(app, 'dave', 'delete me')).json()
  t.equal((await app.as('dave', { method: 'DELETE', url: `/api/v1/messages/${message.id}` })).statusCode, 403)
  t.equal((await app.as('carol', { method: 'DELETE', url: `/api/v1/messages/${message.id}` })).statusCode, 204)
  t.notOk((await texts(app)).includes('delete me'))
  t.equal((await app.as('carol', { method: 'DELETE', url: `/api/v1/messages/${message.id}` })).statusCode, 404)

  const role = await app.admin({ method: 'PUT', url: '/admin/chat/roles/dave', payload: { role: 'broadcaster' } })
  t.same(role.json(), { login: 'dave', role: 'broadcaster' })
  t.equal((await app.as('dave', { url: '/api/v1/users/alice' })).json().role, 'viewer', 'one broadcaster at most')
})

type Frame = Record<string, unknown>
interface Feed { socket: WebSocket, frames: Frame[], next: (pred?: (f: Frame) => boolean) => Promise<Frame> }

async function connect (t: Test, base: string, token: string): Promise<Feed> {
  const socket = new WebSocket(`${base}/api/v1/ws?access_token=${token}`)
  const frames: Array<Record<string, unknown>> = []
  let read = 0
  socket.on('message', (raw) => frames.push(JSON.parse(String(raw)) as Record<string, unknown>))
  t.teardown(() => socket.terminate())
  await once(socket, 'open')
  return {
    socket,
    frames,
    async next (pred = () => true) {
      const deadline = Date.now() + 5000
      for (;;) {
        while (read < frames.length) {
          const frame = frames[read++]
          if (pred(frame)) return frame
        }
        if (Date.now() > deadline) throw new Error(`no matching frame; got ${JSON.stringify(frames)}`)
        await new Promise((resolve) => setTimeout(resolve, 10))
      }
    }
  }
}

t.test('WebSocket feed: welcome, live events, resume, bad token', async (t) => {
  const app = await build(t)
  const address = await app.listen({ host: '127.0.0.1', port: 0 })
  const base = address.replace('http', 'ws')

  const bad = new WebSocket(`${base}/api/v1/ws?access_token=wrong`)
  const [code, reason] = await once(bad, 'close')
  t.equal(code, 4001, '401-equivalent close')
  t.equal(String(reason), 'invalid or missing token')

  const feed = await connect(t, base, TOKENS.carol)
  const welcome = await feed.next()
  t.match(welcome, { type: 'welcome', seq: Number, keepalive_seconds: 15, user: { login: 'carol', role: 'viewer' } })

  const sent = (await send(app, 'dave', 'live!')).json()
  const created = await feed.next()
  t.match(created, { type: 'message.created', seq: (welcome.seq as number) + 1 })
  t.same(created.data, sent, 'data shaped as in the REST API')
  await createCommand(app, { command: '!ping', response: 'pong', cooldown_seconds: 0 })
  t.match(await feed.next(), { type: 'command.created', data: { command: '!ping' } })
  await send(app, 'dave', '!ping')
  t.match(await feed.next(), { type: 'message.created', data: { text: '!ping', source: 'user' } })
  t.match(await feed.next(), { type: 'message.created', data: { text: 'pong', source: 'command', user: { login: 'bot' } } })
  t.match(await feed.next(), { type: 'command.updated', data: { use_count: 1 } })
  await app.as('bob', { method: 'DELETE', url: `/api/v1/messages/${sent.id}` })
  const deleted = await feed.next()
  t.match(deleted, { type: 'message.deleted', data: { id: sent.id } })

  // A second client missed everything: it resumes from the first welcome's seq.
  const late = await connect(t, base, TOKENS.dave)
  const lateWelcome = await late.next()
  t.equal(lateWelcome.seq, deleted.seq)
  late.socket.send(JSON.stringify({ type: 'resume', after_seq: welcome.seq }))
  const replayed = [await late.next(), await late.next(), await late.next(), await late.next(), await late.next(), await late.next()]
  t.same(replayed.map((f) => f.seq), [1, 2, 3, 4, 5, 6].map((i) => (welcome.seq as number) + i), 'replayed in order, nothing missing')
  t.same(replayed[0].data, sent)

  late.socket.send(JSON.stringify({ type: 'ping' }))
  t.match(await late.next(), { type: 'pong' })
  late.socket.send('not json')
  t.match(await late.next(), { type: 'error', message: /JSON/ })
  late.socket.send(JSON.stringify({ type: 'dance' }))
  t.match(await late.next(), { type: 'error', message: /unknown frame/ })
  await send(app, 'carol', 'still live after errors')
  t.match(await late.next((f) => f.type === 'message.created'), { data: { text: 'still live after errors' } })
})

t.test('a resume replays one page, and resume frames are rate limited', async (t) => {
  const app = await build(t, { chat: { resumePage: 3, resumeLimit: { max: 2, windowMs: 60_000 } } })
  const address = await app.listen({ host: '127.0.0.1', port: 0 })
  const feed = await connect(t, address.replace('http', 'ws'), TOKENS.carol)
  const welcome = await feed.next()
  const start = welcome.seq as number
  for (let i = 0; i < 7; i++) await send(app, 'dave', `m${i}`)
  for (let i = 0; i < 7; i++) await feed.next((f) => f.type === 'message.created')
  const replayed = (): number => feed.frames.filter((f) => f.type === 'message.created').length - 7

  feed.socket.send(JSON.stringify({ type: 'resume', after_seq: start }))
  t.same(await feed.next((f) => f.type === 'resume_more'), { type: 'resume_more', after_seq: start + 3 }, 'a page, then where to go on from')
  t.equal(replayed(), 3, 'three events replayed')
  feed.socket.send(JSON.stringify({ type: 'resume', after_seq: start + 3 }))
  t.same(await feed.next((f) => f.type === 'resume_more'), { type: 'resume_more', after_seq: start + 6 })
  t.equal(replayed(), 6)
  feed.socket.send(JSON.stringify({ type: 'resume', after_seq: start + 6 }))
  t.match(await feed.next((f) => f.type === 'error'), { message: /too many resume frames: at most 2 per 60 s/ })
  await new Promise((resolve) => setTimeout(resolve, 100))
  t.equal(replayed(), 6, 'the refused resume replayed nothing')
})

t.test('keepalive pings, and a client that stops answering is dropped', async (t) => {
  const app = await build(t, { chat: { keepaliveMs: 100 } })
  const address = await app.listen({ host: '127.0.0.1', port: 0 })
  const feed = await connect(t, address.replace('http', 'ws'), TOKENS.carol)
  let pings = 0
  feed.socket.on('ping', () => { pings++ })
  await new Promise((resolve) => setTimeout(resolve, 350))
  t.ok(pings >= 2, `pinged ${pings} times`)
  t.equal(feed.socket.readyState, WebSocket.OPEN, 'the ws client answers pings itself')

  const silent = new WebSocket(`${address.replace('http', 'ws')}/api/v1/ws?access_token=${TOKENS.dave}`, { autoPong: false })
  t.teardown(() => silent.terminate())
  const [code] = await once(silent, 'close')
  t.equal(code, 1006, 'terminated after a missed pong')
})

/**
 * The API with its store in reach (registered without encapsulation), the test fixture loaded, and
 * the feed's set-up made slow as on a busy PostgreSQL: the latest seq is read, then answered `ms` later.
 */
async function slowSetUp (t: Test, ms: number): Promise<App & { planningStore: PlanningStore }> {
  let database = {}
  if (TEST_DATABASE_URL !== undefined) {
    const { schema, drop } = await testSchema(TEST_DATABASE_URL)
    database = { databaseUrl: TEST_DATABASE_URL, databaseSchema: schema, databasePoolMax: 4 }
    t.teardown(drop)
  }
  const app = Fastify(serverOptions({ logLevel: 'silent' })) as unknown as App & { planningStore: PlanningStore }
  await app.register(fp(planningApi), { ...database, adminToken: ADMIN_TOKEN, documentation: false, rateLimit: false })
  await app.ready()
  t.teardown(async () => await app.close())
  app.as = async (login, opts) => await app.inject({ ...opts, headers: { 'x-authentication-token': TOKENS[login], ...opts.headers } })
  const imported = await app.inject({ method: 'POST', url: '/admin/import', headers: { authorization: `Bearer ${ADMIN_TOKEN}` }, payload: testFixture() })
  t.equal(imported.statusCode, 200)
  const repo = app.planningStore.chat
  const latestSeq = repo.latestSeq
  repo.latestSeq = async () => {
    const seq = await latestSeq()
    await new Promise((resolve) => setTimeout(resolve, ms))
    return seq
  }
  return app
}

t.test('frames sent in the open handler are answered after the welcome; events during set-up are not missed', async (t) => {
  const app = await slowSetUp(t, 300)
  const address = await app.listen({ host: '127.0.0.1', port: 0 })
  const start = await app.planningStore.chat.latestSeq()
  for (let i = 0; i < 3; i++) await send(app, 'dave', `before ${i}`)

  const socket = new WebSocket(`${address.replace('http', 'ws')}/api/v1/ws?access_token=${TOKENS.carol}`)
  t.teardown(() => socket.terminate())
  const frames: Frame[] = []
  socket.on('message', (raw) => frames.push(JSON.parse(String(raw)) as Frame))
  // As docs/chat.md's example does: resume at once, from the last seq the client had.
  socket.on('open', () => {
    socket.send(JSON.stringify({ type: 'resume', after_seq: start }))
    socket.send(JSON.stringify({ type: 'ping' }))
  })
  await once(socket, 'open')
  await new Promise((resolve) => setTimeout(resolve, 100))
  t.equal(frames.length, 0, 'still setting up')
  t.equal((await send(app, 'dave', 'during set-up')).statusCode, 201)

  const deadline = Date.now() + 5000
  const texts = () => frames.filter((f) => f.type === 'message.created').map((f) => (f.data as { text: string }).text)
  while (!(['before 0', 'before 1', 'before 2', 'during set-up'].every((text) => texts().includes(text)) && frames.some((f) => f.type === 'pong'))) {
    if (Date.now() > deadline) throw new Error(`frames missing; got ${JSON.stringify(frames)}`)
    await new Promise((resolve) => setTimeout(resolve, 10))
  }
  t.equal(frames[0].type, 'welcome', 'the welcome comes first')
  t.equal(frames[0].seq, start + 3, 'the message sent during set-up is newer than the welcome\'s seq')
  t.equal(frames[1].type, 'message.created', 'what was published during set-up follows the welcome')
  t.same([...new Set(texts())], ['during set-up', 'before 0', 'before 1', 'before 2'], 'the resume replayed what the client missed')
  t.same(frames.filter((f) => f.type === 'error'), [], 'no frame was refused')
})

t.test('more frames before the welcome than are held close the socket', async (t) => {
  const app = await slowSetUp(t, 300)
  const address = await app.listen({ host: '127.0.0.1', port: 0 })
  const socket = new WebSocket(`${address.replace('http', 'ws')}/api/v1/ws?access_token=${TOKENS.carol}`)
  t.teardown(() => socket.terminate())
  socket.on('open', () => { for (let i = 0; i < 17; i++) socket.send(JSON.stringify({ type: 'ping' })) })
  const [code, reason] = await once(socket, 'close')
  t.equal(code, 1008)
  t.equal(String(reason), 'at most 16 frames before the welcome')
})
