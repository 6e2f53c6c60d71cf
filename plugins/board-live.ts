import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { httpErrors } from '@fastify/sensible'
import type { FastifyInstance, FastifyRequest, LightMyRequestResponse } from 'fastify'
import fp from 'fastify-plugin'
import type { OutgoingHttpHeaders, ServerResponse } from 'node:http'
import { WorkspaceParams } from '../schemas/board-reads.js'
import { Type, errorResponses } from '../schemas/common.js'
import { INTERNAL_HEADER, internalHeaderValue } from './core/internal-reads.js'

export interface BoardLiveOptions {
  /** how often the change counter is looked at while a stream is open (default 1,000 ms) */
  tickMs?: number
  /** open streams per process (default 1,000) and per user (default 10) */
  maxStreams?: number
  maxPerUser?: number
}

interface Stream {
  workspace: string
  userId: number
  /** the person's own credential, so every look is theirs: their permissions, their revocations */
  auth: Record<string, string>
  raw: ServerResponse
  seen: string
  /** the titles' part of the last look, by repository, to take again where no write touched it */
  kept: KeptTitles
  busy: boolean
  again: boolean
}

const CHUNK = 100
/**
 * Reads one look has in flight at once. Each title read builds 100 issues' objects and JSON; a
 * workspace of 50,000 issues asked all 500 at once and held them together (about 200 MB of the
 * server's memory at the stream's first look), where a few at a time cost what the page's own reads do.
 */
const LOOK_READS = 4
const HEARTBEAT_MS = 25_000
/** A stream whose reader lets this much pile up unread is closed (it reconnects and reads afresh). */
const MAX_UNSENT = 64 * 1024

/**
 * The board page's live stream (docs/board-page.md, "Live"): Server-Sent Events that say "change"
 * whenever what the page shows of a workspace would read differently. The server watches the
 * change counter (any write, any instance); when it moves, each stream's look is taken again
 * through the page's own reads with the person's credential (cached answers, not counted by the
 * rate limit), so a stream tells nothing of repositories its reader cannot see.
 */
