/* eslint-disable no-template-curly-in-string -- StreamElements variables are written ${name} */
import t from 'tap'
import { once } from 'node:events'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import WebSocket from 'ws'
import type { Test } from 'tap'
import type { BuildOptions } from '../app.js'
import { build, TOKENS, type App } from './helper.js'
import { TEST_DATABASE_URL, testSchema } from './pg.js'

type Login = keyof typeof TOKENS
type Frame = Record<string, any>

const send = async (app: App, login: Login, message: string) =>
  await app.as(login, { method: 'POST', url: '/api/v1/messages/send', payload: { message } })
const post = async (app: App, login: Login, url: string, payload: object) => await app.as(login, { method: 'POST', url: `/api/v1${url}`, payload })
const put = async (app: App, login: Login, url: string, payload: object) => await app.as(login, { method: 'PUT', url: `/api/v1${url}`, payload })
const texts = async (app: App, login: Login = 'carol') =>
  (await app.as(login, { url: '/api/v1/messages?limit=100' })).json().data.map((m: { text: string }) => m.text) as string[]

/** Options that put several apps on one database (a file, or one PostgreSQL schema), kept for the test. */
async function sharedDatabase (t: Test): Promise<BuildOptions> {
  if (TEST_DATABASE_URL !== undefined) {
    const { schema, drop } = await testSchema(TEST_DATABASE_URL)
    t.teardown(drop)
    return { databaseUrl: TEST_DATABASE_URL, databaseSchema: schema, databasePoolMax: 4 }
  }
  const dir = mkdtempSync(join(tmpdir(), 'chat-bot-'))
  t.teardown(() => rmSync(dir, { recursive: true, force: true }))
  return { database: join(dir, 'chat.db') }
}

interface Feed { socket: WebSocket, frames: Frame[], next: (pred?: (f: Frame) => boolean) => Promise<Frame> }

async function connect (t: Test, app: App, login: Login): Promise<Feed> {
  const address = app.server.listening ? `http://127.0.0.1:${(app.server.address() as { port: number }).port}` : await app.listen({ host: '127.0.0.1', port: 0 })
  const socket = new WebSocket(`${address.replace('http', 'ws')}/api/v1/ws?access_token=${TOKENS[login]}`)
  const frames: Frame[] = []
  let read = 0
  socket.on('message', (raw) => frames.push(JSON.parse(String(raw)) as Frame))
  t.teardown(() => socket.terminate())
  await once(socket, 'open')
  const feed = {
    socket,
    frames,
    async next (pred: (f: Frame) => boolean = () => true) {
      const deadline = Date.now() + 5000
      for (;;) {
        while (read < frames.length) {
          const frame = frames[read++]
          if (pred(frame)) return frame
        }
        if (Date.now() > deadline) throw new Error(`no matching frame; got ${JSON.stringify(frames).slice(0, 2000)}`)
        await new Promise((resolve) => setTimeout(resolve, 10))
      }
    }
  }
  await feed.next((f) => f.type === 'welcome')
  return feed
}

