import t from 'tap'
import { decideSend, type SendInput } from '../plugins/chat/send-rules.js'

const member = { id: 3, login: 'carol', role: 'viewer' as const, banned: false, ban_reason: null, timed_out_until: null }
const command = {
  id: 7,
  command: '!hi',
  response: 'hello {user} (#{count})',
  cooldown_seconds: 30,
  permission: 'everyone' as const,
  enabled: true,
  use_count: 4,
  created_at: '',
  updated_at: '',
  user_cooldown_seconds: 0,
  moderators_exempt: true,
  counter: null
}
const input = (over: Partial<SendInput> = {}): SendInput =>
  ({ sender: member, message: '  hi there ', take: () => 0, limit: { max: 20, windowMs: 30_000 }, terms: [], now: 1_000_000, ...over })

t.test('refusals, in order', async (t) => {
  t.match(decideSend(input({ sender: { ...member, banned: true }, message: '' })), { ok: false, status: 403, message: /banned/ })
  t.match(decideSend(input({ sender: { ...member, timed_out_until: '2030-01-01T00:00:00.000Z' } })), { ok: false, status: 403, message: /timed out until 2030/ })
  t.match(decideSend(input({ message: '   ' })), { ok: false, status: 400, message: 'body/message must not be empty' })
  t.match(decideSend(input({ message: 'x'.repeat(501) })), { ok: false, status: 400, message: /longer than 500/ })
  t.same(decideSend(input({ take: () => 1500, limit: { max: 5, windowMs: 10_000 } })),
    { ok: false, status: 429, message: 'more than 5 messages in 10 seconds; slow down', retryAfterSeconds: 2 }, 'the message names the configured limit')
  t.match(decideSend(input({ message: 'oh darn', terms: [{ term: 'darn' }] })), { ok: false, status: 422, message: "message blocked by the filter term 'darn'" })
  let taken = 0
  decideSend(input({ sender: { ...member, banned: true }, take: () => { taken++; return 0 } }))
  t.equal(taken, 0, 'a refused sender spends no budget')
})

t.test('commands answer by role; a moderator\'s !permit', async (t) => {
  t.same(decideSend(input()), { ok: true, text: 'hi there' })
  t.same(decideSend(input({ message: '!hi @dave x', command })), { ok: true, text: '!hi @dave x', reply: { commandId: 7, response: 'hello {user} (#{count})', args: ['@dave', 'x'] } })
  t.same(decideSend(input({ message: '!hi', command: { ...command, permission: 'moderator' } })), { ok: true, text: '!hi' }, 'a viewer cannot use a moderator command')
  t.match(decideSend(input({ sender: { ...member, role: 'moderator' }, message: '!hi', command: { ...command, permission: 'moderator' } })), { reply: { commandId: 7 } })
  t.same(decideSend(input({ sender: { ...member, role: 'moderator' }, message: '!permit @dave' })), { ok: true, text: '!permit @dave', permit: { login: 'dave' } })
  t.same(decideSend(input({ message: '!permit dave' })), { ok: true, text: '!permit dave' }, 'viewers cannot permit')
  const hit = { filter: 'links', action: 'hold' as const, detail: 'the links filter' }
  t.same(decideSend(input({ message: '!hi evil.example', command, filter: () => hit })), { ok: true, text: '!hi evil.example', hit }, 'a filtered message triggers nothing')
  t.match(decideSend(input({ message: 'oh darn', terms: [{ term: 'darn' }], filter: () => hit })), { status: 422 }, 'blocked terms come first')
})
