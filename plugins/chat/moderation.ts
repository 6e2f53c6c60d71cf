import { httpErrors } from '@fastify/sensible'
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { LoginParams } from '../../schemas/common.js'
import { BanBody, ChatMember, RoleBody, TimeoutBody } from '../../schemas/chat.js'
import { chatErrors as errors, tags, type ChatContext } from './context.js'

/** Chat roles and sanctions: roles (broadcaster), bans, timeouts and lifting them (moderators). */
const moderation: FastifyPluginAsyncTypebox<{ chat: ChatContext }> = async (fastify, { chat }) => {
  const { repo } = chat
  const memberOf = async (id: number) => (await repo.member(id))!

  fastify.get('/users/:login', {
    schema: { tags, summary: 'A user\'s chat role and sanctions', params: LoginParams, response: { 200: ChatMember, ...errors } }
  }, async (request) => await chat.target(request.params.login))

  fastify.put('/users/:login/role', {
    schema: { tags, summary: 'Make a user moderator or viewer (broadcaster)', params: LoginParams, body: RoleBody, response: { 200: ChatMember, ...errors } }
  }, async (request) => {
    await chat.requireRole(request, 'broadcaster')
    const subject = await chat.target(request.params.login)
    if (subject.role === 'broadcaster') throw httpErrors.badRequest('the broadcaster role is set through the admin API')
    await repo.setRole(subject.id, request.body.role)
    return await memberOf(subject.id)
  })

  fastify.post('/users/:login/ban', {
    schema: { tags, summary: 'Ban a user (moderator); the body is optional', params: LoginParams, body: BanBody, response: { 200: ChatMember, ...errors } },
    preValidation: async (request) => { request.body ??= {} }
  }, async (request) => {
    const subject = await chat.moderate(request, request.params.login)
    await repo.ban(subject.id, request.body.reason ?? null)
    return await memberOf(subject.id)
  })

  fastify.post('/users/:login/timeout', {
    schema: { tags, summary: 'Time a user out for some seconds (moderator)', params: LoginParams, body: TimeoutBody, response: { 200: ChatMember, ...errors } }
  }, async (request) => {
    const subject = await chat.moderate(request, request.params.login)
    await repo.timeout(subject.id, Date.now() + request.body.seconds * 1000)
    return await memberOf(subject.id)
  })

  fastify.post('/users/:login/unban', {
    schema: { tags, summary: 'Lift a ban or timeout (moderator)', params: LoginParams, response: { 200: ChatMember, ...errors } }
  }, async (request) => {
    const subject = await chat.moderate(request, request.params.login)
    await repo.unban(subject.id)
    return await memberOf(subject.id)
  })
}

export default moderation
