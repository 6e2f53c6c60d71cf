import { Type } from './common.js'

/** The shortest password accepted; the message names the rule. */
export const MIN_PASSWORD = 10
export const PASSWORD_RULE = `a password must be at least ${MIN_PASSWORD} characters long`
/** Longer ones are refused before hashing (scrypt's cost grows with the input only a little, but bodies stay small). */
export const MAX_PASSWORD = 1000

const Password = (description: string) => Type.String({ minLength: 1, maxLength: MAX_PASSWORD, description })

export const PasswordSignInBody = Type.Object({
  login: Type.String({ minLength: 1, maxLength: 100 }),
  password: Password('the account\'s password')
}, { additionalProperties: false })

export const SignedIn = Type.Object({
  id: Type.Integer(),
  login: Type.String(),
  administrator: Type.Boolean()
}, { description: 'the session cookie is set in the same answer' })

export const ChangePasswordBody = Type.Object({
  current_password: Type.Optional(Password('required when the account has a password')),
  new_password: Password('at least 10 characters')
}, { additionalProperties: false })
