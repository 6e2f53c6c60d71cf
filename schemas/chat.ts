import { Type, PositiveInt } from './common.js'

export const ChatRole = Type.Union([Type.Literal('viewer'), Type.Literal('moderator'), Type.Literal('broadcaster')])
export const CommandPermission = Type.Union([Type.Literal('everyone'), Type.Literal('moderator'), Type.Literal('broadcaster')])

export const ChatMessage = Type.Object({
  id: Type.Integer(),
  user: Type.Object({ id: Type.Integer(), login: Type.String(), role: Type.String() }),
  text: Type.String(),
  sent_at: Type.String(),
  source: Type.Union([Type.Literal('user'), Type.Literal('bot'), Type.Literal('command')])
})

export const MessagesQuery = Type.Object({
  limit: Type.Integer({ minimum: 1, maximum: 100, default: 50 }),
  before: Type.Optional(PositiveInt),
  after: Type.Optional(PositiveInt)
})

export const MessagePage = Type.Object({
  data: Type.Array(ChatMessage),
  pagination: Type.Object({
    limit: Type.Integer(),
    before: Type.Union([Type.Integer(), Type.Null()], { description: 'pass as ?before= for older messages; null when there are none' }),
    after: Type.Union([Type.Integer(), Type.Null()], { description: 'pass as ?after= for newer messages (also to poll)' }),
    has_older: Type.Boolean(),
    has_newer: Type.Boolean()
  })
})

export const SendBody = Type.Object({ message: Type.String({ maxLength: 10_000 }) })

/** The stored message, and when the command it named is cooling down for the sender, for how long. */
export const SentMessage = Type.Intersect([ChatMessage, Type.Object({
  command_cooldown_seconds: Type.Optional(Type.Integer({ description: 'the command in the message is cooling down: the bot stayed silent; seconds left' }))
})])

export const IdParams = Type.Object({ id: PositiveInt })

/** Counter names: letters, digits, `_` and `-`, compared case-insensitively (kept lower-cased). */
export const CounterName = Type.String({ minLength: 1, maxLength: 40, pattern: '^[A-Za-z0-9_-]+$' })
/** What a command's use does to a counter: `add` (default 1; negative counts down). */
export const CommandCounter = Type.Object({ name: CounterName, add: Type.Integer() })
const CounterInput = Type.Object({ name: CounterName, add: Type.Optional(Type.Integer({ minimum: -1000, maximum: 1000, description: 'default 1' })) })

const Trigger = Type.String({ minLength: 1, maxLength: 60, pattern: '^\\s*\\S{1,50}\\s*$', description: 'one word, compared case-insensitively' })
const Reply = Type.String({ minLength: 1, maxLength: 500, description: 'variables such as {user}, {count}, {touser}, {1}, {count NAME}, {random 1-6} (docs/chat.md)' })
const Cooldown = Type.Integer({ minimum: 0, maximum: 86_400 })

export const ChatCommand = Type.Object({
  id: Type.Integer(),
  command: Type.String(),
  response: Type.String(),
  cooldown_seconds: Type.Integer(),
  permission: CommandPermission,
  enabled: Type.Boolean(),
  use_count: Type.Integer(),
  created_at: Type.String(),
  updated_at: Type.String(),
  user_cooldown_seconds: Type.Integer({ description: 'seconds before the same user triggers it again' }),
  moderators_exempt: Type.Boolean({ description: 'moderators and the broadcaster skip both cooldowns' }),
  counter: Type.Union([CommandCounter, Type.Null()], { description: 'a counter each use changes' })
})

export const CreateCommandBody = Type.Object({
  command: Trigger,
  response: Reply,
  cooldown_seconds: Type.Optional(Cooldown),
  permission: Type.Optional(CommandPermission),
  enabled: Type.Optional(Type.Boolean()),
  user_cooldown_seconds: Type.Optional(Cooldown),
  moderators_exempt: Type.Optional(Type.Boolean()),
  counter: Type.Optional(Type.Union([CounterInput, Type.Null()]))
})

export const UpdateCommandBody = Type.Object({
  command: Type.Optional(Trigger),
  response: Type.Optional(Reply),
  cooldown_seconds: Type.Optional(Cooldown),
  permission: Type.Optional(CommandPermission),
  enabled: Type.Optional(Type.Boolean()),
  user_cooldown_seconds: Type.Optional(Cooldown),
  moderators_exempt: Type.Optional(Type.Boolean()),
  counter: Type.Optional(Type.Union([CounterInput, Type.Null()]))
}, { minProperties: 1 })

export const ChatMember = Type.Object({
  id: Type.Integer(),
  login: Type.String(),
  role: ChatRole,
  banned: Type.Boolean(),
  ban_reason: Type.Union([Type.String(), Type.Null()]),
  timed_out_until: Type.Union([Type.String(), Type.Null()])
})

export const RoleBody = Type.Object({ role: Type.Union([Type.Literal('viewer'), Type.Literal('moderator')]) })
export const BanBody = Type.Object({ reason: Type.Optional(Type.String({ maxLength: 500 })) })
export const TimeoutBody = Type.Object({ seconds: Type.Integer({ minimum: 1, maximum: 1_209_600 }), reason: Type.Optional(Type.String({ maxLength: 500 })) })

export const BlockedTerm = Type.Object({ id: Type.Integer(), term: Type.String(), created_at: Type.String() })
export const TermBody = Type.Object({ term: Type.String({ minLength: 2, maxLength: 200, pattern: '\\S' }) })
