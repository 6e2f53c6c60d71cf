import { sql } from 'kysely'
import type { Static } from '../../schemas/common.js'
import type { CreateTimerBody, Timer as TimerSchema, UpdateTimerBody } from '../../schemas/chat-bot.js'
import { appendEvent, postMessage, sameText, unique, type ChatEvent } from './log.js'
import { Conflict, NotFound } from '../errors.js'
import { nowIso } from '../ids.js'
import { atomic, type Executor } from '../engine/transaction.js'

export type Timer = Static<typeof TimerSchema>
export type TimerInput = Static<typeof CreateTimerBody>
export type TimerChange = Static<typeof UpdateTimerBody>

interface TimerRow {
  id: number
  name: string
  message: string
  interval_minutes: number
  min_lines: number
  enabled: number
  runs: number
  last_run_at: number
  last_message_id: number
  created_at: string
  updated_at: string
}

const COLUMNS = ['id', 'name', 'message', 'interval_minutes', 'min_lines', 'enabled', 'runs', 'last_run_at', 'last_message_id', 'created_at', 'updated_at'] as const

const toTimer = (row: TimerRow): Timer => {
  const last = Number(row.last_run_at)
  return {
    id: Number(row.id),
    name: row.name,
    message: row.message,
    interval_minutes: row.interval_minutes,
    min_lines: row.min_lines,
    enabled: row.enabled === 1,
    runs: Number(row.runs),
    last_run_at: new Date(last).toISOString(),
    next_run_at: new Date(last + row.interval_minutes * 60_000).toISOString(),
    created_at: row.created_at,
    updated_at: row.updated_at
  }
}

/** What a due check needs of a timer. */
export interface DueTimer { id: number, interval_minutes: number, min_lines: number, enabled: boolean, last_run_at: number, runs: number, message: string }

/**
 * Timers: the bot posts a message every so often. Runs are stored (`last_run_at`, `runs`), and each
 * instance runs only the timers it holds the lease of, so one run happens once, by one instance,
 * restarts included.
 */
