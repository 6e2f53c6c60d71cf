import { sql } from 'kysely'
import type { Static } from '../../schemas/common.js'
import type { Counter as CounterSchema } from '../../schemas/chat-bot.js'
import { appendEvent, type ChatEvent } from './log.js'
import { NotFound } from '../errors.js'
import { nowIso } from '../ids.js'
import { atomic, type Executor } from '../engine/transaction.js'

export type Counter = Static<typeof CounterSchema>

const toCounter = (row: { name: string, value: number, updated_at: string }): Counter => ({ ...row, value: Number(row.value) })

/** Named counters (kept lower-cased): read by `{count NAME}`, changed by commands and moderators. */
export function createChatCountersRepository (db: Executor) {
  const one = async (trx: Executor, name: string): Promise<Counter | undefined> => {
    const row = await trx.selectFrom('chat_counters').selectAll().where('name', '=', name.toLowerCase()).executeTakeFirst()
    return row === undefined ? undefined : toCounter(row)
  }
  return {
    list: async (): Promise<Counter[]> => (await db.selectFrom('chat_counters').selectAll().orderBy('name').limit(1000).execute()).map(toCounter),

    async get (name: string): Promise<Counter> {
      const counter = await one(db, name)
      if (counter === undefined) throw new NotFound(`counter '${name}' not found`)
      return counter
    },

    async set (name: string, value: number): Promise<{ counter: Counter, event: ChatEvent }> {
      return await atomic(db, async (trx) => {
        const updatedAt = nowIso()
        await trx.insertInto('chat_counters').values({ name: name.toLowerCase(), value, updated_at: updatedAt })
          .onConflict((oc) => oc.column('name').doUpdateSet({ value, updated_at: updatedAt })).execute()
        const counter = (await one(trx, name))!
        return { counter, event: await appendEvent(trx, 'counter.updated', counter) }
      })
    },

    /** Adds to a counter (one atomic statement; a new counter starts at 0), in the caller's transaction. */
    async add (name: string, add: number): Promise<ChatEvent> {
      const updatedAt = nowIso()
      await db.insertInto('chat_counters').values({ name: name.toLowerCase(), value: add, updated_at: updatedAt })
        .onConflict((oc) => oc.column('name').doUpdateSet({ value: sql`chat_counters.value + ${add}`, updated_at: updatedAt })).execute()
      return await appendEvent(db, 'counter.updated', (await one(db, name))!)
    },

    /** The values of some counters by name (missing ones left out). */
    async values (names: string[]): Promise<Record<string, number>> {
      if (names.length === 0) return {}
      const rows = await db.selectFrom('chat_counters').select(['name', 'value']).where('name', 'in', names).execute()
      return Object.fromEntries(rows.map((r) => [r.name, Number(r.value)]))
    }
  }
}
