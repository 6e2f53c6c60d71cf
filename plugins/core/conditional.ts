import type { FastifyReply, FastifyRequest } from 'fastify'
import fp from 'fastify-plugin'
import { createHash } from 'node:crypto'

/** A strong entity tag for these bytes. */
export function etagOf (body: string | Buffer): string {
  return `"${createHash('sha1').update(body).digest('base64url').slice(0, 22)}"`
}

/**
 * Whether an If-None-Match header matches the tag: `*`, or any tag of the list compared weakly
 * (a `W/` prefix on either side is ignored), as RFC 9110 says for GET and HEAD.
 */
export function noneMatch (header: string | undefined, etag: string): boolean {
  if (header === undefined || header === '') return false
  if (header.trim() === '*') return true
  const bare = etag.startsWith('W/') ? etag.slice(2) : etag
  for (const part of header.split(',')) {
    const tag = part.trim()
    if ((tag.startsWith('W/') ? tag.slice(2) : tag) === bare) return true
  }
  return false
}

/** The payload to send: as it is, or '' when the request's If-None-Match matches its tag (a 304). */
function conditional (request: FastifyRequest, reply: FastifyReply, payload: unknown): unknown {
  if (reply.statusCode !== 200 || (request.method !== 'GET' && request.method !== 'HEAD')) return payload
  let etag = reply.getHeader('etag') as string | undefined
  if (etag === undefined) {
    if (typeof payload !== 'string' && !Buffer.isBuffer(payload)) return payload
    if (request.routeOptions.config?.etag === false) return payload
    etag = etagOf(payload)
    reply.header('etag', etag)
  }
  if (!noneMatch(request.headers['if-none-match'], etag)) return payload
  reply.code(304)
  reply.removeHeader('content-type')
  reply.removeHeader('content-length')
  return ''
}

declare module 'fastify' {
  interface FastifyContextConfig {
    /** leave this route's answers without an ETag (a live stream, a probe) */
    etag?: false
  }
}

/**
 * Conditional requests (docs/api.md, "Conditional requests"): every 200 answer to a GET or HEAD
 * carries an ETag (routes that cache their bytes set it themselves; others get a hash of what is
 * sent), and a matching If-None-Match turns the answer into a 304 with no body. Errors never get
 * a tag, so a 404 can never be answered with a 304. Written here rather than taken from
 * @fastify/etag, which also tags (and 304s) error answers and compares only a single tag.
 */
export default fp(async (fastify) => {
  fastify.addHook('onSend', (request, reply, payload, done: (err: null, value: unknown) => void) => {
    done(null, conditional(request, reply, payload))
  })
}, { name: 'planning-conditional', fastify: '5.x' })
