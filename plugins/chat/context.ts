import { httpErrors } from '@fastify/sensible'
import type { FastifyRequest } from 'fastify'
import { ROLE_RANK, type ChatEvent, type ChatMember, type ChatRepository, type ChatRole } from '../../db/chat/repository.js'
import type { UsersRepository } from '../../db/users.js'
import { ErrorBody, errorResponses } from '../../schemas/common.js'
import type { ChatHub } from './hub.js'
import type { SendLimiter } from './send-limiter.js'

/** What the chat's route files share: storage, the live hub, the send limiter and the role checks. */
export interface ChatContext {
  repo: ChatRepository
  users: UsersRepository
  hub: ChatHub
  limiter: SendLimiter
  keepaliveMs: number
  resumePage: number
  resumeLimit: { max: number, windowMs: number }
  publish: (events: ChatEvent[]) => Promise<void>
  me: (request: FastifyRequest) => Promise<ChatMember>
  requireRole: (request: FastifyRequest, role: ChatRole) => Promise<ChatMember>
  target: (login: string) => Promise<ChatMember>
  moderate: (request: FastifyRequest, login: string) => Promise<ChatMember>
}

export const chatErrors = { ...errorResponses, 409: ErrorBody, 422: ErrorBody, 429: ErrorBody }
export const tags = ['chat']

const KEPT_EVENTS = 10_000

type LiveOptions = Pick<ChatContext, 'keepaliveMs' | 'resumePage' | 'resumeLimit'>

/** `fanOut` hands committed events to this instance's sockets and carries them to the other instances (Redis pub/sub), when there are any. */
export function chatContext (
  repo: ChatRepository, users: UsersRepository, hub: ChatHub, limiter: SendLimiter, live: LiveOptions,
  fanOut: (events: ChatEvent[]) => Promise<void> = async (events) => hub.publish(events)
): ChatContext {
  const me = async (request: FastifyRequest): Promise<ChatMember> => (await repo.member(request.planningUser!.id))!
  const requireRole = async (request: FastifyRequest, role: ChatRole): Promise<ChatMember> => {
    const member = await me(request)
    if (ROLE_RANK[member.role] < ROLE_RANK[role]) throw httpErrors.forbidden(`the ${role} chat role is required`)
    return member
  }
  const target = async (login: string): Promise<ChatMember> => {
    const user = await users.byLogin(login)
    if (user === undefined) throw httpErrors.notFound(`user '${login}' not found`)
    return (await repo.member(user.id))!
  }
  return {
    repo,
    users,
    hub,
    limiter,
    ...live,
    async publish (events) {
      await fanOut(events)
      if (events.some((e) => e.seq % 1000 === 0)) await repo.pruneEvents(KEPT_EVENTS)
    },
    me,
    requireRole,
    target,
    /** Moderators act on viewers; the broadcaster on everyone else; nobody on themselves. */
    async moderate (request, login) {
      const actor = await requireRole(request, 'moderator')
      const subject = await target(login)
      if (subject.id === actor.id) throw httpErrors.badRequest('you cannot moderate yourself')
      if (ROLE_RANK[subject.role] >= ROLE_RANK[actor.role]) throw httpErrors.forbidden(`a ${actor.role} cannot moderate a ${subject.role}`)
      return subject
    }
  }
}
