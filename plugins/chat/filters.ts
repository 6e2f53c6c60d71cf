import { httpErrors } from '@fastify/sensible'
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type, EmptyBody } from '../../schemas/common.js'
import { BlockedTerm, IdParams, TermBody } from '../../schemas/chat.js'
import { chatErrors as errors, tags, type ChatContext } from './context.js'
import { termProblem } from './terms.js'

/** Blocked terms (moderators): messages holding one are refused with 422. */
const filters: FastifyPluginAsyncTypebox<{ chat: ChatContext }> = async (fastify, { chat }) => {
  const { repo } = chat

  fastify.get('/filters/terms', {
    schema: { tags, summary: 'Blocked terms (moderator)', response: { 200: Type.Object({ data: Type.Array(BlockedTerm) }), ...errors } }
  }, async (request) => {
    await chat.requireRole(request, 'moderator')
    return { data: await repo.terms() }
  })

  fastify.post('/filters/terms', {
    schema: { tags, summary: 'Block a term: case-insensitive whole words, * for any characters (moderator)', body: TermBody, response: { 201: BlockedTerm, ...errors } }
  }, async (request, reply) => {
    const actor = await chat.requireRole(request, 'moderator')
    const term = request.body.term.trim()
    const problem = termProblem(term)
    if (problem !== undefined) throw httpErrors.badRequest(problem)
    return reply.status(201).send(await repo.addTerm(term, actor.id))
  })

  fastify.delete('/filters/terms/:id', {
    schema: { tags, summary: 'Unblock a term (moderator)', params: IdParams, response: { 204: EmptyBody, ...errors } }
  }, async (request, reply) => {
    await chat.requireRole(request, 'moderator')
    await repo.removeTerm(request.params.id)
    return reply.status(204).send(undefined)
  })
}

export default filters
