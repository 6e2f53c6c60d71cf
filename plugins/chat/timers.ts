import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { EmptyBody, Type } from '../../schemas/common.js'
import { IdParams } from '../../schemas/chat.js'
import { CreateTimerBody, Timer, UpdateTimerBody } from '../../schemas/chat-bot.js'
import { chatErrors as errors, tags, type ChatContext } from './context.js'

/** Timers (moderators): the bot posts a message every `interval_minutes`, once `min_lines` were sent. */
const timers: FastifyPluginAsyncTypebox<{ chat: ChatContext, now: () => number }> = async (fastify, { chat, now }) => {
  const { timers: repo } = chat.repo

  fastify.get('/timers', {
    schema: { tags, summary: 'Timers (moderator)', response: { 200: Type.Object({ data: Type.Array(Timer) }), ...errors } }
  }, async (request) => {
    await chat.requireRole(request, 'moderator')
    return { data: await repo.list() }
  })

  fastify.post('/timers', {
    schema: { tags, summary: 'Create a timer (moderator)', body: CreateTimerBody, response: { 201: Timer, ...errors } }
  }, async (request, reply) => {
    await chat.requireRole(request, 'moderator')
    const { timer, event } = await repo.create({ ...request.body, name: request.body.name.trim(), message: request.body.message.trim() }, now())
    await chat.publish([event])
    return reply.status(201).header('location', `${request.url.replace(/\/$/, '')}/${timer.id}`).send(timer)
  })

  fastify.get('/timers/:id', {
    schema: { tags, summary: 'A timer (moderator)', params: IdParams, response: { 200: Timer, ...errors } }
  }, async (request) => {
    await chat.requireRole(request, 'moderator')
    return await repo.get(request.params.id)
  })

  fastify.patch('/timers/:id', {
    schema: { tags, summary: 'Change a timer (moderator)', params: IdParams, body: UpdateTimerBody, response: { 200: Timer, ...errors } }
  }, async (request) => {
    await chat.requireRole(request, 'moderator')
    const { timer, event } = await repo.update(request.params.id, { ...request.body, name: request.body.name?.trim(), message: request.body.message?.trim() })
    await chat.publish([event])
    return timer
  })

  fastify.delete('/timers/:id', {
    schema: { tags, summary: 'Delete a timer (moderator)', params: IdParams, response: { 204: EmptyBody, ...errors } }
  }, async (request, reply) => {
    await chat.requireRole(request, 'moderator')
    await chat.publish([await repo.remove(request.params.id)])
    return reply.status(204).send(undefined)
  })
}

export default timers
