/** A reply the bot posts is cut to this many characters (Unicode code points). */
export const MAX_REPLY = 500

export interface VariableContext {
  /** the sender's login */
  user: string
  /** the words after the trigger */
  args: string[]
  /** the command's use count, this use included */
  count: number
  /** counter values by lower-cased name (a counter not listed is 0) */
  counters: Record<string, number>
  now: number
  /** an integer in [min, max] */
  random: (min: number, max: number) => number
}

const COUNTER = /^[A-Za-z0-9_-]{1,40}$/
const RANDOM_RANGE = /^(\d{1,9})-(\d{1,9})$/
const timeFormats = new Map<string, Intl.DateTimeFormat | null>()

function timeIn (zone: string, now: number): string | undefined {
  let format = timeFormats.get(zone)
  if (format === undefined) {
    try {
      format = new Intl.DateTimeFormat('en-GB', { timeZone: zone, hour: '2-digit', minute: '2-digit', hourCycle: 'h23' })
    } catch {
      format = null
    }
    if (timeFormats.size < 1000) timeFormats.set(zone, format)
  }
  return format?.format(now)
}

/** `"a" "b c"` as its quoted options, or undefined when it is not only quoted options. */
function quoted (list: string): string[] | undefined {
  const parts = list.split('"')
  // "a" "b" splits into ['', 'a', ' ', 'b', '']: options at odd places, single spaces between.
  if (parts.length < 3 || parts.length % 2 === 0 || parts[0] !== '' || parts.at(-1) !== '') return undefined
  for (let i = 2; i < parts.length - 1; i += 2) if (parts[i].trim() !== '' || parts[i] === '') return undefined
  return parts.filter((_, i) => i % 2 === 1)
}

/** The value of one variable (what is between the braces), or undefined to leave it as typed. */
function resolve (name: string, ctx: VariableContext): string | undefined {
  if (name === 'user') return ctx.user
  if (name === 'touser') return (ctx.args[0] ?? ctx.user).replace(/^@/, '')
  if (name === 'args') return ctx.args.join(' ')
  if (name === 'count') return String(ctx.count)
  if (name.length === 1 && name >= '1' && name <= '9') return ctx.args[Number(name) - 1] ?? ''
  const space = name.indexOf(' ')
  if (space === -1) return undefined
  const head = name.slice(0, space)
  const rest = name.slice(space + 1).trim()
  if (head === 'count' && COUNTER.test(rest)) return String(ctx.counters[rest.toLowerCase()] ?? 0)
  if (head === 'time') return timeIn(rest, ctx.now)
  if (head === 'random') {
    const range = RANDOM_RANGE.exec(rest)
    if (range === null || Number(range[1]) > Number(range[2])) return undefined
    return String(ctx.random(Number(range[1]), Number(range[2])))
  }
  if (head === 'random.pick') {
    const options = quoted(rest)
    return options === undefined ? undefined : options[ctx.random(0, options.length - 1)]
  }
  return undefined
}

/**
 * Expands `{name}` variables in a command response or timer message. One pass from left to
 * right: a `{` starts a variable only up to the next `}` with no `{` between, so every character
 * is looked at a bounded number of times (linear time, whatever the template). Unknown names are
 * left as typed; the result is cut to 500 characters.
 */
export function expand (template: string, ctx: VariableContext): string {
  const out: string[] = []
  let length = 0
  const push = (text: string): void => {
    out.push(text)
    length += text.length
  }
  let at = 0
  while (at < template.length) {
    if (length > MAX_REPLY * 2) break
    const open = template.indexOf('{', at)
    if (open === -1) {
      push(template.slice(at))
      break
    }
    let close = open + 1
    while (close < template.length && template[close] !== '}' && template[close] !== '{') close++
    if (close === template.length) {
      push(template.slice(at))
      break
    }
    if (template[close] === '{') {
      push(template.slice(at, close))
      at = close
      continue
    }
    push(template.slice(at, open))
    push(resolve(template.slice(open + 1, close), ctx) ?? template.slice(open, close + 1))
    at = close + 1
  }
  const text = out.join('')
  const chars = [...text.slice(0, MAX_REPLY * 2)]
  return chars.length > MAX_REPLY ? chars.slice(0, MAX_REPLY).join('') : chars.join('')
}

/** The counters a template reads with `{count NAME}`, lower-cased (at most 20). */
export function countersIn (template: string): string[] {
  const names = new Set<string>()
  let at = template.indexOf('{count ')
  while (at !== -1 && names.size < 20) {
    const close = template.indexOf('}', at)
    if (close === -1) break
    const name = template.slice(at + 7, close).trim()
    if (COUNTER.test(name)) names.add(name.toLowerCase())
    at = template.indexOf('{count ', at + 7)
  }
  return [...names]
}

/** Math.random within [min, max], the default source for `{random}`. */
export const randomInt = (min: number, max: number): number => min + Math.floor(Math.random() * (max - min + 1))
