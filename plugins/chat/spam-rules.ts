import { ROLE_RANK, type ChatRole } from '../../db/chat/repository.js'
import type { FilterAction, FilterSettings, Sanction } from '../../db/chat/filters.js'
import { matchPattern } from './patterns.js'

export interface FilterHit {
  /** the filter named in answers: `pattern`, `links`, `caps`, `repetition` */
  filter: string
  action: FilterAction
  /** for `timeout` pattern filters */
  timeoutSeconds?: number
  /** what matched, said in the 422 answer */
  detail: string
}

const HOST_CHARS = /^[a-z0-9-]+$/
const TLD = /^[a-z]{2,24}$/

/** The host a word names as a link (`example.org`, `https://x.example.org/path`), or undefined. */
export function linkHost (word: string): string | undefined {
  let rest = word.toLowerCase().replace(/^[("'<[]+/, '')
  const scheme = rest.indexOf('://')
  if (scheme !== -1) {
    if (!/^[a-z][a-z0-9+.-]*$/.test(rest.slice(0, scheme))) return undefined
    rest = rest.slice(scheme + 3)
    const at = rest.lastIndexOf('@', rest.search(/[/?#]|$/))
    if (at !== -1) rest = rest.slice(at + 1)
  }
  const end = rest.search(/[/?#:]/)
  const host = (end === -1 ? rest : rest.slice(0, end)).replace(/[.,;!?)"'>\]]+$/, '')
  const labels = host.split('.')
  if (labels.length < 2 || labels.some((l) => l === '' || !HOST_CHARS.test(l))) return undefined
  if (!TLD.test(labels.at(-1)!)) return undefined
  return host
}

/** The hosts of the links in a message (whitespace-separated words, each looked at once). */
export function linksIn (text: string): string[] {
  return text.split(/\s+/).map(linkHost).filter((h): h is string => h !== undefined)
}

/** Whether a host is one of the allowed domains or under one. */
export const allowedHost = (host: string, domains: string[]): boolean =>
  domains.some((d) => host === d.toLowerCase() || host.endsWith(`.${d.toLowerCase()}`))

/** Whether a message shouts: at least `min_length` letters, more than `max_ratio` of them capitals. */
export function shouts (text: string, caps: { min_length: number, max_ratio: number }): boolean {
  let letters = 0
  let upper = 0
  for (const ch of text) {
    const lower = ch.toLowerCase()
    const up = ch.toUpperCase()
    if (lower === up) continue
    letters++
    if (ch === up) upper++
  }
  return letters >= caps.min_length && upper / letters > caps.max_ratio
}

export interface FilterInput {
  text: string
  role: ChatRole
  settings: FilterSettings
  patterns: Array<{ pattern: string, action: FilterAction, timeout_seconds: number | null }>
  /** the sender holds a permit for links */
  permitted: boolean
  /** the sender's messages with this text within `repetition.seconds` (this one not included) */
  repeats: number
}

/**
 * The first filter a message trips, in order: patterns, links, caps, repetition; none for the
 * roles the settings exempt (the blocked terms apply to everyone).
 */
export function judge (input: FilterInput): FilterHit | undefined {
  const { settings, text } = input
  if (settings.exempt_roles.includes(input.role)) return undefined
  const pattern = matchPattern(text, input.patterns)
  if (pattern !== undefined) {
    return { filter: 'pattern', action: pattern.action, timeoutSeconds: pattern.timeout_seconds ?? 600, detail: `the pattern filter '${pattern.pattern}'` }
  }
  if (settings.links.enabled && !input.permitted) {
    const link = linksIn(text).find((host) => !allowedHost(host, settings.links.allowed_domains))
    if (link !== undefined) return { filter: 'links', action: settings.links.action, detail: `the links filter (${link} is not an allowed domain)` }
  }
  if (settings.caps.enabled && shouts(text, settings.caps)) return { filter: 'caps', action: settings.caps.action, detail: 'the caps filter' }
  if (settings.repetition.enabled && input.repeats + 1 >= settings.repetition.count) {
    return { filter: 'repetition', action: settings.repetition.action, detail: `the repetition filter (the same text ${settings.repetition.count} times in ${settings.repetition.seconds} s)` }
  }
  return undefined
}

/**
 * What a refusing filter does to the sender: with escalation steps, the Nth offense within the
 * window takes step N (the last one repeats); without, `timeout` filters time out and `refuse`
 * ones only refuse.
 */
export function sanction (hit: FilterHit, steps: string[], offenses: number): Sanction {
  if (steps.length > 0) {
    const step = steps[Math.min(offenses, steps.length) - 1]
    if (step === 'ban') return { kind: 'ban' }
    if (step.startsWith('timeout:')) return { kind: 'timeout', seconds: Number(step.slice(8)) }
    return { kind: 'warn' }
  }
  return hit.action === 'timeout' ? { kind: 'timeout', seconds: hit.timeoutSeconds ?? 600 } : { kind: 'warn' }
}

/** Whether a role is at least a moderator (exempt from slow mode and new-user limits). */
export const isModerator = (role: ChatRole): boolean => ROLE_RANK[role] >= ROLE_RANK.moderator

/**
 * The end of a refusal's message, saying what the filter did to the sender; a `warn` step of the
 * escalation says so, and what the next offense within the window brings.
 */
export function sanctionText (applied: Sanction, escalation?: { steps: string[], windowMinutes: number, offenses: number }): string {
  if (applied.kind === 'timeout') return `; you are timed out for ${applied.seconds} s`
  if (applied.kind === 'ban') return '; you are banned'
  if (escalation === undefined || escalation.steps.length === 0) return ''
  const next = sanction({ filter: '', action: 'refuse', detail: '' }, escalation.steps, escalation.offenses + 1)
  const within = `another offense within ${escalation.windowMinutes} minutes`
  if (next.kind === 'timeout') return `; this is a warning: ${within} times you out for ${next.seconds} s`
  if (next.kind === 'ban') return `; this is a warning: ${within} bans you`
  return '; this is a warning'
}
