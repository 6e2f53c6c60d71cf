import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import type { CookieSerializeOptions } from '@fastify/cookie'
import type { FastifyReply, FastifyRequest } from 'fastify'
import type { SessionLifetimes } from '../../db/sign-in/sessions.js'
import { ErrorBody, errorResponses } from '../../schemas/common.js'
import { PasswordSignInBody, SignedIn } from '../../schemas/passwords.js'
import { startSession } from '../../services/accounts.js'
import { checkPassword, WRONG_PASSWORD } from '../../services/password-sign-in.js'
import { SESSION_COOKIE } from '../core/auth.js'

export interface SessionStart {
  cookieOptions: CookieSerializeOptions
  lifetimes: SessionLifetimes
}

export const setSessionCookie = (reply: FastifyReply, start: SessionStart, session: string): FastifyReply =>
  reply.setCookie(SESSION_COOKIE, session, { ...start.cookieOptions, maxAge: Math.floor(start.lifetimes.maxMs / 1000) }).header('cache-control', 'no-store')

/** 403 unless the request comes from this server's pages: a sign-in made from elsewhere (login CSRF) is refused. */
export function refuseForeignOrigin (request: FastifyRequest, reply: FastifyReply): FastifyReply | undefined {
  const origin = request.server.planningAuth.originOf(request)
  if (request.headers.origin === origin) return undefined
  return reply.status(403).send({ statusCode: 403, error: 'Forbidden', message: `a sign-in must come from this server's pages (Origin ${origin})` })
}

/** Sign-in with a login and password (docs/sign-in.md, "Passwords"): the same session as a provider's. */
const passwordSignIn: FastifyPluginAsyncTypebox<SessionStart> = async (fastify, opts) => {
  const store = fastify.planningStore
  fastify.post('/auth/password', {
    schema: {
      tags: ['sign-in'],
      summary: 'Sign in with a login and password: sets the session cookie (10 failures in 10 minutes lock the login for 10 minutes)',
      body: PasswordSignInBody,
      response: { 200: SignedIn, ...errorResponses, 429: ErrorBody }
    }
  }, async (request, reply) => {
    const foreign = refuseForeignOrigin(request, reply)
    if (foreign !== undefined) return await foreign
    const { login, password } = request.body
    const checked = await checkPassword(store, login, password, request.ip)
    if (checked.kind === 'locked') {
      return await reply.status(429).header('retry-after', String(checked.retryAfterSeconds))
        .send({ statusCode: 429, error: 'Too Many Requests', message: `too many failed sign-ins for this login: try again in ${Math.ceil(checked.retryAfterSeconds / 60)} minutes` })
    }
    if (checked.kind === 'wrong') return await reply.status(401).send({ statusCode: 401, error: 'Unauthorized', message: WRONG_PASSWORD })
    const { user } = checked
    const signedIn = await store.transaction(async (s) => {
      await s.accounts.clearFailures(login.toLowerCase())
      const session = await startSession(s, user, 'password', opts.lifetimes, request.ip)
      return { session, administrator: await s.accounts.isAdministrator(user.id) }
    })
    return await setSessionCookie(reply, opts, signedIn.session).send({ id: user.id, login: user.login, administrator: signedIn.administrator })
  })
}

export default passwordSignIn