const boardLive: FastifyPluginAsyncTypebox<BoardLiveOptions> = async (fastify, opts) => {
  const tickMs = opts.tickMs ?? 1000
  const maxStreams = opts.maxStreams ?? 1000
  const maxPerUser = opts.maxPerUser ?? 10
  const streams = new Set<Stream>()
  /** streams past the limits whose first look is under way */
  const starting = new Set<{ userId: number }>()
  const prefix = fastify.prefix
  let timer: ReturnType<typeof setInterval> | undefined
  let version: number | undefined
  let ticking = false
  // Said once per outage of the database, not every second of it.
  let failing = false

  const tick = async () => {
    if (ticking) return
    ticking = true
    try {
      const now = await fastify.planningVersionLatest()
      if (failing) fastify.log.info('the board page\'s live stream reads the change counter again')
      failing = false
      if (now === version) return
      version = now
      // Tabs of one person on one workspace share a look.
      const looks = new Map<string, Promise<Look>>()
      for (const stream of [...streams]) await look(stream, looks)
    } catch (err) {
      if (!failing) fastify.log.warn({ err }, 'the board page\'s live stream could not read the change counter; it tries again every tick')
      failing = true
    } finally {
      ticking = false
    }
  }
  const start = () => {
    timer ??= setInterval(() => { tick().catch(() => {}) }, tickMs)
    timer.unref()
  }
  const stopIfIdle = () => {
    if (streams.size > 0 || timer === undefined) return
    clearInterval(timer)
    timer = undefined
    version = undefined
  }

  const send = (stream: Stream, text: string) => {
    if (stream.raw.writableLength > MAX_UNSENT) {
      end(stream)
      return
    }
    stream.raw.write(text)
  }
  const end = (stream: Stream, reason?: string) => {
    if (!streams.delete(stream)) return
    if (reason !== undefined && !stream.raw.destroyed) stream.raw.write(`event: end\ndata: ${JSON.stringify({ reason })}\n\n`)
    stream.raw.end()
    stopIfIdle()
  }

  const look = async (stream: Stream, looks: Map<string, Promise<Look>>): Promise<void> => {
    if (stream.busy) {
      stream.again = true
      return
    }
    stream.busy = true
    try {
      let shared = true
      do {
        stream.again = false
        const key = `${stream.workspace}\n${JSON.stringify(stream.auth)}`
        let seeing = shared ? looks.get(key) : undefined
        if (seeing === undefined) looks.set(key, seeing = fingerprint(fastify, prefix, stream.workspace, stream.auth, stream.kept))
        shared = false
        const seen = await seeing
        if (!streams.has(stream)) return
        if (typeof seen !== 'string') {
          // The store is away: nothing is known, so the stream stays and looks again once it is back.
          if (seen.status >= 500) {
            version = undefined
            return
          }
          end(stream, seen.status === 401 ? 'signed out' : 'the workspace is no longer readable')
          return
        }
        if (seen !== stream.seen) {
          stream.seen = seen
          send(stream, 'event: change\ndata: {}\n\n')
        }
      } while (stream.again)
    } catch (err) {
      fastify.log.warn({ err }, 'the board page\'s live stream could not look at a workspace')
    } finally {
      stream.busy = false
    }
  }

  fastify.addHook('onRequest', fastify.planningAuth.requireUser)
  fastify.addHook('preClose', async () => {
    for (const stream of [...streams]) end(stream, 'the server is shutting down')
  })

  fastify.get('/p2/workspaces/:workspace_id/live', {
    exposeHeadRoute: false,
    schema: {
      tags: ['boards', 'extensions'],
      summary: 'Server-Sent Events: "change" whenever the workspace\'s board, as you can read it, changed (extension)',
      params: WorkspaceParams,
      response: { 200: Type.String({ description: 'text/event-stream: `event: ready`, then `event: change` (data `{}`) after each change; comments as heartbeats' }), ...errorResponses }
    }
  }, async (request, reply) => {
    const user = request.planningUser!
    const auth = credentialOf(fastify, request)
    // The limits first, counting streams still being opened: a refused stream costs no board read.
    const opening = [...streams, ...starting]
    if (opening.length >= maxStreams) throw httpErrors.serviceUnavailable(`this server holds its limit of ${maxStreams} live streams; the page polls instead`)
    if (opening.filter((s) => s.userId === user.id).length >= maxPerUser) {
      throw httpErrors.tooManyRequests(`at most ${maxPerUser} live streams per user are open at once; close a board page`)
    }
    const place = { userId: user.id }
    starting.add(place)
    let seen: Look
    const kept: KeptTitles = { version: undefined, repositories: new Map() }
    try {
      seen = await fingerprint(fastify, prefix, request.params.workspace_id, auth, kept)
    } finally {
      starting.delete(place)
    }
    if (typeof seen !== 'string') {
      // A refusal of the page's own reads is the stream's: 401, 404, or 503 with Retry-After while the store is away.
      if (seen.status >= 500 || seen.status === 401) {
        return await reply.code(seen.status).headers(seen.retryAfter === undefined ? {} : { 'retry-after': seen.retryAfter }).send(seen.body)
      }
      throw httpErrors.notFound(`workspace ${request.params.workspace_id} not found`)
    }
    // The board page opens a workspace's stream once per visit: recentlyViewedWorkspaces (db/workspace-views.ts).
    await fastify.planningStore.workspaceViews.record(user.id, request.params.workspace_id).catch((err: unknown) => { request.log.warn({ err }, 'a workspace view was not recorded') })
    const stream: Stream = { workspace: request.params.workspace_id, userId: user.id, auth, raw: reply.raw, seen, kept, busy: false, again: false }
    reply.hijack()
    reply.raw.writeHead(200, {
      ...reply.getHeaders() as OutgoingHttpHeaders,
      'content-type': 'text/event-stream; charset=utf-8',
      'cache-control': 'no-cache, no-transform',
      'x-accel-buffering': 'no'
    })
    reply.raw.write('retry: 5000\nevent: ready\ndata: {}\n\n')
    streams.add(stream)
    start()
    const heartbeat = setInterval(() => { send(stream, ': still here\n\n') }, HEARTBEAT_MS).unref()
    reply.raw.on('close', () => {
      clearInterval(heartbeat)
      end(stream)
    })
  })
}

/** The request's own credential, to look again later as the same person. */
function credentialOf (fastify: FastifyInstance, request: FastifyRequest): Record<string, string> {
  const token = fastify.planningAuth.tokenOf(request)
  if (token !== undefined) return { 'x-authentication-token': token }
  return { cookie: request.headers.cookie ?? '' }
}

