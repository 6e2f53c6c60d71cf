import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import { createHash } from 'node:crypto'
import { ENTRY_OVERHEAD, ReadCache } from '../core/cached-answers.js'

const JSON_TYPE = 'application/json; charset=utf-8'

/** What a cacheable GraphQL request is keyed on, besides the change counter. */
export interface AnswerKey {
  userId: number
  scope: string
  query: string
  variables?: Record<string, unknown> | null
  operationName?: string | null
  /** the address links in the answer are made on (PUBLIC_URL, else the request's own protocol and host) */
  origin: string
}

/** What a document being run will answer: its bytes when they were kept, else undefined. */
interface Shared { body: Buffer, viewed?: readonly string[], favorites?: string }
interface Running { version: number, answer: Promise<Shared | undefined>, settle: (shared: Shared | undefined) => void }

/** The version a miss runs its document at and its key; `running` when others asking the same wait for it. */
export interface Miss { version: number, key: string, running?: Running }

/**
 * Answers of GraphQL reads kept per instance like the REST reads' (README, "Read cache"): keyed on
 * the viewer, the document, its variables, the operation and the address its links are made on
 * (a request's own when PUBLIC_URL is not set), made at a change-counter version, so
 * a repeated read costs auth, the rate limit and a hash; any write (permissions included) moves
 * the counter and the next read runs the document again. Only answers of queries without errors
 * that did not read the clock (a sprint's state moves with time, not with writes) are kept.
 * Requests that miss while the same key is being run at the same version wait for that run and send
 * its answer: after a write, 50 clients polling one page run it once, not 50 times side by side.
 * The viewer's favorites change without moving the counter: an answer that read them is sent again
 * only while `favoritesOf` the viewer is what it read (one small read instead of the document).
 */
type OnViewed = (request: FastifyRequest, userId: number, workspaceIds: readonly string[]) => Promise<void>
type FavoritesOf = (userId: number) => Promise<string>
export function graphqlAnswers (fastify: FastifyInstance, megabytes: number, onViewed?: OnViewed, favoritesOf?: FavoritesOf) {
  const entries = new ReadCache(Math.round(megabytes * 1024 * 1024))
  const running = new Map<string, Running>()
  const keyOf = (k: AnswerKey): string => createHash('sha256')
    .update(`${k.userId}\0${k.scope}\0${k.origin}\0${k.operationName ?? ''}\0${JSON.stringify(k.variables ?? null)}\0${k.query}`).digest('base64')
  const send = async (request: FastifyRequest, reply: FastifyReply, userId: number, shared: Shared): Promise<void> => {
    entries.stats.hits++
    if (shared.viewed !== undefined && onViewed !== undefined) await onViewed(request, userId, shared.viewed)
    await reply.status(200).type(JSON_TYPE).send(shared.body)
  }

  const current = async (userId: number, shared: Shared): Promise<boolean> =>
    shared.favorites === undefined || favoritesOf === undefined || await favoritesOf(userId) === shared.favorites

  return {
    stats: entries.stats,
    /** The key kept answers are found under. */
    keyOf,
    /** The version to build at and the key; sends the kept (or just made) answer and returns undefined when there is one. */
    async lookup (request: FastifyRequest, reply: FastifyReply, userId: number, hashed: string): Promise<Miss | undefined> {
      const version = fastify.planningVersionNow(request) ?? await fastify.planningVersion(request)
      const entry = entries.get(hashed, version)
      if (entry !== undefined && await current(userId, entry)) {
        await send(request, reply, userId, entry)
        return undefined
      }
      const ahead = running.get(hashed)
      if (ahead !== undefined && ahead.version === version) {
        const shared = await ahead.answer
        if (shared !== undefined && await current(userId, shared)) {
          await send(request, reply, userId, shared)
          return undefined
        }
        // not keepable (an error, the clock) or favorites changed since: every request runs it itself
        entries.stats.misses++
        return { version, key: hashed }
      }
      entries.stats.misses++
      let settle: Running['settle'] = () => {}
      const answer = new Promise<Shared | undefined>((resolve) => { settle = resolve })
      const run: Running = { version, answer, settle }
      if (ahead === undefined || ahead.version < version) running.set(hashed, run)
      return { version, key: hashed, running: run }
    },
    /** The kept bytes under `hashed` when they hold at `version` and sending them takes nothing more (no workspace view to record, no favorites to compare). */
    plainNow (hashed: string, version: number): Buffer | undefined {
      const entry = entries.get(hashed, version)
      return entry === undefined || entry.viewed !== undefined || entry.favorites !== undefined ? undefined : entry.body
    },
    /** Counts an answer `plainNow` gave, sent before routing. */
    answeredBeforeRouting (): void {
      entries.stats.hits++
      entries.stats.beforeRouting++
    },
    keep (at: Miss, body: string, viewed?: readonly string[], favorites?: string): void {
      const bytes = Buffer.from(body)
      const read = { ...(viewed === undefined ? {} : { viewed }), ...(favorites === undefined ? {} : { favorites }) }
      at.running?.settle({ body: bytes, ...read })
      const previous = entries.peek(at.key)
      if (previous !== undefined && previous.version > at.version) return
      entries.set(at.key, { version: at.version, body: bytes, etag: '', bytes: bytes.length + 2 * at.key.length + ENTRY_OVERHEAD, ...read })
    },
    /** The run is over, kept or not: requests still waiting for it go on. */
    finish (at: Miss): void {
      if (at.running === undefined) return
      at.running.settle(undefined)
      if (running.get(at.key) === at.running) running.delete(at.key)
    }
  }
}
