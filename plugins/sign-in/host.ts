import { TypeCompiler } from '@sinclair/typebox/compiler'
import type { Connection } from '../../db/issue-host/connections.js'
import { HostOAuthToken, HostOAuthUser } from '../../schemas/sign-in.js'
import type { HostFetch } from '../../services/host-fetch.js'

/** The host user a sign-in vouches for: an identity of the connection. */
export interface HostSignInUser { id: number, login: string }

/** A sign-in the host refused, or whose answer could not be used; `reason` is ours and safe to show. */
export class HostSignInRefused extends Error {
  constructor (readonly reason: string) {
    super(reason)
  }
}

/** One call to the host (token, `/user`) may take this long, and answer this much. */
const TIMEOUT_MS = 10_000
const MAX_BYTES = 64 * 1024
/** Enough to read the profile (`/user`); the token is used for that call only and not kept. */
const SCOPE = 'read:user'

const tokenAnswer = TypeCompiler.Compile(HostOAuthToken)
const userAnswer = TypeCompiler.Compile(HostOAuthUser)

/** The connection's kind as people know it, and its host when it is not github.com. */
export function hostButtonName (connection: Pick<Connection, 'kind' | 'web_url'>): string {
  const kind = { github: 'GitHub', gitea: 'Gitea', forgejo: 'Forgejo' }[connection.kind]
  const host = new URL(connection.web_url).host
  return connection.kind === 'github' && host === 'github.com' ? `Sign in with ${kind}` : `Sign in with ${kind} (${host})`
}

/**
 * Sign-in through an issue host's OAuth app (docs/sign-in.md, "Sign-in with the issue host"):
 * GitHub, GitHub Enterprise, Gitea and Forgejo all serve `/login/oauth/authorize` and
 * `/login/oauth/access_token` under their web address, and `GET /user` under their API address.
 * Authorization code flow with `state` and PKCE (S256: Gitea and Forgejo check it, GitHub since
 * July 2025; a host that does not know PKCE ignores both halves). Every request goes through the
 * issue-host fetch (its address policy), bounded in time and size, and each answer is checked
 * against its schema.
 */
export function hostOAuth (fetchHost: HostFetch) {
  const call = async (url: string, init: RequestInit, what: string): Promise<{ status: number, body: unknown }> => {
    let response: Response
    try {
      response = await fetchHost(url, { ...init, signal: AbortSignal.timeout(TIMEOUT_MS) })
    } catch (err) {
      const timedOut = (err as Error).name === 'TimeoutError'
      throw new HostSignInRefused(`the host ${timedOut ? 'did not answer in time' : 'could not be reached'} (${what})`)
    }
    const bytes = Buffer.from(await response.arrayBuffer())
    if (bytes.length > MAX_BYTES) throw new HostSignInRefused(`the host's answer was too large (${what})`)
    try {
      return { status: response.status, body: JSON.parse(bytes.toString('utf8')) }
    } catch {
      throw new HostSignInRefused(`the host answered ${response.status} without JSON (${what})`)
    }
  }
  const web = (connection: Connection): string => connection.web_url.replace(/\/+$/, '')

  return {
    /** The host's authorization URL, with what the callback needs to finish. */
    async start (connection: Connection, redirectUri: string): Promise<{ url: string, state: string, codeVerifier: string }> {
      // openid-client is imported at the first sign-in, not when the server starts.
      const client = await import('openid-client')
      const state = client.randomState()
      const codeVerifier = client.randomPKCECodeVerifier()
      const url = new URL(`${web(connection)}/login/oauth/authorize`)
      url.search = new URLSearchParams({
        client_id: connection.oauth_client_id ?? '',
        redirect_uri: redirectUri,
        response_type: 'code',
        scope: SCOPE,
        state,
        code_challenge: await client.calculatePKCECodeChallenge(codeVerifier),
        code_challenge_method: 'S256'
      }).toString()
      return { url: url.href, state, codeVerifier }
    },

    /** Exchanges the code for a token, and reads who it belongs to. */
    async finish (connection: Connection, redirectUri: string, code: string, codeVerifier: string): Promise<HostSignInUser> {
      const exchanged = await call(`${web(connection)}/login/oauth/access_token`, {
        method: 'POST',
        headers: { accept: 'application/json', 'content-type': 'application/x-www-form-urlencoded', 'user-agent': 'planning-api-server' },
        body: new URLSearchParams({
          grant_type: 'authorization_code',
          client_id: connection.oauth_client_id ?? '',
          client_secret: connection.oauth_client_secret ?? '',
          code,
          redirect_uri: redirectUri,
          code_verifier: codeVerifier
        }).toString()
      }, 'token')
      if (!tokenAnswer.Check(exchanged.body)) throw new HostSignInRefused(`the host's token answer (${exchanged.status}) was not one we understand`)
      if ('error' in exchanged.body || exchanged.status !== 200) {
        const error = 'error' in exchanged.body ? exchanged.body.error : ''
        throw new HostSignInRefused(`the host refused: ${/^[a-z_]{1,40}$/.test(error) ? error : `status ${exchanged.status}`}`)
      }
      const me = await call(`${connection.api_url.replace(/\/+$/, '')}/user`, {
        headers: { accept: 'application/json', authorization: `Bearer ${exchanged.body.access_token}`, 'user-agent': 'planning-api-server' }
      }, 'user')
      if (me.status !== 200) throw new HostSignInRefused(`the host answered ${me.status} when asked who signed in`)
      if (!userAnswer.Check(me.body)) throw new HostSignInRefused('the host\'s user answer was not one we understand')
      const login = me.body.login ?? me.body.username
      if (login === undefined) throw new HostSignInRefused('the host named no login')
      return { id: me.body.id, login }
    }
  }
}

export type HostOAuth = ReturnType<typeof hostOAuth>
