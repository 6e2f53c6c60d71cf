import type { Static } from '../schemas/common.js'
import type { Burndown as BurndownSchema, CycleTime as CycleTimeSchema, Velocity as VelocitySchema } from '../schemas/reports.js'
import type { Sprint as SprintSchema, SprintEvent as SprintEventSchema, SprintReview as SprintReviewSchema } from '../schemas/sprints.js'
import { Invalid, NotFound } from './errors.js'
import { inStays, IssueHistory, staysFrom, type Stay } from './history.js'
import { checkReportDates } from './report-span.js'
import type { SprintRow } from './sprints.js'
import type { Executor } from './engine/transaction.js'
import { addDays, localDate, startOfDay } from './zoned-time.js'

export type Burndown = Static<typeof BurndownSchema>
export type Velocity = Static<typeof VelocitySchema>
export type CycleTime = Static<typeof CycleTimeSchema>
export type SprintReview = Static<typeof SprintReviewSchema>
export type SprintEvent = Static<typeof SprintEventSchema>

type CanRead = (repoId: number) => boolean
interface IssueInfo { repo_id: number, number: number, title: string }
interface SprintIssueEvent { issue_id: number, type: string, at: string, carried: number }
interface Scope { issues: Map<number, IssueInfo>, stays: Map<number, Stay[]> }

const DAY_MS = 86_400_000
const round = (x: number): number => Math.round(x * 1000) / 1000

/** Nearest-rank percentile of sorted values. */
export function percentile (sorted: number[], p: number): number | null {
  if (sorted.length === 0) return null
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(p / 100 * sorted.length) - 1))]
}

/**
 * The daily series of a period: for each day from `firstDay` to `lastDay` (in the zone) up to today,
 * the scope as it stood at the end of that day (or now, or the period's end, whichever is first).
 * Remaining counts members that were open; the ideal line runs from the scope at the start to 0.
 */
export interface Period {
  start: number
  end: number
  firstDay: string
  lastDay: string
  timeZone: string
  /** no planned end (a milestone without a due date): no ideal line */
  openEnded?: boolean
}

export function burndownOf (scope: Scope, history: IssueHistory, period: Period, now: number): Burndown {
  // Checked here too: a milestone's due date comes from the host, a report's dates may predate the limit.
  checkReportDates(period.firstDay, period.lastDay, 'the burndown')
  const members = (at: number) => [...scope.stays].filter(([, stays]) => inStays(stays, at)).map(([id]) => id)
  const measure = (at: number) => {
    let remainingPoints = 0
    let remainingIssues = 0
    let closedPoints = 0
    for (const id of members(at)) {
      const points = history.estimateAt(id, at)
      if (history.closedAt(id, at, true)) closedPoints += points
      else {
        remainingPoints += points
        remainingIssues++
      }
    }
    return { remaining_points: round(remainingPoints), remaining_issues: remainingIssues, closed_points: round(closedPoints) }
  }
  const days: Burndown['days'] = []
  const dates: string[] = []
  for (let day = period.firstDay; day <= period.lastDay; day = addDays(day, 1)) dates.push(day)
  for (const date of dates) {
    if (startOfDay(date, period.timeZone) > now) break
    const at = Math.min(startOfDay(addDays(date, 1), period.timeZone), period.end, now)
    days.push({ date, ...measure(at) })
  }
  let start = measure(period.start).remaining_points
  if (members(period.start).length === 0) {
    // Nothing in scope at the start (a report made after the fact): the ideal starts from the issues it holds,
    // open at the start, at their estimate then (or, with none then, their estimate as last measured).
    const at = Math.min(period.end - 1, now)
    start = round(members(at).filter((id) => !history.closedAt(id, period.start, true))
      .reduce((sum, id) => sum + (history.estimateAt(id, period.start) || history.estimateAt(id, at)), 0))
  }
  const ideal = period.openEnded === true
    ? null
    : dates.map((date, i) => ({ date, remaining_points: round(dates.length === 1 ? 0 : start * (1 - i / (dates.length - 1))) }))
  const changes: Burndown['scope_changes'] = []
  const within = (at: number | null): at is number => at !== null && at > period.start && at < period.end && at <= now
  for (const [id, stays] of scope.stays) {
    const issue = scope.issues.get(id)!
    const ref = { repo_id: issue.repo_id, issue_number: issue.number }
    for (const stay of stays) {
      if (within(stay.from)) changes.push({ at: new Date(stay.from).toISOString(), ...ref, change: 'added', points: history.estimateAt(id, stay.from) })
      if (within(stay.to)) changes.push({ at: new Date(stay.to).toISOString(), ...ref, change: 'removed', points: history.estimateAt(id, stay.to - 1) })
    }
    for (const change of history.estimateChanges(id, period.start, Math.min(period.end, now + 1))) {
      if (change.at > period.start && inStays(stays, change.at)) changes.push({ at: new Date(change.at).toISOString(), ...ref, change: 'estimate', points: round(change.delta) })
    }
  }
  changes.sort((a, b) => a.at.localeCompare(b.at) || a.repo_id - b.repo_id || a.issue_number - b.issue_number)
  return {
    time_zone: period.timeZone,
    starts_at: new Date(period.start).toISOString(),
    ends_at: new Date(period.end).toISOString(),
    days,
    ideal,
    scope_changes: changes
  }
}

