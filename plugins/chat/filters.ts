import { httpErrors } from '@fastify/sensible'
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type, EmptyBody } from '../../schemas/common.js'
import { BlockedTerm, IdParams, TermBody } from '../../schemas/chat.js'
import { FilterPattern, FilterSettings, FilterSettingsBody, PatternBody } from '../../schemas/chat-bot.js'
import { chatErrors as errors, tags, type ChatContext } from './context.js'
import { MAX_PATTERNS, patternProblem } from './patterns.js'
import { termProblem } from './terms.js'

/**
 * Message filters (moderators): blocked terms (refused with 422), pattern filters (RE2) and the
 * links, caps, repetition and escalation settings.
 */
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

  fastify.get('/filters/patterns', {
    schema: { tags, summary: 'Pattern filters (moderator)', response: { 200: Type.Object({ data: Type.Array(FilterPattern) }), ...errors } }
  }, async (request) => {
    await chat.requireRole(request, 'moderator')
    return { data: await repo.filters.patterns() }
  })

  fastify.post('/filters/patterns', {
    schema: { tags, summary: `Add a pattern filter: RE2 syntax, case-insensitive, at most ${MAX_PATTERNS} (moderator)`, body: PatternBody, response: { 201: FilterPattern, ...errors } }
  }, async (request, reply) => {
    const actor = await chat.requireRole(request, 'moderator')
    const { pattern, action = 'refuse', timeout_seconds: seconds } = request.body
    const problem = patternProblem(pattern)
    if (problem !== undefined) throw httpErrors.badRequest(problem)
    if (seconds !== undefined && action !== 'timeout') throw httpErrors.badRequest('body/timeout_seconds goes only with the action "timeout"')
    const added = await repo.filters.addPattern({ pattern, action, timeout_seconds: action === 'timeout' ? seconds ?? 600 : null }, actor.id, MAX_PATTERNS)
    await chat.publish([added.event])
    return reply.status(201).header('location', `${request.url.replace(/\/$/, '')}/${added.pattern.id}`).send(added.pattern)
  })

  fastify.delete('/filters/patterns/:id', {
    schema: { tags, summary: 'Remove a pattern filter (moderator)', params: IdParams, response: { 204: EmptyBody, ...errors } }
  }, async (request, reply) => {
    await chat.requireRole(request, 'moderator')
    await chat.publish([await repo.filters.removePattern(request.params.id)])
    return reply.status(204).send(undefined)
  })

  fastify.get('/filters/settings', {
    schema: { tags, summary: 'Links, caps, repetition and escalation filters (moderator)', response: { 200: FilterSettings, ...errors } }
  }, async (request) => {
    await chat.requireRole(request, 'moderator')
    return await repo.filters.settings('filters')
  })

  fastify.put('/filters/settings', {
    schema: { tags, summary: 'Change filter settings; sections not given are kept (moderator)', body: FilterSettingsBody, response: { 200: FilterSettings, ...errors } }
  }, async (request) => {
    await chat.requireRole(request, 'moderator')
    const change = request.body
    const { settings, event } = await repo.filters.updateSettings('filters', (current) => ({
      links: { ...current.links, ...change.links },
      caps: { ...current.caps, ...change.caps },
      repetition: { ...current.repetition, ...change.repetition },
      escalation: { ...current.escalation, ...change.escalation },
      exempt_roles: change.exempt_roles ?? current.exempt_roles
    }))
    await chat.publish([event])
    return settings
  })
}

export default filters
