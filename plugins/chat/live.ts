import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import type { RawData, WebSocket } from 'ws'
import { ROLE_RANK } from '../../db/chat/repository.js'
import { isDatabaseUnavailable } from '../../db/engine/engine.js'
import { ErrorBody } from '../../schemas/common.js'
import { tags, type ChatContext } from './context.js'
import { CLOSE_UNAUTHORIZED } from './hub.js'
import { SendLimiter } from './send-limiter.js'

declare module 'fastify' {
  interface FastifyContextConfig {
    /** the route authenticates by itself (the WebSocket feed closes with 4001 instead of a 401) */
    selfAuthenticated?: boolean
  }
}

/** Frames a client may send before its welcome (they are answered once it is out); more close the socket. */
const MAX_EARLY_FRAMES = 16
const CLOSE_POLICY = 1008

/** The live feed: a welcome frame, then every chat event; `resume` replays what a client missed. */
const live: FastifyPluginAsyncTypebox<{ chat: ChatContext }> = async (fastify, { chat }) => {
  const { repo, hub, keepaliveMs, resumePage, resumeLimit } = chat

  fastify.route({
    method: 'GET',
    url: '/ws',
    config: { selfAuthenticated: true },
    schema: { tags, summary: 'Live feed (WebSocket; token in access_token)', response: { 426: ErrorBody } },
    // A plain GET (no Upgrade header) is told what this is, in the one error shape.
    handler: async (_request, reply) => await reply.status(426).header('upgrade', 'websocket').send({
      statusCode: 426, error: 'Upgrade Required', message: 'this is the chat live feed: connect with a WebSocket (Upgrade: websocket)'
    }),
    wsHandler: async (socket: WebSocket, request) => {
      // Listening from the first moment: a `resume` sent in the client's `open` handler arrives
      // while the user and the latest seq are still being read. It is held and answered, in order, after the welcome.
      const early: RawData[] = []
      let handle: ((raw: RawData) => void) | null = null
      socket.on('message', (raw) => {
        if (handle !== null) handle(raw)
        else if (early.length < MAX_EARLY_FRAMES) early.push(raw)
        else if (socket.readyState === socket.OPEN) socket.close(CLOSE_POLICY, `at most ${MAX_EARLY_FRAMES} frames before the welcome`)
      })
      const user = await fastify.planningAuth.user(request)
      if (user === null) {
        socket.close(CLOSE_UNAUTHORIZED, 'invalid or missing token')
        return
      }
      const member = (await repo.member(user.id))!
      if (socket.readyState !== socket.OPEN) return
      // In the hub before the latest seq is read: what is published meanwhile is held, then sent if newer.
      const client = hub.add(socket, undefined, ROLE_RANK[member.role] >= ROLE_RANK.moderator)
      const seq = await repo.latestSeq()
      if (socket.readyState !== socket.OPEN) return
      socket.send(JSON.stringify({ type: 'welcome', seq, keepalive_seconds: keepaliveMs / 1000, user: { id: member.id, login: member.login, role: member.role } }))
      hub.start(client, seq)
      const resumes = new SendLimiter(resumeLimit.max, resumeLimit.windowMs)
      let alive = true
      socket.on('pong', () => { alive = true })
      const keepalive = setInterval(() => {
        if (!alive) {
          socket.terminate()
          return
        }
        alive = false
        socket.ping()
        // A moderator demoted since connecting stops receiving moderator-only events from here on.
        if (client.moderator) {
          repo.member(user.id).then((now) => { client.moderator = now !== undefined && ROLE_RANK[now.role] >= ROLE_RANK.moderator })
            .catch((err: Error) => request.log.warn({ err: err.message }, 'chat role refresh failed'))
        }
      }, keepaliveMs)
      socket.on('close', () => clearInterval(keepalive))

      const resume = async (afterSeq: number): Promise<void> => {
        const wait = resumes.take(0)
        if (wait > 0) {
          socket.send(JSON.stringify({ type: 'error', message: `too many resume frames: at most ${resumeLimit.max} per ${resumeLimit.windowMs / 1000} s; retry in ${Math.ceil(wait / 1000)} s` }))
          return
        }
        // One page per resume frame: a client that is far behind asks again from where it got to.
        const missed = await repo.eventsAfter(afterSeq, resumePage + 1)
        if (missed === null) {
          socket.send(JSON.stringify({ type: 'error', message: 'after_seq is older than the kept history; reload with GET /api/v1/messages' }))
          return
        }
        const page = missed.slice(0, resumePage)
        client.lastSeq = Math.min(client.lastSeq, afterSeq)
        hub.deliver(client, page)
        if (missed.length > page.length) socket.send(JSON.stringify({ type: 'resume_more', after_seq: page.at(-1)!.seq }))
      }

      handle = (raw) => {
        let frame: { type?: unknown, after_seq?: unknown }
        try {
          frame = JSON.parse(String(raw)) as typeof frame
        } catch {
          socket.send(JSON.stringify({ type: 'error', message: 'frames must be JSON' }))
          return
        }
        if (frame.type === 'ping') {
          socket.send(JSON.stringify({ type: 'pong', seq: client.lastSeq }))
        } else if (frame.type === 'resume' && Number.isSafeInteger(frame.after_seq) && (frame.after_seq as number) >= 0) {
          resume(frame.after_seq as number).catch((err) => {
            if (!isDatabaseUnavailable(err)) {
              request.log.error({ err }, 'chat resume failed')
              return
            }
            socket.send(JSON.stringify({ type: 'error', message: 'the database is unavailable; send the resume frame again in a few seconds' }))
          })
        } else {
          socket.send(JSON.stringify({ type: 'error', message: 'unknown frame; expected {"type": "resume", "after_seq": N} or {"type": "ping"}' }))
        }
      }
      for (const raw of early.splice(0)) handle(raw)
    }
  })
}

export default live
