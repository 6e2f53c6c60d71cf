import { sql } from 'kysely'
import type { Static } from '../../schemas/common.js'
import type {
  BlockedTerm, ChatCommand as ChatCommandSchema, ChatMember as ChatMemberSchema, ChatMessage as ChatMessageSchema,
  ChatRole as ChatRoleSchema, CommandPermission as CommandPermissionSchema, CreateCommandBody
} from '../../schemas/chat.js'
import { appendEvent, BOT, lockMember, messageRows as messages, postMessage, sameText, toMessage, unique, type ChatEvent } from './log.js'
import { createChatCountersRepository } from './counters.js'
import { createChatFiltersRepository } from './filters.js'
import { createChatHeldRepository } from './held.js'
import { createChatTimersRepository } from './timers.js'
import { Conflict, NotFound } from '../errors.js'
import { nowIso } from '../ids.js'
import { atomic, type Executor } from '../engine/transaction.js'

export type ChatRole = Static<typeof ChatRoleSchema>
export type CommandPermission = Static<typeof CommandPermissionSchema>
export type ChatMessage = Static<typeof ChatMessageSchema>
export type ChatCommand = Static<typeof ChatCommandSchema>
export type ChatMember = Static<typeof ChatMemberSchema>
export type Term = Static<typeof BlockedTerm>
export type CommandInput = Partial<Static<typeof CreateCommandBody>>
export type NewCommand = Required<Pick<CommandInput, 'command' | 'response'>> & CommandInput
export type MessageSource = ChatMessage['source']

export const ROLE_RANK: Record<ChatRole, number> = { viewer: 0, moderator: 1, broadcaster: 2 }
export const PERMISSION_RANK: Record<CommandPermission, number> = { everyone: 0, moderator: 1, broadcaster: 2 }

export { BOT, type ChatEvent }

export interface CommandRow {
  id: number
  command: string
  response: string
  cooldown_seconds: number
  permission: CommandPermission
  enabled: number
  use_count: number
  last_used_at: number | null
  created_at: string
  updated_at: string
  user_cooldown_seconds: number
  moderators_exempt: number
  counter_name: string | null
  counter_add: number | null
}

export const toCommand = ({
  last_used_at: _last, enabled, moderators_exempt: exempt, counter_name: counter, counter_add: add, ...row
}: CommandRow): ChatCommand => ({
  ...row,
  id: Number(row.id),
  use_count: Number(row.use_count),
  enabled: enabled === 1,
  moderators_exempt: exempt === 1,
  counter: counter === null ? null : { name: counter, add: add ?? 1 }
})

/** What the store holds about a sender, for slow mode and the new-user limit. */
export interface MemberPace {
  /** when first seen (epoch ms) */
  firstSeenAt: number
  /** when their messages since `lookbackMs` ago were sent, newest first (epoch ms) */
  recent: number[]
}

/** What the store holds about a command's uses, for its cooldowns. */
export interface CommandUse {
  cooldown_seconds: number
  user_cooldown_seconds: number
  moderators_exempt: boolean
  lastUsedAt: number | null
  userLastUsedAt: number | null
}

export interface SendPlan {
  now: number
  /** how far back `pace` needs the sender's messages (ms) */
  lookbackMs: number
  /** the wait slow mode or the new-user limit impose, with why, or undefined */
  pace: (state: MemberPace) => { waitSeconds: number, reason: string } | undefined
  /** the filter that holds the message for a moderator instead of posting it */
  hold?: string
  /** the command the message triggers: its cooldown (seconds left, 0: answers) and its rendered answer */
  reply?: {
    commandId: number
    cooldown: (use: CommandUse) => number
    /** the counters the response reads */
    counters: string[]
    render: (values: { count: number, counters: Record<string, number> }) => string
  }
  /** `!permit LOGIN` by a moderator: the permit (none for an unknown login) and the bot's answer */
  permit?: { userId?: number, until: number, reply: string }
}

export type SendOutcome =
  | { kind: 'wait', waitSeconds: number, reason: string }
  | { kind: 'held', id: number, events: ChatEvent[] }
  | { kind: 'sent', message: ChatMessage, events: ChatEvent[], cooldownSeconds?: number }

