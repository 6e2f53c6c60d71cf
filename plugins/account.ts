import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import fp from 'fastify-plugin'
import { Account, AccountToken, CreateTokenBody, NewTokenReply, TokenParams } from '../schemas/account.js'
import { EmptyBody, ErrorBody, errorResponses, Type } from '../schemas/common.js'

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
    return { ...user, email: await store.users.emailOf(user.id), signed_in_with: { kind, scope } }
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
