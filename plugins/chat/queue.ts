import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type } from '../../schemas/common.js'
import { IdParams } from '../../schemas/chat.js'
import { ChatSettings, ChatSettingsBody, HeldMessage, HeldQuery, Permit, PermitBody } from '../../schemas/chat-bot.js'
import { chatErrors as errors, tags, type ChatContext } from './context.js'

/**
 * The moderation queue (held messages, seen by moderators only), link permits, and the chat's
 * settings (slow mode and the new-user limit).
 */
const queue: FastifyPluginAsyncTypebox<{ chat: ChatContext }> = async (fastify, { chat }) => {
  const { held, filters } = chat.repo

  fastify.get('/held', {
    schema: { tags, summary: 'Held messages, newest first (moderator)', querystring: HeldQuery, response: { 200: Type.Object({ data: Type.Array(HeldMessage) }), ...errors } }
  }, async (request) => {
    await chat.requireRole(request, 'moderator')
    const { status, limit, before } = request.query
    return { data: await held.list(status, limit, before) }
  })

  for (const [verb, approve] of [['approve', true], ['deny', false]] as const) {
    fastify.post(`/held/:id/${verb}`, {
      schema: { tags, summary: approve ? 'Publish a held message as if just sent (moderator)' : 'Deny a held message (moderator)', params: IdParams, response: { 200: HeldMessage, ...errors } }
    }, async (request) => {
      const actor = await chat.requireRole(request, 'moderator')
      const resolved = await held.resolve(request.params.id, actor.id, approve)
      await chat.publish(resolved.events)
      return resolved.held
    })
  }

  fastify.post('/permits', {
    schema: { tags, summary: 'Let a user post links for some seconds, 60 by default (moderator)', body: PermitBody, response: { 201: Permit, ...errors } }
  }, async (request, reply) => {
    await chat.requireRole(request, 'moderator')
    const subject = await chat.target(request.body.login)
    const until = Date.now() + (request.body.seconds ?? 60) * 1000
    const events = await filters.grantPermit(subject.id, until)
    await chat.publish(events)
    return reply.status(201).send({ login: subject.login, until: new Date(until).toISOString() })
  })

  fastify.get('/settings', {
    schema: { tags, summary: 'Slow mode and the new-user limit', response: { 200: ChatSettings, ...errors } }
  }, async () => await filters.settings('chat'))

  fastify.put('/settings', {
    schema: { tags, summary: 'Change slow mode and the new-user limit; fields not given are kept (moderator)', body: ChatSettingsBody, response: { 200: ChatSettings, ...errors } }
  }, async (request) => {
    await chat.requireRole(request, 'moderator')
    const { settings, event } = await filters.updateSettings('chat', (current) => ({ ...current, ...request.body }))
    await chat.publish([event])
    return settings
  })
}

export default queue
