import { sql } from 'kysely'
import type { Static } from '../schemas/common.js'
import type {
  BlockedTerm, ChatCommand as ChatCommandSchema, ChatMember as ChatMemberSchema, ChatMessage as ChatMessageSchema,
  ChatRole as ChatRoleSchema, CommandPermission as CommandPermissionSchema, CreateCommandBody
} from '../schemas/chat.js'
import { isUniqueViolation } from './engine.js'
import { Conflict, NotFound } from './errors.js'
import { nowIso } from './ids.js'
import { atomic, type Executor } from './transaction.js'

export type ChatRole = Static<typeof ChatRoleSchema>
export type CommandPermission = Static<typeof CommandPermissionSchema>
export type ChatMessage = Static<typeof ChatMessageSchema>
export type ChatCommand = Static<typeof ChatCommandSchema>
export type ChatMember = Static<typeof ChatMemberSchema>
export type Term = Static<typeof BlockedTerm>
export type CommandInput = Partial<Static<typeof CreateCommandBody>>
export type MessageSource = ChatMessage['source']

export const ROLE_RANK: Record<ChatRole, number> = { viewer: 0, moderator: 1, broadcaster: 2 }
export const PERMISSION_RANK: Record<CommandPermission, number> = { everyone: 0, moderator: 1, broadcaster: 2 }

/** The author shown on messages the bot posts. */
export const BOT = { id: 0, login: 'bot', role: 'bot' } as const

/** One entry of the live feed: what WebSocket clients receive and can replay by `seq`. */
export interface ChatEvent { seq: number, type: string, data: unknown }

interface CommandRow {
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
}

const toCommand = ({ last_used_at: _last, enabled, ...row }: CommandRow): ChatCommand =>
  ({ ...row, id: Number(row.id), use_count: Number(row.use_count), enabled: enabled === 1 })

function messages (db: Executor) {
  return db.selectFrom('chat_messages as m').leftJoin('users as u', 'u.id', 'm.user_id').leftJoin('chat_members as c', 'c.user_id', 'm.user_id')
    .select(['m.id', 'm.user_id', 'u.login', sql<ChatRole>`coalesce(c.role, 'viewer')`.as('role'), 'm.text', 'm.sent_at', 'm.source'])
    .where('m.deleted_at', 'is', null)
}

type MessageRow = Awaited<ReturnType<ReturnType<typeof messages>['execute']>>[number]

const toMessage = (row: MessageRow): ChatMessage => ({
  id: Number(row.id),
  user: row.user_id === null ? { ...BOT } : { id: Number(row.user_id), login: row.login ?? 'unknown', role: row.role ?? 'viewer' },
  text: row.text,
  sent_at: row.sent_at,
  source: row.source
})

/** Runs a write whose unique key another writer may take first; that race is a conflict too. */
async function unique<T> (message: string, fn: () => Promise<T>): Promise<T> {
  try {
    return await fn()
  } catch (err) {
    if (isUniqueViolation(err)) throw new Conflict(message)
    throw err
  }
}

const sameText = (column: string, value: string) => sql<boolean>`lower(${sql.ref(column)}) = lower(${value})`

