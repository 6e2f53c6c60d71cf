import { httpErrors } from '@fastify/sensible'
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import type { FastifyRequest } from 'fastify'
import fp from 'fastify-plugin'
import { createHmac, timingSafeEqual } from 'node:crypto'
import type { Connection } from '../db/issue-host/connections.js'
import { Type, ErrorBody, errorResponses } from '../schemas/common.js'
import { ownAccount } from '../services/host-account.js'
import { permissionReader } from '../services/host-permissions.js'
import { repositoryLookup } from '../services/host-repository.js'
import { handleDelivery } from '../services/issue-host.js'
import { MAX_JSON_DEPTH, nestsDeeperThan } from './core/validation.js'

const found = Symbol('planningConnection')
declare module 'fastify' {
  interface FastifyRequest {
    [found]?: Connection
  }
}

/** GitHub's own cap on a delivery's size. */
const MAX_DELIVERY_BYTES = 25 * 1024 * 1024

const Params = Type.Object({ connection_id: Type.String({ minLength: 1, maxLength: 100 }) })
const Reply = Type.Object({ result: Type.String({ description: 'pong, handled, duplicate, stale or ignored' }) })

const header = (request: FastifyRequest, ...names: string[]): string | undefined => {
  for (const name of names) {
    const value = request.headers[name]
    if (typeof value === 'string' && value !== '') return value
  }
  return undefined
}

/** `sha256=<hex>` as GitHub sends it, or the bare hex of Gitea's and Forgejo's header. */
const signatureOf = (request: FastifyRequest): string | undefined => {
  const bare = header(request, 'x-gitea-signature', 'x-forgejo-signature')
  const value = header(request, 'x-hub-signature-256') ?? (bare === undefined ? undefined : `sha256=${bare}`)
  return value === undefined ? undefined : value.trim().toLowerCase()
}

/** A parsed delivery, refused (400) when it nests deeper than any host's payload does. */
const shallow = (value: unknown, part: string): unknown => {
  if (nestsDeeperThan(value)) throw httpErrors.badRequest(`${part} nests deeper than ${MAX_JSON_DEPTH} levels`)
  return value
}

const signatureMatches = (secret: string, body: Buffer, signature: string): boolean => {
  const expected = Buffer.from(`sha256=${createHmac('sha256', secret).update(body).digest('hex')}`)
  const given = Buffer.from(signature)
  return given.length === expected.length && timingSafeEqual(given, expected)
}

export interface IntegrationsOptions {
  /** how the receiver reaches an issue host to read a permission back (the address policy plugs in here) */
  hostFetch?: typeof fetch
  /** how long a request to an issue host may take */
  hostTimeoutMs?: number
}

/**
 * The URL an issue host's webhook posts to (docs/connections.md). No user token: the body must
 * carry the connection's HMAC-SHA256 signature. The connection and the signature header are
 * checked before a byte of the body is read; a known connection's body (at most 25 MiB) is
 * checked against the signature before it is parsed.
 */
