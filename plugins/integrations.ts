import formbody from '@fastify/formbody'
import { httpErrors } from '@fastify/sensible'
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { verify } from '@octokit/webhooks-methods'
import type { FastifyRequest } from 'fastify'
import fp from 'fastify-plugin'
import { Transform } from 'node:stream'
import { createConnectionsRepository } from '../db/connections.js'
import { Type, ErrorBody, errorResponses } from '../schemas/common.js'
import { handleDelivery } from '../services/issue-host.js'

const rawBody = Symbol('planningRawBody')
declare module 'fastify' {
  interface FastifyRequest {
    [rawBody]?: string
  }
}

const Params = Type.Object({ connection_id: Type.String({ minLength: 1, maxLength: 100 }) })
const Reply = Type.Object({ result: Type.String({ description: 'pong, handled, duplicate, stale or ignored' }) })

const header = (request: FastifyRequest, ...names: string[]): string | undefined => {
  for (const name of names) {
    const value = request.headers[name]
    if (typeof value === 'string' && value !== '') return value
  }
  return undefined
}

/**
 * The URL an issue host's webhook posts to (README, "Connect GitHub, GitHub Enterprise, Gitea or
 * Forgejo"). No user token: the body must carry the connection's HMAC-SHA256 signature.
 */
const integrations: FastifyPluginAsyncTypebox = async (fastify) => {
  const connections = createConnectionsRepository(fastify.planningStore.db)
  const tags = ['integrations']

  // The signature covers the exact bytes sent: keep them while the body is parsed as usual.
  fastify.addHook('preParsing', async (request, _reply, payload) => {
    const chunks: Buffer[] = []
    const tee = new Transform({
      transform (chunk: Buffer, _encoding, done) {
        chunks.push(chunk)
        done(null, chunk)
      },
      flush (done) {
        request[rawBody] = Buffer.concat(chunks).toString('utf8')
        done()
      }
    })
    return payload.pipe(tee)
  })
  // GitHub and Gitea also offer application/x-www-form-urlencoded, the JSON in a `payload` field.
  await fastify.register(formbody)

  fastify.post('/integrations/:connection_id/webhook', {
    bodyLimit: 8 * 1024 * 1024,
    schema: {
      tags,
      summary: 'Receive an issue host\'s webhook (signed with the connection\'s secret; no user token)',
      params: Params,
      response: { 200: Reply, 202: Reply, ...errorResponses, 401: ErrorBody }
    }
  }, async (request, reply) => {
    const connection = await connections.byId(request.params.connection_id)
    if (connection === undefined) throw httpErrors.notFound(`connection ${request.params.connection_id} not found`)
    const raw = request[rawBody] ?? ''
    const bare = header(request, 'x-gitea-signature', 'x-forgejo-signature')
    const signature = header(request, 'x-hub-signature-256') ?? (bare === undefined ? undefined : `sha256=${bare}`)
    if (signature === undefined) throw httpErrors.unauthorized('the delivery is not signed (X-Hub-Signature-256 with the connection\'s secret)')
    let valid = false
    try {
      valid = await verify(connection.secret, raw, signature)
    } catch {}
    if (!valid) throw httpErrors.unauthorized('the delivery\'s signature does not match the connection\'s secret')

    const event = header(request, 'x-github-event', 'x-gitea-event', 'x-forgejo-event')
    if (event === undefined) throw httpErrors.badRequest('the event name is missing (X-GitHub-Event, X-Gitea-Event or X-Forgejo-Event)')
    if (event === 'ping') return { result: 'pong' }
    let payload = request.body as Record<string, unknown> | undefined
    if (typeof payload?.payload === 'string') {
      try {
        payload = JSON.parse(payload.payload) as Record<string, unknown>
      } catch {
        throw httpErrors.badRequest('body/payload is not valid JSON')
      }
    }
    if (typeof payload !== 'object' || payload === null) throw httpErrors.badRequest('body must be the event\'s JSON payload')
    const delivery = header(request, 'x-github-delivery', 'x-gitea-delivery', 'x-forgejo-delivery')
    const result = await handleDelivery(fastify.planningStore, connection, event, delivery, payload)
    if (result === 'ignored') {
      request.log.info({ event, action: payload.action, connection: connection.id }, 'issue-host event not handled')
      return await reply.status(202).send({ result })
    }
    return { result }
  })
}

export default fp(integrations, { name: 'planning-integrations', fastify: '5.x', encapsulate: true, dependencies: ['planning-database'] })
