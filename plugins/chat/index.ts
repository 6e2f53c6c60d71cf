import websocket from '@fastify/websocket'
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import fp from 'fastify-plugin'
import commands from './commands.js'
import { chatContext } from './context.js'
import filters from './filters.js'
import { ChatHub } from './hub.js'
import live from './live.js'
import messages from './messages.js'
import moderation from './moderation.js'
import { SendLimiter } from './send-limiter.js'

export interface ChatPluginOptions {
  /** WebSocket keepalive ping interval (default 15 s); a client missing one pong is dropped */
  keepaliveMs?: number
  /** sends per user per window (default 20 per 30 s) */
  sendLimit?: { max: number, windowMs: number }
  /** events one `resume` frame replays at most (default 500); the client asks again for the rest */
  resumePage?: number
  /** `resume` frames per socket per window (default 5 per 10 s) */
  resumeLimit?: { max: number, windowMs: number }
}

/**
 * The chat companion API under /api/v1: messages, custom bot commands, moderation (roles, bans,
 * timeouts, message deletion), blocked terms and the live WebSocket feed.
 */
const chatPlugin: FastifyPluginAsyncTypebox<ChatPluginOptions> = async (fastify, opts) => {
  const { chat: repo, users } = fastify.planningStore
  const hub = new ChatHub()
  const limiter = new SendLimiter(opts.sendLimit?.max ?? 20, opts.sendLimit?.windowMs ?? 30_000)
  const chat = chatContext(repo, users, hub, limiter, {
    keepaliveMs: opts.keepaliveMs ?? 15_000,
    resumePage: opts.resumePage ?? 500,
    resumeLimit: opts.resumeLimit ?? { max: 5, windowMs: 10_000 }
  })

  if (!fastify.hasDecorator('websocketServer')) await fastify.register(websocket, { options: { maxPayload: 64 * 1024 } })

  fastify.addHook('onRequest', async (request) => {
    if (request.routeOptions.config.selfAuthenticated !== true) await fastify.planningAuth.requireUser(request)
  })
  fastify.addHook('onClose', async () => hub.closeAll(1001, 'server shutting down'))

  await fastify.register(messages, { chat })
  await fastify.register(commands, { chat })
  await fastify.register(moderation, { chat })
  await fastify.register(filters, { chat })
  await fastify.register(live, { chat })
}

export default fp(chatPlugin, { name: 'planning-chat', fastify: '5.x', encapsulate: true, dependencies: ['planning-auth'] })