export function createChatTimersRepository (db: Executor) {
  async function row (trx: Executor, id: number): Promise<TimerRow> {
    const found = await trx.selectFrom('chat_timers').select(COLUMNS).where('id', '=', id).executeTakeFirst()
    if (found === undefined) throw new NotFound(`timer ${id} not found`)
    return found
  }
  async function sameName (trx: Executor, name: string, except?: number): Promise<void> {
    const existing = await trx.selectFrom('chat_timers').select('id').where(sameText('name', name)).executeTakeFirst()
    if (existing !== undefined && Number(existing.id) !== except) throw new Conflict(`a timer named '${name}' already exists (id ${existing.id})`)
  }
  return {
    list: async (): Promise<Timer[]> => (await db.selectFrom('chat_timers').select(COLUMNS).orderBy('id').execute()).map(toTimer),
    get: async (id: number): Promise<Timer> => toTimer(await row(db, id)),

    /** A new timer; its first run comes one interval after `now` (epoch ms). */
    async create (input: TimerInput, now: number): Promise<{ timer: Timer, event: ChatEvent }> {
      return await unique(`a timer named '${input.name}' already exists`, async () => await atomic(db, async (trx) => {
        await sameName(trx, input.name)
        const latest = await trx.selectFrom('chat_messages').select(sql<number | null>`max(id)`.as('id')).executeTakeFirst()
        const at = nowIso()
        const { id } = await trx.insertInto('chat_timers').values({
          name: input.name,
          message: input.message,
          interval_minutes: input.interval_minutes,
          min_lines: input.min_lines ?? 0,
          enabled: input.enabled === false ? 0 : 1,
          last_run_at: now,
          last_message_id: Number(latest?.id ?? 0),
          lease_owner: null,
          lease_until: null,
          created_at: at,
          updated_at: at
        }).returning('id').executeTakeFirstOrThrow()
        const timer = toTimer(await row(trx, Number(id)))
        return { timer, event: await appendEvent(trx, 'timer.created', timer) }
      }))
    },

    async update (id: number, change: TimerChange): Promise<{ timer: Timer, event: ChatEvent }> {
      return await unique(`a timer named '${change.name ?? ''}' already exists`, async () => await atomic(db, async (trx) => {
        const was = await row(trx, id)
        if (change.name !== undefined) await sameName(trx, change.name, id)
        await trx.updateTable('chat_timers').set({
          name: change.name ?? was.name,
          message: change.message ?? was.message,
          interval_minutes: change.interval_minutes ?? was.interval_minutes,
          min_lines: change.min_lines ?? was.min_lines,
          enabled: change.enabled === undefined ? was.enabled : change.enabled ? 1 : 0,
          updated_at: nowIso()
        }).where('id', '=', id).execute()
        const timer = toTimer(await row(trx, id))
        return { timer, event: await appendEvent(trx, 'timer.updated', timer) }
      }))
    },

    async remove (id: number): Promise<ChatEvent> {
      return await atomic(db, async (trx) => {
        await row(trx, id)
        await trx.deleteFrom('chat_timers').where('id', '=', id).execute()
        return await appendEvent(trx, 'timer.deleted', { id })
      })
    },

    /**
     * Takes or renews the lease of every enabled timer that is free, expired or already this
     * owner's (one statement each way), and returns the ones this owner holds.
     */
    async lease (owner: string, now: number, leaseMs: number): Promise<DueTimer[]> {
      await db.updateTable('chat_timers').set({ lease_owner: owner, lease_until: now + leaseMs }).where('enabled', '=', 1)
        .where((eb) => eb.or([eb('lease_owner', 'is', null), eb('lease_owner', '=', owner), eb('lease_until', '<', now)])).execute()
      const rows = await db.selectFrom('chat_timers').select(COLUMNS).where('lease_owner', '=', owner).where('enabled', '=', 1).orderBy('id').execute()
      return rows.map((r) => ({ ...r, id: Number(r.id), enabled: true, last_run_at: Number(r.last_run_at), runs: Number(r.runs) }))
    },

    /** Gives up this owner's leases (on shutdown), so another instance takes them at once. */
    async release (owner: string): Promise<void> {
      await db.updateTable('chat_timers').set({ lease_owner: null, lease_until: null }).where('lease_owner', '=', owner).execute()
    },

    /**
     * Runs one timer if it is due: `due` decides from the stored timer and the user messages since
     * its last run; the bot's message, the run's record and the events commit together. The row
     * is claimed with a compare-and-set on `last_run_at` while this owner's lease is valid, so a
     * run is never made twice.
     */
    async run (
      id: number, owner: string, now: number, due: (timer: DueTimer, lines: number) => boolean, render: (timer: DueTimer) => string
    ): Promise<ChatEvent[]> {
      return await atomic(db, async (trx) => {
        const found = await trx.selectFrom('chat_timers').select([...COLUMNS, 'lease_owner', 'lease_until']).where('id', '=', id).executeTakeFirst()
        if (found === undefined || found.lease_owner !== owner || Number(found.lease_until) < now) return []
        const timer: DueTimer = { ...found, id, enabled: found.enabled === 1, last_run_at: Number(found.last_run_at), runs: Number(found.runs) }
        const { lines } = await trx.selectFrom('chat_messages').select(sql<number>`count(*)`.as('lines'))
          .where('id', '>', found.last_message_id).where('source', '=', 'user').where('deleted_at', 'is', null).executeTakeFirstOrThrow()
        if (!due(timer, Number(lines))) return []
        const claimed = await trx.updateTable('chat_timers').set({ last_run_at: now, runs: sql`runs + 1` })
          .where('id', '=', id).where('last_run_at', '=', found.last_run_at).where('lease_owner', '=', owner).executeTakeFirst()
        if (Number(claimed.numUpdatedRows) === 0) return []
        const posted = await postMessage(trx, null, render({ ...timer, runs: timer.runs + 1 }), 'bot')
        await trx.updateTable('chat_timers').set({ last_message_id: posted.message.id }).where('id', '=', id).execute()
        return [posted.event]
      })
    }
  }
}
