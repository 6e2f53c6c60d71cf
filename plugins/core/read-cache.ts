import type { FastifyReply, FastifyRequest } from 'fastify'
import fp from 'fastify-plugin'
import type { OutgoingHttpHeaders } from 'node:http'
import { etagOf } from './conditional.js'

interface Entry { version: number, body: Buffer, etag: string }

declare module 'fastify' {
  interface FastifyInstance {
    /**
     * Answers a read of repository `repoId` (read access checked first) from bytes kept since the
     * data behind it last changed: `build` runs (and its value is serialized with the route's
     * response schema) only when the change counter moved since the bytes under `key` were made.
     * `key` must name everything the answer depends on except the caller's permissions. When the
     * counter, the access and the bytes are all at hand (SQLite, nothing written since) it answers
     * at once and returns undefined, without a promise; otherwise it returns the wait.
     */
    planningCachedRead: (request: FastifyRequest, reply: FastifyReply, repoId: number, key: string, build: () => Promise<unknown>) => Promise<void> | undefined
  }
}

const MAX_ENTRIES = 5000
const JSON_TYPE = 'application/json; charset=utf-8'

export interface ReadCacheOptions {
  /**
   * Write an unchanged GET (no If-None-Match) straight to the socket: the headers set so far
   * (rate limit, CORS), the tag, the type, the length and the bytes. Fastify's onResponse hooks
   * and request log still run; onSend hooks do not, so a host app's compression or added headers
   * would miss these answers. Off unless asked for.
   */
  direct?: boolean
}

/**
 * Serialized answers (boards, issue data) kept per instance and keyed on the change counter, so
 * an unchanged read costs auth, the rate limit and one write of bytes made earlier; any write
 * (this process, the admin CLI, another instance on the same database) moves the counter and the
 * next read rebuilds. Each entry keeps its ETag, made once with the bytes.
 */
export default fp<ReadCacheOptions>(async (fastify, opts) => {
  const entries = new Map<string, Entry>()

  const send = (reply: FastifyReply, entry: Entry) => reply.header('etag', entry.etag).type(JSON_TYPE).send(entry.body)
  const write = (reply: FastifyReply, entry: Entry) => {
    const headers = reply.getHeaders()
    headers.etag = entry.etag
    headers['content-type'] = JSON_TYPE
    headers['content-length'] = entry.body.length
    reply.hijack()
    reply.raw.writeHead(200, headers as OutgoingHttpHeaders)
    reply.raw.end(entry.body)
  }
  const direct = opts.direct === true

  const cachedReply = async (request: FastifyRequest, reply: FastifyReply, key: string, build: () => Promise<unknown>) => {
    const version = await fastify.planningVersion(request)
    let entry = entries.get(key)
    if (entry === undefined || entry.version !== version) {
      const body = Buffer.from(reply.serialize(await build()) as string)
      const previous = entries.get(key)
      entry = { version, body, etag: previous?.body.equals(body) === true ? previous.etag : etagOf(body) }
      // A build that started before a newer one finished never replaces it.
      if (previous === undefined || previous.version <= version) {
        if (previous === undefined && entries.size >= MAX_ENTRIES) entries.delete(entries.keys().next().value!)
        entries.set(key, entry)
      }
    }
    send(reply, entry)
  }

  fastify.decorate('planningCachedRead', (request: FastifyRequest, reply: FastifyReply, repoId: number, key: string, build: () => Promise<unknown>) => {
    if (fastify.planningAuth.accessNow(request, repoId, 'read') !== undefined) {
      const entry = entries.get(key)
      if (entry !== undefined && entry.version === fastify.planningVersionNow(request)) {
        if (direct && request.method === 'GET' && request.headers['if-none-match'] === undefined) write(reply, entry)
        else send(reply, entry)
        return undefined
      }
    }
    return (async () => {
      await fastify.planningAuth.requireAccess(request, repoId, 'read')
      await cachedReply(request, reply, key, build)
    })()
  })
}, { name: 'planning-read-cache', fastify: '5.x', dependencies: ['planning-database', 'planning-auth'] })
