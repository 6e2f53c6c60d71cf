import { Type, ObjectId } from './common.js'

const Nullable = <T extends Parameters<typeof Type.Union>[0][number]>(t: T) => Type.Union([t, Type.Null()])

export const Email = Type.String({ maxLength: 254, pattern: '^[^\\s@]+@[^\\s@]+$', description: 'an email address (unique among users)' })

export const TokenScope = Type.Union([Type.Literal('read'), Type.Literal('write')], { description: 'read: GET only; write: everything the user may do' })

export const AccountToken = Type.Object({
  id: Type.String({ description: '`legacy` for the token the admin made' }),
  name: Type.String(),
  scope: TokenScope,
  created_at: Nullable(Type.String()),
  expires_at: Nullable(Type.String()),
  last_used_at: Nullable(Type.String({ description: 'written at most once a minute' })),
  legacy: Type.Boolean({ description: 'the admin-made token (POST /admin/users/:login/token)' })
})

export const NewTokenReply = Type.Intersect([AccountToken, Type.Object({ token: Type.String({ description: 'shown in this answer only' }) })])

export const CreateTokenBody = Type.Object({
  name: Type.String({ minLength: 1, maxLength: 100 }),
  scope: TokenScope,
  expires_at: Type.Optional(Nullable(Type.String({ format: 'date-time', description: 'when it stops working (default: never)' })))
}, { additionalProperties: false })

export const TokenParams = Type.Object({ token_id: ObjectId })

export const Account = Type.Object({
  id: Type.Integer(),
  login: Type.String(),
  email: Nullable(Type.String()),
  administrator: Type.Boolean({ description: 'may use the admin API and the Administration view' }),
  has_password: Type.Boolean({ description: 'a password is set (changing it then needs the current one)' }),
  permissions: Type.Array(Type.Object({
    repo_id: Type.Integer(),
    permission: Type.Union([Type.Literal('read'), Type.Literal('write'), Type.Literal('admin')])
  }), { description: 'each repository this user may read, with the permission (a read token writes none of them)' }),
  signed_in_with: Type.Object({
    kind: Type.Union([Type.Literal('token'), Type.Literal('legacy'), Type.Literal('session')]),
    scope: TokenScope
  })
})
