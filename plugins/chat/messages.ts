import { httpErrors } from '@fastify/sensible'
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { EmptyBody } from '../../schemas/common.js'
import { ChatMessage, IdParams, MessagePage, MessagesQuery, SendBody } from '../../schemas/chat.js'
import { chatErrors as errors, tags, type ChatContext } from './context.js'
import { decideSend } from './send-rules.js'

/** Reading, sending (with the bot's command answers) and deleting messages. */
const messages: FastifyPluginAsyncTypebox<{ chat: ChatContext }> = async (fastify, { chat }) => {
  const { repo } = chat

  fastify.get('/messages', {
    schema: { tags, summary: 'Latest messages, oldest to newest', querystring: MessagesQuery, response: { 200: MessagePage, ...errors } }
  }, async (request) => {
    const { limit, before, after } = request.query
    if (before !== undefined && after !== undefined) throw httpErrors.badRequest('querystring: give before or after, not both')
    const page = await repo.messages(limit, { before, after })
    return {
      data: page.data,
      pagination: {
        limit,
        before: page.hasOlder ? page.data[0]?.id ?? null : null,
        after: page.data.at(-1)?.id ?? after ?? null,
        has_older: page.hasOlder,
        has_newer: page.hasNewer
      }
    }
  })

  fastify.post('/messages/send', {
    schema: { tags, summary: 'Send a message (commands in it make the bot answer)', body: SendBody, response: { 201: ChatMessage, ...errors } }
  }, async (request, reply) => {
    const sender = await chat.me(request)
    const firstWord = request.body.message.trim().split(/\s+/)[0]
    const decision = decideSend({
      sender,
      message: request.body.message,
      take: () => chat.limiter.take(sender.id),
      limit: chat.limiter,
      terms: await repo.terms(),
      command: await repo.trigger(firstWord),
      now: Date.now()
    })
    if (!decision.ok) {
      if (decision.retryAfterSeconds !== undefined) reply.header('retry-after', decision.retryAfterSeconds)
      throw httpErrors.createError(decision.status, decision.message)
    }
    const { message, events } = await repo.send(sender.id, decision.text, decision.reply)
    await chat.publish(events)
    return reply.status(201).send(message)
  })

  fastify.delete('/messages/:id', {
    schema: { tags, summary: 'Delete a message (moderator)', params: IdParams, response: { 204: EmptyBody, ...errors } }
  }, async (request, reply) => {
    const actor = await chat.requireRole(request, 'moderator')
    await chat.publish([await repo.deleteMessage(request.params.id, actor.id)])
    return reply.status(204).send(undefined)
  })
}

export default messages
