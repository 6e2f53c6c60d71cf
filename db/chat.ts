import { httpErrors } from '@fastify/sensible'
import { transactional, type Db } from './connection.js'
import { nowIso } from './ids.js'

export type ChatRole = 'viewer' | 'moderator' | 'broadcaster'
export type CommandPermission = 'everyone' | 'moderator' | 'broadcaster'
export type MessageSource = 'user' | 'bot' | 'command'

export const ROLE_RANK: Record<ChatRole, number> = { viewer: 0, moderator: 1, broadcaster: 2 }
export const PERMISSION_RANK: Record<CommandPermission, number> = { everyone: 0, moderator: 1, broadcaster: 2 }

/** The author shown on messages the bot posts. */
export const BOT = { id: 0, login: 'bot', role: 'bot' } as const

export interface ChatMessage {
  id: number
  user: { id: number, login: string, role: string }
  text: string
  sent_at: string
  source: MessageSource
}

export interface ChatCommand {
  id: number
  command: string
  response: string
  cooldown_seconds: number
  permission: CommandPermission
  enabled: boolean
  use_count: number
  created_at: string
  updated_at: string
}

export interface ChatMember { id: number, login: string, role: ChatRole, banned: boolean, ban_reason: string | null, timed_out_until: string | null }

/** One entry of the live feed: what WebSocket clients receive and can replay by `seq`. */
export interface ChatEvent { seq: number, type: string, data: unknown }

export interface CommandInput {
  command?: string
  response?: string
  cooldown_seconds?: number
  permission?: CommandPermission
  enabled?: boolean
}

interface MessageRow { id: number, user_id: number | null, login: string | null, role: ChatRole | null, text: string, sent_at: string, source: MessageSource }
interface CommandRow { id: number, command: string, response: string, cooldown_seconds: number, permission: CommandPermission, enabled: number, use_count: number, last_used_at: number | null, created_at: string, updated_at: string }

const MESSAGE_SELECT = `
  SELECT m.id, m.user_id, u.login, coalesce(c.role, 'viewer') AS role, m.text, m.sent_at, m.source
  FROM chat_messages m LEFT JOIN users u ON u.id = m.user_id LEFT JOIN chat_members c ON c.user_id = m.user_id`

const toMessage = (row: MessageRow): ChatMessage => ({
  id: row.id,
  user: row.user_id === null ? { ...BOT } : { id: row.user_id, login: row.login ?? 'unknown', role: row.role ?? 'viewer' },
  text: row.text,
  sent_at: row.sent_at,
  source: row.source
})

const toCommand = ({ last_used_at: _last, enabled, ...row }: CommandRow): ChatCommand => ({ ...row, enabled: enabled === 1 })

