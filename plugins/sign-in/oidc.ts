import type { FastifyBaseLogger } from 'fastify'
import type * as OpenId from 'openid-client'
import { isLoopbackUrl } from '../../config.js'

export interface OidcSettings { issuer: string, clientId: string, clientSecret: string, scopes: string }

/** What the provider vouches for, from the checked ID token. */
export interface OidcIdentity {
  issuer: string
  subject: string
  email?: string
  emailVerified: boolean
  /** a login suggestion (preferred_username, nickname or the email's local part) */
  loginHint?: string
}

/** How long one call to the provider (discovery, JWKS, token) may take. */
const TIMEOUT_SECONDS = 10

/** A sign-in the provider refused or whose answer did not pass the checks; `reason` is safe to show. */
export class OidcRefused extends Error {
  constructor (readonly reason: string) {
    super(reason)
  }
}

/**
 * OpenID Connect through `openid-client`: discovery (once it works, kept), the authorization URL
 * with PKCE (S256), state and nonce, and the code exchange with its ID-token checks (signature by
 * the provider's JWKS, issuer, audience, expiry, nonce). An `http://` issuer is allowed on a
 * loopback address only (local providers, tests), with a warning.
 */
export function oidcClient (settings: OidcSettings, redirectUri: string, log: FastifyBaseLogger) {
  const insecure = settings.issuer.startsWith('http://')
  if (insecure) {
    if (!isLoopbackUrl(settings.issuer)) throw new Error('OIDC_ISSUER must be https:// (http:// only on a loopback address)')
    log.warn({ issuer: settings.issuer }, 'OpenID provider reached over plain http:// (allowed on a loopback address only; use https:// in production)')
  }
  let configuration: Promise<OpenId.Configuration> | undefined
  const configured = async (): Promise<OpenId.Configuration> => {
    // openid-client is imported at the first sign-in, not when the server starts.
    const client = await import('openid-client')
    configuration ??= client.discovery(new URL(settings.issuer), settings.clientId, settings.clientSecret, undefined, {
      timeout: TIMEOUT_SECONDS, ...(insecure ? { execute: [client.allowInsecureRequests] } : {})
    }).then((config) => {
      config.timeout = TIMEOUT_SECONDS
      // The ID token's signature is checked against the provider's JWKS too, not only its claims.
      client.enableNonRepudiationChecks(config)
      return config
    }, (err: unknown) => {
      // Not kept: the next sign-in tries the provider again.
      configuration = undefined
      throw err
    })
    return await configuration
  }

  return {
    /** The provider's authorization URL, and what the callback needs to check its answer. */
    async start (): Promise<{ url: string, state: string, nonce: string, codeVerifier: string }> {
      const config = await configured()
      const client = await import('openid-client')
      const codeVerifier = client.randomPKCECodeVerifier()
      const state = client.randomState()
      const nonce = client.randomNonce()
      const url = client.buildAuthorizationUrl(config, {
        redirect_uri: redirectUri,
        scope: settings.scopes,
        code_challenge: await client.calculatePKCECodeChallenge(codeVerifier),
        code_challenge_method: 'S256',
        state,
        nonce
      })
      return { url: url.href, state, nonce, codeVerifier }
    },

    /** Exchanges the code (the query of the callback) and checks the ID token. */
    async finish (query: string, expected: { state: string, nonce: string, codeVerifier: string }): Promise<OidcIdentity> {
      const config = await configured()
      const client = await import('openid-client')
      const current = new URL(redirectUri)
      current.search = query
      let tokens
      try {
        tokens = await client.authorizationCodeGrant(config, current, {
          pkceCodeVerifier: expected.codeVerifier, expectedState: expected.state, expectedNonce: expected.nonce, idTokenExpected: true
        })
      } catch (err) {
        throw new OidcRefused(reasonOf(err, client))
      }
      const claims = tokens.claims()
      if (claims === undefined) throw new OidcRefused('the provider sent no ID token')
      const email = typeof claims.email === 'string' && claims.email.length <= 254 ? claims.email : undefined
      const hint = [claims.preferred_username, claims.nickname, email?.split('@')[0]].find((v): v is string => typeof v === 'string' && v !== '')
      return { issuer: claims.iss, subject: claims.sub, email, emailVerified: claims.email_verified === true, loginHint: hint?.slice(0, 100) }
    }
  }
}

/** A short reason for a failed exchange, from the error's code only (never the provider's whole answer). */
function reasonOf (err: unknown, client: typeof OpenId): string {
  if (err instanceof client.AuthorizationResponseError || err instanceof client.ResponseBodyError) {
    return `the provider refused: ${/^[a-z_]{1,40}$/.test(err.error) ? err.error : 'error'}`
  }
  const code = (err as { code?: unknown }).code
  if (typeof code === 'string' && /^[A-Z_]{1,60}$/.test(code)) return `the provider's answer did not pass the checks (${code})`
  return 'the provider could not be reached or answered with something unexpected'
}

export type OidcClient = ReturnType<typeof oidcClient>
