import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type } from '../../schemas/common.js'
import { Counter, CounterBody, CounterParams } from '../../schemas/chat-bot.js'
import { chatErrors as errors, tags, type ChatContext } from './context.js'

/** Named counters: anyone reads them, moderators set them; commands change them as they are used. */
const counters: FastifyPluginAsyncTypebox<{ chat: ChatContext }> = async (fastify, { chat }) => {
  const { counters: repo } = chat.repo

  fastify.get('/counters', {
    schema: { tags, summary: 'Counters', response: { 200: Type.Object({ data: Type.Array(Counter) }), ...errors } }
  }, async () => ({ data: await repo.list() }))

  fastify.get('/counters/:name', {
    schema: { tags, summary: 'A counter', params: CounterParams, response: { 200: Counter, ...errors } }
  }, async (request) => await repo.get(request.params.name))

  fastify.put('/counters/:name', {
    schema: { tags, summary: 'Set a counter, creating it (moderator)', params: CounterParams, body: CounterBody, response: { 200: Counter, ...errors } }
  }, async (request) => {
    await chat.requireRole(request, 'moderator')
    const { counter, event } = await repo.set(request.params.name, request.body.value)
    await chat.publish([event])
    return counter
  })
}

export default counters
