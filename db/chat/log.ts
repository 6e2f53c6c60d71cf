import { sql } from 'kysely'
import type { Static } from '../../schemas/common.js'
import type { ChatMessage as ChatMessageSchema, ChatRole as ChatRoleSchema } from '../../schemas/chat.js'
import { isUniqueViolation } from '../engine/engine.js'
import { Conflict } from '../errors.js'
import { nowIso } from '../ids.js'
import type { Executor } from '../engine/transaction.js'

type ChatRole = Static<typeof ChatRoleSchema>
type ChatMessage = Static<typeof ChatMessageSchema>
type MessageSource = ChatMessage['source']

/** The author shown on messages the bot posts. */
export const BOT = { id: 0, login: 'bot', role: 'bot' } as const

/** One entry of the live feed: what WebSocket clients receive and can replay by `seq`. */
export interface ChatEvent { seq: number, type: string, data: unknown }

/** Appends an event to the feed's log, in the caller's transaction. */
export async function appendEvent (trx: Executor, type: string, data: unknown): Promise<ChatEvent> {
  const { seq } = await trx.insertInto('chat_events').values({ type, data: JSON.stringify(data), created_at: nowIso() }).returning('seq').executeTakeFirstOrThrow()
  return { seq: Number(seq), type, data }
}

export function messageRows (db: Executor) {
  return db.selectFrom('chat_messages as m').leftJoin('users as u', 'u.id', 'm.user_id').leftJoin('chat_members as c', 'c.user_id', 'm.user_id')
    .select(['m.id', 'm.user_id', 'u.login', sql<ChatRole>`coalesce(c.role, 'viewer')`.as('role'), 'm.text', 'm.sent_at', 'm.source'])
    .where('m.deleted_at', 'is', null)
}

type MessageRow = Awaited<ReturnType<ReturnType<typeof messageRows>['execute']>>[number]

export const toMessage = (row: MessageRow): ChatMessage => ({
  id: Number(row.id),
  user: row.user_id === null ? { ...BOT } : { id: Number(row.user_id), login: row.login ?? 'unknown', role: row.role ?? 'viewer' },
  text: row.text,
  sent_at: row.sent_at,
  source: row.source
})

/** Stores a message (the bot's when `userId` is null) and its `message.created` event. */
export async function postMessage (
  trx: Executor, userId: number | null, text: string, source: MessageSource
): Promise<{ message: ChatMessage, event: ChatEvent }> {
  const { id } = await trx.insertInto('chat_messages').values({ user_id: userId, text, source, sent_at: nowIso(), deleted_at: null, deleted_by: null })
    .returning('id').executeTakeFirstOrThrow()
  const message = toMessage(await messageRows(trx).where('m.id', '=', id).executeTakeFirstOrThrow())
  return { message, event: await appendEvent(trx, 'message.created', message) }
}

/** Runs a write whose unique key another writer may take first; that race is a conflict too. */
export async function unique<T> (message: string, fn: () => Promise<T>): Promise<T> {
  try {
    return await fn()
  } catch (err) {
    if (isUniqueViolation(err)) throw new Conflict(message)
    throw err
  }
}

export const sameText = (column: string, value: string) => sql<boolean>`lower(${sql.ref(column)}) = lower(${value})`

/**
 * Makes sure the member's row exists and locks it for the rest of the transaction (PostgreSQL
 * row lock; SQLite has one writer), so what is read about the member next decides one write at a
 * time. Records when the member was first seen. Returns that time (epoch ms).
 */
export async function lockMember (trx: Executor, userId: number, now: number): Promise<number> {
  const seen = new Date(now).toISOString()
  await trx.insertInto('chat_members').values({ user_id: userId, ban_reason: null, timeout_until: null, first_seen_at: seen })
    .onConflict((oc) => oc.column('user_id').doUpdateSet({ first_seen_at: sql`coalesce(chat_members.first_seen_at, ${seen})` })).execute()
  const row = await trx.selectFrom('chat_members').select('first_seen_at').where('user_id', '=', userId).executeTakeFirstOrThrow()
  return Date.parse(row.first_seen_at ?? seen)
}
