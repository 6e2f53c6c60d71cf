import type { Static } from '../../schemas/common.js'
import type { HeldMessage as HeldSchema } from '../../schemas/chat-bot.js'
import { appendEvent, postMessage, type ChatEvent } from './log.js'
import { Conflict, NotFound } from '../errors.js'
import { nowIso } from '../ids.js'
import { atomic, type Executor } from '../engine/transaction.js'

export type HeldMessage = Static<typeof HeldSchema>
export type HeldStatus = HeldMessage['status']

function rows (db: Executor) {
  return db.selectFrom('chat_held as h').leftJoin('users as u', 'u.id', 'h.user_id').leftJoin('users as r', 'r.id', 'h.resolved_by')
    .select(['h.id', 'h.user_id', 'u.login', 'h.text', 'h.filter', 'h.status', 'h.held_at', 'h.resolved_by', 'r.login as resolver', 'h.resolved_at', 'h.message_id'])
}

type Row = Awaited<ReturnType<ReturnType<typeof rows>['execute']>>[number]

const toHeld = (row: Row): HeldMessage => ({
  id: Number(row.id),
  user: { id: Number(row.user_id ?? 0), login: row.login ?? 'unknown' },
  text: row.text,
  filter: row.filter,
  status: row.status,
  held_at: row.held_at,
  resolved_by: row.resolved_by === null ? null : { id: Number(row.resolved_by), login: row.resolver ?? 'unknown' },
  resolved_at: row.resolved_at,
  message_id: row.message_id === null ? null : Number(row.message_id)
})

/** The moderation queue: messages a filter held, until a moderator approves or denies them. */
export function createChatHeldRepository (db: Executor) {
  async function one (id: number, trx: Executor = db): Promise<HeldMessage> {
    const row = await rows(trx).where('h.id', '=', id).executeTakeFirst()
    if (row === undefined) throw new NotFound(`held message ${id} not found`)
    return toHeld(row)
  }
  return {
    one,

    /** Newest first, by status (`all`: every one), `before` an id for the next page. */
    async list (status: HeldStatus | 'all', limit: number, before?: number): Promise<HeldMessage[]> {
      let query = rows(db)
      if (status !== 'all') query = query.where('h.status', '=', status)
      if (before !== undefined) query = query.where('h.id', '<', before)
      return (await query.orderBy('h.id', 'desc').limit(limit).execute()).map(toHeld)
    },

    /**
     * Approves (the message is published as if just sent) or denies a pending message; who and
     * when are kept. Only a pending message changes, in one statement, so two moderators acting at
     * once cannot both resolve it.
     */
    async resolve (id: number, by: number, approve: boolean): Promise<{ held: HeldMessage, events: ChatEvent[] }> {
      return await atomic(db, async (trx) => {
        const changed = await trx.updateTable('chat_held').set({ status: approve ? 'approved' : 'denied', resolved_by: by, resolved_at: nowIso() })
          .where('id', '=', id).where('status', '=', 'pending').executeTakeFirst()
        if (Number(changed.numUpdatedRows) === 0) {
          const held = await one(id, trx)
          throw new Conflict(`held message ${id} was already ${held.status}`)
        }
        const events: ChatEvent[] = []
        const held = await one(id, trx)
        if (approve && held.user.id !== 0) {
          const posted = await postMessage(trx, held.user.id, held.text, 'user')
          await trx.updateTable('chat_held').set({ message_id: posted.message.id }).where('id', '=', id).execute()
          events.push(posted.event)
        }
        const resolved = await one(id, trx)
        events.push(await appendEvent(trx, 'held.resolved', resolved))
        return { held: resolved, events }
      })
    }
  }
}
