import type { CommandPermission } from '../../db/chat/repository.js'

export type ImportFormat = 'nightbot' | 'streamelements'

export interface ImportedCommand {
  command: string
  response: string
  cooldown_seconds: number
  user_cooldown_seconds: number
  permission: CommandPermission
  enabled: boolean
  use_count: number
  counter: { name: string, add: number } | null
}

export interface ImportPlan {
  commands: ImportedCommand[]
  skipped: Array<{ command: string, reason: string }>
  warnings: Array<{ command: string, message: string }>
}

const MAX_NAME_SHOWN = 60
const TRIGGER = /^\S{1,50}$/
const COUNTER = /^[A-Za-z0-9_-]{1,40}$/

const shown = (value: unknown): string => typeof value === 'string' ? [...value].slice(0, MAX_NAME_SHOWN).join('') : '(no name)'
const seconds = (value: unknown): number => typeof value === 'number' && Number.isFinite(value) ? Math.min(86_400, Math.max(0, Math.round(value))) : 0

/** Nightbot's user levels, and StreamElements' access levels, as our permissions (never wider). */
function nightbotLevel (level: unknown): { permission: CommandPermission, warning?: string } {
  if (level === undefined || level === 'everyone') return { permission: 'everyone' }
  if (level === 'owner' || level === 'admin') return { permission: 'broadcaster' }
  if (level === 'moderator') return { permission: 'moderator' }
  return { permission: 'moderator', warning: `user level '${shown(level)}' has no match here: limited to moderators` }
}

function streamElementsLevel (level: unknown): { permission: CommandPermission, warning?: string } {
  const value = typeof level === 'number' ? level : 100
  if (value <= 100) return { permission: 'everyone' }
  if (value >= 1500) return { permission: 'broadcaster' }
  if (value >= 500) return { permission: 'moderator' }
  return { permission: 'moderator', warning: `access level ${value} has no match here: limited to moderators` }
}

/** The other service's `$(name args)` or `${name args}` variable as ours, or undefined. */
function mapVariable (format: ImportFormat, body: string, counter: (name: string) => void): string | undefined {
  const space = body.indexOf(' ')
  const name = (space === -1 ? body : body.slice(0, space)).toLowerCase()
  const rest = space === -1 ? '' : body.slice(space + 1).trim()
  if (rest === '') {
    if (['user', 'sender', 'user.name', 'sender.name'].includes(name)) return '{user}'
    if (name === 'touser' || name === 'touser.name') return '{touser}'
    if (name === 'count') return '{count}'
    if (name === 'query' || name === '1:') return '{args}'
    if (/^[1-9]$/.test(name)) return `{${name}}`
    const range = /^random\.(\d{1,9})-(\d{1,9})$/.exec(name)
    if (range !== null) return `{random ${range[1]}-${range[2]}}`
    const zone = /^time\.(\S+)$/.exec(name)
    if (zone !== null) return `{time ${zone[1]}}`
    return undefined
  }
  if (name === 'time') return `{time ${rest}}`
  if (name === 'getcount' && COUNTER.test(rest)) return `{count ${rest}}`
  if (name === 'count' && COUNTER.test(rest) && format === 'streamelements') {
    counter(rest)
    return `{count ${rest}}`
  }
  if (name === 'random.pick') {
    const options = rest.match(/'[^']*'|"[^"]*"/g)
    if (options === null || options.join(' ').length !== rest.replace(/\s+/g, ' ').length) return undefined
    return `{random.pick ${options.map((o) => `"${o.slice(1, -1).replaceAll('"', '')}"`).join(' ')}}`
  }
  return undefined
}

/**
 * Rewrites `$(…)` (Nightbot) and `${…}` (StreamElements) variables into ours, in one pass; a
 * variable with no match is left as typed and named in a warning.
 */
