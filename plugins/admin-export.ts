import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Readable } from 'node:stream'
import { Type, type ErrorBody } from '../schemas/common.js'
import { exportFixture } from '../services/fixtures.js'

/**
 * `GET /admin/export` (docs, "Admin API and CLI"): everything in the fixture format, streamed a
 * page at a time; registered inside the admin plugin, behind its token.
 */
const exportRoutes: FastifyPluginAsyncTypebox<{ tags: string[], errors: Record<number, typeof ErrorBody> }> = async (fastify, { tags, errors }) => {
  fastify.get('/export', {
    schema: {
      tags,
      summary: 'Everything as one fixture (no token hashes, connection secrets or webhooks), streamed; POST /admin/import takes it back',
      response: { 200: Type.Unsafe<unknown>({ type: 'object', description: 'a fixture' }), ...errors }
    }
  }, async (request, reply) => {
    const stream = Readable.from(exportFixture(fastify.planningStore), { objectMode: false })
    stream.on('error', (err) => request.log.error({ err }, 'export stopped'))
    return await reply.type('application/json; charset=utf-8').header('content-disposition', 'attachment; filename="backup.json"').send(stream)
  })
}

export default exportRoutes