/** Chat storage: members and sanctions, messages, commands, blocked terms and the event log. */
export function createChatRepository (db: Executor) {
  async function event (trx: Executor, type: string, data: unknown): Promise<ChatEvent> {
    const { seq } = await trx.insertInto('chat_events').values({ type, data: JSON.stringify(data), created_at: nowIso() }).returning('seq').executeTakeFirstOrThrow()
    return { seq: Number(seq), type, data }
  }

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

  async function postMessage (trx: Executor, userId: number | null, text: string, source: MessageSource): Promise<{ message: ChatMessage, event: ChatEvent }> {
    const { id } = await trx.insertInto('chat_messages').values({ user_id: userId, text, source, sent_at: nowIso(), deleted_at: null, deleted_by: null })
      .returning('id').executeTakeFirstOrThrow()
    const message = toMessage(await messages(trx).where('m.id', '=', id).executeTakeFirstOrThrow())
    return { message, event: await event(trx, 'message.created', message) }
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

    /** Stores a user's message and, when it triggers a command, the bot's answer (one transaction). */
    async send (userId: number, text: string, reply?: { commandId: number, text: string }): Promise<{ message: ChatMessage, events: ChatEvent[] }> {
      return await atomic(db, async (trx) => {
        const sent = await postMessage(trx, userId, text, 'user')
        const events = [sent.event]
        if (reply !== undefined) {
          // The cooldown is checked and the use counted in one statement: of two sends racing for
          // one command, only one makes the bot answer.
          const now = Date.now()
          const used = await trx.updateTable('chat_commands').set({ use_count: sql`use_count + 1`, last_used_at: now })
            .where('id', '=', reply.commandId).where('enabled', '=', 1)
            .where((eb) => eb.or([eb('last_used_at', 'is', null), eb(sql`last_used_at + cooldown_seconds * 1000`, '<=', now)]))
            .executeTakeFirst()
          if (Number(used.numUpdatedRows) === 1) {
            events.push((await postMessage(trx, null, reply.text, 'command')).event)
            events.push(await event(trx, 'command.updated', toCommand(await requireCommand(trx, reply.commandId))))
          }
        }
        return { message: sent.message, events }
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

    /** The enabled command a trigger word names, with when it was last used (epoch ms). */
    async trigger (word: string): Promise<(ChatCommand & { lastUsedAt: number | null }) | undefined> {
      const row = await db.selectFrom('chat_commands').selectAll().where(sameText('command', word)).executeTakeFirst()
      return row === undefined || row.enabled !== 1 ? undefined : { ...toCommand(row), lastUsedAt: row.last_used_at === null ? null : Number(row.last_used_at) }
    },

    async createCommand (input: Required<Pick<CommandInput, 'command' | 'response'>> & CommandInput): Promise<{ command: ChatCommand, event: ChatEvent }> {
      return await unique(`a command with the trigger '${input.command}' already exists`, async () => await atomic(db, async (trx) => {
        await duplicateTrigger(trx, input.command)
        const now = nowIso()
        const { id } = await trx.insertInto('chat_commands').values({
          command: input.command,
          response: input.response,
          cooldown_seconds: input.cooldown_seconds ?? 30,
          permission: input.permission ?? 'everyone',
          enabled: input.enabled === false ? 0 : 1,
          created_at: now,
          updated_at: now,
          last_used_at: null
        }).returning('id').executeTakeFirstOrThrow()
        const command = toCommand(await requireCommand(trx, id))
        return { command, event: await event(trx, 'command.created', command) }
      }))
    },

    async updateCommand (id: number, change: CommandInput): Promise<{ command: ChatCommand, event: ChatEvent }> {
      return await unique(`a command with the trigger '${change.command ?? ''}' already exists`, async () => await atomic(db, async (trx) => {
        const row = await requireCommand(trx, id)
        if (change.command !== undefined) await duplicateTrigger(trx, change.command, id)
        await trx.updateTable('chat_commands').set({
          command: change.command ?? row.command,
          response: change.response ?? row.response,
          cooldown_seconds: change.cooldown_seconds ?? row.cooldown_seconds,
          permission: change.permission ?? row.permission,
          enabled: change.enabled === undefined ? row.enabled : change.enabled ? 1 : 0,
          updated_at: nowIso()
        }).where('id', '=', id).execute()
        const command = toCommand(await requireCommand(trx, id))
        return { command, event: await event(trx, 'command.updated', command) }
      }))
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

    /** Keeps the newest `keep` events of the log. */
    async pruneEvents (keep: number): Promise<void> {
      const last = await latestSeq()
      if (last > keep) await db.deleteFrom('chat_events').where('seq', '<=', last - keep).execute()
    }
  }
}

export type ChatRepository = ReturnType<typeof createChatRepository>