/** Reports computed from the recorded history (docs, "Sprints and reports"). */
export function createReportsRepository (db: Executor) {
  const issueInfo = async (ids: number[], canRead: CanRead): Promise<Map<number, IssueInfo>> => {
    const out = new Map<number, IssueInfo>()
    const unique = [...new Set(ids)]
    for (let i = 0; i < unique.length; i += 500) {
      const rows = await db.selectFrom('issues').select(['id', 'repo_id', 'number', 'title']).where('id', 'in', unique.slice(i, i + 500)).execute()
      for (const row of rows) {
        if (canRead(Number(row.repo_id))) out.set(Number(row.id), { repo_id: Number(row.repo_id), number: Number(row.number), title: row.title })
      }
    }
    return out
  }

  /** Who was in the sprint when, from its recorded events (only issues of readable repositories). */
  const sprintScope = async (sprintId: string, canRead: CanRead): Promise<Scope & { events: SprintIssueEvent[] }> => {
    const events = (await db.selectFrom('sprint_events').select(['issue_id', 'type', 'at', 'carried'])
      .where('sprint_id', '=', sprintId).where('issue_id', 'is not', null).orderBy('at').orderBy('id').execute())
      .map((e) => ({ issue_id: Number(e.issue_id), type: e.type, at: e.at, carried: Number(e.carried) }))
    const issues = await issueInfo(events.map((e) => e.issue_id), canRead)
    const stays = new Map<number, Stay[]>()
    for (const id of issues.keys()) {
      const changes = events.filter((e) => e.issue_id === id).map((e) => ({ at: Date.parse(e.at), added: e.type === 'sprint_issue_added' }))
      stays.set(id, staysFrom(changes, false, false))
    }
    return { issues, stays, events: events.filter((e) => issues.has(e.issue_id)) }
  }

  /** Points and issues completed in a sprint: its members at the end (or now) closed before it. */
  const completed = (scope: Scope, history: IssueHistory, end: number) => {
    let points = 0
    let issues = 0
    for (const [id, stays] of scope.stays) {
      if (!inStays(stays, end - 1) || !history.closedAt(id, end, true)) continue
      points += history.estimateAt(id, end)
      issues++
    }
    return { points: round(points), issues }
  }

  const sprintRows = async (workspaceId: string): Promise<SprintRow[]> =>
    (await db.selectFrom('sprints').select(['id', 'workspace_id', 'number', 'name', 'starts_at', 'ends_at', 'started', 'ended'])
      .where('workspace_id', '=', workspaceId).orderBy('starts_at').execute())
      .map((r) => ({ ...r, number: Number(r.number), started: Number(r.started), ended: Number(r.ended) }))

  const velocity = async (workspaceId: string, count: number, canRead: CanRead, now: number): Promise<Velocity> => {
    const closed = (await sprintRows(workspaceId)).filter((s) => Date.parse(s.ends_at) <= now).slice(-count)
    const sprints: Velocity['sprints'] = []
    for (const sprint of closed) {
      const scope = await sprintScope(sprint.id, canRead)
      const done = completed(scope, await IssueHistory.load(db, [...scope.issues.keys()]), Date.parse(sprint.ends_at))
      const { id, name, starts_at: startsAt, ends_at: endsAt } = sprint
      sprints.push({ id, name, starts_at: startsAt, ends_at: endsAt, points_closed: done.points, issues_closed: done.issues })
    }
    const average = (f: (s: Velocity['sprints'][number]) => number) => sprints.length === 0 ? 0 : round(sprints.reduce((sum, s) => sum + f(s), 0) / sprints.length)
    return { sprints, average_points: average((s) => s.points_closed), average_issues: average((s) => s.issues_closed) }
  }

  /** The zone of the workspace's sprint configuration (UTC without one). */
  const zoneOf = async (workspaceId: string): Promise<string> =>
    (await db.selectFrom('sprint_configs').select('time_zone').where('workspace_id', '=', workspaceId).executeTakeFirst())?.time_zone ?? 'UTC'

  /** The zone of the oldest workspace holding one of the repositories that has a sprint configuration (UTC without one). */
  const zoneOfRepositories = async (repoIds: number[]): Promise<string> => {
    if (repoIds.length === 0) return 'UTC'
    const row = await db.selectFrom('sprint_configs as c').innerJoin('workspaces as w', 'w.id', 'c.workspace_id')
      .innerJoin('workspace_repositories as wr', 'wr.workspace_id', 'w.id')
      .select('c.time_zone').where('wr.repo_id', 'in', repoIds).orderBy('w.created_at').orderBy('w.seq').limit(1).executeTakeFirst()
    return row?.time_zone ?? 'UTC'
  }

  return {
    zoneOf,
    zoneOfRepositories,

    async sprintBurndown (sprint: SprintRow, timeZone: string, canRead: CanRead, now: number): Promise<Burndown> {
      const scope = await sprintScope(sprint.id, canRead)
      const history = await IssueHistory.load(db, [...scope.issues.keys()])
      const start = Date.parse(sprint.starts_at)
      const end = Date.parse(sprint.ends_at)
      return burndownOf(scope, history, { start, end, firstDay: localDate(start, timeZone), lastDay: localDate(end - 1, timeZone), timeZone }, now)
    },

    /** From the milestone's start date to its due date, or to today without one (no ideal line then). */
    async milestoneBurndown (repoId: number, number: number, timeZone: string | undefined, canRead: CanRead, now: number): Promise<Burndown> {
      const milestone = await db.selectFrom('milestones').select(['start_date', 'due_on']).where('repo_id', '=', repoId).where('number', '=', number).executeTakeFirst()
      if (milestone === undefined) throw new NotFound(`milestone ${number} not found in repository ${repoId}`)
      if (milestone.start_date === null) throw new Invalid(`milestone ${number} has no start date; set one with POST /p1/repositories/${repoId}/milestones/${number}/start_date`)
      const zone = timeZone ?? await zoneOfRepositories([repoId])
      const records = await db.selectFrom('issue_milestones').select(['issue_id', 'milestone_number', 'at']).where('repo_id', '=', repoId)
        .where('issue_id', 'in', (eb) => eb.selectFrom('issue_milestones').select('issue_id').where('repo_id', '=', repoId).where('milestone_number', '=', number))
        .orderBy('at').orderBy('id').execute()
      const current = await db.selectFrom('issues').select('id').where('repo_id', '=', repoId).where('milestone_number', '=', number).execute()
      const ids = [...new Set([...records.map((r) => Number(r.issue_id)), ...current.map((r) => Number(r.id))])]
      const issues = await issueInfo(ids, canRead)
      const stays = new Map<number, Stay[]>()
      const now_ = new Set(current.map((r) => Number(r.id)))
      for (const id of issues.keys()) {
        const changes = records.filter((r) => Number(r.issue_id) === id)
          .map((r) => ({ at: Date.parse(r.at), added: r.milestone_number !== null && Number(r.milestone_number) === number }))
        // Before its first recorded change an issue's milestone is not known: it counts from that change on.
        stays.set(id, staysFrom(changes, now_.has(id), false))
      }
      const history = await IssueHistory.load(db, [...issues.keys()])
      const start = Date.parse(milestone.start_date)
      const firstDay = localDate(start, zone)
      const due = milestone.due_on ?? null
      const today = localDate(now, zone)
      const lastDay = due !== null ? localDate(Date.parse(due), zone) : today < firstDay ? firstDay : today
      if (lastDay < firstDay) throw new Invalid(`milestone ${number} is due before it starts`)
      const period = { start, end: startOfDay(addDays(lastDay, 1), zone), firstDay, lastDay, timeZone: zone, openEnded: due === null }
      return burndownOf({ issues, stays }, history, period, now)
    },

    /** From the report's start date to its desired end date. */
    async releaseBurndown (releaseId: string, timeZone: string | undefined, canRead: CanRead, now: number): Promise<Burndown> {
      const report = await db.selectFrom('release_reports').select(['start_date', 'desired_end_date']).where('id', '=', releaseId).executeTakeFirst()
      if (report === undefined) throw new NotFound(`release report ${releaseId} not found`)
      const repos = (await db.selectFrom('release_report_repositories').select('repo_id').where('release_id', '=', releaseId).execute()).map((r) => Number(r.repo_id))
      const zone = timeZone ?? await zoneOfRepositories(repos)
      const records = await db.selectFrom('release_issue_changes').select(['issue_id', 'change', 'at']).where('release_id', '=', releaseId).orderBy('at').orderBy('id').execute()
      const current = new Set((await db.selectFrom('release_report_issues').select('issue_id').where('release_id', '=', releaseId).execute()).map((r) => Number(r.issue_id)))
      const issues = await issueInfo([...records.map((r) => Number(r.issue_id)), ...current], canRead)
      const stays = new Map<number, Stay[]>()
      for (const id of issues.keys()) {
        stays.set(id, staysFrom(records.filter((r) => Number(r.issue_id) === id).map((r) => ({ at: Date.parse(r.at), added: r.change === 'added' })), current.has(id)))
      }
      const history = await IssueHistory.load(db, [...issues.keys()])
      const start = Date.parse(report.start_date)
      const firstDay = localDate(start, zone)
      const lastDay = localDate(Date.parse(report.desired_end_date), zone)
      return burndownOf({ issues, stays }, history, { start, end: startOfDay(addDays(lastDay, 1), zone), firstDay, lastDay, timeZone: zone }, now)
    },

    velocity,

    async review (sprint: SprintRow, summary: Static<typeof SprintSchema>, canRead: CanRead, now: number): Promise<SprintReview> {
      const scope = await sprintScope(sprint.id, canRead)
      const history = await IssueHistory.load(db, [...scope.issues.keys()])
      const start = Date.parse(sprint.starts_at)
      const end = Math.min(Date.parse(sprint.ends_at), now)
      const ref = (id: number) => ({ repo_id: scope.issues.get(id)!.repo_id, issue_number: scope.issues.get(id)!.number })
      let committedPoints = 0
      let committedIssues = 0
      for (const [id, stays] of scope.stays) {
        if (start > now || !inStays(stays, start)) continue
        committedPoints += history.estimateAt(id, start)
        committedIssues++
      }
      const during = scope.events.filter((e) => Date.parse(e.at) > start && Date.parse(e.at) < Date.parse(sprint.ends_at))
      const carried = await db.selectFrom('sprint_issues').select(['issue_id', 'sprint_id']).where('carried_from', '=', sprint.id).execute()
      return {
        sprint: summary,
        committed: { issues: committedIssues, points: round(committedPoints) },
        completed: completed(scope, history, end),
        added: during.filter((e) => e.type === 'sprint_issue_added').map((e) => ({ ...ref(e.issue_id), at: e.at, points: history.estimateAt(e.issue_id, Date.parse(e.at)), carried: e.carried === 1 })),
        removed: during.filter((e) => e.type === 'sprint_issue_removed').map((e) => ({ ...ref(e.issue_id), at: e.at, points: history.estimateAt(e.issue_id, Date.parse(e.at)) })),
        carried_over: carried.filter((c) => scope.issues.has(Number(c.issue_id)))
          .map((c) => ({ ...ref(Number(c.issue_id)), points: history.estimateAt(Number(c.issue_id), Date.parse(sprint.ends_at)), to_sprint_id: c.sprint_id })),
        velocity: await (async () => {
          const v = await velocity(sprint.workspace_id, 6, canRead, now)
          const sprints = v.sprints.map((s) => ({ id: s.id, name: s.name, points: s.points_closed, issues: s.issues_closed }))
          return { sprints, average_points: v.average_points, average_issues: v.average_issues }
        })()
      }
    },

    /**
     * Per issue of the workspace's readable repositories closed in [from, to): the time from first
     * entering the start pipeline (or one after it) in this workspace to its last close.
     */
    async cycleTime (workspaceId: string, options: { from: number, to: number, startPipelineId?: string }, canRead: CanRead): Promise<CycleTime> {
      const pipelines = await db.selectFrom('pipelines').select(['id', 'name']).where('workspace_id', '=', workspaceId).orderBy('sort_order').execute()
      const startIndex = options.startPipelineId === undefined
        ? Math.min(1, pipelines.length - 1)
        : pipelines.findIndex((p) => p.id === options.startPipelineId)
      if (startIndex < 0) throw new Invalid(`querystring/start_pipeline_id ${String(options.startPipelineId)} is not a pipeline of workspace ${workspaceId}`)
      const names = new Set(pipelines.slice(startIndex).map((p) => p.name))
      const repos = (await db.selectFrom('workspace_repositories').select('repo_id').where('workspace_id', '=', workspaceId).execute()).map((r) => Number(r.repo_id)).filter(canRead)
      const closes = repos.length === 0
        ? []
        : await db.selectFrom('issue_states as s').innerJoin('issues as i', 'i.id', 's.issue_id')
          .select(['i.id']).distinct().where('i.repo_id', 'in', repos).where('i.state', '=', 'closed').where('s.state', '=', 'closed')
          .where('s.at', '>=', new Date(options.from).toISOString()).where('s.at', '<', new Date(options.to).toISOString()).execute()
      const ids = closes.map((r) => Number(r.id))
      const issues = await issueInfo(ids, canRead)
      const history = await IssueHistory.load(db, ids)
      const entries = ids.length === 0
        ? []
        : await db.selectFrom('issue_events').select(['issue_id', 'to_pipeline', 'created_at']).where('issue_id', 'in', ids).where('type', '=', 'transferIssue')
          .where('workspace_id', '=', workspaceId).orderBy('created_at').orderBy('id').execute()
      const out: CycleTime['issues'] = []
      for (const [id, issue] of issues) {
        const closedAt = history.lastClosed(id)
        if (closedAt === undefined || closedAt < options.from || closedAt >= options.to) continue
        const entered = entries.find((e) =>
          Number(e.issue_id) === id && e.to_pipeline !== null && names.has(e.to_pipeline) && Date.parse(e.created_at) <= closedAt)
        if (entered === undefined) continue
        const startedAt = Date.parse(entered.created_at)
        out.push({
          repo_id: issue.repo_id,
          issue_number: issue.number,
          title: issue.title,
          started_at: entered.created_at,
          closed_at: new Date(closedAt).toISOString(),
          days: round((closedAt - startedAt) / DAY_MS)
        })
      }
      out.sort((a, b) => a.closed_at.localeCompare(b.closed_at) || a.repo_id - b.repo_id || a.issue_number - b.issue_number)
      const sorted = out.map((i) => i.days).sort((a, b) => a - b)
      return {
        from: new Date(options.from).toISOString(),
        to: new Date(options.to).toISOString(),
        start_pipeline_id: pipelines[startIndex]?.id ?? null,
        issues: out,
        count: out.length,
        p50: percentile(sorted, 50),
        p85: percentile(sorted, 85),
        p95: percentile(sorted, 95)
      }
    },

    /** The workspace's sprint events after an id; issue events only for readable repositories. */
    async sprintEvents (workspaceId: string, after: number, limit: number, canRead: CanRead): Promise<SprintEvent[]> {
      const repos = (await db.selectFrom('workspace_repositories').select('repo_id').where('workspace_id', '=', workspaceId).execute()).map((r) => Number(r.repo_id)).filter(canRead)
      const rows = await db.selectFrom('sprint_events as e').leftJoin('issues as i', 'i.id', 'e.issue_id')
        .select(['e.id', 'e.type', 'e.sprint_id', 'e.at', 'e.user_id', 'e.carried', 'e.issue_id', 'i.repo_id', 'i.number'])
        .where('e.workspace_id', '=', workspaceId).where('e.id', '>', after)
        .where((eb) => eb.or([eb('e.issue_id', 'is', null), ...(repos.length === 0 ? [] : [eb('i.repo_id', 'in', repos)])]))
        .orderBy('e.id').limit(limit).execute()
      return rows.map((r) => ({
        id: Number(r.id),
        type: r.type,
        sprint_id: r.sprint_id,
        at: r.at,
        ...(r.repo_id === null ? {} : { repo_id: Number(r.repo_id), issue_number: Number(r.number) }),
        ...(r.user_id === null ? {} : { user_id: Number(r.user_id) }),
        carried: Number(r.carried) === 1
      }))
    }
  }
}

export type ReportsRepository = ReturnType<typeof createReportsRepository>
