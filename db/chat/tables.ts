import type { Generated } from 'kysely'

/** Tables of the chat-bot features (migration 013; docs/chat.md). Times in epoch ms unless ISO text. */
export interface ChatBotTables {
  chat_command_uses: { command_id: number, user_id: number, used_at: number }
  chat_counters: { name: string, value: number, updated_at: string }
  chat_timers: {
    id: Generated<number>
    name: string
    message: string
    interval_minutes: number
    min_lines: number
    enabled: number
    runs: Generated<number>
    last_run_at: number
    /** user messages with a greater id count as lines since the last run */
    last_message_id: number
    lease_owner: string | null
    lease_until: number | null
    created_at: string
    updated_at: string
  }
  chat_filter_patterns: {
    id: Generated<number>
    pattern: string
    action: 'refuse' | 'hold' | 'timeout'
    timeout_seconds: number | null
    created_by: number | null
    created_at: string
  }
  /** one JSON document per name (`filters`, `chat`) */
  chat_settings: { name: string, value: string, updated_at: string }
  chat_permits: { user_id: number, until: number }
  chat_offenses: { id: Generated<number>, user_id: number, filter: string, at: number }
  chat_held: {
    id: Generated<number>
    user_id: number | null
    text: string
    filter: string
    status: Generated<'pending' | 'approved' | 'denied'>
    held_at: string
    resolved_by: number | null
    resolved_at: string | null
    message_id: number | null
  }
}
