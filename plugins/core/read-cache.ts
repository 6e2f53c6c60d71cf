import type { FastifyReply, FastifyRequest } from 'fastify'
import fp from 'fastify-plugin'
import type { OutgoingHttpHeaders } from 'node:http'
import { etagOf } from './conditional.js'
import type { ServerFront } from './front.js'
import { frontReads } from './front-reads.js'
import { ENTRY_OVERHEAD, ReadCache, type Entry } from './cached-answers.js'

export { ReadCache, type ReadCacheStats } from './cached-answers.js'

declare module 'fastify' {
  interface FastifyInstance {
    /**
     * Answers a read of repository `repoId` (read access checked first) from bytes kept since the
     * data behind it last changed: `build` runs (and its value is serialized with the route's
     * response schema, unless it is a `SerializedAnswer`) only when the change counter moved since the bytes under `key` were made.
     * `key` must name everything the answer depends on except the caller's permissions. When the
     * counter, the access and the bytes are all at hand (SQLite, nothing written since) it answers
     * at once and returns undefined, without a promise; otherwise it returns the wait. `build` gets
     * the counter value the request read.
     */
    planningCachedRead: (
      request: FastifyRequest, reply: FastifyReply, repoId: number, key: string, build: (version: number) => Promise<unknown>
    ) => Promise<void> | undefined
  }
}

const JSON_TYPE = 'application/json; charset=utf-8'

/**
 * What a `build` may give instead of a value: its JSON bytes, already serialized as the route's
 * response schema would, and its tag when made otherwise than `etagOf` (plugins/board-bytes.ts
 * makes a board's from the pipelines' kept JSON). `boardRowsOnly`: the answer shows nothing of its
 * repository but its board's pipelines and rows, so a write that changed none of those rows (a
 * title, labels) leaves it good.
 */
export class SerializedAnswer {
  constructor (readonly body: Buffer, readonly etag?: string, readonly boardRowsOnly = false) {}
}

export interface ReadCacheOptions {
  /** the bound on the kept answers, in MiB (READ_CACHE_MB; default 64) */
  megabytes?: number
  /**
   * Write an unchanged GET (no If-None-Match) straight to the socket: the headers set so far
   * (rate limit, CORS), the tag, the type, the length and the bytes. Fastify's onResponse hooks
   * and request log still run; onSend hooks do not, so a host app's compression or added headers
   * would miss these answers. Off unless asked for.
   */
  direct?: boolean
  /**
   * The standalone server's front: with `direct`, a URL answered that way is then answered before
   * routing (docs/development.md, "Reads answered before routing").
   */
  front?: ServerFront
}

/**
 * Serialized answers (boards, issue data) kept per instance and keyed on the change counter, so
 * an unchanged read costs auth, the rate limit and one write of bytes made earlier; any write
 * (this process, the admin CLI, another instance on the same database) moves the counter and the
 * next read rebuilds, except where the write was noted here (this process's, or one another
 * instance said it made) and was confined to other repositories. Each entry keeps its ETag, made once with the bytes.
 */
export default fp<ReadCacheOptions>(async (fastify, opts) => {
  // A write confined to some repositories leaves the others' answers good (cached-answers.ts).
  const entries = new ReadCache(Math.round((opts.megabytes ?? 64) * 1024 * 1024), fastify.planningWrites)
  const { stats } = entries
  if (fastify.hasDecorator('planningMetrics')) fastify.planningMetrics.readCache.stats = () => stats

  const send = (reply: FastifyReply, entry: Entry) => reply.header('etag', entry.etag).type(JSON_TYPE).send(entry.body)
  const path = opts.front === undefined ? undefined : frontReads(fastify, entries, opts.front)
  const write = (request: FastifyRequest, reply: FastifyReply, entry: Entry, repoId: number, key: string) => {
    const headers = reply.getHeaders()
    headers.etag = entry.etag
    headers['content-type'] = JSON_TYPE
    headers['content-length'] = entry.body.length
    path?.remember(request, repoId, key, headers as OutgoingHttpHeaders)
    reply.hijack()
    reply.raw.writeHead(200, headers as OutgoingHttpHeaders)
    reply.raw.end(entry.body)
  }
  const direct = opts.direct === true

  const cachedReply = async (request: FastifyRequest, reply: FastifyReply, repoId: number, key: string, build: (version: number) => Promise<unknown>) => {
    const version = await fastify.planningVersion(request)
    let entry = entries.get(key, version)
    if (entry === undefined) {
      stats.misses++
      const built = await build(version)
      const body = built instanceof SerializedAnswer ? built.body : Buffer.from(reply.serialize(built) as string)
      const previous = entries.peek(key)
      const made = built instanceof SerializedAnswer ? built.etag : undefined
      const etag = previous?.body.equals(body) === true ? previous.etag : made ?? etagOf(body)
      entry = { version, body, etag, bytes: body.length + 2 * key.length + ENTRY_OVERHEAD, repoId }
      if (built instanceof SerializedAnswer && built.boardRowsOnly) entry.boardRowsOnly = true
      // A build that started before a newer one finished never replaces it.
      if (previous === undefined || previous.version <= version) entries.set(key, entry)
    } else {
      stats.hits++
    }
    send(reply, entry)
  }

  /** The answer when the counter, the access and the bytes are all at hand: sent, and true. */
  const answerNow = (request: FastifyRequest, reply: FastifyReply, repoId: number, key: string): boolean => {
    if (fastify.planningAuth.accessNow(request, repoId, 'read') === undefined) return false
    const entry = entries.get(key, fastify.planningVersionNow(request))
    if (entry === undefined) return false
    stats.hits++
    if (direct && request.method === 'GET' && request.headers['if-none-match'] === undefined) write(request, reply, entry, repoId, key)
    else send(reply, entry)
    return true
  }

  fastify.decorate('planningCachedRead', (request: FastifyRequest, reply: FastifyReply, repoId: number, key: string, build: (version: number) => Promise<unknown>) => {
    if (answerNow(request, reply, repoId, key)) return undefined
    return (async () => {
      // PostgreSQL: one wait for the counter, then the same synchronous path.
      if (fastify.planningVersionNow(request) === undefined) {
        await fastify.planningVersion(request)
        if (answerNow(request, reply, repoId, key)) return
      }
      await fastify.planningAuth.requireAccess(request, repoId, 'read')
      await cachedReply(request, reply, repoId, key, build)
    })()
  })
}, { name: 'planning-read-cache', fastify: '5.x', dependencies: ['planning-database', 'planning-auth'] })
