import { PERMISSION_RANK, ROLE_RANK, type ChatCommand, type ChatMember } from '../../db/chat.js'
import { matchTerm } from './terms.js'

export const MAX_MESSAGE = 500

export interface SendInput {
  sender: ChatMember
  /** the message as sent (trimmed here) */
  message: string
  /** takes one send from the sender's budget: 0, or the milliseconds to wait */
  take: () => number
  limit: { max: number, windowMs: number }
  terms: Array<{ term: string }>
  /** the enabled command the first word names, with when it was last used (epoch ms) */
  command?: ChatCommand & { lastUsedAt: number | null }
  now: number
}

export type SendDecision =
  | { ok: false, status: 400 | 403 | 422 | 429, message: string, retryAfterSeconds?: number }
  | { ok: true, text: string, reply?: { commandId: number, text: string } }

/**
 * Whether a chat message may be sent, and what the bot answers: in this order, a ban or timeout
 * (403), an empty or too long text (400), the send limit (429), a blocked term (422); then a command
 * answers when the sender's role allows it and its cooldown has passed.
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
  const command = input.command
  const answers = command !== undefined &&
    ROLE_RANK[sender.role] >= PERMISSION_RANK[command.permission] &&
    (command.lastUsedAt === null || input.now - command.lastUsedAt >= command.cooldown_seconds * 1000)
  if (!answers) return { ok: true, text }
  const reply = command.response.replaceAll('{user}', sender.login).replaceAll('{count}', String(command.use_count + 1))
  return { ok: true, text, reply: { commandId: command.id, text: reply } }
}
