import fp from 'fastify-plugin'
import { DomainEvents } from '../../db/domain-events.js'

declare module 'fastify' {
  interface FastifyInstance {
    /** synchronous, in-transaction notifications of board and estimate changes */
    planningEvents: DomainEvents
  }
}

export default fp(async (fastify) => {
  fastify.decorate('planningEvents', new DomainEvents())
}, { name: 'planning-events', fastify: '5.x' })
