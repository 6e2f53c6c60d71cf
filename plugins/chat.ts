import { httpErrors } from '@fastify/sensible'
import websocket from '@fastify/websocket'
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import type { FastifyRequest } from 'fastify'
import fp from 'fastify-plugin'
import type { WebSocket } from 'ws'
import { ChatHub, CLOSE_UNAUTHORIZED } from '../chat/hub.js'
import { SendLimiter } from '../chat/send-limiter.js'
import { matchTerm, termProblem } from '../chat/terms.js'
import { createChatRepository, PERMISSION_RANK, ROLE_RANK, type ChatEvent, type ChatMember, type ChatRole } from '../db/chat.js'
import { createUsersRepository } from '../db/users.js'
import { Type, ErrorBody, errorResponses } from '../schemas/common.js'
import {
  BanBody, BlockedTerm, ChatCommand, ChatMember as ChatMemberSchema, ChatMessage, CreateCommandBody, IdParams, LoginParams,
  MessagePage, MessagesQuery, RoleBody, SendBody, TermBody, TimeoutBody, UpdateCommandBody
} from '../schemas/chat.js'

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

const MAX_MESSAGE = 500
const KEPT_EVENTS = 10_000

declare module 'fastify' {
  interface FastifyContextConfig {
    /** the route authenticates by itself (the WebSocket feed closes with 4001 instead of a 401) */
    selfAuthenticated?: boolean
  }
}

/**
 * The chat companion API under /api/v1: messages, custom bot commands, moderation (roles, bans,
 * timeouts, message deletion), blocked terms and the live WebSocket feed.
 */
