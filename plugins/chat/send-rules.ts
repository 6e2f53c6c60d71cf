import { PERMISSION_RANK, ROLE_RANK, type ChatCommand, type ChatMember } from '../../db/chat/repository.js'
import type { FilterHit } from './spam-rules.js'
import { matchTerm } from './terms.js'

export const MAX_MESSAGE = 500
export const PERMIT_TRIGGER = '!permit'

export interface SendInput {
  sender: ChatMember
  /** the message as sent (trimmed here) */
  message: string
  /** takes one send from the sender's budget: 0, or the milliseconds to wait */
  take: () => number
  limit: { max: number, windowMs: number }
  terms: Array<{ term: string }>
  /** the filter the trimmed text trips (patterns, links, caps, repetition), if any */
  filter?: (text: string) => FilterHit | undefined
  /** the enabled command the first word names */
  command?: ChatCommand
  now: number
}

export type SendDecision =
  | { ok: false, status: 400 | 403 | 422 | 429, message: string, retryAfterSeconds?: number }
  | {
    ok: true
    text: string
    /** a filter that refuses, times out or holds the message */
    hit?: FilterHit
    /** the command to answer, cooldowns permitting: its response and the words after the trigger */
    reply?: { commandId: number, response: string, args: string[] }
    /** `!permit LOGIN` by a moderator */
    permit?: { login: string }
  }

/**
 * Whether a chat message may be sent, and what the bot answers: in this order, a ban or timeout
 * (403), an empty or too long text (400), the send limit (429), a blocked term (422), the other
 * filters; then a command answers when the sender's role allows it (its cooldowns are decided
 * where the uses are stored), and a moderator's `!permit LOGIN` grants a link permit.
 */
export function decideSend (input: SendInput): SendDecision {
  const { sender } = input
  if (sender.banned) return { ok: false, status: 403, message: 'you are banned from the chat' }
  if (sender.timed_out_until !== null) return { ok: false, status: 403, message: `you are timed out until ${sender.timed_out_until}` }
  const text = input.message.trim()
  if (text === '') return { ok: false, status: 400, message: 'body/message must not be empty' }
  if ([...text].length > MAX_MESSAGE) return { ok: false, status: 400, message: `body/message must not be longer than ${MAX_MESSAGE} characters` }
  const wait = input.take()
  if (wait > 0) {
    const window = input.limit.windowMs / 1000
    return { ok: false, status: 429, message: `more than ${input.limit.max} messages in ${window} seconds; slow down`, retryAfterSeconds: Math.ceil(wait / 1000) }
  }
  const blocked = matchTerm(text, input.terms)
  if (blocked !== undefined) return { ok: false, status: 422, message: `message blocked by the filter term '${blocked}'` }
  const hit = input.filter?.(text)
  if (hit !== undefined) return { ok: true, text, hit }
  const [first, ...args] = text.split(/\s+/)
  const command = input.command
  const isModerator = ROLE_RANK[sender.role] >= ROLE_RANK.moderator
  if (command === undefined && isModerator && first.toLowerCase() === PERMIT_TRIGGER && args.length > 0) {
    return { ok: true, text, permit: { login: args[0].replace(/^@/, '') } }
  }
  if (command === undefined || ROLE_RANK[sender.role] < PERMISSION_RANK[command.permission]) return { ok: true, text }
  return { ok: true, text, reply: { commandId: command.id, response: command.response, args } }
}