const integrations: FastifyPluginAsyncTypebox<IntegrationsOptions> = async (fastify, options) => {
  // Connections come back with their secret and token decrypted (SECRET_KEY).
  const connections = fastify.planningStore.connections
  const tags = ['integrations']

  const verified = (request: FastifyRequest, body: Buffer): void => {
    const connection = request[found]!
    if (!signatureMatches(connection.secret, body, signatureOf(request)!)) {
      throw httpErrors.unauthorized('the delivery\'s signature does not match the connection\'s secret')
    }
  }
  // JSON, or GitHub's and Gitea's application/x-www-form-urlencoded with the JSON in `payload`.
  fastify.removeAllContentTypeParsers()
  fastify.addContentTypeParser('application/json', { parseAs: 'buffer', bodyLimit: MAX_DELIVERY_BYTES }, (request, body, done) => {
    try {
      verified(request, body as Buffer)
      done(null, shallow(JSON.parse((body as Buffer).toString('utf8')), 'body'))
    } catch (err) {
      done(err instanceof SyntaxError ? httpErrors.badRequest('body is not valid JSON') : err as Error, undefined)
    }
  })
  fastify.addContentTypeParser('application/x-www-form-urlencoded', { parseAs: 'buffer', bodyLimit: MAX_DELIVERY_BYTES }, (request, body, done) => {
    try {
      verified(request, body as Buffer)
      const payload = new URLSearchParams((body as Buffer).toString('utf8')).get('payload')
      if (payload === null) throw httpErrors.badRequest('body/payload is missing')
      done(null, shallow(JSON.parse(payload), 'body/payload'))
    } catch (err) {
      done(err instanceof SyntaxError ? httpErrors.badRequest('body/payload is not valid JSON') : err as Error, undefined)
    }
  })

  fastify.post('/integrations/:connection_id/webhook', {
    bodyLimit: MAX_DELIVERY_BYTES,
    schema: {
      tags,
      summary: 'Receive an issue host\'s webhook (signed with the connection\'s secret; no user token)',
      params: Params,
      response: { 200: Reply, 202: Reply, ...errorResponses, 401: ErrorBody, 502: ErrorBody }
    },
    // Before the body is read: an unknown connection or an unsigned delivery costs nothing more.
    onRequest: async (request) => {
      const { connection_id: id } = request.params as { connection_id: string }
      const connection = await connections.byId(id)
      if (connection === undefined) throw httpErrors.notFound(id.length > 100 || id.includes('\0') ? 'connection not found' : `connection ${id} not found`)
      if (signatureOf(request) === undefined) throw httpErrors.unauthorized('the delivery is not signed (X-Hub-Signature-256 with the connection\'s secret)')
      request[found] = connection
    }
  }, async (request, reply) => {
    const connection = request[found]!
    // A body-less delivery never went through a parser: its signature is checked here.
    if (request.body === undefined) verified(request, Buffer.alloc(0))
    const event = header(request, 'x-github-event', 'x-gitea-event', 'x-forgejo-event')
    if (event === undefined) throw httpErrors.badRequest('the event name is missing (X-GitHub-Event, X-Gitea-Event or X-Forgejo-Event)')
    const payload = request.body as Record<string, unknown> | undefined
    const action = typeof payload?.action === 'string' ? payload.action.slice(0, 100) : null
    // The signature matched: the delivery is the host's, and its outcome goes to the connection's log.
    const log = async (result: string, detail: string | null = null) => {
      try {
        await connections.logDelivery(connection.id, { event: event.slice(0, 100), action, result, detail })
      } catch (err) {
        request.log.warn({ err, connection: connection.id }, 'could not log the delivery')
      }
    }
    if (event === 'ping') {
      await log('pong')
      return { result: 'pong' }
    }
    try {
      if (typeof payload !== 'object' || payload === null || Array.isArray(payload)) throw httpErrors.badRequest('body must be the event\'s JSON payload')
      const delivery = header(request, 'x-github-delivery', 'x-gitea-delivery', 'x-forgejo-delivery')
      const hostFetch = options.hostFetch ?? fastify.planningHosts.fetch
      const reader = permissionReader(connection, { fetch: hostFetch, timeoutMs: options.hostTimeoutMs })
      const own = ownAccount(fastify.planningStore, connection, { fetch: hostFetch, timeoutMs: options.hostTimeoutMs })
      const lookup = repositoryLookup(connection, { fetch: hostFetch, timeoutMs: options.hostTimeoutMs })
      const result = await handleDelivery(fastify.planningStore, connection, event, delivery, payload, reader, own, lookup)
      await log(result.outcome, result.outcome === 'ignored' ? result.reason ?? null : null)
      if (result.outcome === 'ignored') {
        request.log.info({ event, action: payload.action, connection: connection.id, reason: result.reason }, 'issue-host event not applied')
        return await reply.status(202).send({ result: result.outcome })
      }
      return { result: result.outcome }
    } catch (err) {
      const { statusCode, message } = err as { statusCode?: number, message?: string }
      // Our own refusals (4xx, and 502s naming the host's answer) say why; anything else is a fault
      // whose text may hold a driver's or a payload's words: the log keeps it, the page does not.
      const known = statusCode !== undefined && statusCode < 600 && (statusCode < 500 || statusCode === 502)
      await log('failed', known ? `${statusCode}: ${message ?? 'error'}` : '500: internal error, see the server log')
      throw err
    }
  })
}

export default fp(integrations, { name: 'planning-integrations', fastify: '5.x', encapsulate: true, dependencies: ['planning-database'] })
