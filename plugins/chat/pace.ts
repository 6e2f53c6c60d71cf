import { ROLE_RANK, type ChatRole } from '../../db/chat/repository.js'

export interface ChatSettingsValue { slow_seconds: number, new_user_minutes: number, new_user_sends_per_minute: number }

export interface PaceState {
  role: ChatRole
  /** when the member was first seen (epoch ms; this send, for a first-timer) */
  firstSeenAt: number
  /** when the member's messages of the last minute were sent, newest first (epoch ms) */
  recent: number[]
}

export interface PaceVerdict { waitSeconds: number, reason: string }

/**
 * Slow mode and the new-user limit (moderators exempt): the seconds a member must still wait
 * before this message, with why, or undefined when it may go.
 */
export function paceWait (settings: ChatSettingsValue, state: PaceState, now: number): PaceVerdict | undefined {
  if (ROLE_RANK[state.role] >= ROLE_RANK.moderator) return undefined
  const last = state.recent[0]
  if (settings.slow_seconds > 0 && last !== undefined && now - last < settings.slow_seconds * 1000) {
    return { waitSeconds: Math.ceil((last + settings.slow_seconds * 1000 - now) / 1000), reason: `slow mode: one message per ${settings.slow_seconds} s` }
  }
  const limit = settings.new_user_sends_per_minute
  const isNew = settings.new_user_minutes > 0 && now - state.firstSeenAt < settings.new_user_minutes * 60_000
  if (isNew && limit > 0) {
    const inWindow = state.recent.filter((at) => now - at < 60_000)
    if (inWindow.length >= limit) {
      const oldest = inWindow[limit - 1]
      return { waitSeconds: Math.max(1, Math.ceil((oldest + 60_000 - now) / 1000)), reason: `new users may send ${limit} messages per minute` }
    }
  }
  return undefined
}

export interface CooldownState {
  role: ChatRole
  cooldown_seconds: number
  user_cooldown_seconds: number
  moderators_exempt: boolean
  /** the command's last use by anyone, and by this sender (epoch ms) */
  lastUsedAt: number | null
  userLastUsedAt: number | null
}

/** The seconds left before the command answers this sender again (0: it answers now). */
export function cooldownLeft (state: CooldownState, now: number): number {
  if (state.moderators_exempt && ROLE_RANK[state.role] >= ROLE_RANK.moderator) return 0
  const left = (at: number | null, seconds: number): number => at === null ? 0 : Math.max(0, at + seconds * 1000 - now)
  const ms = Math.max(left(state.lastUsedAt, state.cooldown_seconds), left(state.userLastUsedAt, state.user_cooldown_seconds))
  return Math.ceil(ms / 1000)
}

export interface TimerState { interval_minutes: number, min_lines: number, enabled: boolean, last_run_at: number }

/** Whether a timer runs now: enabled, its interval passed since the last run, and enough lines since. */
export const timerDue = (timer: TimerState, now: number, linesSince: number): boolean =>
  timer.enabled && now >= timer.last_run_at + timer.interval_minutes * 60_000 && linesSince >= timer.min_lines
