import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import fp from 'fastify-plugin'
import { Account, AccountToken, CreateTokenBody, NewTokenReply, TokenParams } from '../schemas/account.js'
import { EmptyBody, ErrorBody, errorResponses, Type } from '../schemas/common.js'
import { ChangePasswordBody } from '../schemas/passwords.js'
import { Invalid } from '../db/errors.js'
import { checkPassword } from '../services/password-sign-in.js'
import { hashPassword, MIN_PASSWORD, PASSWORD_RULE } from '../services/passwords.js'

const errors = { ...errorResponses, 409: ErrorBody }

/**
 * The signed-in person's own account and API tokens (docs/sign-in.md, "Tokens"), reached with a
 * token or a browser session. A token is shown once, in the answer that made it.
 */
const account: FastifyPluginAsyncTypebox = async (fastify) => {
  const store = fastify.planningStore
  fastify.addHook('onRequest', fastify.planningAuth.requireUser)
  const tags = ['account']

  fastify.get('/account', {
    schema: { tags, summary: 'Who the request is signed in as, and with what', response: { 200: Account, ...errors } }
  }, async (request) => {
    const user = request.planningUser!
    const { kind, scope } = request.planningCredential!
    const row = await store.accounts.byLogin(user.login)
    const hasPassword = await store.accounts.passwordHash(user.id) !== null
    const permissions = await store.users.permissionsOf(user.id)
    return {
      ...user, email: row?.email ?? null, administrator: row?.administrator === true, has_password: hasPassword, permissions, signed_in_with: { kind, scope }
    }
  })

  fastify.post('/account/password', {
    schema: {
      tags,
      summary: 'Set or change your password (the current one is required when one is set); your other sessions end',
      body: ChangePasswordBody,
      response: { 204: EmptyBody, ...errors, 429: ErrorBody }
    }
  }, async (request, reply) => {
    const user = request.planningUser!
    const { current_password: current, new_password: password } = request.body
    if (password.length < MIN_PASSWORD) throw new Invalid(`new_password: ${PASSWORD_RULE}`)
    if (await store.accounts.passwordHash(user.id) !== null) {
      if (current === undefined) throw new Invalid('current_password is required: this account has a password')
      const checked = await checkPassword(store, user.login, current, request.ip)
      if (checked.kind === 'locked') {
        return await reply.status(429).header('retry-after', String(checked.retryAfterSeconds))
          .send({ statusCode: 429, error: 'Too Many Requests', message: 'too many wrong passwords for this login: try again later' })
      }
      if (checked.kind === 'wrong') throw new Invalid('current_password is not right')
    }
    const hash = await hashPassword(password)
    const credential = request.planningCredential!
    await store.transaction(async (s) => {
      await s.accounts.setPassword(user.id, hash)
      const ended = await s.sessions.removeOthers(user.id, credential.kind === 'session' ? credential.id : undefined)
      await s.audit.record({ actor: `user:${user.login}`, action: 'password.changed', target: `user:${user.login}`, address: request.ip, detail: { other_sessions_ended: ended } })
    })
    return await reply.status(204).send(undefined)
  })

  fastify.get('/account/tokens', {
    schema: { tags, summary: 'Your API tokens (never their values)', response: { 200: Type.Array(AccountToken), ...errors } }
  }, async (request) => await store.tokens.list(request.planningUser!.id))

  fastify.post('/account/tokens', {
    schema: { tags, summary: 'Make an API token (shown once, in this answer)', body: CreateTokenBody, response: { 201: NewTokenReply, ...errors } }
  }, async (request, reply) => {
    const user = request.planningUser!
    const made = await store.transaction(async (s) => {
      const made = await s.tokens.create(user.id, request.body)
      await s.audit.record({ actor: `user:${user.login}`, action: 'token.created', target: `user:${user.login}`, address: request.ip, detail: { token_id: made.row.id, name: made.row.name, scope: made.row.scope, expires_at: made.row.expires_at } })
      return made
    })
    return await reply.status(201).send({ ...made.row, token: made.token })
  })

  fastify.delete('/account/tokens/:token_id', {
    schema: { tags, summary: 'Revoke one of your tokens (`legacy`: the admin-made one); it stops working at once', params: TokenParams, response: { 204: EmptyBody, ...errors } }
  }, async (request, reply) => {
    const user = request.planningUser!
    await store.transaction(async (s) => {
      await s.tokens.revoke(user.id, request.params.token_id)
      await s.audit.record({ actor: `user:${user.login}`, action: 'token.revoked', target: `user:${user.login}`, address: request.ip, detail: { token_id: request.params.token_id } })
    })
    return await reply.status(204).send(undefined)
  })
}

export default fp(account, { name: 'planning-account', fastify: '5.x', encapsulate: true, dependencies: ['planning-auth'] })
