/* eslint-disable no-template-curly-in-string -- StreamElements variables are written ${name} */
import t from 'tap'
import { DEFAULT_FILTER_SETTINGS } from '../db/chat/filters.js'
import { mapVariables, planImport } from '../plugins/chat/import-rules.js'
import { cooldownLeft, paceWait, timerDue } from '../plugins/chat/pace.js'
import { compilePattern, matchPattern, patternProblem } from '../plugins/chat/patterns.js'
import { judge, linksIn, sanction, shouts } from '../plugins/chat/spam-rules.js'
import { countersIn, expand, type VariableContext } from '../plugins/chat/variables.js'

const ctx = (over: Partial<VariableContext> = {}): VariableContext =>
  ({ user: 'carol', args: ['@dave', 'two', 'three'], count: 7, counters: { deaths: 12 }, now: Date.UTC(2026, 0, 15, 13, 5), random: (min) => min, ...over })

t.test('variables', async (t) => {
  t.equal(expand('hi {user} -> {touser}: {args} #{count}', ctx()), 'hi carol -> dave: @dave two three #7')
  t.equal(expand('{touser}', ctx({ args: [] })), 'carol', 'touser falls back to the sender')
  t.equal(expand('{1}/{2}/{3}/{4}', ctx()), '@dave/two/three/', 'positional, missing ones empty')
  t.equal(expand('died {count deaths} times, won {count wins}', ctx()), 'died 12 times, won 0')
  t.equal(expand('{random 5-9} {random 9-5}', ctx()), '5 {random 9-5}', 'a backwards range is left as typed')
  t.equal(expand('{random.pick "heads" "tails"}', ctx({ random: (_min, max) => max })), 'tails')
  t.equal(expand('{random.pick "a" b}', ctx()), '{random.pick "a" b}')
  t.equal(expand('London {time Europe/London}, Tokyo {time Asia/Tokyo}', ctx()), 'London 13:05, Tokyo 22:05')
  t.equal(expand('{time Mars/Olympus} {nope} {user', ctx()), '{time Mars/Olympus} {nope} {user', 'unknown names and open braces left as typed')
  t.equal(expand('{{user}} {a{user}', ctx()), '{carol} {acarol', 'a { inside a name starts a new one')
  t.equal([...expand('{args}'.repeat(100), ctx({ args: ['x'.repeat(400)] }))].length, 500, 'cut to 500 characters')
  t.equal(expand('😀{user}'.repeat(100), ctx()).length, [...'😀carol'.repeat(100)].slice(0, 500).join('').length, 'cut by code points')
  t.same(countersIn('{count deaths} {count Wins} {count} {count bad name}'), ['deaths', 'wins'])
  for (const template of ['{'.repeat(100_000), '{a'.repeat(50_000), '{count '.repeat(14_000), '{random.pick "'.repeat(20_000)]) {
    const started = performance.now()
    expand(template, ctx())
    t.ok(performance.now() - started < 200, `linear on ${template.slice(0, 12)}…`)
  }
})

t.test('patterns: RE2 semantics, linear time', async (t) => {
  t.equal(patternProblem('(a+)+$'), undefined)
  t.match(patternProblem('(a)\\1'), /not a valid RE2 regular expression/, 'no back-references')
  t.match(patternProblem('(?=a)b'), /not a valid RE2/, 'no look-around')
  t.match(patternProblem('a|'), /matches every message/)
  t.match(patternProblem('[a-z]{1000}'.repeat(3)), /too complex|not a valid/)
  const catastrophic = ['(a+)+$', '(a+)+b', '(a|a)*$', '(a|aa)+$', '(.*a){12}$', '(x+x+)+y']
  const text = 'a'.repeat(30_000) + '!'
  for (const pattern of catastrophic) {
    const re = compilePattern(pattern)
    re.test('warm up')
    let best = Infinity
    for (let i = 0; i < 3; i++) {
      const started = performance.now()
      re.test(text)
      best = Math.min(best, performance.now() - started)
    }
    t.ok(best < 10, `${pattern} on 30,000 characters: ${best.toFixed(2)} ms`)
  }
  const patterns = [{ pattern: 'free\\s+v-?bucks' }, { pattern: '^!{3,}$' }, { pattern: 'b[i1]tc[o0]in' }]
  let matched = 0
  const started = performance.now()
  for (let i = 0; i < 3000; i++) {
    const message = i % 100 === 0 ? `get FREE  VBucks now ${i}` : i % 150 === 0 ? `buy B1TCOIN ${i}` : `message ${i} ${'lorem ipsum '.repeat(i % 40)}`
    if (matchPattern(message, patterns) !== undefined) matched++
  }
  t.equal(matched, 30 + 20 - 10, 'every planted message found, no other')
  t.ok(performance.now() - started < 3000, '3,000 messages judged quickly')
})

