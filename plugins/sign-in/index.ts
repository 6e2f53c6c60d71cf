import cookie from '@fastify/cookie'
import { parseCookie } from 'cookie'
import { timingSafeEqual } from 'node:crypto'
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import type { FastifyReply, FastifyRequest } from 'fastify'
import fp from 'fastify-plugin'
import type { SignInConfig } from '../../config.js'
import { ATTEMPT_MS, sessionDigest } from '../../db/sign-in/sessions.js'
import { Forbidden, Gone, NotFound } from '../../db/errors.js'
import type { StoreScope } from '../../db/store.js'
import type { User } from '../../db/users.js'
import { EmptyBody, errorResponses } from '../../schemas/common.js'
import { CallbackQuery, HostSignInParams, LoginQuery, Providers } from '../../schemas/sign-in.js'
import { createIdentitiesRepository } from '../../db/issue-host/identities.js'
import { SESSION_COOKIE } from '../core/auth.js'
import { inviteUsable, joinNewUser } from '../../services/accounts.js'
import { decideSignIn, loginFrom } from './decide.js'
import { sessionProbe } from './session-probe.js'
import { hostButtonName, hostOAuth, HostSignInRefused, type HostSignInUser } from './host.js'
import { oidcClient, OidcRefused, type OidcIdentity } from './oidc.js'
import { signInPage } from './page.js'
import passwordSignIn from './password.js'
import accountPages from './account-pages.js'

/** The cookie binding a sign-in under way to the browser that started it (its value is the state). */
export const ATTEMPT_COOKIE = 'planning_sign_in'
const NOT_THIS_BROWSER = 'state not started in this browser'

/**
 * Browser sign-in (docs/sign-in.md): the providers offered, OpenID Connect's and the issue hosts'
 * login and callback, and logout. A sign-in ends in a server-side session whose cookie is HttpOnly, SameSite=Lax and
 * Secure when PUBLIC_URL is https; the session works on every route a token does.
 */
