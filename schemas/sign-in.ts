import { Type } from './common.js'

export const Providers = Type.Object({
  providers: Type.Array(Type.Object({
    id: Type.String({ description: '`oidc`, or `host:<connection id>` for an issue host\'s OAuth' }),
    name: Type.String({ description: 'the button\'s text' }),
    login_url: Type.String({ description: 'send the browser here (GET); `?return_to=/path` brings it back there' })
  })),
  token: Type.Boolean({ description: 'pasting an API token always works too' })
})

/** `GET /auth/session`: answered 200 whether or not the request is signed in. */
export const SessionProbe = Type.Object({
  signed_in: Type.Boolean(),
  user: Type.Optional(Type.Object({ id: Type.Integer(), login: Type.String() })),
  signed_in_with: Type.Optional(Type.Object({
    kind: Type.Union([Type.Literal('token'), Type.Literal('legacy'), Type.Literal('session')]),
    scope: Type.Union([Type.Literal('read'), Type.Literal('write')])
  }))
})

export const LoginQuery = Type.Object({
  // Printable ASCII but the backslash: a redirect's Location header takes nothing else (a percent-encoded path is fine).
  return_to: Type.Optional(Type.String({ maxLength: 500, pattern: '^/(?![/\\\\])[!-\\[\\]-~]*$', description: 'a path on this server (printable ASCII; encode the rest as %XX)' }))
}, { additionalProperties: false })

/** What a provider sends back; other parameters (iss, session_state) are allowed and left to openid-client. */
export const CallbackQuery = Type.Object({
  state: Type.Optional(Type.String({ maxLength: 500 })),
  code: Type.Optional(Type.String({ maxLength: 4000 })),
  error: Type.Optional(Type.String({ maxLength: 200 }))
})

export const HostSignInParams = Type.Object({ connection_id: Type.String({ minLength: 1, maxLength: 100 }) })

/** The issue host's token endpoint answer (GitHub answers 200 with `error` too): only what is read. */
export const HostOAuthToken = Type.Union([
  Type.Object({ access_token: Type.String({ minLength: 1, maxLength: 2000 }) }),
  Type.Object({ error: Type.String({ maxLength: 200 }) })
])

/** `GET /user` of GitHub, Gitea and Forgejo: the platform id and a login (Gitea also names it `username`). */
export const HostOAuthUser = Type.Object({
  id: Type.Integer({ minimum: 1, maximum: Number.MAX_SAFE_INTEGER }),
  login: Type.Optional(Type.String({ minLength: 1, maxLength: 100 })),
  username: Type.Optional(Type.String({ minLength: 1, maxLength: 100 }))
})