async function until (check: () => Promise<boolean>, what: string): Promise<void> {
  const deadline = Date.now() + 5000
  while (!await check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`)
    await new Promise((resolve) => setTimeout(resolve, 20))
  }
}

t.test('variables and counters through HTTP and the feed', async (t) => {
  const app = await build(t)
  const feed = await connect(t, app, 'carol')
  t.equal((await put(app, 'carol', '/counters/deaths', { value: 3 })).statusCode, 403)
  const set = await put(app, 'bob', '/counters/Deaths', { value: 3 })
  t.equal(set.statusCode, 200)
  t.match(set.json(), { name: 'deaths', value: 3 })
  t.match(await feed.next((f) => f.type === 'counter.updated'), { data: { name: 'deaths', value: 3 } })
  t.equal((await put(app, 'bob', '/counters/bad name', { value: 1 })).statusCode, 400)
  t.equal((await put(app, 'bob', '/counters/x', { value: 1.5 })).statusCode, 400)
  t.equal((await app.as('carol', { url: '/api/v1/counters/nope' })).statusCode, 404)
  const created = await post(app, 'bob', '/commands', { command: '!died', response: '{touser} died {count deaths} times (use {count}); dice {random 1-1}', cooldown_seconds: 0, counter: { name: 'deaths' } })
  t.equal(created.statusCode, 201)
  t.match(created.json(), { counter: { name: 'deaths', add: 1 }, user_cooldown_seconds: 0, moderators_exempt: true })
  await send(app, 'carol', '!died @dave')
  t.equal((await texts(app)).at(-1), 'dave died 4 times (use 1); dice 1')
  t.match(await feed.next((f) => f.type === 'counter.updated'), { data: { value: 4 } })
  t.same((await app.as('dave', { url: '/api/v1/counters' })).json().data.map((c: { name: string, value: number }) => [c.name, c.value]), [['deaths', 4]])
  await post(app, 'bob', '/commands', { command: '!undo', response: 'now {count deaths}', cooldown_seconds: 0, counter: { name: 'deaths', add: -2 } })
  await send(app, 'carol', '!undo')
  t.equal((await texts(app)).at(-1), 'now 2')
  const patched = await app.as('bob', { method: 'PATCH', url: `/api/v1/commands/${created.json().id as number}`, payload: { counter: null } })
  t.equal(patched.json().counter, null)
})

t.test('per-user cooldowns and moderators_exempt, kept across a restart', async (t) => {
  const shared = await sharedDatabase(t)
  let app = await build(t, { ...shared, chat: { timers: false } })
  const { id } = (await post(app, 'bob', '/commands', { command: '!hug', response: 'hug {user}', cooldown_seconds: 0, user_cooldown_seconds: 3600 })).json()
  await post(app, 'bob', '/commands', { command: '!all', response: 'all', cooldown_seconds: 3600, moderators_exempt: false })
  t.equal((await send(app, 'carol', '!hug')).json().command_cooldown_seconds, undefined)
  const again = await send(app, 'carol', '!hug')
  t.equal(again.statusCode, 201, 'the message is posted')
  t.ok(again.json().command_cooldown_seconds > 3590, 'the sender is told the seconds left')
  t.equal((await send(app, 'dave', '!hug')).json().command_cooldown_seconds, undefined, 'another user is not cooling down')
  await send(app, 'bob', '!hug')
  await send(app, 'bob', '!hug')
  t.same((await texts(app)).filter((x) => x.startsWith('hug ')), ['hug carol', 'hug dave', 'hug bob', 'hug bob'], 'moderators exempt by default')
  await send(app, 'bob', '!all')
  t.ok((await send(app, 'alice', '!all')).json().command_cooldown_seconds > 0, 'moderators_exempt: false holds the broadcaster too')
  await app.close()

  app = await build(t, { ...shared, fixture: null, chat: { timers: false } })
  t.ok((await send(app, 'carol', '!hug')).json().command_cooldown_seconds > 3590, 'after a restart, still cooling down')
  t.ok((await send(app, 'dave', '!all')).json().command_cooldown_seconds > 3590)
  t.equal((await app.as('carol', { url: `/api/v1/commands/${id as number}` })).json().use_count, 4)
})

t.test('timers: a fake clock, min_lines, variables, the feed, validation', async (t) => {
  let now = Date.UTC(2026, 5, 1, 12, 0)
  const app = await build(t, { chat: { timers: { tickMs: 15, now: () => now } } })
  const mod = await connect(t, app, 'bob')
  const viewer = await connect(t, app, 'carol')
  t.equal((await post(app, 'carol', '/timers', { name: 'discord', message: 'x', interval_minutes: 5 })).statusCode, 403)
  t.equal((await post(app, 'bob', '/timers', { name: 'discord', message: 'x', interval_minutes: 4 })).statusCode, 400, 'at least 5 minutes')
  const created = await post(app, 'bob', '/timers', { name: 'discord', message: 'Join the Discord! Run {count} at {time UTC}', interval_minutes: 10, min_lines: 2 })
  t.equal(created.statusCode, 201)
  t.match(created.json(), { id: Number, name: 'discord', enabled: true, runs: 0, last_run_at: '2026-06-01T12:00:00.000Z', next_run_at: '2026-06-01T12:10:00.000Z' })
  t.equal((await post(app, 'bob', '/timers', { name: 'DISCORD', message: 'x', interval_minutes: 5 })).statusCode, 409)
  t.match(await mod.next((f) => f.type === 'timer.created'), { data: { name: 'discord' } })
  const id = created.json().id as number
  const bot = async () => (await texts(app)).filter((x) => x.startsWith('Join'))

  now += 11 * 60_000
  await new Promise((resolve) => setTimeout(resolve, 100))
  t.same(await bot(), [], 'due, but no lines yet')
  await send(app, 'carol', 'one')
  await send(app, 'dave', 'two')
  await until(async () => (await bot()).length === 1, 'the first run')
  t.same(await bot(), ['Join the Discord! Run 1 at 12:11'])
  const run = await viewer.next((f) => f.type === 'message.created' && f.data.source === 'bot')
  t.match(run.data, { user: { login: 'bot' }, text: 'Join the Discord! Run 1 at 12:11' }, 'runs appear in the feed as bot messages')
  await send(app, 'carol', 'three')
  await send(app, 'dave', 'four')
  now += 5 * 60_000
  await new Promise((resolve) => setTimeout(resolve, 100))
  t.equal((await bot()).length, 1, 'lines, but the interval has not passed')
  now += 5 * 60_000
  await until(async () => (await bot()).length === 2, 'the second run')
  t.match((await app.as('bob', { url: `/api/v1/timers/${id}` })).json(), { runs: 2 })
  const patched = await app.as('bob', { method: 'PATCH', url: `/api/v1/timers/${id}`, payload: { enabled: false } })
  t.equal(patched.json().enabled, false)
  t.equal((await app.as('carol', { url: '/api/v1/timers' })).statusCode, 403)
  t.equal((await app.as('bob', { method: 'DELETE', url: `/api/v1/timers/${id}` })).statusCode, 204)
  t.match(await mod.next((f) => f.type === 'timer.deleted'), { data: { id } })
  t.notOk(viewer.frames.some((f) => String(f.type).startsWith('timer.')), 'timer changes go to moderators only')
})

t.test('timers across a restart and two instances: every run once', async (t) => {
  const shared = await sharedDatabase(t)
  let now = Date.UTC(2026, 5, 1, 12, 0)
  const clock = { tickMs: 10, leaseMs: 60_000, now: () => now }
  const first = await build(t, { ...shared, chat: { timers: clock } })
  await post(first, 'bob', '/timers', { name: 'tip', message: 'tip {count}', interval_minutes: 5 })
  const runs = async (app: App) => (await texts(app)).filter((x) => x.startsWith('tip '))
  now += 5 * 60_000
  await until(async () => (await runs(first)).length === 1, 'run 1')
  await first.close()

  // The restart: the leases were handed back on close, so the new instance takes the timer at once.
  const second = await build(t, { ...shared, fixture: null, chat: { timers: clock } })
  await new Promise((resolve) => setTimeout(resolve, 100))
  t.same(await runs(second), ['tip 1'], 'not run again after the restart')
  now += 5 * 60_000
  await until(async () => (await runs(second)).length === 2, 'run 2, not skipped')

  // Two instances at once: one holds the lease; the other runs nothing until it expires.
  const third = await build(t, { ...shared, fixture: null, chat: { timers: clock } })
  for (let i = 3; i <= 6; i++) {
    now += 5 * 60_000
    await until(async () => (await runs(third)).length === i, `run ${i}`)
    await new Promise((resolve) => setTimeout(resolve, 60))
  }
  t.same(await runs(third), ['tip 1', 'tip 2', 'tip 3', 'tip 4', 'tip 5', 'tip 6'], 'each run once, in order, with two instances ticking')
  await second.close()
  now += 5 * 60_000 + 60_000
  await until(async () => (await runs(third)).length === 7, 'the other instance takes over')
  t.equal((await runs(third)).length, 7)
})

t.test('pattern filters: refuse, hold, timeout; RE2 only; at most 200', async (t) => {
  const app = await build(t)
  const add = async (payload: object) => await post(app, 'bob', '/filters/patterns', payload)
  t.equal((await post(app, 'carol', '/filters/patterns', { pattern: 'x+' })).statusCode, 403)
  const bad = await add({ pattern: '(a)\\1' })
  t.equal(bad.statusCode, 400)
  t.match(bad.json().message, /not a valid RE2/)
  t.equal((await add({ pattern: 'x', action: 'refuse', timeout_seconds: 5 })).statusCode, 400)
  const refuse = await add({ pattern: 'free\\s+v-?bucks' })
  t.equal(refuse.statusCode, 201)
  t.match(refuse.json(), { id: Number, pattern: 'free\\s+v-?bucks', action: 'refuse', timeout_seconds: null })
  t.equal((await add({ pattern: 'free\\s+v-?bucks' })).statusCode, 409)
  await add({ pattern: '(a+)+$', action: 'hold' })
  await add({ pattern: 'b[i1]tc[o0]in', action: 'timeout', timeout_seconds: 30 })
  const refused = await send(app, 'carol', 'get FREE   VBucks')
  t.equal(refused.statusCode, 422)
  t.match(refused.json(), { statusCode: 422, message: "message blocked by the pattern filter 'free\\s+v-?bucks'" })
  const started = performance.now()
  const held = await send(app, 'carol', 'a'.repeat(499) + '!')
  t.equal(held.statusCode, 201, 'the catastrophic pattern does not match and does not hang')
  t.ok(performance.now() - started < 2000)
  t.equal((await send(app, 'carol', 'aaaa')).statusCode, 202)
  const timedOut = await send(app, 'dave', 'buy B1TC0IN')
  t.equal(timedOut.statusCode, 422)
  t.match(timedOut.json().message, /you are timed out for 30 s/)
  t.equal((await send(app, 'dave', 'hello')).statusCode, 403, 'the sender is timed out')
  t.equal((await send(app, 'bob', 'free vbucks for mods')).statusCode, 201, 'moderators are exempt by default')
  t.equal((await app.as('bob', { method: 'DELETE', url: `/api/v1/filters/patterns/${refuse.json().id as number}` })).statusCode, 204)
  t.equal((await send(app, 'carol', 'free vbucks')).statusCode, 201)
  for (let i = 0; i < 198; i++) t.equal((await add({ pattern: `word${i}` })).statusCode, 201)
  const over = await add({ pattern: 'one-too-many' })
  t.equal(over.statusCode, 400)
  t.match(over.json().message, /200 pattern filters/)
  t.equal((await app.as('bob', { url: '/api/v1/filters/patterns' })).json().data.length, 200)
})

t.test('links, permits, caps, repetition and escalation', async (t) => {
  const app = await build(t)
  const feed = await connect(t, app, 'bob')
  const viewer = await connect(t, app, 'carol')
  t.match((await app.as('bob', { url: '/api/v1/filters/settings' })).json(), { links: { enabled: false }, exempt_roles: ['moderator', 'broadcaster'] })
  t.equal((await put(app, 'carol', '/filters/settings', { links: { enabled: true } })).statusCode, 403)
  t.equal((await put(app, 'bob', '/filters/settings', { escalation: { steps: ['warn', 'nuke'] } })).statusCode, 400)
  const set = await put(app, 'bob', '/filters/settings', { links: { enabled: true, allowed_domains: ['twitch.tv'] }, escalation: { steps: ['warn', 'timeout:600', 'ban'] } })
  t.equal(set.statusCode, 200)
  t.match(set.json(), { links: { enabled: true, allowed_domains: ['twitch.tv'], action: 'refuse' }, caps: { enabled: false }, escalation: { window_minutes: 60, steps: ['warn', 'timeout:600', 'ban'] } })
  t.match(await feed.next((f) => f.type === 'filter.settings.updated'), { data: { links: { enabled: true } } })
  t.equal((await send(app, 'carol', 'clips at https://clips.twitch.tv/abc')).statusCode, 201, 'allowed domain')
  const link = await send(app, 'carol', 'visit evil.example.com now')
  t.equal(link.statusCode, 422)
  t.match(link.json().message, /links filter \(evil\.example\.com is not an allowed domain\); this is a warning: another offense within 60 minutes times you out for 600 s$/, 'first offense: a warning')
  t.match(await feed.next((f) => f.type === 'filter.matched'), { data: { user: { login: 'carol' }, filter: 'links', offenses: 1, sanction: { kind: 'warn' } } })

  const permit = await post(app, 'bob', '/permits', { login: 'carol' })
  t.equal(permit.statusCode, 201)
  t.match(permit.json(), { login: 'carol', until: String })
  t.match(await feed.next((f) => f.type === 'permit.created'), { data: { login: 'carol' } })
  t.equal((await send(app, 'carol', 'visit evil.example.com now')).statusCode, 201, 'permitted')
  t.equal((await post(app, 'carol', '/permits', { login: 'dave' })).statusCode, 403)
  t.equal((await post(app, 'bob', '/permits', { login: 'nobody' })).statusCode, 404)
  t.equal((await send(app, 'bob', '!permit @dave')).statusCode, 201)
  t.equal((await texts(app)).at(-1), '@dave may post links for 60 seconds')
  t.equal((await send(app, 'dave', 'see dave.example.org')).statusCode, 201)
  await send(app, 'bob', '!permit ghost')
  t.equal((await texts(app)).at(-1), 'there is no user named ghost')

  await put(app, 'bob', '/filters/settings', { caps: { enabled: true }, repetition: { enabled: true, count: 2, seconds: 60 } })
  const caps = await send(app, 'carol', 'WHY IS NOBODY TALKING')
  t.match(caps.json().message, /caps filter; you are timed out for 600 s/, 'second offense: the second step')
  await app.as('bob', { method: 'POST', url: '/api/v1/users/carol/unban' })
  t.equal((await send(app, 'carol', 'same old')).statusCode, 201)
  const repeated = await send(app, 'carol', 'SAME OLD')
  t.match(repeated.json().message, /repetition filter .*; you are banned/, 'third offense: banned')
  t.equal((await app.as('bob', { url: '/api/v1/users/carol' })).json().banned, true)
  t.notOk(viewer.frames.some((f) => String(f.type).startsWith('filter.') || String(f.type).startsWith('permit.')), 'filter events go to moderators only')
})

t.test('a pattern filter\'s refusal is an offense the escalation counts: warn, timeout, ban', async (t) => {
  const app = await build(t)
  const feed = await connect(t, app, 'bob')
  t.equal((await put(app, 'bob', '/filters/settings', { escalation: { steps: ['warn', 'timeout:3', 'ban'] } })).statusCode, 200)
  t.equal((await post(app, 'bob', '/filters/patterns', { pattern: 'free\\s+v-?bucks' })).statusCode, 201)
  const first = await send(app, 'carol', 'FREE vbucks here')
  t.equal(first.statusCode, 422)
  t.equal(first.json().message, "message blocked by the pattern filter 'free\\s+v-?bucks'; this is a warning: another offense within 60 minutes times you out for 3 s")
  t.match(await feed.next((f) => f.type === 'filter.matched'), { data: { user: { login: 'carol' }, filter: 'pattern', offenses: 1, sanction: { kind: 'warn' } } })
  t.equal((await send(app, 'carol', 'hello')).statusCode, 201, 'a warning only: the sender may go on')

  const second = await send(app, 'carol', 'free v-bucks again')
  t.match(second.json().message, /pattern filter .*; you are timed out for 3 s$/)
  t.match(await feed.next((f) => f.type === 'filter.matched'), { data: { filter: 'pattern', offenses: 2, sanction: { kind: 'timeout', seconds: 3 } } })
  await app.as('bob', { method: 'POST', url: '/api/v1/users/carol/unban' })
  const third = await send(app, 'carol', 'free vbucks, last time')
  t.match(third.json().message, /pattern filter .*; you are banned$/)
  t.match(await feed.next((f) => f.type === 'filter.matched'), { data: { filter: 'pattern', offenses: 3, sanction: { kind: 'ban' } } })

  // With a warn step before another warn, the warning says no more than that; without steps, nothing is said.
  await put(app, 'bob', '/filters/settings', { escalation: { steps: ['warn', 'warn', 'ban'] } })
  t.match((await send(app, 'dave', 'free vbucks')).json().message, /'; this is a warning$/)
  await put(app, 'bob', '/filters/settings', { escalation: { steps: [] } })
  t.match((await send(app, 'dave', 'free vbucks')).json().message, /v-\?bucks'$/)
})

t.test('the moderation queue: invisible to viewers, approve and deny, feed per role', async (t) => {
  const app = await build(t)
  const mod = await connect(t, app, 'bob')
  const viewer = await connect(t, app, 'dave')
  await put(app, 'bob', '/filters/settings', { links: { enabled: true, action: 'hold' } })
  const held = await send(app, 'carol', 'my site: carol.example')
  t.equal(held.statusCode, 202)
  t.match(held.json(), { status: 'held', id: Number, message: /held for a moderator by the links filter/ })
  const id = held.json().id as number
  t.notOk((await texts(app, 'dave')).includes('my site: carol.example'), 'viewers do not see it')
  t.notOk((await texts(app, 'bob')).includes('my site: carol.example'), 'nor is it in the chat before approval')
  t.match(await mod.next((f) => f.type === 'held.created'), { data: { id, text: 'my site: carol.example', status: 'pending', user: { login: 'carol' } } })
  t.equal((await app.as('carol', { url: '/api/v1/held' })).statusCode, 403)
  const queue = await app.as('bob', { url: '/api/v1/held' })
  t.match(queue.json().data, [{ id, filter: 'links', status: 'pending', resolved_by: null }])
  const approved = await post(app, 'bob', `/held/${id}/approve`, {})
  t.equal(approved.statusCode, 200)
  t.match(approved.json(), { status: 'approved', resolved_by: { login: 'bob' }, resolved_at: String, message_id: Number })
  t.equal((await post(app, 'alice', `/held/${id}/deny`, {})).statusCode, 409, 'resolved once')
  t.equal((await texts(app, 'dave')).at(-1), 'my site: carol.example', 'published as if just sent')
  t.match(await viewer.next((f) => f.type === 'message.created'), { data: { text: 'my site: carol.example', user: { login: 'carol' } } })
  t.match(await mod.next((f) => f.type === 'held.resolved'), { data: { id, status: 'approved' } })
  const second = (await send(app, 'carol', 'another.example')).json().id as number
  const denied = await post(app, 'alice', `/held/${second}/deny`, {})
  t.match(denied.json(), { status: 'denied', resolved_by: { login: 'alice' }, message_id: null })
  t.notOk((await texts(app)).includes('another.example'))
  t.same((await app.as('bob', { url: '/api/v1/held?status=all' })).json().data.map((h: { status: string }) => h.status), ['denied', 'approved'])
  t.same((await app.as('bob', { url: '/api/v1/held' })).json().data, [])
  t.equal((await post(app, 'bob', '/held/999/approve', {})).statusCode, 404)
  t.notOk(viewer.frames.some((f) => String(f.type).startsWith('held.')), 'queue events go to moderators only')
})

t.test('slow mode and new-user limits', async (t) => {
  const app = await build(t)
  t.match((await app.as('carol', { url: '/api/v1/settings' })).json(), { slow_seconds: 0, new_user_minutes: 0, new_user_sends_per_minute: 0 })
  t.equal((await put(app, 'carol', '/settings', { slow_seconds: 30 })).statusCode, 403)
  t.equal((await put(app, 'bob', '/settings', { slow_seconds: -1 })).statusCode, 400)
  const feed = await connect(t, app, 'carol')
  t.match((await put(app, 'bob', '/settings', { slow_seconds: 30 })).json(), { slow_seconds: 30, new_user_minutes: 0 })
  t.match(await feed.next((f) => f.type === 'settings.updated'), { data: { slow_seconds: 30 } })
  t.equal((await send(app, 'carol', 'one')).statusCode, 201)
  const slow = await send(app, 'carol', 'two')
  t.equal(slow.statusCode, 429)
  t.ok(Number(slow.headers['retry-after']) >= 29 && Number(slow.headers['retry-after']) <= 30)
  t.match(slow.json().message, /slow mode: one message per 30 s/)
  t.equal((await send(app, 'bob', 'a')).statusCode, 201)
  t.equal((await send(app, 'bob', 'b')).statusCode, 201, 'moderators exempt')
  await put(app, 'bob', '/settings', { slow_seconds: 0, new_user_minutes: 10, new_user_sends_per_minute: 2 })
  t.equal((await send(app, 'dave', 'hi 1')).statusCode, 201)
  t.equal((await send(app, 'dave', 'hi 2')).statusCode, 201)
  const limited = await send(app, 'dave', 'hi 3')
  t.equal(limited.statusCode, 429)
  t.match(limited.json().message, /new users may send 2 messages per minute/)
  t.ok(Number(limited.headers['retry-after']) >= 1)
})

t.test('import from Nightbot and StreamElements exports', async (t) => {
  const app = await build(t)
  await post(app, 'bob', '/commands', { command: '!discord', response: 'old' })
  const nightbot = {
    format: 'nightbot',
    commands: [
      { _id: '5b1', createdAt: '2024-01-01T00:00:00.000Z', updatedAt: '2024-01-01T00:00:00.000Z', name: '!discord', message: 'Join $(user)', coolDown: 5, count: 3, userLevel: 'everyone' },
      { _id: '5b2', createdAt: '2024-01-01T00:00:00.000Z', updatedAt: '2024-01-01T00:00:00.000Z', name: '!uptime', message: '$(twitch $(channel) "{{uptimeLength}}")', coolDown: 30, count: 0, userLevel: 'everyone' },
      { _id: '5b3', name: '!hug', message: '$(user) hugs $(touser)!', coolDown: 0, count: 9, userLevel: 'regular' }
    ]
  }
  t.equal((await post(app, 'carol', '/commands/import', nightbot)).statusCode, 403)
  const first = await post(app, 'bob', '/commands/import', nightbot)
  t.equal(first.statusCode, 200)
  t.equal(first.json().imported, 2)
  t.match(first.json().skipped, [{ command: '!discord', reason: /exists .*"replace": true/ }])
  t.match(first.json().warnings, [{ command: '!uptime', message: /no variable here matches \$\(twitch…/ }, { command: '!uptime', message: /\$\(channel\)/ }, { command: '!hug', message: /user level 'regular'/ }])
  t.match((await app.as('carol', { url: '/api/v1/commands' })).json().data, [{ command: '!discord', response: 'old' }, { command: '!hug', response: '{user} hugs {touser}!', use_count: 9, permission: 'moderator' }, { command: '!uptime' }])
  const replaced = await post(app, 'bob', '/commands/import', { ...nightbot, replace: true })
  t.equal(replaced.json().imported, 3)
  t.match((await app.as('carol', { url: '/api/v1/commands' })).json().data[0], { command: '!discord', response: 'Join {user}', cooldown_seconds: 5, use_count: 3 })
  const se = await post(app, 'bob', '/commands/import', {
    format: 'streamelements',
    commands: [
      { _id: '60a', channel: 'c1', command: 'lurk', reply: '${user} is lurking ${random.pick \'🍿\' \'🛋️\'}', aliases: [], cooldown: { global: 10, user: 60 }, accessLevel: 100, enabled: true, type: 'say' },
      { _id: '60b', channel: 'c1', command: 'death', reply: 'Deaths: ${count deaths}', cooldown: { global: 0, user: 0 }, accessLevel: 500, enabled: true }
    ]
  })
  t.match(se.json(), { imported: 2, skipped: [], warnings: [] })
  const feed = await connect(t, app, 'carol')
  await send(app, 'bob', 'death')
  t.equal((await texts(app)).at(-1), 'Deaths: 1')
  t.match(await feed.next((f) => f.type === 'counter.updated'), { data: { name: 'deaths', value: 1 } })
  t.match((await app.as('carol', { url: '/api/v1/commands' })).json().data.find((c: { command: string }) => c.command === 'lurk'), { cooldown_seconds: 10, user_cooldown_seconds: 60 })
  t.equal((await post(app, 'bob', '/commands/import', { format: 'moobot', commands: [] })).statusCode, 400)
  t.equal((await post(app, 'bob', '/commands/import', { format: 'nightbot', commands: Array.from({ length: 1001 }, () => ({})) })).statusCode, 400)
})

t.test('a demoted moderator stops receiving moderator-only events', async (t) => {
  const app = await build(t, { chat: { keepaliveMs: 500, timers: false } })
  const feed = await connect(t, app, 'bob')
  await put(app, 'bob', '/filters/settings', { links: { enabled: true, action: 'hold' } })
  await send(app, 'carol', 'one.example')
  t.match(await feed.next((f) => f.type === 'held.created'), { data: { text: 'one.example' } })
  t.equal((await put(app, 'alice', '/users/bob/role', { role: 'viewer' })).statusCode, 200)
  await new Promise((resolve) => setTimeout(resolve, 1200))
  await send(app, 'carol', 'two.example')
  await send(app, 'carol', 'plain')
  await feed.next((f) => f.type === 'message.created' && f.data.text === 'plain')
  t.notOk(feed.frames.some((f) => f.type === 'held.created' && f.data.text === 'two.example'))
})
