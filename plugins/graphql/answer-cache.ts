import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import { createHash } from 'node:crypto'
import { ENTRY_OVERHEAD, ReadCache } from '../core/cached-answers.js'

const JSON_TYPE = 'application/json; charset=utf-8'

/** What a cacheable GraphQL request is keyed on, besides the change counter. */
export interface AnswerKey { userId: number, scope: string, query: string, variables?: Record<string, unknown> | null, operationName?: string | null }

/**
 * Answers of GraphQL reads kept per instance like the REST reads' (README, "Read cache"): keyed on
 * the viewer, the document, its variables and the operation, made at a change-counter version, so
 * a repeated read costs auth, the rate limit and a hash; any write (permissions included) moves
 * the counter and the next read runs the document again. Only answers of queries without errors
 * that did not read the clock (a sprint's state moves with time, not with writes) are kept.
 */
type OnViewed = (request: FastifyRequest, userId: number, workspaceIds: readonly string[]) => Promise<void>
export function graphqlAnswers (fastify: FastifyInstance, megabytes: number, onViewed?: OnViewed) {
  const entries = new ReadCache(Math.round(megabytes * 1024 * 1024))
  const keyOf = (k: AnswerKey): string => createHash('sha256')
    .update(`${k.userId}\0${k.scope}\0${k.operationName ?? ''}\0${JSON.stringify(k.variables ?? null)}\0${k.query}`).digest('base64')

  return {
    stats: entries.stats,
    /** The version to build at and the key; sends the kept answer and returns undefined when there is one. */
    async lookup (request: FastifyRequest, reply: FastifyReply, key: AnswerKey): Promise<{ version: number, key: string } | undefined> {
      const version = fastify.planningVersionNow(request) ?? await fastify.planningVersion(request)
      const hashed = keyOf(key)
      const entry = entries.get(hashed, version)
      if (entry === undefined) {
        entries.stats.misses++
        return { version, key: hashed }
      }
      entries.stats.hits++
      if (entry.viewed !== undefined && onViewed !== undefined) await onViewed(request, key.userId, entry.viewed)
      await reply.status(200).type(JSON_TYPE).send(entry.body)
      return undefined
    },
    keep (at: { version: number, key: string }, body: string, viewed?: readonly string[]): void {
      const bytes = Buffer.from(body)
      const previous = entries.peek(at.key)
      if (previous !== undefined && previous.version > at.version) return
      entries.set(at.key, { version: at.version, body: bytes, etag: '', bytes: bytes.length + 2 * at.key.length + ENTRY_OVERHEAD, ...(viewed === undefined ? {} : { viewed }) })
    }
  }
}