const chat: FastifyPluginAsyncTypebox<ChatPluginOptions> = async (fastify, opts) => {
  const repo = createChatRepository(fastify.planningDb)
  const users = createUsersRepository(fastify.planningDb)
  const hub = new ChatHub()
  const limiter = new SendLimiter(opts.sendLimit?.max ?? 20, opts.sendLimit?.windowMs ?? 30_000)
  const keepaliveMs = opts.keepaliveMs ?? 15_000
  const resumePage = opts.resumePage ?? 500
  const resumeLimit = opts.resumeLimit ?? { max: 5, windowMs: 10_000 }
  const errors = { ...errorResponses, 409: ErrorBody, 422: ErrorBody, 429: ErrorBody }
  const tags = ['chat']

  if (!fastify.hasDecorator('websocketServer')) await fastify.register(websocket, { options: { maxPayload: 64 * 1024 } })

  fastify.addHook('onRequest', async (request) => {
    if (request.routeOptions.config.selfAuthenticated !== true) await fastify.planningAuth.requireUser(request)
  })
  fastify.addHook('onClose', async () => hub.closeAll(1001, 'server shutting down'))

  const publish = (events: ChatEvent[]): void => {
    hub.publish(events)
    if (events.some((e) => e.seq % 1000 === 0)) repo.pruneEvents(KEPT_EVENTS)
  }
  const me = (request: FastifyRequest): ChatMember => repo.member(request.planningUser!.id)!
  const requireRole = (request: FastifyRequest, role: ChatRole): ChatMember => {
    const member = me(request)
    if (ROLE_RANK[member.role] < ROLE_RANK[role]) throw httpErrors.forbidden(`the ${role} chat role is required`)
    return member
  }
  const target = (login: string): ChatMember => {
    const user = users.byLogin(login)
    if (user === undefined) throw httpErrors.notFound(`user '${login}' not found`)
    return repo.member(user.id)!
  }
  /** Moderators act on viewers; the broadcaster on everyone else; nobody on themselves. */
  const moderate = (request: FastifyRequest, login: string): ChatMember => {
    const actor = requireRole(request, 'moderator')
    const subject = target(login)
    if (subject.id === actor.id) throw httpErrors.badRequest('you cannot moderate yourself')
    if (ROLE_RANK[subject.role] >= ROLE_RANK[actor.role]) throw httpErrors.forbidden(`a ${actor.role} cannot moderate a ${subject.role}`)
    return subject
  }

  fastify.get('/messages', {
    schema: { tags, summary: 'Latest messages, oldest to newest', querystring: MessagesQuery, response: { 200: MessagePage, ...errors } }
  }, async (request) => {
    const { limit, before, after } = request.query
    if (before !== undefined && after !== undefined) throw httpErrors.badRequest('querystring: give before or after, not both')
    const page = repo.messages(limit, { before, after })
    return {
      data: page.data,
      pagination: {
        limit,
        before: page.hasOlder ? page.data[0]?.id ?? null : null,
        after: page.data.at(-1)?.id ?? after ?? null,
        has_older: page.hasOlder,
        has_newer: page.hasNewer
      }
    }
  })

  fastify.post('/messages/send', {
    schema: { tags, summary: 'Send a message (commands in it make the bot answer)', body: SendBody, response: { 201: ChatMessage, ...errors } }
  }, async (request, reply) => {
    const sender = me(request)
    if (sender.banned) throw httpErrors.forbidden('you are banned from the chat')
    if (sender.timed_out_until !== null) throw httpErrors.forbidden(`you are timed out until ${sender.timed_out_until}`)
    const text = request.body.message.trim()
    if (text === '') throw httpErrors.badRequest('body/message must not be empty')
    if ([...text].length > MAX_MESSAGE) throw httpErrors.badRequest(`body/message must not be longer than ${MAX_MESSAGE} characters`)
    const wait = limiter.take(sender.id)
    if (wait > 0) {
      reply.header('retry-after', Math.ceil(wait / 1000))
      throw httpErrors.tooManyRequests('more than 20 messages in 30 seconds; slow down')
    }
    const blocked = matchTerm(text, repo.terms())
    if (blocked !== undefined) throw httpErrors.unprocessableEntity(`message blocked by the filter term '${blocked}'`)

    const command = repo.trigger(text.split(/\s+/)[0])
    const now = Date.now()
    const answers = command !== undefined &&
      ROLE_RANK[sender.role] >= PERMISSION_RANK[command.permission] &&
      (command.lastUsedAt === null || now - command.lastUsedAt >= command.cooldown_seconds * 1000)
    const replyText = answers
      ? command.response.replaceAll('{user}', sender.login).replaceAll('{count}', String(command.use_count + 1))
      : undefined
    const { message, events } = repo.send(sender.id, text, answers ? { commandId: command.id, text: replyText! } : undefined)
    publish(events)
    return reply.status(201).send(message)
  })

  fastify.delete('/messages/:id', {
    schema: { tags, summary: 'Delete a message (moderator)', params: IdParams, response: { 204: Type.Unsafe<undefined>({ description: 'empty body' }), ...errors } }
  }, async (request, reply) => {
    const actor = requireRole(request, 'moderator')
    publish([repo.deleteMessage(request.params.id, actor.id)])
    return reply.status(204).send(undefined)
  })

  fastify.get('/commands', {
    schema: { tags, summary: 'Custom commands', response: { 200: Type.Object({ data: Type.Array(ChatCommand) }), ...errors } }
  }, async () => ({ data: repo.commands() }))

  fastify.post('/commands', {
    schema: { tags, summary: 'Create a custom command (moderator)', body: CreateCommandBody, response: { 201: ChatCommand, ...errors } }
  }, async (request, reply) => {
    requireRole(request, 'moderator')
    const { command, event } = repo.createCommand({ ...request.body, command: request.body.command.trim(), response: request.body.response.trim() })
    publish([event])
    return reply.status(201).header('location', `${request.url.replace(/\/$/, '')}/${command.id}`).send(command)
  })

  fastify.get('/commands/:id', {
    schema: { tags, params: IdParams, response: { 200: ChatCommand, ...errors } }
  }, async (request) => repo.command(request.params.id))

  fastify.patch('/commands/:id', {
    schema: { tags, summary: 'Update a command (moderator)', params: IdParams, body: UpdateCommandBody, response: { 200: ChatCommand, ...errors } }
  }, async (request) => {
    requireRole(request, 'moderator')
    const { command, event } = repo.updateCommand(request.params.id, { ...request.body, command: request.body.command?.trim(), response: request.body.response?.trim() })
    publish([event])
    return command
  })

  fastify.delete('/commands/:id', {
    schema: { tags, summary: 'Delete a command (moderator)', params: IdParams, response: { 204: Type.Unsafe<undefined>({ description: 'empty body' }), ...errors } }
  }, async (request, reply) => {
    requireRole(request, 'moderator')
    publish([repo.deleteCommand(request.params.id)])
    return reply.status(204).send(undefined)
  })

  fastify.get('/users/:login', {
    schema: { tags, summary: 'A user\'s chat role and sanctions', params: LoginParams, response: { 200: ChatMemberSchema, ...errors } }
  }, async (request) => target(request.params.login))

  fastify.put('/users/:login/role', {
    schema: { tags, summary: 'Make a user moderator or viewer (broadcaster)', params: LoginParams, body: RoleBody, response: { 200: ChatMemberSchema, ...errors } }
  }, async (request) => {
    requireRole(request, 'broadcaster')
    const subject = target(request.params.login)
    if (subject.role === 'broadcaster') throw httpErrors.badRequest('the broadcaster role is set through the admin API')
    repo.setRole(subject.id, request.body.role)
    return repo.member(subject.id)!
  })

  fastify.post('/users/:login/ban', {
    schema: { tags, summary: 'Ban a user (moderator); the body is optional', params: LoginParams, body: BanBody, response: { 200: ChatMemberSchema, ...errors } },
    preValidation: async (request) => { request.body ??= {} }
  }, async (request) => {
    const subject = moderate(request, request.params.login)
    repo.ban(subject.id, request.body.reason ?? null)
    return repo.member(subject.id)!
  })

  fastify.post('/users/:login/timeout', {
    schema: { tags, summary: 'Time a user out for some seconds (moderator)', params: LoginParams, body: TimeoutBody, response: { 200: ChatMemberSchema, ...errors } }
  }, async (request) => {
    const subject = moderate(request, request.params.login)
    repo.timeout(subject.id, Date.now() + request.body.seconds * 1000)
    return repo.member(subject.id)!
  })

  fastify.post('/users/:login/unban', {
    schema: { tags, summary: 'Lift a ban or timeout (moderator)', params: LoginParams, response: { 200: ChatMemberSchema, ...errors } }
  }, async (request) => {
    const subject = moderate(request, request.params.login)
    repo.unban(subject.id)
    return repo.member(subject.id)!
  })

  fastify.get('/filters/terms', {
    schema: { tags, summary: 'Blocked terms (moderator)', response: { 200: Type.Object({ data: Type.Array(BlockedTerm) }), ...errors } }
  }, async (request) => {
    requireRole(request, 'moderator')
    return { data: repo.terms() }
  })

  fastify.post('/filters/terms', {
    schema: { tags, summary: 'Block a term: case-insensitive whole words, * for any characters (moderator)', body: TermBody, response: { 201: BlockedTerm, ...errors } }
  }, async (request, reply) => {
    const actor = requireRole(request, 'moderator')
    const term = request.body.term.trim()
    const problem = termProblem(term)
    if (problem !== undefined) throw httpErrors.badRequest(problem)
    return reply.status(201).send(repo.addTerm(term, actor.id))
  })

  fastify.delete('/filters/terms/:id', {
    schema: { tags, summary: 'Unblock a term (moderator)', params: IdParams, response: { 204: Type.Unsafe<undefined>({ description: 'empty body' }), ...errors } }
  }, async (request, reply) => {
    requireRole(request, 'moderator')
    repo.removeTerm(request.params.id)
    return reply.status(204).send(undefined)
  })

  fastify.get('/ws', { websocket: true, config: { selfAuthenticated: true }, schema: { tags, summary: 'Live feed (WebSocket; token in access_token)' } }, (socket: WebSocket, request) => {
    const user = fastify.planningAuth.user(request)
    if (user === null) {
      socket.close(CLOSE_UNAUTHORIZED, 'invalid or missing token')
      return
    }
    const seq = repo.latestSeq()
    const member = repo.member(user.id)!
    socket.send(JSON.stringify({ type: 'welcome', seq, keepalive_seconds: keepaliveMs / 1000, user: { id: member.id, login: member.login, role: member.role } }))
    const client = hub.add(socket, seq)
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
    }, keepaliveMs)
    socket.on('close', () => clearInterval(keepalive))
    socket.on('message', (raw) => {
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
        const wait = resumes.take(0)
        if (wait > 0) {
          socket.send(JSON.stringify({ type: 'error', message: `too many resume frames: at most ${resumeLimit.max} per ${resumeLimit.windowMs / 1000} s; retry in ${Math.ceil(wait / 1000)} s` }))
          return
        }
        // One page per resume frame: a client that is far behind asks again from where it got to.
        const missed = repo.eventsAfter(frame.after_seq as number, resumePage + 1)
        if (missed === null) {
          socket.send(JSON.stringify({ type: 'error', message: 'after_seq is older than the kept history; reload with GET /api/v1/messages' }))
          return
        }
        const page = missed.slice(0, resumePage)
        client.lastSeq = Math.min(client.lastSeq, frame.after_seq as number)
        hub.deliver(client, page)
        if (missed.length > page.length) socket.send(JSON.stringify({ type: 'resume_more', after_seq: page.at(-1)!.seq }))
      } else {
        socket.send(JSON.stringify({ type: 'error', message: 'unknown frame; expected {"type": "resume", "after_seq": N} or {"type": "ping"}' }))
      }
    })
  })
}

export default fp(chat, { name: 'planning-chat', fastify: '5.x', encapsulate: true, dependencies: ['planning-auth'] })
