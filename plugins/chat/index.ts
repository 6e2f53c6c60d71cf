import websocket from '@fastify/websocket'
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import type { FastifyInstance } from 'fastify'
import fp from 'fastify-plugin'
import { randomUUID } from 'node:crypto'
import type { ChatEvent } from '../../db/chat/repository.js'
import { isDatabaseUnavailable } from '../../db/engine/engine.js'
import commands from './commands.js'
import { catchUp } from './catch-up.js'
import { chatContext } from './context.js'
import counters from './counters.js'
import filters from './filters.js'
import { ChatHub } from './hub.js'
import live from './live.js'
import messages from './messages.js'
import moderation from './moderation.js'
import queue from './queue.js'
import { SendLimiter } from './send-limiter.js'
import { TimerRunner, type TimerRunnerOptions } from './timer-runner.js'
import timers from './timers.js'

export interface ChatPluginOptions {
  /** WebSocket keepalive ping interval (default 15 s); a client missing one pong is dropped */
  keepaliveMs?: number
  /** sends per user per window (default 20 per 30 s) */
  sendLimit?: { max: number, windowMs: number }
  /** events one `resume` frame replays at most (default 500); the client asks again for the rest */
  resumePage?: number
  /** `resume` frames per socket per window (default 5 per 10 s) */
  resumeLimit?: { max: number, windowMs: number }
  /** the timer runner's tick, lease and clock; `false`: this instance runs no timers */
  timers?: TimerRunnerOptions | false
}

/**
 * With Redis, committed chat events go to every instance: each publishes what it committed and
 * hands its clients what the others published (`seq` comes from the database, so a client can
 * resume on any instance). Without Redis, each instance's clients see its own events only.
 * While Redis is away, this instance's sockets are brought up to date from the store instead;
 * once it is back, every instance catches its sockets up from there (`catchUp`).
 */
async function fanOut (fastify: FastifyInstance, hub: ChatHub, catchUp: () => Promise<void>): Promise<(events: ChatEvent[]) => Promise<void>> {
  const redis = fastify.planningRedis
  if (redis === null) return async (events) => hub.publish(events)
  const origin = randomUUID()
  const channel = `${redis.prefix}chat`
  redis.subscriber.on('message', (from: string, raw: string) => {
    if (from !== channel) return
    const message = JSON.parse(raw) as { origin: string, events?: ChatEvent[], catch_up?: boolean }
    if (message.origin === origin) return
    if (message.catch_up === true) catchUp().catch(() => {}) // it logs its own failures
    else hub.publish(message.events ?? [])
  })
  await redis.subscriber.subscribe(channel)
  const failed = (err: Error): void => fastify.log.warn({ err: err.message }, 'chat catch-up after Redis came back failed')
  // The subscriber back: live events are held from its first moment until the sockets have caught up.
  let subscriberAway = false
  redis.subscriber.on('close', () => { subscriberAway = true })
  redis.subscriber.on('ready', () => {
    if (!subscriberAway) return
    subscriberAway = false
    hub.hold()
    redis.subscriber.subscribe(channel).then(catchUp, failed).finally(() => hub.release())
  })
  // The publisher back: the other instances catch up on what this one committed while it could not publish.
  let clientAway = false
  redis.client.on('close', () => { clientAway = true })
  redis.client.on('ready', () => {
    if (!clientAway) return
    clientAway = false
    redis.client.publish(channel, JSON.stringify({ origin, catch_up: true })).catch(failed)
  })
  return async (events) => {
    // While Redis is away (warned about once by its plugin), from the store: in order, with what others committed.
    if (!redis.available()) {
      await catchUp()
      return
    }
    hub.publish(events)
    await redis.client.publish(channel, JSON.stringify({ origin, events })).catch((err: Error) => fastify.log.warn({ err: err.message }, 'chat fan-out failed'))
  }
}

/**
 * The chat companion API under /api/v1: messages, custom bot commands, moderation (roles, bans,
 * timeouts, message deletion), blocked terms and the live WebSocket feed; and what chat-bot users
 * rely on: counters, timers, pattern and spam filters, permits, the moderation queue, slow mode.
 */
const chatPlugin: FastifyPluginAsyncTypebox<ChatPluginOptions> = async (fastify, opts) => {
  const { chat: repo, users } = fastify.planningStore
  const hub = new ChatHub()
  const resumePage = opts.resumePage ?? 500
  const limiter = new SendLimiter(opts.sendLimit?.max ?? 20, opts.sendLimit?.windowMs ?? 30_000)
  const chat = chatContext(repo, users, hub, limiter, {
    keepaliveMs: opts.keepaliveMs ?? 15_000,
    resumePage,
    resumeLimit: opts.resumeLimit ?? { max: 5, windowMs: 10_000 }
  }, await fanOut(fastify, hub, catchUp(repo, hub, resumePage, fastify.log)))

  if (!fastify.hasDecorator('websocketServer')) {
    await fastify.register(websocket, {
      options: { maxPayload: 64 * 1024 },
      // The database away while a client connects: 1013 Try Again Later, not a dropped socket.
      errorHandler: (err, socket, request) => {
        if (isDatabaseUnavailable(err)) {
          request.log.warn({ err: { message: err.message } }, 'chat live feed refused: the database is unavailable')
          socket.close(1013, 'the database is unavailable; try again later')
        } else {
          request.log.error({ err }, 'chat live feed failed')
          socket.terminate()
        }
      },
      // On shutdown, clients are told why (1001 Going Away), not left with a bare close (1005).
      preClose: function (this: FastifyInstance, done: () => void) {
        for (const client of this.websocketServer.clients) client.close(1001, 'server shutting down')
        this.websocketServer.close(done)
      }
    })
  }

  fastify.addHook('onRequest', (request, reply, done) => {
    // The live feed refuses a cookie-only upgrade from another site before it opens (cross-site WebSocket hijacking).
    if (request.routeOptions.config.selfAuthenticated === true) done(fastify.planningAuth.cookieOnlyRefusal(request, 'a live feed opened'))
    else fastify.planningAuth.requireUser(request, reply, done)
  })
  fastify.addHook('onClose', async () => hub.closeAll(1001, 'server shutting down'))
  if (fastify.hasDecorator('planningMetrics')) fastify.planningMetrics.liveSockets.count = () => hub.size

  const runner = new TimerRunner(repo, chat.publish, fastify.log, opts.timers === false ? {} : opts.timers)
  if (opts.timers !== false) {
    fastify.addHook('onReady', async () => runner.start())
    fastify.addHook('preClose', async () => await runner.stop())
  }

  await fastify.register(messages, { chat })
  await fastify.register(commands, { chat })
  await fastify.register(moderation, { chat })
  await fastify.register(filters, { chat })
  await fastify.register(counters, { chat })
  await fastify.register(timers, { chat, now: runner.now })
  await fastify.register(queue, { chat })
  await fastify.register(live, { chat })
}

export default fp(chatPlugin, { name: 'planning-chat', fastify: '5.x', encapsulate: true, dependencies: ['planning-auth'] })