/** The answer that refused the first read: its status, its body, and Retry-After when it came with one. */
interface Refusal { status: number, body: { statusCode: number, error: string, message: string }, retryAfter?: string }
type Look = string | Refusal

/**
 * The titles' tags of a stream's last look, by repository, with the board tag they went with, and
 * the change counter read before that look's reads began.
 */
interface KeptTitles { version: number | undefined, repositories: Map<number, { board: string, titles: string }> }

/**
 * What the page would read, as the tags of its answers: the workspace's repositories, each one's
 * board, and its issues' titles and states. A refusal of the first read is returned as it came.
 * A repository whose board tag is the one `kept` holds, and which every write since `kept.version`
 * left alone (the rule the kept answers follow, plugins/core/cached-answers.ts; an unmoved counter: no write at all), keeps its titles'
 * tags: a write to one repository of a workspace of 50,000 issues reads that repository's titles
 * again, not all 500 reads of them. `kept` is updated to this look.
 */
async function fingerprint (fastify: FastifyInstance, prefix: string, workspace: string, auth: Record<string, string>, kept: KeptTitles): Promise<Look> {
  // Unknown while the store is away: the reads below then answer for it, and nothing is taken again.
  const version = await fastify.planningVersionLatest().catch(() => undefined)
  const before = kept.version
  const known = kept.repositories
  const taken = new Map<number, { board: string, titles: string }>()
  let unavailable: Refusal | undefined
  const lane = lanes(LOOK_READS)
  const read = async (path: string) => await lane(async () => {
    const res = await fastify.inject({ method: 'GET', url: prefix + path, headers: { ...auth, [INTERNAL_HEADER]: internalHeaderValue } })
    if (res.statusCode >= 500) unavailable ??= refusal(res)
    return res
  })
  const repos = await read(`/p2/workspaces/${encodeURIComponent(workspace)}/repositories`)
  if (repos.statusCode !== 200) return refusal(repos)
  const tags = await Promise.all((repos.json<Array<{ id: number }>>()).map(async ({ id }) => {
    const board = await read(`/p2/workspaces/${encodeURIComponent(workspace)}/repositories/${id}/board`)
    if (board.statusCode !== 200) return `${id}:${board.statusCode}`
    const boardTag = String(board.headers.etag)
    const last = known.get(id)
    if (last !== undefined && last.board === boardTag && before !== undefined && version !== undefined &&
      (before === version || fastify.planningWrites.leftAlone(id, before, version))) {
      taken.set(id, last)
      return `${id}:${boardTag}:${last.titles}`
    }
    const numbers = board.json<{ pipelines: Array<{ issues: Array<{ issue_number: number }> }> }>()
      .pipelines.flatMap((p) => p.issues.map((i) => i.issue_number)).sort((a, b) => a - b)
    const chunks = []
    for (let i = 0; i < numbers.length; i += CHUNK) chunks.push(numbers.slice(i, i + CHUNK))
    const issues = await Promise.all(chunks.map(async (chunk) => (await read(`/p1/repositories/${id}/issues?issue_numbers=${chunk.join(',')}`)).headers.etag))
    taken.set(id, { board: boardTag, titles: issues.join(',') })
    return `${id}:${boardTag}:${issues.join(',')}`
  }))
  // A look taken while the store went away is no look: it would differ from the last one for nothing.
  if (unavailable !== undefined) return unavailable
  kept.version = version
  kept.repositories = taken
  return `${String(repos.headers.etag)}|${tags.join('|')}`
}

/** Runs the functions given to it at most `width` at a time, the rest in the order they came. */
function lanes (width: number): <T>(run: () => Promise<T>) => Promise<T> {
  let running = 0
  const waiting: Array<() => void> = []
  return async (run) => {
    if (running >= width) await new Promise<void>((resolve) => waiting.push(resolve))
    else running++
    try {
      return await run()
    } finally {
      // The slot passes straight to the next in line, if any.
      const next = waiting.shift()
      if (next === undefined) running--; else next()
    }
  }
}

function refusal (res: LightMyRequestResponse): Refusal {
  const retryAfter = res.headers['retry-after']
  return { status: res.statusCode, body: res.json<Refusal['body']>(), ...(retryAfter === undefined ? {} : { retryAfter: String(retryAfter) }) }
}

export default fp(boardLive, { name: 'planning-board-live', fastify: '5.x', encapsulate: true, dependencies: ['planning-auth', 'planning-database'] })
