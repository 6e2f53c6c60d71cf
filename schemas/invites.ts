import { Type, Login, ObjectId } from './common.js'
import { Email } from './account.js'
import { MAX_PASSWORD } from './passwords.js'

/** The token of an invite, reset or setup link (as made: base64url). */
export const LinkToken = Type.String({ minLength: 1, maxLength: 100, pattern: '^[A-Za-z0-9_-]+$' })
export const LinkParams = Type.Object({ token: LinkToken })
const Password = Type.String({ minLength: 1, maxLength: MAX_PASSWORD, description: 'at least 10 characters' })

export const InvitePermission = Type.Union([Type.Literal('read'), Type.Literal('write'), Type.Literal('admin')])
export const CreateInviteBody = Type.Object({
  workspace_id: ObjectId,
  permission: InvitePermission,
  email: Type.Optional(Type.Union([Email, Type.Null()], { description: 'whom it is for (kept as the new user\'s email)' }))
}, { additionalProperties: false })
export const Invite = Type.Object({
  id: Type.String(),
  workspace_id: Type.String(),
  permission: InvitePermission,
  email: Type.Union([Type.String(), Type.Null()]),
  created_by: Type.String({ description: '`user:<login>` or `admin`' }),
  created_at: Type.String(),
  expires_at: Type.String()
})
/** Whether the link was mailed too (SMTP_URL set and an address known), and why not when sending failed. */
export const Mailed = {
  mailed: Type.Boolean({ description: 'mailed to the address too (SMTP_URL set)' }),
  mail_error: Type.Optional(Type.String({ description: 'why the mail was not sent; the link works all the same' }))
}
export const NewInvite = Type.Intersect([Invite, Type.Object({ url: Type.String({ description: 'the link to pass on, shown in this answer only' }), ...Mailed })])
export const InvitesQuery = Type.Object({ workspace_id: ObjectId })
export const InviteParams = Type.Object({ id: ObjectId })

export const JoinBody = Type.Object({ token: LinkToken, login: Login, password: Password }, { additionalProperties: false })
export const Joined = Type.Object({ id: Type.Integer(), login: Type.String(), administrator: Type.Boolean(), workspace_id: Type.String() })
export const ResetBody = Type.Object({ token: LinkToken, password: Password }, { additionalProperties: false })
export const SetupBody = Type.Object({
  token: LinkToken, login: Login, email: Type.Optional(Type.Union([Email, Type.Null()])), password: Password
}, { additionalProperties: false })
export const ResetLink = Type.Object({ url: Type.String({ description: 'shown in this answer only' }), expires_at: Type.String(), ...Mailed })

/** What the pages' forms send (checked by the operations, so a refusal is shown next to its field). */
export const FormBody = Type.Object({
  login: Type.Optional(Type.String({ maxLength: 200 })),
  email: Type.Optional(Type.String({ maxLength: 300 })),
  password: Type.Optional(Type.String({ maxLength: MAX_PASSWORD }))
})
