import type { Selectable } from 'kysely'
import type { Static } from '../schemas/common.js'
import type { Sprint as SprintSchema, SprintConfig as SprintConfigSchema } from '../schemas/sprints.js'
import { announce, issueContext } from './announce.js'
import { NOBODY, type DomainEvents, type SprintRef } from './domain-events.js'
import { lockFor } from './engine/engine.js'
import { Conflict, Invalid, NotFound } from './errors.js'
import { IssueHistory } from './history.js'
import { newObjectId } from './ids.js'
import { refKey, resolveRefs, toRef, type IssueRef } from './issue-refs.js'
import { touchPlanning } from './repositories.js'
import { writeTransaction, type Executor } from './engine/transaction.js'
import type { SprintsTable } from './schema.js'
import type { User } from './users.js'
import { EARLIEST_DAY, LATEST_DAY } from '../schemas/formats.js'
import { addDays, isCalendarDate, isTimeZone, startOfDay } from './zoned-time.js'

export type SprintConfig = Static<typeof SprintConfigSchema>
export type Sprint = Static<typeof SprintSchema>

export type SprintRow = Selectable<SprintsTable>
const COLUMNS = ['id', 'workspace_id', 'number', 'name', 'starts_at', 'ends_at', 'started', 'ended'] as const
const toRow = (r: SprintRow): SprintRow => ({ ...r, number: Number(r.number), started: Number(r.started), ended: Number(r.ended) })

/** How many sprints after the current one are kept planned. */
const AHEAD = 3

/** The k-th sprint (from 0) of a plan: 00:00 of its first day in the zone to 00:00 of the next sprint's. */
export function planned (config: SprintConfig, k: number): { number: number, starts_at: string, ends_at: string } {
  const days = 7 * config.length_weeks
  return {
    number: k + 1,
    starts_at: new Date(startOfDay(addDays(config.starts_on, days * k), config.time_zone)).toISOString(),
    ends_at: new Date(startOfDay(addDays(config.starts_on, days * (k + 1)), config.time_zone)).toISOString()
  }
}

/** The index of the plan's sprint holding the instant (-1: before the first). */
export function planIndex (config: SprintConfig, now: number): number {
  const first = Date.parse(planned(config, 0).starts_at)
  if (now < first) return -1
  // A guess from the average length, then corrected: DST moves boundaries by an hour at most.
  let k = Math.floor((now - first) / (7 * config.length_weeks * 86_400_000))
  while (k > 0 && Date.parse(planned(config, k).starts_at) > now) k--
  while (Date.parse(planned(config, k + 1).starts_at) <= now) k++
  return k
}

export function sprintState (row: { starts_at: string, ends_at: string }, now: number): 'active' | 'future' | 'closed' {
  if (Date.parse(row.ends_at) <= now) return 'closed'
  return Date.parse(row.starts_at) <= now ? 'active' : 'future'
}

/** Whether a sprint holds the instant, and how many start after it. */
function coverage (rows: Array<{ starts_at: string, ends_at: string }>, now: number): { active: boolean, future: number } {
  return {
    active: rows.some((s) => sprintState(s, now) === 'active'),
    future: rows.filter((s) => sprintState(s, now) === 'future').length
  }
}

/**
 * The plan's sprint holding `now`, when none is active and the plan has begun: a start today or in the
 * past gives a current sprint at once. Clipped to the sprints around it (after a re-plan left a gap).
 */
function currentSlot (config: SprintConfig, rows: Array<{ starts_at: string, ends_at: string }>, now: number): ReturnType<typeof planned> | undefined {
  if (rows.some((s) => sprintState(s, now) === 'active')) return undefined
  const k = planIndex(config, now)
  if (k < 0) return undefined
  const plan = planned(config, k)
  const start = Math.max(Date.parse(plan.starts_at), ...rows.map((s) => Date.parse(s.ends_at)).filter((end) => end <= now))
  const end = Math.min(Date.parse(plan.ends_at), ...rows.map((s) => Date.parse(s.starts_at)).filter((begin) => begin > now))
  return { number: plan.number, starts_at: new Date(start).toISOString(), ends_at: new Date(end).toISOString() }
}