export function mapVariables (format: ImportFormat, text: string): { text: string, unmatched: string[], counter?: string } {
  const out: string[] = []
  const unmatched: string[] = []
  let counter: string | undefined
  let at = 0
  while (at < text.length) {
    const dollar = text.indexOf('$', at)
    if (dollar === -1 || dollar + 1 >= text.length) break
    const open = text[dollar + 1]
    const close = open === '(' ? ')' : open === '{' ? '}' : undefined
    if (close === undefined) {
      out.push(text.slice(at, dollar + 1))
      at = dollar + 1
      continue
    }
    let end = dollar + 2
    while (end < text.length && text[end] !== close && text[end] !== '$') end++
    if (end === text.length || text[end] === '$') {
      // Unclosed, or another variable inside this one: left as typed, the outer one named.
      if (unmatched.length < 20) unmatched.push(`${text.slice(dollar, Math.min(end, dollar + 59)).trimEnd()}…`)
      out.push(text.slice(at, end))
      at = end
      continue
    }
    const body = text.slice(dollar + 2, end).trim()
    const mapped = mapVariable(format, body, (name) => { counter = name })
    out.push(text.slice(at, dollar), mapped ?? text.slice(dollar, end + 1))
    if (mapped === undefined && unmatched.length < 20) unmatched.push(text.slice(dollar, Math.min(end + 1, dollar + 60)))
    at = end + 1
  }
  out.push(text.slice(at))
  return { text: out.join(''), unmatched, counter }
}

/** Reads one exported command of either service as ours, or why it cannot be imported. */
function readOne (format: ImportFormat, raw: Record<string, unknown>): { command?: ImportedCommand, name: string, reason?: string, warnings: string[] } {
  const nightbot = format === 'nightbot'
  const trigger = nightbot ? raw.name : raw.command
  const reply = nightbot ? raw.message : raw.reply
  const name = shown(trigger)
  if (typeof trigger !== 'string' || !TRIGGER.test(trigger.trim())) return { name, reason: 'the trigger must be one word of 1-50 characters', warnings: [] }
  if (typeof reply !== 'string' || reply.trim() === '') return { name, reason: 'the response is missing', warnings: [] }
  const mapped = mapVariables(format, reply.trim())
  if ([...mapped.text].length > 500) return { name, reason: 'the response is longer than 500 characters', warnings: [] }
  const warnings = mapped.unmatched.map((v) => `no variable here matches ${v}; left as typed`)
  const level = nightbot ? nightbotLevel(raw.userLevel) : streamElementsLevel(raw.accessLevel)
  if (level.warning !== undefined) warnings.push(level.warning)
  const cooldown = (nightbot ? undefined : raw.cooldown) as { global?: unknown, user?: unknown } | undefined
  const command: ImportedCommand = {
    command: trigger.trim(),
    response: mapped.text,
    cooldown_seconds: nightbot ? (raw.coolDown === undefined ? 30 : seconds(raw.coolDown)) : seconds(cooldown?.global),
    user_cooldown_seconds: nightbot ? 0 : seconds(cooldown?.user),
    permission: level.permission,
    enabled: raw.enabled !== false,
    use_count: nightbot && typeof raw.count === 'number' && Number.isSafeInteger(raw.count) && raw.count >= 0 ? raw.count : 0,
    counter: mapped.counter === undefined ? null : { name: mapped.counter.toLowerCase(), add: 1 }
  }
  return { command, name, warnings }
}

/** Reads a Nightbot or StreamElements command export: what to import, what to skip and why, warnings. */
export function planImport (format: ImportFormat, raw: Array<Record<string, unknown>>): ImportPlan {
  const plan: ImportPlan = { commands: [], skipped: [], warnings: [] }
  const seen = new Set<string>()
  for (const item of raw) {
    const one = readOne(format, item)
    if (one.command === undefined) {
      plan.skipped.push({ command: one.name, reason: one.reason! })
      continue
    }
    const key = one.command.command.toLowerCase()
    if (seen.has(key)) {
      plan.skipped.push({ command: one.name, reason: 'the trigger appears twice in the import' })
      continue
    }
    seen.add(key)
    plan.commands.push(one.command)
    for (const message of one.warnings) plan.warnings.push({ command: one.name, message })
  }
  return plan
}
