import { httpErrors } from '@fastify/sensible'
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { EmptyBody } from '../../schemas/common.js'
import type { ChatMember, SendPlan } from '../../db/chat/repository.js'
import { Held } from '../../schemas/chat-bot.js'
import { IdParams, MessagePage, MessagesQuery, SendBody, SentMessage } from '../../schemas/chat.js'
import { chatErrors as errors, tags, type ChatContext } from './context.js'
import { cooldownLeft, paceWait } from './pace.js'
import { decideSend } from './send-rules.js'
import { judge, sanction, sanctionText } from './spam-rules.js'
import { countersIn, expand, randomInt } from './variables.js'

/** How long `!permit LOGIN` lets the user post links. */
export const DEFAULT_PERMIT_SECONDS = 60

/** Reading, sending (with the bot's command answers) and deleting messages. */
const messages: FastifyPluginAsyncTypebox<{ chat: ChatContext }> = async (fastify, { chat }) => {
  const { repo } = chat

  fastify.get('/messages', {
    schema: { tags, summary: 'Latest messages, oldest to newest', querystring: MessagesQuery, response: { 200: MessagePage, ...errors } }
  }, async (request) => {
    const { limit, before, after } = request.query
    if (before !== undefined && after !== undefined) throw httpErrors.badRequest('querystring: give before or after, not both')
    const page = await repo.messages(limit, { before, after })
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
    schema: {
      tags,
      summary: 'Send a message (commands in it make the bot answer; a filter may hold it: 202)',
      body: SendBody,
      response: { 201: SentMessage, 202: Held, ...errors }
    }
  }, async (request, reply) => {
    const sender = await chat.me(request)
    const now = Date.now()
    const trimmed = request.body.message.trim()
    const [filterSettings, chatSettings, patterns, terms, command] = await Promise.all([
      repo.filters.settings('filters'), repo.filters.settings('chat'), repo.filters.patterns(), repo.terms(), repo.trigger(trimmed.split(/\s+/)[0])
    ])
    const exempt = filterSettings.exempt_roles.includes(sender.role)
    const permitted = !exempt && filterSettings.links.enabled && await repo.filters.permitted(sender.id, now)
    const repeats = !exempt && filterSettings.repetition.enabled
      ? await repo.filters.repeats(sender.id, trimmed, now - filterSettings.repetition.seconds * 1000)
      : 0
    const decision = decideSend({
      sender,
      message: request.body.message,
      take: () => chat.limiter.take(sender.id),
      limit: chat.limiter,
      terms,
      filter: (text) => judge({ text, role: sender.role, settings: filterSettings, patterns, permitted, repeats }),
      command,
      now
    })
    if (!decision.ok) {
      if (decision.retryAfterSeconds !== undefined) reply.header('retry-after', decision.retryAfterSeconds)
      throw httpErrors.createError(decision.status, decision.message)
    }
    const { hit } = decision
    if (hit !== undefined && hit.action !== 'hold') {
      const { escalation } = filterSettings
      const windowMs = escalation.window_minutes * 60_000
      const { sanction: applied, offenses, events } = await repo.filters.offense(sender.id, hit, now, windowMs, (n) => sanction(hit, escalation.steps, n))
      await chat.publish(events)
      const said = sanctionText(applied, { steps: escalation.steps, windowMinutes: escalation.window_minutes, offenses })
      throw httpErrors.unprocessableEntity(`message blocked by ${hit.detail}${said}`)
    }
    const outcome = await repo.send(sender.id, decision.text, {
      now,
      lookbackMs: Math.max(60_000, chatSettings.slow_seconds * 1000),
      pace: (state) => paceWait(chatSettings, { role: sender.role, ...state }, now),
      hold: hit?.filter,
      reply: decision.reply === undefined ? undefined : answer(decision.reply, sender, now),
      permit: decision.permit === undefined ? undefined : await permitFor(decision.permit.login, now)
    })
    if (outcome.kind === 'wait') {
      reply.header('retry-after', outcome.waitSeconds)
      throw httpErrors.tooManyRequests(`${outcome.reason}; wait ${outcome.waitSeconds} s`)
    }
    await chat.publish(outcome.events)
    if (outcome.kind === 'held') return reply.status(202).send({ status: 'held', id: outcome.id, message: `held for a moderator by ${hit!.detail}` })
    const sent = outcome.cooldownSeconds === undefined ? outcome.message : { ...outcome.message, command_cooldown_seconds: outcome.cooldownSeconds }
    return reply.status(201).send(sent)
  })

  /** How the bot answers a command: its cooldowns for this sender, and its variables expanded. */
  function answer (command: { commandId: number, response: string, args: string[] }, sender: ChatMember, now: number): NonNullable<SendPlan['reply']> {
    return {
      commandId: command.commandId,
      cooldown: (use) => cooldownLeft({ role: sender.role, ...use }, now),
      counters: countersIn(command.response),
      render: ({ count, counters }) => expand(command.response, { user: sender.login, args: command.args, count, counters, now, random: randomInt })
    }
  }

  /** `!permit LOGIN`: the default permit, or the bot saying there is no such user. */
  async function permitFor (login: string, now: number): Promise<NonNullable<SendPlan['permit']>> {
    const user = await chat.users.byLogin(login)
    const until = now + DEFAULT_PERMIT_SECONDS * 1000
    if (user === undefined) return { until, reply: `there is no user named ${[...login].slice(0, 40).join('')}` }
    return { userId: user.id, until, reply: `@${user.login} may post links for ${DEFAULT_PERMIT_SECONDS} seconds` }
  }

  fastify.delete('/messages/:id', {
    schema: { tags, summary: 'Delete a message (moderator)', params: IdParams, response: { 204: EmptyBody, ...errors } }
  }, async (request, reply) => {
    const actor = await chat.requireRole(request, 'moderator')
    await chat.publish([await repo.deleteMessage(request.params.id, actor.id)])
    return reply.status(204).send(undefined)
  })
}

export default messages
