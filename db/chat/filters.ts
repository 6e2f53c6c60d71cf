import { sql } from 'kysely'
import type { Static } from '../../schemas/common.js'
import type { ChatSettings as ChatSettingsSchema, FilterAction as FilterActionSchema, FilterPattern as PatternSchema, FilterSettings as FilterSettingsSchema } from '../../schemas/chat-bot.js'
import { appendEvent, lockMember, type ChatEvent } from './log.js'
import { Conflict, Invalid, NotFound } from '../errors.js'
import { nowIso } from '../ids.js'
import { atomic, type Executor } from '../engine/transaction.js'

export type FilterAction = Static<typeof FilterActionSchema>
export type FilterPattern = Static<typeof PatternSchema>
export type FilterSettings = Static<typeof FilterSettingsSchema>
export type ChatSettings = Static<typeof ChatSettingsSchema>

export const DEFAULT_FILTER_SETTINGS: FilterSettings = {
  links: { enabled: false, allowed_domains: [], action: 'refuse' },
  caps: { enabled: false, min_length: 10, max_ratio: 0.7, action: 'refuse' },
  repetition: { enabled: false, count: 3, seconds: 30, action: 'refuse' },
  escalation: { window_minutes: 60, steps: [] },
  exempt_roles: ['moderator', 'broadcaster']
}
export const DEFAULT_CHAT_SETTINGS: ChatSettings = { slow_seconds: 0, new_user_minutes: 0, new_user_sends_per_minute: 0 }

const DEFAULTS = { filters: DEFAULT_FILTER_SETTINGS, chat: DEFAULT_CHAT_SETTINGS }
type SettingsName = keyof typeof DEFAULTS

/** What a filter did to a sender, for the feed and the answer. */
export type Sanction = { kind: 'warn' } | { kind: 'timeout', seconds: number } | { kind: 'ban' }

const toPattern = (row: { id: number, pattern: string, action: FilterAction, timeout_seconds: number | null, created_at: string }): FilterPattern =>
  ({ ...row, id: Number(row.id), timeout_seconds: row.timeout_seconds === null ? null : Number(row.timeout_seconds) })

