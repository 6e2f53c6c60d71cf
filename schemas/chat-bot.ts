import { Type, Login, PositiveInt } from './common.js'
import { ChatRole, CounterName } from './chat.js'

const CounterValue = Type.Integer({ minimum: -1_000_000_000_000, maximum: 1_000_000_000_000 })

export const Counter = Type.Object({ name: Type.String(), value: Type.Integer(), updated_at: Type.String() })
export const CounterParams = Type.Object({ name: CounterName })
export const CounterBody = Type.Object({ value: CounterValue })

const Message = Type.String({ minLength: 1, maxLength: 500, pattern: '\\S', description: 'variables as in command responses' })
const TimerName = Type.String({ minLength: 1, maxLength: 60, pattern: '\\S' })
const Interval = Type.Integer({ minimum: 5, maximum: 10_080, description: 'minutes between runs, at least 5' })
const MinLines = Type.Integer({ minimum: 0, maximum: 10_000, description: 'user messages since the last run it waits for' })

export const Timer = Type.Object({
  id: Type.Integer(),
  name: Type.String(),
  message: Type.String(),
  interval_minutes: Type.Integer(),
  min_lines: Type.Integer(),
  enabled: Type.Boolean(),
  runs: Type.Integer(),
  last_run_at: Type.String({ description: 'when it last ran (at creation: when it was created)' }),
  next_run_at: Type.String({ description: 'the earliest time of the next run (it also waits for min_lines)' }),
  created_at: Type.String(),
  updated_at: Type.String()
})
export const CreateTimerBody = Type.Object({
  name: TimerName,
  message: Message,
  interval_minutes: Interval,
  min_lines: Type.Optional(MinLines),
  enabled: Type.Optional(Type.Boolean())
})
export const UpdateTimerBody = Type.Object({
  name: Type.Optional(TimerName),
  message: Type.Optional(Message),
  interval_minutes: Type.Optional(Interval),
  min_lines: Type.Optional(MinLines),
  enabled: Type.Optional(Type.Boolean())
}, { minProperties: 1 })

export const FilterAction = Type.Union([Type.Literal('refuse'), Type.Literal('hold'), Type.Literal('timeout')])
export const FilterPattern = Type.Object({
  id: Type.Integer(),
  pattern: Type.String(),
  action: FilterAction,
  timeout_seconds: Type.Union([Type.Integer(), Type.Null()]),
  created_at: Type.String()
})
const TimeoutSeconds = Type.Integer({ minimum: 1, maximum: 1_209_600 })
export const PatternBody = Type.Object({
  pattern: Type.String({ minLength: 1, maxLength: 200 }),
  action: Type.Optional(FilterAction),
  timeout_seconds: Type.Optional(TimeoutSeconds)
})

const Domain = Type.String({ minLength: 1, maxLength: 253, pattern: '^[A-Za-z0-9-]+(\\.[A-Za-z0-9-]+)+$' })
const Step = Type.String({ pattern: '^(warn|ban|timeout:[1-9][0-9]{0,6})$', description: '"warn", "timeout:SECONDS" or "ban"' })

export const FilterSettings = Type.Object({
  links: Type.Object({ enabled: Type.Boolean(), allowed_domains: Type.Array(Domain, { maxItems: 200 }), action: FilterAction }),
  caps: Type.Object({
    enabled: Type.Boolean(), min_length: Type.Integer({ minimum: 1, maximum: 500 }), max_ratio: Type.Number({ minimum: 0, maximum: 1 }), action: FilterAction
  }),
  repetition: Type.Object({
    enabled: Type.Boolean(), count: Type.Integer({ minimum: 2, maximum: 100 }), seconds: Type.Integer({ minimum: 1, maximum: 86_400 }), action: FilterAction
  }),
  escalation: Type.Object({ window_minutes: Type.Integer({ minimum: 1, maximum: 10_080 }), steps: Type.Array(Step, { maxItems: 10 }) }),
  exempt_roles: Type.Array(ChatRole, { maxItems: 3, uniqueItems: true })
})
export const FilterSettingsBody = Type.Object({
  links: Type.Optional(Type.Partial(FilterSettings.properties.links)),
  caps: Type.Optional(Type.Partial(FilterSettings.properties.caps)),
  repetition: Type.Optional(Type.Partial(FilterSettings.properties.repetition)),
  escalation: Type.Optional(Type.Partial(FilterSettings.properties.escalation)),
  exempt_roles: Type.Optional(FilterSettings.properties.exempt_roles)
}, { minProperties: 1 })

export const PermitBody = Type.Object({ login: Login, seconds: Type.Optional(Type.Integer({ minimum: 1, maximum: 86_400, default: 60 })) })
export const Permit = Type.Object({ login: Type.String(), until: Type.String() })

const Actor = Type.Object({ id: Type.Integer(), login: Type.String() })
export const HeldStatus = Type.Union([Type.Literal('pending'), Type.Literal('approved'), Type.Literal('denied')])
export const HeldMessage = Type.Object({
  id: Type.Integer(),
  user: Type.Object({ id: Type.Integer(), login: Type.String() }),
  text: Type.String(),
  filter: Type.String({ description: 'the filter that held it' }),
  status: HeldStatus,
  held_at: Type.String(),
  resolved_by: Type.Union([Actor, Type.Null()]),
  resolved_at: Type.Union([Type.String(), Type.Null()]),
  message_id: Type.Union([Type.Integer(), Type.Null()], { description: 'the published message, once approved' })
})
export const HeldQuery = Type.Object({
  status: Type.Union([HeldStatus, Type.Literal('all')], { default: 'pending' }),
  limit: Type.Integer({ minimum: 1, maximum: 100, default: 50 }),
  before: Type.Optional(PositiveInt)
})
export const Held = Type.Object({ status: Type.Literal('held'), id: Type.Integer(), message: Type.String() })

export const ChatSettings = Type.Object({
  slow_seconds: Type.Integer({ minimum: 0, maximum: 86_400, description: 'least gap between one user\'s messages (0: off)' }),
  new_user_minutes: Type.Integer({ minimum: 0, maximum: 525_600, description: 'users first seen less than this long ago are new (0: off)' }),
  new_user_sends_per_minute: Type.Integer({ minimum: 0, maximum: 1000, description: 'messages a new user may send per minute (0: no extra limit)' })
})
export const ChatSettingsBody = Type.Partial(ChatSettings, { minProperties: 1 })

export const ImportBody = Type.Object({
  format: Type.Union([Type.Literal('nightbot'), Type.Literal('streamelements')]),
  commands: Type.Array(Type.Record(Type.String(), Type.Unknown()), { maxItems: 1000 }),
  replace: Type.Optional(Type.Boolean({ default: false }))
})
export const ImportResult = Type.Object({
  imported: Type.Integer({ description: 'commands created or (with replace) updated' }),
  skipped: Type.Array(Type.Object({ command: Type.String(), reason: Type.String() })),
  warnings: Type.Array(Type.Object({ command: Type.String(), message: Type.String() }))
})