/** Chat storage: members and sanctions, messages, commands, blocked terms and the event log. */
export function createChatRepository (db: Db) {
  const member = db.prepare<[number], { id: number, login: string, role: ChatRole | null, banned: number | null, ban_reason: string | null, timeout_until: number | null }>(`
    SELECT u.id, u.login, c.role, c.banned, c.ban_reason, c.timeout_until
    FROM users u LEFT JOIN chat_members c ON c.user_id = u.id WHERE u.id = ?`)
  const ensureMember = db.prepare<[number]>('INSERT OR IGNORE INTO chat_members (user_id) VALUES (?)')
  const demoteBroadcaster = db.prepare("UPDATE chat_members SET role = 'viewer' WHERE role = 'broadcaster'")
  const setRole = db.prepare<[string, number]>('UPDATE chat_members SET role = ? WHERE user_id = ?')
  const setBan = db.prepare<[number, string | null, number]>('UPDATE chat_members SET banned = ?, ban_reason = ?, timeout_until = NULL WHERE user_id = ?')
  const setTimeoutUntil = db.prepare<[number, number]>('UPDATE chat_members SET timeout_until = ? WHERE user_id = ?')

  const latest = db.prepare<[number], MessageRow>(`${MESSAGE_SELECT} WHERE m.deleted_at IS NULL ORDER BY m.id DESC LIMIT ?`)
  const before = db.prepare<[number, number], MessageRow>(`${MESSAGE_SELECT} WHERE m.deleted_at IS NULL AND m.id < ? ORDER BY m.id DESC LIMIT ?`)
  const after = db.prepare<[number, number], MessageRow>(`${MESSAGE_SELECT} WHERE m.deleted_at IS NULL AND m.id > ? ORDER BY m.id LIMIT ?`)
  const olderExists = db.prepare<[number], { one: number }>('SELECT 1 AS one FROM chat_messages WHERE deleted_at IS NULL AND id < ? LIMIT 1')
  const newerExists = db.prepare<[number], { one: number }>('SELECT 1 AS one FROM chat_messages WHERE deleted_at IS NULL AND id > ? LIMIT 1')
  const messageById = db.prepare<[number], MessageRow>(`${MESSAGE_SELECT} WHERE m.id = ? AND m.deleted_at IS NULL`)
  const insertMessage = db.prepare<[number | null, string, MessageSource, string]>(
    'INSERT INTO chat_messages (user_id, text, source, sent_at) VALUES (?, ?, ?, ?)')
  const markDeleted = db.prepare<[string, number, number]>('UPDATE chat_messages SET deleted_at = ?, deleted_by = ? WHERE id = ? AND deleted_at IS NULL')

  const commands = db.prepare<[], CommandRow>('SELECT * FROM chat_commands ORDER BY command')
  const commandById = db.prepare<[number], CommandRow>('SELECT * FROM chat_commands WHERE id = ?')
  const commandByTrigger = db.prepare<[string], CommandRow>('SELECT * FROM chat_commands WHERE command = ?')
  const insertCommand = db.prepare<[string, string, number, string, number, string, string]>(`
    INSERT INTO chat_commands (command, response, cooldown_seconds, permission, enabled, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?)`)
  const updateCommand = db.prepare<[string, string, number, string, number, string, number]>(`
    UPDATE chat_commands SET command = ?, response = ?, cooldown_seconds = ?, permission = ?, enabled = ?, updated_at = ? WHERE id = ?`)
  const deleteCommand = db.prepare<[number]>('DELETE FROM chat_commands WHERE id = ?')
  const useCommand = db.prepare<[number, number]>('UPDATE chat_commands SET use_count = use_count + 1, last_used_at = ? WHERE id = ?')

  const terms = db.prepare<[], { id: number, term: string, created_at: string }>('SELECT id, term, created_at FROM chat_blocked_terms ORDER BY id')
  const insertTerm = db.prepare<[string, number, string]>('INSERT INTO chat_blocked_terms (term, created_by, created_at) VALUES (?, ?, ?)')
  const termByText = db.prepare<[string], { id: number }>('SELECT id FROM chat_blocked_terms WHERE term = ?')
  const deleteTerm = db.prepare<[number]>('DELETE FROM chat_blocked_terms WHERE id = ?')

  const appendEvent = db.prepare<[string, string, string]>('INSERT INTO chat_events (type, data, created_at) VALUES (?, ?, ?)')
  const eventsAfter = db.prepare<[number, number], { seq: number, type: string, data: string }>(
    'SELECT seq, type, data FROM chat_events WHERE seq > ? ORDER BY seq LIMIT ?')
  const lastSeq = db.prepare<[], { seq: number | null }>('SELECT max(seq) AS seq FROM chat_events')
  const firstSeq = db.prepare<[], { seq: number | null }>('SELECT min(seq) AS seq FROM chat_events')
  const pruneEvents = db.prepare<[number]>('DELETE FROM chat_events WHERE seq <= ?')

  function event (type: string, data: unknown): ChatEvent {
    const seq = Number(appendEvent.run(type, JSON.stringify(data), nowIso()).lastInsertRowid)
    return { seq, type, data }
  }

  function requireCommand (id: number): CommandRow {
    const row = commandById.get(id)
    if (row === undefined) throw httpErrors.notFound(`command ${id} not found`)
    return row
  }

  function duplicateTrigger (trigger: string, except?: number): void {
    const existing = commandByTrigger.get(trigger)
    if (existing !== undefined && existing.id !== except) {
      throw httpErrors.conflict(`a command with the trigger '${existing.command}' already exists (id ${existing.id})`)
    }
  }

  const postMessage = (userId: number | null, text: string, source: MessageSource): { message: ChatMessage, event: ChatEvent } => {
    const id = Number(insertMessage.run(userId, text, source, nowIso()).lastInsertRowid)
    const message = toMessage(messageById.get(id)!)
    return { message, event: event('message.created', message) }
  }

  return {
    member (userId: number): ChatMember | undefined {
      const row = member.get(userId)
      if (row === undefined) return undefined
      const until = row.timeout_until !== null && row.timeout_until > Date.now() ? new Date(row.timeout_until).toISOString() : null
      return { id: row.id, login: row.login, role: row.role ?? 'viewer', banned: row.banned === 1, ban_reason: row.ban_reason, timed_out_until: until }
    },

    /** Sets a chat role; there is one broadcaster at most, so naming one demotes the previous. */
    setRole: transactional(db, (userId: number, role: ChatRole): void => {
      ensureMember.run(userId)
      if (role === 'broadcaster') demoteBroadcaster.run()
      setRole.run(role, userId)
    }),

    ban: transactional(db, (userId: number, reason: string | null): void => {
      ensureMember.run(userId)
      setBan.run(1, reason, userId)
    }),

    timeout: transactional(db, (userId: number, untilMs: number): void => {
      ensureMember.run(userId)
      setTimeoutUntil.run(untilMs, userId)
    }),

    unban: transactional(db, (userId: number): void => {
      ensureMember.run(userId)
      setBan.run(0, null, userId)
    }),

    /** A page of messages, oldest to newest, plus whether there are older or newer ones. */
    messages (limit: number, cursor: { before?: number, after?: number }): { data: ChatMessage[], hasOlder: boolean, hasNewer: boolean } {
      if (cursor.after !== undefined) {
        const rows = after.all(cursor.after, limit + 1)
        const data = rows.slice(0, limit).map(toMessage)
        return { data, hasNewer: rows.length > limit, hasOlder: olderExists.get(data[0]?.id ?? cursor.after + 1) !== undefined }
      }
      const rows = cursor.before !== undefined ? before.all(cursor.before, limit + 1) : latest.all(limit + 1)
      const data = rows.slice(0, limit).reverse().map(toMessage)
      const last = data.at(-1)?.id ?? (cursor.before ?? Number.MAX_SAFE_INTEGER) - 1
      return { data, hasOlder: rows.length > limit, hasNewer: newerExists.get(last) !== undefined }
    },

    /** Stores a user's message and, when it triggers a command, the bot's answer (one transaction). */
    send: transactional(db, (userId: number, text: string, reply?: { commandId: number, text: string }): { message: ChatMessage, events: ChatEvent[] } => {
      const sent = postMessage(userId, text, 'user')
      const events = [sent.event]
      if (reply !== undefined) {
        useCommand.run(Date.now(), reply.commandId)
        events.push(postMessage(null, reply.text, 'command').event)
        events.push(event('command.updated', toCommand(commandById.get(reply.commandId)!)))
      }
      return { message: sent.message, events }
    }),

    deleteMessage: transactional(db, (id: number, by: number): ChatEvent => {
      if (markDeleted.run(nowIso(), by, id).changes === 0) throw httpErrors.notFound(`message ${id} not found`)
      return event('message.deleted', { id })
    }),

    commands: (): ChatCommand[] => commands.all().map(toCommand),
    command: (id: number): ChatCommand => toCommand(requireCommand(id)),

    /** The enabled command a trigger word names, with when it was last used (epoch ms). */
    trigger (word: string): (ChatCommand & { lastUsedAt: number | null }) | undefined {
      const row = commandByTrigger.get(word)
      return row === undefined || row.enabled !== 1 ? undefined : { ...toCommand(row), lastUsedAt: row.last_used_at }
    },

    createCommand: transactional(db, (input: Required<Pick<CommandInput, 'command' | 'response'>> & CommandInput): { command: ChatCommand, event: ChatEvent } => {
      duplicateTrigger(input.command)
      const now = nowIso()
      const id = Number(insertCommand.run(input.command, input.response, input.cooldown_seconds ?? 30, input.permission ?? 'everyone',
        input.enabled === false ? 0 : 1, now, now).lastInsertRowid)
      const command = toCommand(requireCommand(id))
      return { command, event: event('command.created', command) }
    }),

    updateCommand: transactional(db, (id: number, change: CommandInput): { command: ChatCommand, event: ChatEvent } => {
      const row = requireCommand(id)
      if (change.command !== undefined) duplicateTrigger(change.command, id)
      updateCommand.run(change.command ?? row.command, change.response ?? row.response, change.cooldown_seconds ?? row.cooldown_seconds,
        change.permission ?? row.permission, change.enabled === undefined ? row.enabled : change.enabled ? 1 : 0, nowIso(), id)
      const command = toCommand(requireCommand(id))
      return { command, event: event('command.updated', command) }
    }),

    deleteCommand: transactional(db, (id: number): ChatEvent => {
      requireCommand(id)
      deleteCommand.run(id)
      return event('command.deleted', { id })
    }),

    terms: () => terms.all(),

    addTerm: transactional(db, (term: string, by: number) => {
      const existing = termByText.get(term)
      if (existing !== undefined) throw httpErrors.conflict(`the term '${term}' is already blocked (id ${existing.id})`)
      const id = Number(insertTerm.run(term, by, nowIso()).lastInsertRowid)
      return terms.all().find((t) => t.id === id)!
    }),

    removeTerm (id: number): void {
      if (deleteTerm.run(id).changes === 0) throw httpErrors.notFound(`blocked term ${id} not found`)
    },

    /** Events after `seq`, oldest first, or null when `seq` is older than the kept log. */
    eventsAfter (seq: number, limit: number): ChatEvent[] | null {
      const first = firstSeq.get()?.seq ?? null
      if (first !== null && seq < first - 1) return null
      return eventsAfter.all(seq, limit).map((row) => ({ seq: row.seq, type: row.type, data: JSON.parse(row.data) as unknown }))
    },

    latestSeq: (): number => lastSeq.get()?.seq ?? 0,

    /** Keeps the newest `keep` events of the log. */
    pruneEvents (keep: number): void {
      const last = lastSeq.get()?.seq ?? 0
      if (last > keep) pruneEvents.run(last - keep)
    }
  }
}

export type ChatRepository = ReturnType<typeof createChatRepository>
