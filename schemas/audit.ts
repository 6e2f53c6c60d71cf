import { Type } from './common.js'

export const AuditEntry = Type.Object({
  id: Type.Integer(),
  at: Type.String(),
  actor: Type.String({ description: '`admin`, `user:<login>`, `system`, `host:<connection id>` or `anonymous`' }),
  action: Type.String(),
  target: Type.Union([Type.String(), Type.Null()]),
  address: Type.Union([Type.String(), Type.Null()], { description: 'the client address (after TRUST_PROXY)' }),
  detail: Type.Union([Type.Record(Type.String(), Type.Unknown()), Type.Null()])
})

export const AuditQuery = Type.Object({
  cursor: Type.Optional(Type.String({ maxLength: 20, description: 'next_cursor of the page before' })),
  limit: Type.Integer({ minimum: 1, maximum: 500, default: 50 }),
  actor: Type.Optional(Type.String({ minLength: 1, maxLength: 200, description: 'only this person\'s entries: `admin`, `user:<login>`, `system`, `host:<connection id>` or `anonymous`' })),
  action: Type.Optional(Type.String({ minLength: 1, maxLength: 100, pattern: '^[A-Za-z0-9_.:-]+$', description: 'only this action, e.g. `sign_in.refused`' }))
}, { additionalProperties: false })

export const AuditPage = Type.Object({
  entries: Type.Array(AuditEntry),
  next_cursor: Type.Union([Type.String(), Type.Null()], { description: 'null: no older entries' })
})