t.test('links, caps, repetition, exemptions and escalation', async (t) => {
  t.same(linksIn('see https://Example.org/x?y and www.twitch.tv, mail bob@example.com or 3.14 and a.b'), ['example.org', 'www.twitch.tv'])
  t.same(linksIn('(evil.co.uk) http://user@host.example.net:8080/'), ['evil.co.uk', 'host.example.net'])
  t.ok(shouts('THIS IS SO LOUD!!', { min_length: 10, max_ratio: 0.7 }))
  t.notOk(shouts('SHORT', { min_length: 10, max_ratio: 0.7 }))
  t.notOk(shouts('This Is Title Case Text', { min_length: 10, max_ratio: 0.7 }))
  const settings = {
    ...DEFAULT_FILTER_SETTINGS,
    links: { enabled: true, allowed_domains: ['twitch.tv'], action: 'hold' as const },
    caps: { enabled: true, min_length: 10, max_ratio: 0.7, action: 'refuse' as const },
    repetition: { enabled: true, count: 3, seconds: 30, action: 'timeout' as const }
  }
  const base = { role: 'viewer' as const, settings, patterns: [], permitted: false, repeats: 0 }
  t.match(judge({ ...base, text: 'go to clips.twitch.tv/x' }), undefined)
  t.match(judge({ ...base, text: 'go to evil.example' }), { filter: 'links', action: 'hold', detail: /evil\.example/ })
  t.equal(judge({ ...base, text: 'go to evil.example', permitted: true }), undefined, 'a permit lets links through')
  t.match(judge({ ...base, text: 'WHY IS NOBODY HERE' }), { filter: 'caps', action: 'refuse' })
  t.equal(judge({ ...base, text: 'same', repeats: 1 }), undefined)
  t.match(judge({ ...base, text: 'same', repeats: 2 }), { filter: 'repetition', action: 'timeout' }, 'the third time in the window')
  t.match(judge({ ...base, text: 'buy gold', patterns: [{ pattern: 'g[o0]ld', action: 'timeout', timeout_seconds: 30 }] }), { filter: 'pattern', timeoutSeconds: 30 })
  t.equal(judge({ ...base, role: 'moderator', text: 'EVIL.EXAMPLE NOW!!' }), undefined, 'exempt roles')
  const hit = { filter: 'caps', action: 'refuse' as const, detail: '' }
  const steps = ['warn', 'timeout:600', 'ban']
  t.same([1, 2, 3, 4].map((n) => sanction(hit, steps, n)), [{ kind: 'warn' }, { kind: 'timeout', seconds: 600 }, { kind: 'ban' }, { kind: 'ban' }])
  t.same(sanction({ ...hit, action: 'timeout', timeoutSeconds: 30 }, [], 5), { kind: 'timeout', seconds: 30 })
  t.same(sanction(hit, [], 5), { kind: 'warn' })
})

