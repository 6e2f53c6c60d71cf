// The reports' charts as numbers: where each line, bar and dot of the SVG goes, from the API's
// answers (docs/sprints.md, "Reports"). Pure functions, unit-tested; the components draw them.

export interface BurndownReport {
  time_zone: string
  starts_at: string
  ends_at: string
  days: Array<{ date: string, remaining_points: number, remaining_issues: number, closed_points: number }>
  /** null: no planned end (a milestone without a due date) */
  ideal: Array<{ date: string, remaining_points: number }> | null
  scope_changes: Array<{ at: string, repo_id: number, issue_number: number, change: 'added' | 'removed' | 'estimate', points: number }>
}
export interface VelocityReport {
  sprints: Array<{ id: string, name: string, starts_at: string, ends_at: string, points_closed: number, issues_closed: number }>
  average_points: number
  average_issues: number
}
export interface CycleTimeReport {
  from: string
  to: string
  start_pipeline_id: string | null
  issues: Array<{ repo_id: number, issue_number: number, title: string, started_at: string, closed_at: string, days: number }>
  count: number
  p50: number | null
  p85: number | null
  p95: number | null
}

/** The drawing area of every chart, in SVG units (the SVG scales to its box). */
export const FRAME = { width: 640, height: 240, left: 44, right: 16, top: 14, bottom: 30 }
const plotWidth = FRAME.width - FRAME.left - FRAME.right
const plotHeight = FRAME.height - FRAME.top - FRAME.bottom

const round = (n: number): number => Math.round(n * 10) / 10
/** A number as the API writes it (at most three decimals). */
export const fmt = (n: number): string => String(Math.round(n * 1000) / 1000)

/** A cycle time (in days, as the API gives it) as a person reads it: minutes under an hour, hours under a day. */
export function daysText (days: number): string {
  const hours = days * 24
  if (hours < 1) {
    const minutes = Math.max(1, Math.round(hours * 60))
    return `${minutes} ${minutes === 1 ? 'minute' : 'minutes'}`
  }
  if (days < 1) {
    const h = Math.round(hours * 10) / 10
    return `${h} ${h === 1 ? 'hour' : 'hours'}`
  }
  return `${fmt(days)} ${fmt(days) === '1' ? 'day' : 'days'}`
}

/** The smallest 1, 2 or 5 × 10^n at or above `max` (at least 1): the top of a value axis. */
export function niceMax (max: number): number {
  if (!(max > 0)) return 1
  const power = 10 ** Math.floor(Math.log10(max))
  for (const step of [1, 2, 5, 10]) if (step * power >= max - 1e-9) return step * power
  return 10 * power
}

export interface Tick { y: number, label: string }
/** Five ticks from 0 to the axis' top. */
export function yTicks (top: number): Tick[] {
  return [0, 1, 2, 3, 4].map((i) => ({ y: yOf(top * i / 4, top), label: fmt(top * i / 4) }))
}
const yOf = (value: number, top: number): number => round(FRAME.top + plotHeight * (1 - value / top))

/** The day (YYYY-MM-DD) an instant falls on in a time zone. */
export function dayIn (at: string, timeZone: string): string {
  return new Intl.DateTimeFormat('en-CA', { timeZone, year: 'numeric', month: '2-digit', day: '2-digit' }).format(new Date(at))
}

export interface Point { x: number, y: number, label: string }
export interface BurndownChart {
  dates: string[]
  actual: Point[]
  ideal: Point[]
  scope: Array<{ x: number, label: string }>
  ticks: Tick[]
  xLabels: Array<{ x: number, label: string }>
}