/** Pattern filters, filter and chat settings, link permits and the offenses escalation counts. */
export function createChatFiltersRepository (db: Executor) {
  async function settings<N extends SettingsName> (name: N, trx: Executor = db): Promise<typeof DEFAULTS[N]> {
    const row = await trx.selectFrom('chat_settings').select('value').where('name', '=', name).executeTakeFirst()
    const stored = row === undefined ? {} : JSON.parse(row.value) as Partial<typeof DEFAULTS[N]>
    return { ...DEFAULTS[name], ...stored }
  }

  /** Takes the settings row's lock (creating it), so changes of one kind go one at a time. */
  async function lockSettings (trx: Executor, name: SettingsName): Promise<void> {
    await trx.insertInto('chat_settings').values({ name, value: '{}', updated_at: nowIso() })
      .onConflict((oc) => oc.column('name').doUpdateSet({ updated_at: sql`chat_settings.updated_at` })).execute()
  }

  return {
    patterns: async (): Promise<FilterPattern[]> =>
      (await db.selectFrom('chat_filter_patterns').select(['id', 'pattern', 'action', 'timeout_seconds', 'created_at']).orderBy('id').execute()).map(toPattern),

    /** Adds a pattern filter; at most `max`, counted under the filters' lock. */
    async addPattern (
      input: { pattern: string, action: FilterAction, timeout_seconds: number | null }, by: number, max: number
    ): Promise<{ pattern: FilterPattern, event: ChatEvent }> {
      return await atomic(db, async (trx) => {
        await lockSettings(trx, 'filters')
        const existing = await trx.selectFrom('chat_filter_patterns').select('id').where('pattern', '=', input.pattern).executeTakeFirst()
        if (existing !== undefined) throw new Conflict(`the pattern is already a filter (id ${existing.id})`)
        const { count } = await trx.selectFrom('chat_filter_patterns').select(sql<number>`count(*)`.as('count')).executeTakeFirstOrThrow()
        if (Number(count) >= max) throw new Invalid(`there are ${max} pattern filters already, the most there may be; remove one first`)
        const row = await trx.insertInto('chat_filter_patterns').values({ ...input, created_by: by, created_at: nowIso() })
          .returning(['id', 'pattern', 'action', 'timeout_seconds', 'created_at']).executeTakeFirstOrThrow()
        const pattern = toPattern(row)
        return { pattern, event: await appendEvent(trx, 'filter.pattern.created', pattern) }
      })
    },

    async removePattern (id: number): Promise<ChatEvent> {
      return await atomic(db, async (trx) => {
        const result = await trx.deleteFrom('chat_filter_patterns').where('id', '=', id).executeTakeFirst()
        if (Number(result.numDeletedRows) === 0) throw new NotFound(`pattern filter ${id} not found`)
        return await appendEvent(trx, 'filter.pattern.deleted', { id })
      })
    },

    settings,

    /** Changes settings under their lock: `change` gets what is stored and returns the new value. */
    async updateSettings<N extends SettingsName> (
      name: N, change: (current: typeof DEFAULTS[N]) => typeof DEFAULTS[N]
    ): Promise<{ settings: typeof DEFAULTS[N], event: ChatEvent }> {
      return await atomic(db, async (trx) => {
        await lockSettings(trx, name)
        const next = change(await settings(name, trx))
        await trx.updateTable('chat_settings').set({ value: JSON.stringify(next), updated_at: nowIso() }).where('name', '=', name).execute()
        return { settings: next, event: await appendEvent(trx, name === 'filters' ? 'filter.settings.updated' : 'settings.updated', next) }
      })
    },

    /** Lets a user post links until `until` (epoch ms), in the caller's transaction. */
    async permit (userId: number, until: number): Promise<ChatEvent[]> {
      await db.insertInto('chat_permits').values({ user_id: userId, until }).onConflict((oc) => oc.column('user_id').doUpdateSet({ until })).execute()
      const user = await db.selectFrom('users').select('login').where('id', '=', userId).executeTakeFirstOrThrow()
      return [await appendEvent(db, 'permit.created', { login: user.login, until: new Date(until).toISOString() })]
    },

    /** A permit in a transaction of its own. */
    async grantPermit (userId: number, until: number): Promise<ChatEvent[]> {
      return await atomic(db, async (trx) => await createChatFiltersRepository(trx).permit(userId, until))
    },

    async permitted (userId: number, now: number): Promise<boolean> {
      return await db.selectFrom('chat_permits').select('user_id').where('user_id', '=', userId).where('until', '>', now).executeTakeFirst() !== undefined
    },

    /** How many of the user's messages with this text (any case) were sent since `sinceMs`. */
    async repeats (userId: number, text: string, sinceMs: number): Promise<number> {
      const row = await db.selectFrom('chat_messages').select(sql<number>`count(*)`.as('count')).where('user_id', '=', userId)
        .where('sent_at', '>=', new Date(sinceMs).toISOString()).where(sql<boolean>`lower(text) = lower(${text})`).executeTakeFirstOrThrow()
      return Number(row.count)
    },

    /**
     * Records an offense and applies what `decide` makes of the offender's count within the
     * window (this one included): a timeout or a ban. The member's row is locked first, so the
     * count and the sanction go together. The feed's `filter.matched` event tells the moderators.
     */
    async offense (
      userId: number, hit: { filter: string, detail: string }, now: number, windowMs: number, decide: (offenses: number) => Sanction
    ): Promise<{ sanction: Sanction, offenses: number, events: ChatEvent[] }> {
      return await atomic(db, async (trx) => {
        await lockMember(trx, userId, now)
        await trx.insertInto('chat_offenses').values({ user_id: userId, filter: hit.filter, at: now }).execute()
        await trx.deleteFrom('chat_offenses').where('user_id', '=', userId).where('at', '<', now - 7 * 86_400_000).execute()
        const { count } = await trx.selectFrom('chat_offenses').select(sql<number>`count(*)`.as('count'))
          .where('user_id', '=', userId).where('at', '>', now - windowMs).executeTakeFirstOrThrow()
        const sanction = decide(Number(count))
        if (sanction.kind === 'timeout') await trx.updateTable('chat_members').set({ timeout_until: now + sanction.seconds * 1000 }).where('user_id', '=', userId).execute()
        if (sanction.kind === 'ban') await trx.updateTable('chat_members').set({ banned: 1, ban_reason: `filter: ${hit.filter}`, timeout_until: null }).where('user_id', '=', userId).execute()
        const user = await trx.selectFrom('users').select('login').where('id', '=', userId).executeTakeFirstOrThrow()
        const event = await appendEvent(trx, 'filter.matched', { user: { id: userId, login: user.login }, filter: hit.filter, detail: hit.detail, offenses: Number(count), sanction })
        return { sanction, offenses: Number(count), events: [event] }
      })
    }
  }
}

export type ChatFiltersRepository = ReturnType<typeof createChatFiltersRepository>