t.test('slow mode, new users, cooldowns and timers', async (t) => {
  const now = 10_000_000
  const off = { slow_seconds: 0, new_user_minutes: 0, new_user_sends_per_minute: 0 }
  t.equal(paceWait(off, { role: 'viewer', firstSeenAt: now, recent: [now - 1] }, now), undefined)
  const slow = { ...off, slow_seconds: 30 }
  t.same(paceWait(slow, { role: 'viewer', firstSeenAt: 0, recent: [now - 10_000] }, now), { waitSeconds: 20, reason: 'slow mode: one message per 30 s' })
  t.equal(paceWait(slow, { role: 'viewer', firstSeenAt: 0, recent: [now - 30_000] }, now), undefined)
  t.equal(paceWait(slow, { role: 'moderator', firstSeenAt: 0, recent: [now - 1] }, now), undefined, 'moderators exempt')
  const fresh = { ...off, new_user_minutes: 10, new_user_sends_per_minute: 2 }
  t.match(paceWait(fresh, { role: 'viewer', firstSeenAt: now - 60_000, recent: [now - 5_000, now - 20_000] }, now), { waitSeconds: 40, reason: /new users may send 2/ })
  t.equal(paceWait(fresh, { role: 'viewer', firstSeenAt: now - 11 * 60_000, recent: [now - 5_000, now - 20_000] }, now), undefined, 'no longer new')
  const command = { role: 'viewer' as const, cooldown_seconds: 30, user_cooldown_seconds: 120, moderators_exempt: true, lastUsedAt: null, userLastUsedAt: null }
  t.equal(cooldownLeft(command, now), 0)
  t.equal(cooldownLeft({ ...command, lastUsedAt: now - 10_000 }, now), 20)
  t.equal(cooldownLeft({ ...command, lastUsedAt: now - 40_000, userLastUsedAt: now - 40_000 }, now), 80, 'the longer of the two')
  t.equal(cooldownLeft({ ...command, role: 'moderator', lastUsedAt: now }, now), 0, 'moderators exempt')
  t.equal(cooldownLeft({ ...command, role: 'moderator', moderators_exempt: false, lastUsedAt: now }, now), 30)
  const timer = { interval_minutes: 5, min_lines: 3, enabled: true, last_run_at: now }
  t.notOk(timerDue(timer, now + 299_999, 10))
  t.notOk(timerDue(timer, now + 300_000, 2), 'waits for lines')
  t.ok(timerDue(timer, now + 300_000, 3))
  t.notOk(timerDue({ ...timer, enabled: false }, now + 900_000, 9))
})

t.test('import: variables and fields of both services', async (t) => {
  t.same(mapVariables('nightbot', 'Hi $(user), welcome $(touser)! #$(count) $(query) $(1) $(time Europe/Paris) $(urlfetch https://x)'),
    { text: 'Hi {user}, welcome {touser}! #{count} {args} {1} {time Europe/Paris} $(urlfetch https://x)', unmatched: ['$(urlfetch https://x)'], counter: undefined })
  t.same(mapVariables('streamelements', "${sender} ${user.name} -> ${touser} ${random.pick 'a b' \"c\"} ${random.1-6} ${count deaths} ${1:} ${game}"),
    { text: '{user} {user} -> {touser} {random.pick "a b" "c"} {random 1-6} {count deaths} {args} ${game}', unmatched: ['${game}'], counter: 'deaths' })
  t.same(mapVariables('nightbot', 'costs $5 $(unclosed $(user)'), { text: 'costs $5 $(unclosed {user}', unmatched: ['$(unclosed…'], counter: undefined })
  const nightbot = planImport('nightbot', [
    { _id: 'a', name: '!discord', message: 'Join $(user)', coolDown: 10, userLevel: 'everyone', count: 42 },
    { _id: 'b', name: '!mods', message: 'mods', coolDown: 5, userLevel: 'moderator', count: 0 },
    { _id: 'c', name: '!subs', message: 'subs only $(weather x)', userLevel: 'subscriber' },
    { _id: 'd', name: 'two words', message: 'x' },
    { _id: 'e', name: '!empty', message: '' },
    { _id: 'f', name: '!Discord', message: 'again' }
  ])
  t.match(nightbot.commands, [
    { command: '!discord', response: 'Join {user}', cooldown_seconds: 10, permission: 'everyone', use_count: 42 },
    { command: '!mods', permission: 'moderator' },
    { command: '!subs', permission: 'moderator', cooldown_seconds: 30 }
  ])
  t.same(nightbot.skipped.map((s) => s.command), ['two words', '!empty', '!Discord'])
  t.same(nightbot.warnings.map((w) => w.command), ['!subs', '!subs'])
  const se = planImport('streamelements', [
    { _id: 'x', command: 'lurk', reply: '${user} lurks', cooldown: { global: 15, user: 60 }, accessLevel: 100, enabled: true },
    { _id: 'y', command: 'so', reply: 'Follow ${touser}', cooldown: { global: 0, user: 0 }, accessLevel: 500, enabled: false },
    { _id: 'z', command: 'live', reply: 'on', accessLevel: 1500 },
    { _id: 'w', command: 42, reply: 'bad' }
  ])
  t.match(se.commands, [
    { command: 'lurk', response: '{user} lurks', cooldown_seconds: 15, user_cooldown_seconds: 60, permission: 'everyone', enabled: true },
    { command: 'so', permission: 'moderator', enabled: false },
    { command: 'live', permission: 'broadcaster' }
  ])
  t.same(se.skipped, [{ command: '(no name)', reason: 'the trigger must be one word of 1-50 characters' }])
})