const ref = (row: SprintRow): SprintRef => ({ id: row.id, name: row.name, starts_at: row.starts_at, ends_at: row.ends_at })

/**
 * Sprint configuration, the sprints generated from it, their issues and events (docs, "Sprints and
 * reports"). Ends and starts are settled lazily, under the workspace's sprint lock, by whoever comes
 * first after the boundary (a read, a write or the background tick of any instance): each is
 * processed once, from the recorded state at the boundary, whenever it happens.
 */
export function createSprintsRepository (db: Executor, events?: DomainEvents) {
  const lock = async (trx: Executor, workspaceId: string): Promise<void> => { await lockFor(trx, `sprints:${workspaceId}`) }

  const configOf = async (trx: Executor, workspaceId: string): Promise<SprintConfig | undefined> => {
    const row = await trx.selectFrom('sprint_configs').select(['length_weeks', 'starts_on', 'time_zone', 'carry_over']).where('workspace_id', '=', workspaceId).executeTakeFirst()
    if (row === undefined) return undefined
    return { length_weeks: Number(row.length_weeks), starts_on: row.starts_on, time_zone: row.time_zone, carry_over: Number(row.carry_over) === 1 }
  }
  const sprintsOf = async (trx: Executor, workspaceId: string): Promise<SprintRow[]> =>
    (await trx.selectFrom('sprints').select(COLUMNS).where('workspace_id', '=', workspaceId).orderBy('starts_at').execute()).map(toRow)
  const workspaceOf = async (trx: Executor, workspaceId: string) =>
    await trx.selectFrom('workspaces').select(['id', 'name']).where('id', '=', workspaceId).executeTakeFirstOrThrow()

  /** Tells every repository of the workspace (their webhooks) that a sprint started or ended. */
  const announceSprint = async (trx: Executor, workspaceId: string, type: 'sprint_started' | 'sprint_ended', sprint: SprintRow): Promise<void> => {
    if (events === undefined) return
    const workspace = await workspaceOf(trx, workspaceId)
    const repos = await trx.selectFrom('repositories as r').innerJoin('workspace_repositories as wr', 'wr.repo_id', 'r.id')
      .select(['r.id', 'r.owner', 'r.name', 'r.html_url']).where('wr.workspace_id', '=', workspaceId).orderBy('r.id').execute()
    for (const repo of repos) await announce(trx, events, { type, repo: { ...repo, id: Number(repo.id) }, user: NOBODY, workspace, sprint: ref(sprint) })
  }

  const issueEvent = async (trx: Executor, type: 'sprint_issue_added' | 'sprint_issue_removed', sprint: SprintRow, issueId: number, at: string, user: User | undefined, carried: boolean): Promise<void> => {
    await trx.insertInto('sprint_events').values({ workspace_id: sprint.workspace_id, sprint_id: sprint.id, type, issue_id: issueId, user_id: user?.id ?? null, carried: carried ? 1 : 0, at }).execute()
    if (events === undefined) return
    const workspace = await workspaceOf(trx, sprint.workspace_id)
    await announce(trx, events, { ...await issueContext(trx, issueId), user: user ?? NOBODY, type, workspace, sprint: ref(sprint), carried })
  }

  /** Creates the plan's sprints from the current one to AHEAD after it that are missing and overlap none kept. */
  const generate = async (trx: Executor, workspaceId: string, config: SprintConfig, now: number): Promise<void> => {
    const existing = await sprintsOf(trx, workspaceId)
    let { active, future } = coverage(existing, now)
    const current = currentSlot(config, existing, now)
    if (current !== undefined) {
      const row = { id: newObjectId(), workspace_id: workspaceId, ...current, name: `Sprint ${current.number}`, started: 0, ended: 0 }
      await trx.insertInto('sprints').values(row).execute()
      existing.push(row)
      active = true
    }
    const first = Math.max(planIndex(config, now), 0)
    for (let k = first; k < first + 100 && future < (active ? AHEAD : AHEAD + 1); k++) {
      const plan = planned(config, k)
      const start = Date.parse(plan.starts_at)
      const end = Date.parse(plan.ends_at)
      if (end <= now || existing.some((s) => Date.parse(s.starts_at) < end && Date.parse(s.ends_at) > start)) continue
      const row = { id: newObjectId(), workspace_id: workspaceId, ...plan, name: `Sprint ${plan.number}`, started: 0, ended: 0 }
      await trx.insertInto('sprints').values(row).execute()
      existing.push(row)
      if (start <= now) active = true
      else future++
    }
  }

  /** Ends and starts due by `now`, in time order (an end before a start at the same instant). */
  const processBoundaries = async (trx: Executor, workspaceId: string, config: SprintConfig, now: number): Promise<void> => {
    const rows = await sprintsOf(trx, workspaceId)
    const due: Array<{ at: number, kind: 'end' | 'start', sprint: SprintRow }> = []
    for (const s of rows) {
      if (s.ended === 0 && Date.parse(s.ends_at) <= now) due.push({ at: Date.parse(s.ends_at), kind: 'end', sprint: s })
      if (s.started === 0 && Date.parse(s.starts_at) <= now) due.push({ at: Date.parse(s.starts_at), kind: 'start', sprint: s })
    }
    due.sort((a, b) => a.at - b.at || (a.kind === 'end' ? -1 : 1))
    for (const { kind, sprint } of due) {
      if (kind === 'start') {
        await trx.updateTable('sprints').set({ started: 1 }).where('id', '=', sprint.id).execute()
        await trx.insertInto('sprint_events').values({ workspace_id: workspaceId, sprint_id: sprint.id, type: 'sprint_started', issue_id: null, user_id: null, at: sprint.starts_at }).execute()
        await announceSprint(trx, workspaceId, 'sprint_started', sprint)
        continue
      }
      const members = (await trx.selectFrom('sprint_issues').select('issue_id').where('sprint_id', '=', sprint.id).where('open', '=', 1).execute()).map((r) => Number(r.issue_id))
      await trx.updateTable('sprint_issues').set({ open: 0 }).where('sprint_id', '=', sprint.id).execute()
      const next = rows.find((s) => Date.parse(s.starts_at) >= Date.parse(sprint.ends_at))
      if (config.carry_over && next !== undefined && members.length > 0) {
        const history = await IssueHistory.load(trx, members)
        const end = Date.parse(sprint.ends_at)
        // Open at the end (not closed before it): carried over, as of the end.
        for (const issueId of members.filter((id) => !history.closedAt(id, end, true))) {
          await trx.insertInto('sprint_issues').values({ sprint_id: next.id, workspace_id: workspaceId, issue_id: issueId, open: 1, added_at: sprint.ends_at, carried_from: sprint.id })
            .onConflict((oc) => oc.doNothing()).execute()
          await issueEvent(trx, 'sprint_issue_added', next, issueId, sprint.ends_at, undefined, true)
        }
      }
      await trx.updateTable('sprints').set({ ended: 1 }).where('id', '=', sprint.id).execute()
      await trx.insertInto('sprint_events').values({ workspace_id: workspaceId, sprint_id: sprint.id, type: 'sprint_ended', issue_id: null, user_id: null, at: sprint.ends_at }).execute()
      await announceSprint(trx, workspaceId, 'sprint_ended', sprint)
    }
  }

  /** Whether anything is due: a boundary passed and not processed, or too few sprints planned ahead. */
  const needsSettling = async (workspaceId: string, config: SprintConfig, now: number): Promise<boolean> => {
    const at = new Date(now).toISOString()
    const due = await db.selectFrom('sprints').select('id').where('workspace_id', '=', workspaceId)
      .where((eb) => eb.or([eb.and([eb('ended', '=', 0), eb('ends_at', '<=', at)]), eb.and([eb('started', '=', 0), eb('starts_at', '<=', at)])]))
      .limit(1).executeTakeFirst()
    if (due !== undefined) return true
    const open = await db.selectFrom('sprints').select(['starts_at', 'ends_at']).where('workspace_id', '=', workspaceId).where('ends_at', '>', at).execute()
    const { active, future } = coverage(open, now)
    if (!active && planIndex(config, now) >= 0) return true
    return future < (active ? AHEAD : AHEAD + 1)
  }

  const settleIn = async (trx: Executor, workspaceId: string, now: number): Promise<void> => {
    await lock(trx, workspaceId)
    const config = await configOf(trx, workspaceId)
    if (config === undefined) return
    await generate(trx, workspaceId, config, now)
    await processBoundaries(trx, workspaceId, config, now)
  }

  /** Brings the workspace's sprints up to `now`; a write only when something is due. */
  const settle = async (workspaceId: string, now: number): Promise<void> => {
    const config = await configOf(db, workspaceId)
    if (config === undefined || !await needsSettling(workspaceId, config, now)) return
    await writeTransaction(db, async (trx) => { await settleIn(trx, workspaceId, now) })
  }

  const requireSprint = async (trx: Executor, id: string): Promise<SprintRow> => {
    const row = await trx.selectFrom('sprints').select(COLUMNS).where('id', '=', id).executeTakeFirst()
    if (row === undefined) throw new NotFound(`sprint ${id} not found`)
    return toRow(row)
  }

  /** Totals over the sprint's issues in readable repositories; closed ones counted as of the end for a sprint that ended. */
  const withTotals = async (trx: Executor, rows: SprintRow[], canRead: (repoId: number) => boolean, now: number): Promise<Sprint[]> => {
    if (rows.length === 0) return []
    const members = await trx.selectFrom('sprint_issues as si').innerJoin('issues as i', 'i.id', 'si.issue_id')
      .select(['si.sprint_id', 'si.issue_id', 'i.repo_id', 'si.carried_from']).where('si.sprint_id', 'in', rows.map((r) => r.id)).execute()
    const readable = members.filter((m) => canRead(Number(m.repo_id)))
    const history = await IssueHistory.load(trx, readable.map((m) => Number(m.issue_id)))
    return rows.map((row) => {
      const at = Math.min(now, Date.parse(row.ends_at))
      const mine = readable.filter((m) => m.sprint_id === row.id)
      const closed = mine.filter((m) => history.closedAt(Number(m.issue_id), at, at !== now))
      const points = (list: typeof mine) => list.reduce((sum, m) => sum + history.estimateAt(Number(m.issue_id), at), 0)
      return {
        id: row.id,
        workspace_id: row.workspace_id,
        name: row.name,
        starts_at: row.starts_at,
        ends_at: row.ends_at,
        state: sprintState(row, now),
        issues_total: mine.length,
        issues_closed: closed.length,
        points_total: points(mine),
        points_closed: points(closed)
      }
    })
  }

  return {
    settle,
    configOf: async (workspaceId: string) => await configOf(db, workspaceId),

    /** Sets the configuration and re-plans the sprints that have not started (their issues stay with them). */
    async setConfig (workspaceId: string, config: SprintConfig, now: number): Promise<SprintConfig> {
      if (!isCalendarDate(config.starts_on)) throw new Invalid(`body/starts_on must be a calendar date, YYYY-MM-DD, from ${EARLIEST_DAY} to ${LATEST_DAY}`)
      if (!isTimeZone(config.time_zone)) throw new Invalid('body/time_zone must be an IANA time zone such as Europe/Berlin')
      return await writeTransaction(db, async (trx) => {
        await lock(trx, workspaceId)
        // What is due under the old plan is settled first: only the future is re-planned.
        const old = await configOf(trx, workspaceId)
        if (old !== undefined) {
          await generate(trx, workspaceId, old, now)
          await processBoundaries(trx, workspaceId, old, now)
        }
        const values = {
          length_weeks: config.length_weeks,
          starts_on: config.starts_on,
          time_zone: config.time_zone,
          carry_over: config.carry_over ? 1 : 0,
          updated_at: new Date(now).toISOString()
        }
        await trx.insertInto('sprint_configs').values({ workspace_id: workspaceId, ...values })
          .onConflict((oc) => oc.column('workspace_id').doUpdateSet(values)).execute()
        const rows = await sprintsOf(trx, workspaceId)
        const future = rows.filter((s) => s.started === 0 && Date.parse(s.starts_at) > now)
        const kept = rows.filter((s) => !future.includes(s))
        const keptEnd = Math.max(now, ...kept.map((s) => Date.parse(s.ends_at)))
        const active = kept.some((s) => sprintState(s, now) === 'active')
        // A plan that has begun holds today's sprint at once; the nearest future sprint (and its issues) becomes it.
        const current = currentSlot(config, kept, now)
        const wanted: Array<ReturnType<typeof planned>> = current === undefined ? [] : [current]
        for (let k = Math.max(planIndex(config, now), 0); wanted.length < (active ? AHEAD : AHEAD + 1) && k < 1000; k++) {
          const plan = planned(config, k)
          if (Date.parse(plan.starts_at) > now && Date.parse(plan.starts_at) >= keptEnd) wanted.push(plan)
        }
        // Existing future sprints take the new dates in order (ids and issues stay); moved aside first so no start collides.
        for (const s of future) await trx.updateTable('sprints').set({ starts_at: `~${s.id}` }).where('id', '=', s.id).execute()
        for (const [i, plan] of wanted.entries()) {
          const values = { number: plan.number, name: `Sprint ${plan.number}`, starts_at: plan.starts_at, ends_at: plan.ends_at }
          // A sprint renamed (GraphQL updateSprint) keeps its name; a generated one follows its new number.
          const renamed = i < future.length && future[i].name !== `Sprint ${future[i].number}`
          if (i < future.length) await trx.updateTable('sprints').set(renamed ? { ...values, name: future[i].name } : values).where('id', '=', future[i].id).execute()
          else await trx.insertInto('sprints').values({ id: newObjectId(), workspace_id: workspaceId, ...values }).execute()
        }
        const surplus = future.slice(wanted.length)
        if (surplus.length > 0) {
          const last = future[wanted.length - 1]
          if (last !== undefined) await trx.updateTable('sprint_issues').set({ sprint_id: last.id }).where('sprint_id', 'in', surplus.map((s) => s.id)).execute()
          await trx.deleteFrom('sprints').where('id', 'in', surplus.map((s) => s.id)).execute()
        }
        await processBoundaries(trx, workspaceId, config, now)
        return config
      })
    },

    async list (workspaceId: string, canRead: (repoId: number) => boolean, now: number, state?: 'active' | 'future' | 'closed'): Promise<Sprint[]> {
      const rows = (await sprintsOf(db, workspaceId)).filter((r) => state === undefined || sprintState(r, now) === state)
      return await withTotals(db, rows, canRead, now)
    },

    /** The sprint row (its workspace tells who may see it). */
    row: async (id: string) => await requireSprint(db, id),

    get: async (id: string, canRead: (repoId: number) => boolean, now: number): Promise<Sprint> =>
      (await withTotals(db, [await requireSprint(db, id)], canRead, now))[0],

    /**
     * Ends sprint planning: what is due under the plan is settled first (a sprint past its end
     * closes as usual), then the plan and every sprint that has not ended (active or future, their
     * issues and events with them) are deleted. Ended sprints stay. Returns how many were deleted.
     */
    async deleteConfigAndOpenSprints (workspaceId: string, now: number): Promise<number> {
      return await writeTransaction(db, async (trx) => {
        await settleIn(trx, workspaceId, now)
        const open = (await trx.selectFrom('sprints').select('id').where('workspace_id', '=', workspaceId).where('ended', '=', 0).execute()).map((r) => r.id)
        if (open.length > 0) {
          await trx.deleteFrom('sprint_events').where('sprint_id', 'in', open).execute()
          await trx.deleteFrom('sprint_issues').where('sprint_id', 'in', open).execute()
          await trx.deleteFrom('sprints').where('id', 'in', open).execute()
        }
        await trx.deleteFrom('sprint_configs').where('workspace_id', '=', workspaceId).execute()
        return open.length
      })
    },

    /** Gives a sprint a name of its own (a later re-plan keeps it); the caller checked the permission. */
    async rename (id: string, name: string): Promise<void> {
      const trimmed = name.trim()
      if (trimmed === '' || trimmed.length > 255) throw new Invalid('name must be 1 to 255 characters')
      await writeTransaction(db, async (trx) => {
        await requireSprint(trx, id)
        await trx.updateTable('sprints').set({ name: trimmed }).where('id', '=', id).execute()
      })
    },

    /**
     * Adds issues to an open sprint; each leaves the other open sprint of the workspace it was in.
     * The caller checked write access to each; issues must belong to the workspace's repositories.
     */
    async addIssues (id: string, refs: IssueRef[], canRead: (repoId: number) => boolean, user: User, now: number): Promise<{ added: IssueRef[] }> {
      return await writeTransaction(db, async (trx) => {
        const probe = await requireSprint(trx, id)
        await lock(trx, probe.workspace_id)
        const sprint = await requireSprint(trx, id)
        if (sprintState(sprint, now) === 'closed') throw new Conflict(`sprint ${id} has ended; add issues to an open sprint`)
        const issues = await resolveRefs(trx, refs, canRead)
        await inWorkspace(trx, sprint.workspace_id, issues)
        const at = new Date(now).toISOString()
        const added: IssueRef[] = []
        for (const issue of issues) {
          const elsewhere = await trx.selectFrom('sprint_issues').select('sprint_id')
            .where('workspace_id', '=', sprint.workspace_id).where('issue_id', '=', issue.id).where('open', '=', 1).executeTakeFirst()
          if (elsewhere?.sprint_id === id) continue
          if (elsewhere !== undefined) {
            await trx.deleteFrom('sprint_issues').where('sprint_id', '=', elsewhere.sprint_id).where('issue_id', '=', issue.id).execute()
            await issueEvent(trx, 'sprint_issue_removed', await requireSprint(trx, elsewhere.sprint_id), issue.id, at, user, false)
          }
          // A closed sprint keeps the issue's old row (open = 0): the new one replaces it here only if this sprint had it.
          await trx.insertInto('sprint_issues').values({ sprint_id: id, workspace_id: sprint.workspace_id, issue_id: issue.id, open: 1, added_at: at, carried_from: null })
            .onConflict((oc) => oc.columns(['sprint_id', 'issue_id']).doUpdateSet({ open: 1, added_at: at })).execute()
          await issueEvent(trx, 'sprint_issue_added', sprint, issue.id, at, user, false)
          added.push(toRef(issue))
        }
        await touchPlanning(trx, issues.map((i) => i.id))
        return { added }
      })
    },

    async removeIssues (id: string, refs: IssueRef[], canRead: (repoId: number) => boolean, user: User, now: number): Promise<{ removed: IssueRef[] }> {
      return await writeTransaction(db, async (trx) => {
        const probe = await requireSprint(trx, id)
        await lock(trx, probe.workspace_id)
        const sprint = await requireSprint(trx, id)
        if (sprintState(sprint, now) === 'closed') throw new Conflict(`sprint ${id} has ended; its issues are history`)
        const issues = await resolveRefs(trx, refs, canRead)
        const at = new Date(now).toISOString()
        const removed: IssueRef[] = []
        for (const issue of issues) {
          const result = await trx.deleteFrom('sprint_issues').where('sprint_id', '=', id).where('issue_id', '=', issue.id).executeTakeFirst()
          if (Number(result.numDeletedRows) === 0) continue
          await issueEvent(trx, 'sprint_issue_removed', sprint, issue.id, at, user, false)
          removed.push(toRef(issue))
        }
        await touchPlanning(trx, issues.map((i) => i.id))
        return { removed }
      })
    },

    /** Workspaces with a boundary passed and not yet processed (the background tick settles them). */
    async due (now: number): Promise<string[]> {
      const at = new Date(now).toISOString()
      const rows = await db.selectFrom('sprints').select('workspace_id').distinct()
        .where((eb) => eb.or([eb.and([eb('ended', '=', 0), eb('ends_at', '<=', at)]), eb.and([eb('started', '=', 0), eb('starts_at', '<=', at)])]))
        .limit(100).execute()
      return rows.map((r) => r.workspace_id)
    }
  }
}

/** Refuses issues whose repository the workspace does not hold. */
async function inWorkspace (trx: Executor, workspaceId: string, issues: Array<{ repo_id: number, number: number }>): Promise<void> {
  const held = new Set((await trx.selectFrom('workspace_repositories').select('repo_id').where('workspace_id', '=', workspaceId).execute()).map((r) => Number(r.repo_id)))
  const outside = issues.filter((i) => !held.has(Number(i.repo_id)))
  if (outside.length > 0) throw new Invalid(`issues not in the workspace's repositories: ${outside.map((i) => refKey(toRef(i))).join(', ')}`)
}

export type SprintsRepository = ReturnType<typeof createSprintsRepository>
