import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import fp from 'fastify-plugin'
import { sql } from 'kysely'
import { Type } from '../../schemas/common.js'

const Status = Type.Object({ status: Type.String(), checks: Type.Optional(Type.Record(Type.String(), Type.String())) })

/**
 * `GET /health`: the process answers. `GET /ready`: the database answers and the migrations are
 * done, so a load balancer may send traffic; 503 otherwise, within DATABASE_TIMEOUT_MS. Redis going
 * away degrades (rate limits per instance, no chat fan-out) but leaves the instance ready: it is
 * reported as `"redis": "degraded"`. Neither needs a token nor counts against the rate limit.
 */
const health: FastifyPluginAsyncTypebox = async (fastify) => {
  const tags = ['operations']
  const config = { probe: true }

  fastify.get('/health', {
    config,
    schema: { tags, summary: 'Liveness: the process answers', response: { 200: Status } }
  }, async () => ({ status: 'ok' }))

  fastify.get('/ready', {
    config,
    schema: { tags, summary: 'Readiness: database reachable, migrations done (Redis reported, not required)', response: { 200: Status, 503: Status } }
  }, async (request, reply) => {
    const checks: Record<string, string> = {}
    try {
      await sql`SELECT 1 FROM change_counter WHERE id = 1`.execute(fastify.planningStore.db)
      checks.database = 'ok'
    } catch (err) {
      fastify.planningDatabaseUnavailable(err)
      checks.database = 'unavailable'
    }
    if (fastify.planningRedis !== null) checks.redis = fastify.planningRedis.available() ? 'ok' : 'degraded'
    const ready = checks.database === 'ok'
    return await reply.status(ready ? 200 : 503).send({ status: ready ? 'ready' : 'not ready', checks })
  })
}

export default fp(health, { name: 'planning-health', fastify: '5.x', encapsulate: true, dependencies: ['planning-database', 'planning-redis'] })