/** Remaining points per day against the ideal line, one mark per scope change on its day. */
export function burndownChart (report: BurndownReport): BurndownChart {
  const plan = report.ideal ?? []
  const dates = [...new Set([...plan.map((i) => i.date), ...report.days.map((d) => d.date)])].sort()
  const step = dates.length > 1 ? plotWidth / (dates.length - 1) : 0
  const xOf = (date: string): number => round(FRAME.left + (dates.length > 1 ? dates.indexOf(date) * step : plotWidth / 2))
  const top = niceMax(Math.max(0, ...report.days.map((d) => d.remaining_points), ...plan.map((i) => i.remaining_points)))
  const every = Math.max(1, Math.ceil(dates.length / 8))
  return {
    dates,
    actual: report.days.map((d) => ({ x: xOf(d.date), y: yOf(d.remaining_points, top), label: `${d.date}: ${fmt(d.remaining_points)} pts remaining, ${d.remaining_issues} open` })),
    ideal: plan.map((i) => ({ x: xOf(i.date), y: yOf(i.remaining_points, top), label: `${i.date}: ideal ${fmt(i.remaining_points)} pts` })),
    scope: report.scope_changes.map((c) => {
      const day = dayIn(c.at, report.time_zone)
      const at = dates.includes(day) ? day : (day < dates[0] ? dates[0] : dates[dates.length - 1])
      return { x: xOf(at), label: `${day}: #${c.issue_number} ${scopeText(c)}` }
    }),
    ticks: yTicks(top),
    xLabels: dates.filter((_, i) => i % every === 0).map((d) => ({ x: xOf(d), label: d.slice(5) }))
  }
}

export function scopeText (c: BurndownReport['scope_changes'][number]): string {
  if (c.change === 'estimate') return `re-estimated (${c.points >= 0 ? '+' : ''}${fmt(c.points)} pts)`
  return `${c.change} (${fmt(c.points)} pts)`
}

export interface Bar { x: number, y: number, width: number, height: number, label: string, name: string }
/** One bar of points closed per sprint, and the average as a line. */
export function velocityChart (report: VelocityReport): { bars: Bar[], average: number, ticks: Tick[] } {
  const top = niceMax(Math.max(0, ...report.sprints.map((s) => s.points_closed)))
  const slot = plotWidth / Math.max(1, report.sprints.length)
  const width = round(Math.min(80, slot * 0.6))
  return {
    bars: report.sprints.map((s, i) => {
      const y = yOf(s.points_closed, top)
      return {
        x: round(FRAME.left + slot * i + (slot - width) / 2),
        y,
        width,
        height: round(FRAME.top + plotHeight - y),
        name: s.name,
        label: `${s.name}: ${fmt(s.points_closed)} pts, ${s.issues_closed} ${s.issues_closed === 1 ? 'issue' : 'issues'} closed`
      }
    }),
    average: yOf(report.average_points, top),
    ticks: yTicks(top)
  }
}

/** One dot per closed issue (when it closed, how many days it took), and the percentiles as lines. */
export function cycleTimeChart (report: CycleTimeReport): { dots: Point[], lines: Array<{ y: number, label: string }>, ticks: Tick[], unit: 'days' | 'hours' } {
  const from = Date.parse(report.from)
  const to = Date.parse(report.to)
  // Under a day, the axis counts hours.
  const most = Math.max(0, ...report.issues.map((i) => i.days))
  const unit = most < 1 ? 'hours' : 'days'
  const scale = unit === 'hours' ? 24 : 1
  const top = niceMax(most * scale)
  const xOf = (at: string): number => round(FRAME.left + plotWidth * Math.min(1, Math.max(0, (Date.parse(at) - from) / Math.max(1, to - from))))
  // Percentiles of the same value share one line and one label.
  const values = new Map<number, string[]>()
  for (const p of ['p50', 'p85', 'p95'] as const) if (report[p] !== null) values.set(report[p]!, [...(values.get(report[p]!) ?? []), p])
  const lines = [...values].map(([value, names]) => ({ y: yOf(value * scale, top), label: `${names.join(', ')} ${daysText(value)}` }))
  return {
    dots: report.issues.map((i) => ({ x: xOf(i.closed_at), y: yOf(i.days * scale, top), label: `#${i.issue_number} ${i.title}: ${daysText(i.days)}` })),
    lines,
    ticks: yTicks(top),
    unit
  }
}

/** A polyline's points attribute. */
export const polyline = (points: Point[]): string => points.map((p) => `${p.x},${p.y}`).join(' ')
