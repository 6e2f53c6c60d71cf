import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { SessionProbe } from '../../schemas/sign-in.js'

/**
 * `GET /auth/session` (docs/sign-in.md, "Sessions"): whether the request is signed in, answered 200
 * either way, so a page can ask on its first load without a failed request in the browser's console.
 */
export const sessionProbe: FastifyPluginAsyncTypebox = async (fastify) => {
  fastify.get('/auth/session', {
    schema: {
      tags: ['sign-in'],
      summary: 'Whether this request is signed in (a session cookie or a token), and as whom; 200 when nobody is',
      response: { 200: SessionProbe }
    }
  }, async (request, reply) => {
    const user = await fastify.planningAuth.user(request)
    reply.header('cache-control', 'no-store')
    if (user === null) return { signed_in: false }
    const { kind, scope } = request.planningCredential!
    return { signed_in: true, user: { id: user.id, login: user.login }, signed_in_with: { kind, scope } }
  })
}
