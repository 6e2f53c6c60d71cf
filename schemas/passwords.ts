import { Type } from './common.js'
import { MAX_PASSWORD } from '../services/passwords.js'

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