const signIn: FastifyPluginAsyncTypebox<SignInConfig> = async (fastify, opts) => {
  await fastify.register(cookie, { hook: 'onRequest' })
  await fastify.register(sessionProbe)
  const store = fastify.planningStore
  const base = fastify.prefix
  const home = `${base}/`
  const board = (workspaceId: string): string => `${home}?board=${encodeURIComponent(workspaceId)}`
  const tags = ['sign-in']
  const cookieOptions = {
    path: base === '' ? '/' : base,
    httpOnly: true,
    sameSite: 'lax' as const,
    secure: opts.publicUrl?.startsWith('https://') === true
  }
  const maxMs = opts.sessionMaxDays * 86_400_000
  // The browser that starts a sign-in keeps its state in a cookie; a callback without it (a URL made in
  // someone else's browser: login CSRF) is refused (docs/sign-in.md, "Sessions").
  const attemptCookie = { ...cookieOptions, path: `${base}/auth/` }
  const startAttempt = (reply: FastifyReply, state: string): FastifyReply =>
    reply.setCookie(ATTEMPT_COOKIE, state, { ...attemptCookie, maxAge: ATTEMPT_MS / 1000 })
  /** Whether the request carries the cookie its login set for this state; the cookie is cleared either way. */
  const sameBrowser = (request: FastifyRequest, reply: FastifyReply): boolean => {
    const header = request.headers.cookie
    const state = request.query as { state?: string }
    reply.clearCookie(ATTEMPT_COOKIE, attemptCookie)
    if (header === undefined || state.state === undefined) return false
    const kept = Buffer.from(parseCookie(header)[ATTEMPT_COOKIE] ?? '')
    const sent = Buffer.from(state.state)
    return kept.length > 0 && kept.length === sent.length && timingSafeEqual(kept, sent)
  }
  const oidc = opts.oidc === undefined || opts.publicUrl === undefined
    ? undefined
    : oidcClient(opts.oidc, `${opts.publicUrl}${base}/auth/oidc/callback`, fastify.log)

  const hosts = hostOAuth(fastify.planningHosts.fetch)
  const hostCallback = (connectionId: string): string => `${opts.publicUrl ?? ''}${base}/auth/host/${connectionId}/callback`

  const providers = async () => {
    const viaHosts = opts.publicUrl === undefined
      ? []
      : (await store.connections.list()).filter((c) => c.has_oauth)
          .map((c) => ({ id: `host:${c.id}`, name: hostButtonName(c), login_url: `${base}/auth/host/${c.id}/login` }))
    return [...(oidc === undefined ? [] : [{ id: 'oidc', name: 'Sign in with OpenID Connect', login_url: `${base}/auth/oidc/login` }]), ...viaHosts]
  }
  fastify.get('/auth/providers', {
    schema: { tags, summary: 'The sign-in buttons to show (a token can always be pasted instead)', response: { 200: Providers } }
  }, async () => ({ providers: await providers(), token: true }))

  /**
   * The token of the invite whose page the sign-in was started from, when that invite could be used
   * now: read from the attempt's stored return path (never from the callback's query) and checked at
   * the callback as a join would check it (unused, unexpired, its workspace and maker still here).
   */
  const openInvite = async (s: StoreScope, returnTo: string): Promise<string | undefined> => {
    const token = returnTo.startsWith(`${base}/invite/`) ? returnTo.slice(`${base}/invite/`.length) : ''
    if (!/^[A-Za-z0-9_-]{1,200}$/.test(token)) return undefined
    return await inviteUsable(s, token) ? token : undefined
  }
  /**
   * Runs a callback's transaction; an invite a new user was to take that cannot be used any more (used
   * meanwhile by another sign-in) undoes it all, and the person is refused like anyone uninvited.
   */
  const inviteRefused = { kind: 'refuse' as const, reason: 'the invite you came from cannot be used any more (used, expired or withdrawn)' }
  const orRefused = async <T>(run: () => Promise<T>): Promise<T | typeof inviteRefused> => {
    try {
      return await run()
    } catch (err) {
      if (err instanceof Gone || err instanceof NotFound) return inviteRefused
      throw err
    }
  }

  fastify.post('/auth/logout', {
    schema: { tags, summary: 'End the browser session (its cookie stops working on every instance)', response: { 204: EmptyBody, ...errorResponses } }
  }, async (request, reply) => {
    const session = fastify.planningAuth.sessionOf(request)
    if (session !== undefined) {
      // A write with the session cookie like any other: another site cannot sign the person out.
      const origin = fastify.planningAuth.originOf(request)
      if (request.headers.origin !== origin) throw new Forbidden(`a change made with a session cookie must come from this server's pages (Origin ${origin})`)
      await store.transaction(async (s) => {
        const userId = await s.sessions.remove(sessionDigest(session))
        if (userId === undefined) return
        const user = await s.users.byId(userId)
        await s.audit.record({ actor: `user:${user?.login ?? userId}`, action: 'session.ended', target: `user:${user?.login ?? userId}`, address: request.ip, detail: { how: 'logout' } })
      })
    }
    return await reply.clearCookie(SESSION_COOKIE, cookieOptions).status(204).send(undefined)
  })

  await fastify.register(passwordSignIn, { cookieOptions, lifetimes: { idleMs: opts.sessionIdleMinutes * 60_000, maxMs } })
  await fastify.register(accountPages, { cookieOptions, lifetimes: { idleMs: opts.sessionIdleMinutes * 60_000, maxMs }, providers })

  const refused = async (request: FastifyRequest, reason: string, target: string | null, detail: Record<string, unknown>) => {
    // Counted per address, target and hour: anonymous bad callbacks must not write a row each.
    await store.audit.count({ actor: 'anonymous', action: 'sign_in.refused', target, address: request.ip, detail, reason })
  }
  const unknownAttempt = async (request: FastifyRequest, reply: FastifyReply, provider: string, reason = 'unknown, expired or used state') => {
    await refused(request, reason, null, { provider })
    return await signInPage(reply, 400, 'Sign-in not recognised', 'This sign-in is unknown, has expired or was used already. Start again.', home)
  }
  const cancelled = async (request: FastifyRequest, reply: FastifyReply, error: string, detail: Record<string, unknown>) => {
    const code = /^[a-z_]{1,40}$/.test(error) ? error : 'error'
    await refused(request, `the provider refused: ${code}`, null, detail)
    return await signInPage(reply, 400, 'Sign-in cancelled', `The provider did not sign you in (${code}).`, home)
  }
  const signedIn = async (reply: FastifyReply, session: string, returnTo: string) =>
    await reply.setCookie(SESSION_COOKIE, session, { ...cookieOptions, maxAge: Math.floor(maxMs / 1000) }).header('cache-control', 'no-store').redirect(returnTo, 303)
  const lifetimes = { idleMs: opts.sessionIdleMinutes * 60_000, maxMs }

  /** A new user for an identity (SIGNUP=open or host): a free login from the provider's suggestion, no permissions of its own. */
  const newUser = async (s: StoreScope, identity: { loginHint?: string, email?: string, emailVerified: boolean }): Promise<User> => {
    const wanted = loginFrom(identity.loginHint)
    for (let i = 1; i <= 50; i++) {
      const login = i === 1 ? wanted : `${wanted}-${i}`
      if (await s.users.byLogin(login) === undefined) {
        const user = await s.users.create(login)
        const { email } = identity
        if (email !== undefined && identity.emailVerified && await s.users.byEmail(email) === undefined) await s.users.setEmail(user.id, email)
        return user
      }
    }
    return await s.users.create(`${wanted}-${Date.now().toString(36)}`)
  }

  fastify.get('/auth/host/:connection_id/login', {
    schema: { tags, summary: 'Start a sign-in through an issue host\'s OAuth app (redirects to the host)', params: HostSignInParams, querystring: LoginQuery }
  }, async (request, reply) => {
    const connection = await store.connections.byId(request.params.connection_id)
    if (connection?.oauth_client_id == null || connection.oauth_client_secret === null || opts.publicUrl === undefined) {
      return await signInPage(reply, 404, 'Sign-in unavailable', 'This server offers no sign-in through that issue host.', home)
    }
    const started = await hosts.start(connection, hostCallback(connection.id))
    await store.sessions.beginAttempt(started.state, { provider: `host:${connection.id}`, code_verifier: started.codeVerifier, nonce: '', return_to: request.query.return_to ?? home })
    return await startAttempt(reply, started.state).header('cache-control', 'no-store').redirect(started.url, 303)
  })

  fastify.get('/auth/host/:connection_id/callback', {
    schema: { tags, summary: 'Where the issue host sends the browser back', params: HostSignInParams, querystring: CallbackQuery }
  }, async (request, reply) => {
    const { connection_id: connectionId } = request.params
    const provider = { provider: 'host', connection_id: connectionId }
    if (!sameBrowser(request, reply)) return await unknownAttempt(request, reply, 'host', NOT_THIS_BROWSER)
    const attempt = request.query.state === undefined ? undefined : await store.sessions.takeAttempt(request.query.state)
    if (attempt === undefined || attempt.provider !== `host:${connectionId}`) return await unknownAttempt(request, reply, 'host')
    if (request.query.error !== undefined) return await cancelled(request, reply, request.query.error, provider)
    const connection = await store.connections.byId(connectionId)
    if (connection?.oauth_client_id == null || connection.oauth_client_secret === null) {
      await refused(request, 'the connection offers no sign-in (any more)', null, provider)
      return await signInPage(reply, 404, 'Sign-in unavailable', 'This server offers no sign-in through that issue host.', home)
    }
    let hostUser: HostSignInUser
    try {
      if (request.query.code === undefined) throw new HostSignInRefused('the host sent no code')
      hostUser = await hosts.finish(connection, hostCallback(connectionId), request.query.code, attempt.code_verifier)
    } catch (err) {
      if (!(err instanceof HostSignInRefused)) throw err
      await refused(request, err.reason, null, provider)
      return await signInPage(reply, 400, 'Sign-in failed', `The sign-in could not be completed: ${err.reason}.`, home)
    }
    const who = { ...provider, kind: connection.kind, platform_user_id: hostUser.id, login: hostUser.login }

    const outcome = await orRefused(async () => await store.transaction(async (s) => {
      const identities = createIdentitiesRepository(s.db)
      const invite = await openInvite(s, attempt.return_to)
      const decision = decideSignIn({
        linked: await identities.userOf(connectionId, hostUser.id),
        byEmail: undefined,
        emailVerified: false,
        linkByEmail: false,
        signup: opts.signup,
        hostCollaborator: await identities.collaborates(connectionId, hostUser.id),
        invited: invite !== undefined
      })
      if (decision.kind === 'refuse') return decision
      await identities.named(connectionId, hostUser.id, hostUser.login)
      const address = request.ip
      let user: User
      let to = attempt.return_to
      if (decision.kind === 'create') {
        user = await newUser(s, { loginHint: hostUser.login, emailVerified: false })
        await s.audit.record({ actor: 'system', action: 'user.created', target: `user:${user.login}`, address, detail: { via: decision.invited === true ? 'host sign-in from an invite' : `host signup (${opts.signup})` } })
        // The host's permissions for the identity become the new user's (SIGNUP=host: at least one).
        await identities.link(user.id, connectionId, hostUser.id)
        await s.audit.record({ actor: `user:${user.login}`, action: 'identity.linked', target: `user:${user.login}`, address, detail: { ...who, by: 'signup' } })
        if (invite !== undefined) to = board(await joinNewUser(s, invite, user, address))
      } else {
        user = decision.user
      }
      const session = await s.sessions.create(user.id, 'host', lifetimes)
      await s.accounts.signedIn(user.id)
      await s.audit.record({ actor: `user:${user.login}`, action: 'sign_in.succeeded', target: `user:${user.login}`, address, detail: who })
      return { kind: 'session' as const, session, to }
    }))
    if (outcome.kind === 'refuse') {
      await refused(request, 'unknown identity', `host:${connectionId}:${hostUser.id}`, who)
      return await signInPage(reply, 403, 'No account here', `You signed in as ${hostUser.login}, but ${outcome.reason}.`, home)
    }
    return await signedIn(reply, outcome.session, outcome.to)
  })

  if (oidc === undefined) return
  const refuse = async (request: FastifyRequest, reason: string, identity?: OidcIdentity) => {
    await refused(request, reason, identity === undefined ? null : `oidc:${identity.subject}`,
      { provider: 'oidc', ...(identity === undefined ? {} : { issuer: identity.issuer, email: identity.email ?? null }) })
  }

  fastify.get('/auth/oidc/login', {
    schema: { tags, summary: 'Start an OpenID Connect sign-in (redirects to the provider)', querystring: LoginQuery }
  }, async (request, reply) => {
    let started
    try {
      started = await oidc.start()
    } catch (err) {
      request.log.warn({ err }, 'OpenID provider discovery failed')
      return await signInPage(reply, 502, 'Sign-in unavailable', 'The sign-in provider could not be reached. Try again in a moment.', home)
    }
    await store.sessions.beginAttempt(started.state, { provider: 'oidc', code_verifier: started.codeVerifier, nonce: started.nonce, return_to: request.query.return_to ?? home })
    return await startAttempt(reply, started.state).header('cache-control', 'no-store').redirect(started.url, 303)
  })

  fastify.get('/auth/oidc/callback', {
    schema: { tags, summary: 'Where the provider sends the browser back', querystring: CallbackQuery }
  }, async (request, reply) => {
    if (!sameBrowser(request, reply)) return await unknownAttempt(request, reply, 'oidc', NOT_THIS_BROWSER)
    const attempt = request.query.state === undefined ? undefined : await store.sessions.takeAttempt(request.query.state)
    if (attempt === undefined || attempt.provider !== 'oidc') return await unknownAttempt(request, reply, 'oidc')
    if (request.query.error !== undefined) return await cancelled(request, reply, request.query.error, { provider: 'oidc' })
    let identity: OidcIdentity
    try {
      identity = await oidc.finish(request.url.slice(request.url.indexOf('?') + 1), { state: request.query.state!, nonce: attempt.nonce, codeVerifier: attempt.code_verifier })
    } catch (err) {
      if (!(err instanceof OidcRefused)) throw err
      await refuse(request, err.reason)
      return await signInPage(reply, 400, 'Sign-in failed', `The sign-in could not be completed: ${err.reason}.`, home)
    }

    const outcome = await orRefused(async () => await store.transaction(async (s) => {
      // By email: an exact match only, and never a user another subject of this issuer already is.
      let byEmail = identity.email === undefined ? undefined : await s.users.byExactEmail(identity.email)
      if (byEmail !== undefined && await s.oidcIdentities.hasIssuer(byEmail.id, identity.issuer)) byEmail = undefined
      const invite = await openInvite(s, attempt.return_to)
      const decision = decideSignIn({
        linked: await s.oidcIdentities.userOf(identity.issuer, identity.subject),
        byEmail,
        emailVerified: identity.emailVerified,
        linkByEmail: opts.oidcLinkByEmail,
        signup: opts.signup,
        invited: invite !== undefined
      })
      if (decision.kind === 'refuse') return decision
      const user = decision.kind === 'create' ? await newUser(s, identity) : decision.user
      const address = request.ip
      if (decision.kind === 'create') await s.audit.record({ actor: 'system', action: 'user.created', target: `user:${user.login}`, address, detail: { via: decision.invited === true ? 'oidc sign-in from an invite' : 'oidc signup' } })
      if (decision.kind !== 'linked') {
        await s.oidcIdentities.link(identity.issuer, identity.subject, user.id, identity.email ?? null)
        await s.audit.record({ actor: `user:${user.login}`, action: 'identity.linked', target: `user:${user.login}`, address, detail: { provider: 'oidc', issuer: identity.issuer, subject: identity.subject, by: decision.kind === 'create' ? 'signup' : 'email' } })
      }
      const to = decision.kind === 'create' && invite !== undefined ? board(await joinNewUser(s, invite, user, address)) : attempt.return_to
      const session = await s.sessions.create(user.id, 'oidc', lifetimes)
      await s.accounts.signedIn(user.id)
      await s.audit.record({ actor: `user:${user.login}`, action: 'sign_in.succeeded', target: `user:${user.login}`, address, detail: { provider: 'oidc', issuer: identity.issuer } })
      return { kind: 'session' as const, session, to }
    }))
    if (outcome.kind === 'refuse') {
      await refuse(request, 'unknown identity', identity)
      return await signInPage(reply, 403, 'No account here', `You signed in as ${identity.email ?? identity.subject}, but ${outcome.reason}.`, home)
    }
    return await signedIn(reply, outcome.session, outcome.to)
  })
}

export default fp(signIn, { name: 'planning-sign-in', fastify: '5.x', encapsulate: true, dependencies: ['planning-auth', 'planning-hosts'] })