/** Chat storage: members and sanctions, messages, commands, blocked terms and the event log. */
export function createChatRepository (db: Executor) {
  const event = appendEvent

  async function requireCommand (trx: Executor, id: number): Promise<CommandRow> {
    const row = await trx.selectFrom('chat_commands').selectAll().where('id', '=', id).executeTakeFirst()
    if (row === undefined) throw new NotFound(`command ${id} not found`)
    return row
  }

  async function duplicateTrigger (trx: Executor, trigger: string, except?: number): Promise<void> {
    const existing = await trx.selectFrom('chat_commands').select(['id', 'command']).where(sameText('command', trigger)).executeTakeFirst()
    if (existing !== undefined && Number(existing.id) !== except) {
      throw new Conflict(`a command with the trigger '${existing.command}' already exists (id ${existing.id})`)
    }
  }

  async function insertCommand (trx: Executor, input: NewCommand): Promise<number> {
    const now = nowIso()
    const { id } = await trx.insertInto('chat_commands').values({
      command: input.command,
      response: input.response,
      cooldown_seconds: input.cooldown_seconds ?? 30,
      user_cooldown_seconds: input.user_cooldown_seconds ?? 0,
      moderators_exempt: input.moderators_exempt === false ? 0 : 1,
      permission: input.permission ?? 'everyone',
      enabled: input.enabled === false ? 0 : 1,
      counter_name: input.counter?.name.toLowerCase() ?? null,
      counter_add: input.counter?.add ?? null,
      created_at: now,
      updated_at: now,
      last_used_at: null
    }).returning('id').executeTakeFirstOrThrow()
    return Number(id)
  }

  async function writeCommand (trx: Executor, row: CommandRow, change: CommandInput): Promise<void> {
    const flag = (value: boolean | undefined, was: number): number => value === undefined ? was : value ? 1 : 0
    await trx.updateTable('chat_commands').set({
      command: change.command ?? row.command,
      response: change.response ?? row.response,
      cooldown_seconds: change.cooldown_seconds ?? row.cooldown_seconds,
      user_cooldown_seconds: change.user_cooldown_seconds ?? row.user_cooldown_seconds,
      moderators_exempt: flag(change.moderators_exempt, row.moderators_exempt),
      permission: change.permission ?? row.permission,
      enabled: flag(change.enabled, row.enabled),
      counter_name: change.counter === undefined ? row.counter_name : change.counter?.name.toLowerCase() ?? null,
      counter_add: change.counter === undefined ? row.counter_add : change.counter?.add ?? null,
      updated_at: nowIso()
    }).where('id', '=', row.id).execute()
  }

  const ensureMember = async (trx: Executor, userId: number): Promise<void> => {
    await trx.insertInto('chat_members').values({ user_id: userId, ban_reason: null, timeout_until: null })
      .onConflict((oc) => oc.column('user_id').doNothing()).execute()
  }

  const terms = async (): Promise<Term[]> =>
    (await db.selectFrom('chat_blocked_terms').select(['id', 'term', 'created_at']).orderBy('id').execute()).map((t) => ({ ...t, id: Number(t.id) }))

  const latestSeq = async (): Promise<number> => {
    const row = await db.selectFrom('chat_events').select(sql<number | null>`max(seq)`.as('seq')).executeTakeFirst()
    return Number(row?.seq ?? 0)
  }

  return {
    async member (userId: number): Promise<ChatMember | undefined> {
      const row = await db.selectFrom('users as u').leftJoin('chat_members as c', 'c.user_id', 'u.id')
        .select(['u.id', 'u.login', 'c.role', 'c.banned', 'c.ban_reason', 'c.timeout_until']).where('u.id', '=', userId).executeTakeFirst()
      if (row === undefined) return undefined
      const timeoutUntil = row.timeout_until === null ? null : Number(row.timeout_until)
      const until = timeoutUntil !== null && timeoutUntil > Date.now() ? new Date(timeoutUntil).toISOString() : null
      return { id: Number(row.id), login: row.login, role: row.role ?? 'viewer', banned: row.banned === 1, ban_reason: row.ban_reason, timed_out_until: until }
    },

    /** Sets a chat role; there is one broadcaster at most, so naming one demotes the previous. */
    async setRole (userId: number, role: ChatRole): Promise<void> {
      await atomic(db, async (trx) => {
        await ensureMember(trx, userId)
        if (role === 'broadcaster') await trx.updateTable('chat_members').set({ role: 'viewer' }).where('role', '=', 'broadcaster').execute()
        await trx.updateTable('chat_members').set({ role }).where('user_id', '=', userId).execute()
      })
    },

    async ban (userId: number, reason: string | null): Promise<void> {
      await atomic(db, async (trx) => {
        await ensureMember(trx, userId)
        await trx.updateTable('chat_members').set({ banned: 1, ban_reason: reason, timeout_until: null }).where('user_id', '=', userId).execute()
      })
    },

    async timeout (userId: number, untilMs: number): Promise<void> {
      await atomic(db, async (trx) => {
        await ensureMember(trx, userId)
        await trx.updateTable('chat_members').set({ timeout_until: untilMs }).where('user_id', '=', userId).execute()
      })
    },

    async unban (userId: number): Promise<void> {
      await atomic(db, async (trx) => {
        await ensureMember(trx, userId)
        await trx.updateTable('chat_members').set({ banned: 0, ban_reason: null, timeout_until: null }).where('user_id', '=', userId).execute()
      })
    },

    /** A page of messages, oldest to newest, plus whether there are older or newer ones. */
    async messages (limit: number, cursor: { before?: number, after?: number }): Promise<{ data: ChatMessage[], hasOlder: boolean, hasNewer: boolean }> {
      const exists = async (op: '<' | '>', id: number): Promise<boolean> =>
        await db.selectFrom('chat_messages').select('id').where('deleted_at', 'is', null).where('id', op, id).limit(1).executeTakeFirst() !== undefined
      if (cursor.after !== undefined) {
        const rows = await messages(db).where('m.id', '>', cursor.after).orderBy('m.id').limit(limit + 1).execute()
        const data = rows.slice(0, limit).map(toMessage)
        return { data, hasNewer: rows.length > limit, hasOlder: await exists('<', data[0]?.id ?? cursor.after + 1) }
      }
      let query = messages(db)
      if (cursor.before !== undefined) query = query.where('m.id', '<', cursor.before)
      const rows = await query.orderBy('m.id', 'desc').limit(limit + 1).execute()
      const data = rows.slice(0, limit).reverse().map(toMessage)
      const last = data.at(-1)?.id ?? (cursor.before ?? Number.MAX_SAFE_INTEGER) - 1
      return { data, hasOlder: rows.length > limit, hasNewer: await exists('>', last) }
    },

    /**
     * Posts a user's message in one transaction: slow mode and the new-user limit first (from
     * what the store holds, the member's row locked), then the message (or, held, the queue's
     * entry), a permit, and the command's answer when its cooldowns allow.
     */
    async send (userId: number, text: string, plan: SendPlan): Promise<SendOutcome> {
      return await atomic(db, async (trx) => {
        const firstSeenAt = await lockMember(trx, userId, plan.now)
        const recent = await trx.selectFrom('chat_messages').select('sent_at').where('user_id', '=', userId)
          .where('sent_at', '>=', new Date(plan.now - plan.lookbackMs).toISOString()).orderBy('id', 'desc').limit(200).execute()
        const wait = plan.pace({ firstSeenAt, recent: recent.map((r) => Date.parse(r.sent_at)) })
        if (wait !== undefined) return { kind: 'wait', ...wait }
        if (plan.hold !== undefined) {
          const { id } = await trx.insertInto('chat_held').values({ user_id: userId, text, filter: plan.hold, held_at: nowIso(), resolved_by: null, resolved_at: null, message_id: null })
            .returning('id').executeTakeFirstOrThrow()
          const held = await createChatHeldRepository(trx).one(Number(id))
          return { kind: 'held', id: Number(id), events: [await event(trx, 'held.created', held)] }
        }
        const sent = await postMessage(trx, userId, text, 'user')
        const events = [sent.event]
        if (plan.permit !== undefined) {
          const { userId: permitted, until } = plan.permit
          if (permitted !== undefined) events.push(...await createChatFiltersRepository(trx).permit(permitted, until))
          events.push((await postMessage(trx, null, plan.permit.reply, 'bot')).event)
        }
        const reply = plan.reply
        if (reply === undefined) return { kind: 'sent', message: sent.message, events }
        // The command's row is locked first, so two senders racing for it are decided one at a time.
        const locked = await trx.updateTable('chat_commands').set({ use_count: sql`use_count` }).where('id', '=', reply.commandId).where('enabled', '=', 1).executeTakeFirst()
        if (Number(locked.numUpdatedRows) === 0) return { kind: 'sent', message: sent.message, events }
        const row = await requireCommand(trx, reply.commandId)
        const mine = await trx.selectFrom('chat_command_uses').select('used_at').where('command_id', '=', reply.commandId).where('user_id', '=', userId).executeTakeFirst()
        const left = reply.cooldown({
          cooldown_seconds: row.cooldown_seconds,
          user_cooldown_seconds: row.user_cooldown_seconds,
          moderators_exempt: row.moderators_exempt === 1,
          lastUsedAt: row.last_used_at === null ? null : Number(row.last_used_at),
          userLastUsedAt: mine === undefined ? null : Number(mine.used_at)
        })
        if (left > 0) return { kind: 'sent', message: sent.message, events, cooldownSeconds: left }
        await trx.updateTable('chat_commands').set({ use_count: sql`use_count + 1`, last_used_at: plan.now }).where('id', '=', reply.commandId).execute()
        await trx.insertInto('chat_command_uses').values({ command_id: reply.commandId, user_id: userId, used_at: plan.now })
          .onConflict((oc) => oc.columns(['command_id', 'user_id']).doUpdateSet({ used_at: plan.now })).execute()
        const counters = createChatCountersRepository(trx)
        if (row.counter_name !== null) events.push(await counters.add(row.counter_name, row.counter_add ?? 1))
        const values = await counters.values(reply.counters)
        const answer = reply.render({ count: Number(row.use_count) + 1, counters: values })
        events.push((await postMessage(trx, null, answer, 'command')).event)
        events.push(await event(trx, 'command.updated', toCommand(await requireCommand(trx, reply.commandId))))
        return { kind: 'sent', message: sent.message, events }
      })
    },

    async deleteMessage (id: number, by: number): Promise<ChatEvent> {
      return await atomic(db, async (trx) => {
        const result = await trx.updateTable('chat_messages').set({ deleted_at: nowIso(), deleted_by: by }).where('id', '=', id).where('deleted_at', 'is', null).executeTakeFirst()
        if (Number(result.numUpdatedRows) === 0) throw new NotFound(`message ${id} not found`)
        return await event(trx, 'message.deleted', { id })
      })
    },

    commands: async (): Promise<ChatCommand[]> => (await db.selectFrom('chat_commands').selectAll().orderBy('command').execute()).map(toCommand),
    command: async (id: number): Promise<ChatCommand> => toCommand(await requireCommand(db, id)),

    /** The enabled command a trigger word names. */
    async trigger (word: string): Promise<ChatCommand | undefined> {
      const row = await db.selectFrom('chat_commands').selectAll().where(sameText('command', word)).executeTakeFirst()
      return row === undefined || row.enabled !== 1 ? undefined : toCommand(row)
    },

    async createCommand (input: NewCommand): Promise<{ command: ChatCommand, event: ChatEvent }> {
      return await unique(`a command with the trigger '${input.command}' already exists`, async () => await atomic(db, async (trx) => {
        await duplicateTrigger(trx, input.command)
        const command = toCommand(await requireCommand(trx, await insertCommand(trx, input)))
        return { command, event: await event(trx, 'command.created', command) }
      }))
    },

    async updateCommand (id: number, change: CommandInput): Promise<{ command: ChatCommand, event: ChatEvent }> {
      return await unique(`a command with the trigger '${change.command ?? ''}' already exists`, async () => await atomic(db, async (trx) => {
        const row = await requireCommand(trx, id)
        if (change.command !== undefined) await duplicateTrigger(trx, change.command, id)
        await writeCommand(trx, row, change)
        const command = toCommand(await requireCommand(trx, id))
        return { command, event: await event(trx, 'command.updated', command) }
      }))
    },

    /**
     * Creates imported commands in one transaction; a trigger that exists already is updated when
     * `replace`, otherwise skipped.
     */
    async importCommands (
      input: Array<NewCommand & { use_count: number }>, replace: boolean
    ): Promise<{ imported: number, skipped: Array<{ command: string, reason: string }>, events: ChatEvent[] }> {
      return await atomic(db, async (trx) => {
        const events: ChatEvent[] = []
        const skipped: Array<{ command: string, reason: string }> = []
        for (const one of input) {
          const existing = await trx.selectFrom('chat_commands').selectAll().where(sameText('command', one.command)).executeTakeFirst()
          if (existing !== undefined && !replace) {
            skipped.push({ command: one.command, reason: `a command with the trigger '${existing.command}' exists (id ${existing.id}); pass "replace": true to overwrite it` })
            continue
          }
          const id = existing === undefined ? await insertCommand(trx, one) : Number(existing.id)
          if (existing !== undefined) await writeCommand(trx, existing, one)
          await trx.updateTable('chat_commands').set({ use_count: one.use_count }).where('id', '=', id).execute()
          events.push(await event(trx, existing === undefined ? 'command.created' : 'command.updated', toCommand(await requireCommand(trx, id))))
        }
        return { imported: events.length, skipped, events }
      })
    },

    async deleteCommand (id: number): Promise<ChatEvent> {
      return await atomic(db, async (trx) => {
        await requireCommand(trx, id)
        await trx.deleteFrom('chat_commands').where('id', '=', id).execute()
        return await event(trx, 'command.deleted', { id })
      })
    },

    terms,

    async addTerm (term: string, by: number): Promise<Term> {
      return await unique(`the term '${term}' is already blocked`, async () => await atomic(db, async (trx) => {
        const existing = await trx.selectFrom('chat_blocked_terms').select('id').where(sameText('term', term)).executeTakeFirst()
        if (existing !== undefined) throw new Conflict(`the term '${term}' is already blocked (id ${existing.id})`)
        const row = await trx.insertInto('chat_blocked_terms').values({ term, created_by: by, created_at: nowIso() })
          .returning(['id', 'term', 'created_at']).executeTakeFirstOrThrow()
        return { ...row, id: Number(row.id) }
      }))
    },

    async removeTerm (id: number): Promise<void> {
      const result = await db.deleteFrom('chat_blocked_terms').where('id', '=', id).executeTakeFirst()
      if (Number(result.numDeletedRows) === 0) throw new NotFound(`blocked term ${id} not found`)
    },

    /** Events after `seq`, oldest first, or null when `seq` is older than the kept log. */
    async eventsAfter (seq: number, limit: number): Promise<ChatEvent[] | null> {
      const first = await db.selectFrom('chat_events').select(sql<number | null>`min(seq)`.as('seq')).executeTakeFirst()
      if (first?.seq != null && seq < Number(first.seq) - 1) return null
      const rows = await db.selectFrom('chat_events').select(['seq', 'type', 'data']).where('seq', '>', seq).orderBy('seq').limit(limit).execute()
      return rows.map((row) => ({ seq: Number(row.seq), type: row.type, data: JSON.parse(row.data) as unknown }))
    },

    latestSeq,
    counters: createChatCountersRepository(db),
    timers: createChatTimersRepository(db),
    filters: createChatFiltersRepository(db),
    held: createChatHeldRepository(db),

    /** Keeps the newest `keep` events of the log. */
    async pruneEvents (keep: number): Promise<void> {
      const last = await latestSeq()
      if (last > keep) await db.deleteFrom('chat_events').where('seq', '<=', last - keep).execute()
    }
  }
}

export type ChatRepository = ReturnType<typeof createChatRepository>
