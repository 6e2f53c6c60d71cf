import { sql } from 'kysely'
import type { IssueRef } from '../schemas/common.js'
import { Conflict, Invalid } from './errors.js'
import { newObjectId, nowIso } from './ids.js'
import { notedEvents, type Executor } from './engine/transaction.js'
import { engineOf } from './engine/engine.js'
import { isCalendarDate, isTimeZone } from './zoned-time.js'
import { checkedEstimate, checkedLabel } from './zenhub-epic-meta.js'
import { EARLIEST_DAY, LATEST_DAY } from '../schemas/formats.js'

export interface RestoredEvent {
  type: 'estimateIssue' | 'transferIssue' | 'labelIssue' | 'unlabelIssue' | 'assignIssue' | 'unassignIssue'
  created_at: string
  /** the label or login of a label or assignee event */
  subject?: string | null
  user_id?: number | null
  from_estimate?: number | null
  to_estimate?: number | null
  from_pipeline?: string | null
  to_pipeline?: string | null
  workspace_id?: string | null
}

export interface RestoredSprints {
  workspace_id: string
  length_weeks: number
  starts_on: string
  time_zone: string
  carry_over: boolean
  updated_at?: string
  sprints: Array<{
    id: string
    number: number
    name: string
    starts_at: string
    ends_at: string
    started: boolean
    ended: boolean
    issues: Array<{ issue_id: number, added_at: string, open: boolean, carried_from?: string }>
  }>
  events: Array<{ sprint_id: string, type: 'sprint_started' | 'sprint_ended' | 'sprint_issue_added' | 'sprint_issue_removed', issue_id?: number, user_id?: number, carried?: boolean, at: string }>
}

export interface RestoredRepositoryFacts {
  html_url?: string | null
  placeholder?: boolean
  created_at?: string
  is_private?: boolean
  is_archived?: boolean
  owner_platform_id?: number
  owner_kind?: 'User' | 'Organization'
  host_updated_at?: string
}

export interface RestoredReport {
  id?: string
  title: string
  description?: string
  start_date: string
  desired_end_date: string
  created_at?: string
  closed_at?: string | null
  state?: 'open' | 'closed'
  repositories: number[]
}

export interface RestoredZenhubEpic {
  id?: number
  workspace_id: string
  title: string
  body?: string | null
  state?: 'OPEN' | 'TODO' | 'IN_PROGRESS' | 'CLOSED'
  start_on?: string | null
  end_on?: string | null
  created_at?: string
  updated_at?: string
  estimate?: number | null
}

/** What an epic that is not an issue carries beside its issues, with users by id. */
export interface RestoredZenhubEpicMeta {
  assignees: Array<{ user_id: number, added_at?: string }>
  labels: Array<{ name: string, color?: string | null, added_at?: string }>
  key_dates: Array<{ id?: number, date: string, description: string, created_at?: string }>
}

const iso = (value: string): string => new Date(value).toISOString()

/** Rows per multi-row insert: well under SQLite's and PostgreSQL's bound-parameter limits. */
function * chunks<T> (rows: T[], size = 500): Generator<T[]> {
  for (let at = 0; at < rows.length; at += size) yield rows.slice(at, at + size)
}

/**
 * What a fixture holds beyond repositories, issues and workspaces (an export's planning data),
 * written as it was: positions, events, epics, dependencies and release reports keep their
 * times and ids. Used inside the fixture loader's one transaction.
 */
export function createRestoreRepository (db: Executor) {
  /** Ids read ahead by `readAhead`, by `repo:number`: the issues stay put for the transaction. */
  const known = new Map<string, number>()
  const issueId = async (ref: IssueRef, where: string): Promise<number> => {
    const id = known.get(`${ref.repo_id}:${ref.issue_number}`)
    if (id !== undefined) return id
    const row = await db.selectFrom('issues').select('id').where('repo_id', '=', ref.repo_id).where('number', '=', ref.issue_number).executeTakeFirst()
    if (row === undefined) throw new Invalid(`${where}: issue ${ref.issue_number} not found in repository ${ref.repo_id}`)
    return Number(row.id)
  }

  return {
    issueId,

    /** Reads the ids of many issues in a few statements, so `issueId` of them asks nothing. */
    async readAhead (refs: IssueRef[]): Promise<void> {
      const byRepo = new Map<number, Set<number>>()
      for (const ref of refs) {
        if (known.has(`${ref.repo_id}:${ref.issue_number}`)) continue
        const numbers = byRepo.get(ref.repo_id) ?? new Set()
        numbers.add(ref.issue_number)
        byRepo.set(ref.repo_id, numbers)
      }
      for (const [repoId, numbers] of byRepo) {
        for (const chunk of chunks([...numbers])) {
          const rows = await db.selectFrom('issues').select(['id', 'number']).where('repo_id', '=', repoId).where('number', 'in', chunk).execute()
          for (const row of rows) known.set(`${repoId}:${Number(row.number)}`, Number(row.id))
        }
      }
    },

    /** What the repository row holds beyond its name: its page, whether it is a placeholder, what the issue host said of it. */
    async markRepository (repoId: number, change: RestoredRepositoryFacts): Promise<void> {
      const set = {
        ...(change.html_url === undefined ? {} : { html_url: change.html_url }),
        ...(change.placeholder === undefined ? {} : { placeholder: change.placeholder ? 1 : 0 }),
        ...(change.created_at === undefined ? {} : { created_at: iso(change.created_at) }),
        ...(change.is_private === undefined ? {} : { is_private: change.is_private ? 1 : 0 }),
        ...(change.is_archived === undefined ? {} : { is_archived: change.is_archived ? 1 : 0 }),
        ...(change.owner_platform_id === undefined ? {} : { owner_platform_id: change.owner_platform_id }),
        ...(change.owner_kind === undefined ? {} : { owner_kind: change.owner_kind }),
        ...(change.host_updated_at === undefined ? {} : { host_updated_at: change.host_updated_at })
      }
      if (Object.keys(set).length === 0) return
      await db.updateTable('repositories').set(set).where('id', '=', repoId).execute()
    },

    /** The issue host's updated_at of a milestone as held (an export's, kept as written, as deliveries' are): older deliveries of it are stale. */
    async setMilestoneHostTime (repoId: number, number: number, at: string): Promise<void> {
      await db.updateTable('milestones').set({ host_updated_at: at }).where('repo_id', '=', repoId).where('number', '=', number).execute()
    },

    async setPlanningChangedAt (id: number, at: string): Promise<void> {
      await db.updateTable('issues').set({ planning_changed_at: iso(at) }).where('id', '=', id).execute()
    },

    /** The issue's position (its rank) in a workspace's pipeline, as the board shows it. */
    async setPosition (id: number, workspaceId: string, position: number): Promise<void> {
      const result = await db.updateTable('placements').set({ position, rank: position }).where('issue_id', '=', id).where('workspace_id', '=', workspaceId).executeTakeFirst()
      if (Number(result.numUpdatedRows) === 0) throw new Invalid(`workspace ${workspaceId} does not hold the issue's repository`)
    },

    /** The issue's priority in the workspace, by name; the workspace must hold its repository. */
    async setPriority (id: number, workspaceId: string, name: string): Promise<void> {
      const priority = await db.selectFrom('priorities').select('id').where('workspace_id', '=', workspaceId).where('name', '=', name).executeTakeFirst()
      if (priority === undefined) throw new Invalid(`workspace ${workspaceId} has no priority named '${name}'`)
      const held = await db.selectFrom('issues as i').innerJoin('workspace_repositories as wr', 'wr.repo_id', 'i.repo_id')
        .select('i.id').where('i.id', '=', id).where('wr.workspace_id', '=', workspaceId).executeTakeFirst()
      if (held === undefined) throw new Invalid(`workspace ${workspaceId} does not hold the issue's repository`)
      await db.insertInto('issue_priorities').values({ workspace_id: workspaceId, issue_id: id, priority_id: Number(priority.id), set_at: nowIso() })
        .onConflict((oc) => oc.columns(['workspace_id', 'issue_id']).doUpdateSet({ priority_id: Number(priority.id) })).execute()
    },

    /** Connects a pull request to the issue (the fixture's connected_prs), when it was connected if given: the connections' order is theirs. */
    async connectPr (id: number, pullRequestId: number, createdAt?: string): Promise<void> {
      const rows = await db.selectFrom('issues').select(['id', 'is_pull_request']).where('id', 'in', [id, pullRequestId]).execute()
      const isPr = (key: number) => Number(rows.find((r) => Number(r.id) === key)?.is_pull_request) === 1
      if (isPr(id)) throw new Invalid('connected_prs: a pull request has no pull requests connected to it (list them on the issue)')
      if (!isPr(pullRequestId)) throw new Invalid('connected_prs: names an issue that is not a pull request')
      await db.insertInto('issue_pr_connections').values({ issue_id: id, pull_request_id: pullRequestId, created_at: createdAt === undefined ? nowIso() : iso(createdAt) })
        .onConflict((oc) => oc.columns(['issue_id', 'pull_request_id']).doNothing()).execute()
    },

    /** Appends an event; the transaction's commit stamps its feed order (events keep the order they are added in). */
    async addEvent (id: number, event: RestoredEvent): Promise<void> {
      notedEvents(db)
      await db.insertInto('issue_events').values({
        issue_id: id,
        user_id: event.user_id ?? null,
        type: event.type,
        created_at: iso(event.created_at),
        from_estimate: event.from_estimate ?? null,
        to_estimate: event.to_estimate ?? null,
        from_pipeline: event.from_pipeline ?? null,
        to_pipeline: event.to_pipeline ?? null,
        workspace_id: event.workspace_id ?? null,
        subject: event.subject ?? null
      }).execute()
    },

    /**
     * A workspace's sprint configuration with its sprints as settled so far, their issues and the
     * sprint events: reads then settle what is due from there, as they would have on the old server.
     */
    async addSprints (input: RestoredSprints): Promise<void> {
      const workspace = await db.selectFrom('workspaces').select('id').where('id', '=', input.workspace_id).executeTakeFirst()
      if (workspace === undefined) throw new Invalid(`workspace ${input.workspace_id} does not exist`)
      if (!isTimeZone(input.time_zone)) throw new Invalid(`'${input.time_zone}' is not an IANA time zone`)
      if (!isCalendarDate(input.starts_on)) throw new Invalid(`starts_on '${input.starts_on}' is not a date from ${EARLIEST_DAY} to ${LATEST_DAY}`)
      if (await db.selectFrom('sprint_configs').select('workspace_id').where('workspace_id', '=', input.workspace_id).executeTakeFirst() !== undefined) {
        throw new Conflict(`workspace ${input.workspace_id} has a sprint configuration already`)
      }
      await db.insertInto('sprint_configs').values({
        workspace_id: input.workspace_id,
        length_weeks: input.length_weeks,
        starts_on: input.starts_on,
        time_zone: input.time_zone,
        carry_over: input.carry_over ? 1 : 0,
        updated_at: input.updated_at === undefined ? nowIso() : iso(input.updated_at)
      }).execute()
      const ids = new Set<string>()
      for (const sprint of input.sprints) {
        const taken = ids.has(sprint.id) || await db.selectFrom('sprints').select('id').where('id', '=', sprint.id).executeTakeFirst() !== undefined
        if (taken) throw new Conflict(`sprint ${sprint.id} already exists`)
        if (Date.parse(sprint.ends_at) <= Date.parse(sprint.starts_at)) throw new Invalid(`sprint ${sprint.id} ends before it starts`)
        ids.add(sprint.id)
        const { issues: _issues, started, ended, ...fields } = sprint
        await db.insertInto('sprints').values({
          ...fields,
          workspace_id: input.workspace_id,
          starts_at: iso(sprint.starts_at),
          ends_at: iso(sprint.ends_at),
          started: started ? 1 : 0,
          ended: ended ? 1 : 0
        }).execute()
      }
      const open = new Set<number>()
      for (const sprint of input.sprints) {
        for (const member of sprint.issues) {
          if (member.carried_from !== undefined && !ids.has(member.carried_from)) throw new Invalid(`sprint ${sprint.id}: carried from sprint ${member.carried_from}, which is not in the workspace`)
          if (member.open && open.has(member.issue_id)) throw new Invalid(`sprint ${sprint.id}: an issue is in two open sprints`)
          if (member.open) open.add(member.issue_id)
          await db.insertInto('sprint_issues').values({
            sprint_id: sprint.id,
            workspace_id: input.workspace_id,
            issue_id: member.issue_id,
            open: member.open ? 1 : 0,
            added_at: iso(member.added_at),
            carried_from: member.carried_from ?? null
          }).execute()
        }
      }
      for (const event of input.events) {
        if (!ids.has(event.sprint_id)) throw new Invalid(`a sprint event names sprint ${event.sprint_id}, which is not in the workspace`)
        await db.insertInto('sprint_events').values({
          workspace_id: input.workspace_id,
          sprint_id: event.sprint_id,
          type: event.type,
          issue_id: event.issue_id ?? null,
          user_id: event.user_id ?? null,
          carried: event.carried === true ? 1 : 0,
          at: iso(event.at)
        }).execute()
      }
    },

    /** Links a workspace to its own repository (its zenhubRepository), as the export found it (held by the workspace or not). */
    async linkOwnRepository (workspaceId: string, repoId: number): Promise<void> {
      if (await db.selectFrom('repositories').select('id').where('id', '=', repoId).executeTakeFirst() === undefined) throw new Invalid(`own_repository_id: repository ${repoId} not found`)
      const owner = await db.selectFrom('workspace_own_repositories').select('workspace_id').where('repo_id', '=', repoId).executeTakeFirst()
      if (owner !== undefined) throw new Conflict(`own_repository_id: repository ${repoId} is workspace ${owner.workspace_id}'s own repository already`)
      await db.insertInto('workspace_own_repositories').values({ workspace_id: workspaceId, repo_id: repoId }).execute()
    },

    /** An epic that is not an issue, with its id (when given), times and issues as they were. */
    async addZenhubEpic (
      epic: RestoredZenhubEpic, creatorId: number | null, issues: Array<{ issue_id: number, added_at?: string }>, meta?: RestoredZenhubEpicMeta
    ): Promise<void> {
      if (await db.selectFrom('workspaces').select('id').where('id', '=', epic.workspace_id).executeTakeFirst() === undefined) throw new Invalid(`workspace ${epic.workspace_id} does not exist`)
      for (const [field, value] of [['start_on', epic.start_on], ['end_on', epic.end_on]] as const) {
        if (value !== undefined && value !== null && !isCalendarDate(value)) throw new Invalid(`${field} '${value}' is not a date from ${EARLIEST_DAY} to ${LATEST_DAY}`)
      }
      if (typeof epic.start_on === 'string' && typeof epic.end_on === 'string' && epic.start_on > epic.end_on) throw new Invalid('start_on must not be after end_on')
      if (epic.title.trim().length === 0) throw new Invalid('title must not be blank')
      if (epic.id !== undefined && await db.selectFrom('zenhub_epics').select('id').where('id', '=', epic.id).executeTakeFirst() !== undefined) {
        throw new Conflict(`zenhub epic ${epic.id} already exists`)
      }
      const createdAt = epic.created_at === undefined ? nowIso() : iso(epic.created_at)
      const row = await db.insertInto('zenhub_epics').values({
        ...(epic.id === undefined ? {} : { id: epic.id }),
        workspace_id: epic.workspace_id,
        title: epic.title.trim(),
        body: epic.body ?? null,
        state: epic.state ?? 'OPEN',
        start_on: epic.start_on ?? null,
        end_on: epic.end_on ?? null,
        creator_id: creatorId,
        created_at: createdAt,
        updated_at: epic.updated_at === undefined ? createdAt : iso(epic.updated_at),
        estimate: checkedEstimate(epic.estimate ?? null)
      }).returning('id').executeTakeFirstOrThrow()
      const epicId = Number(row.id)
      const seen = new Set<number>()
      const members = issues.filter((m) => !seen.has(m.issue_id) && seen.add(m.issue_id) !== undefined)
        .map((m) => ({ epic_id: epicId, issue_id: m.issue_id, added_at: m.added_at === undefined ? createdAt : iso(m.added_at) }))
      for (const chunk of chunks(members)) await db.insertInto('zenhub_epic_issues').values(chunk).execute()
      if (meta === undefined) return
      const at = (value: string | undefined): string => value === undefined ? createdAt : iso(value)
      const assignees = [...new Map(meta.assignees.map((a) => [a.user_id, { epic_id: epicId, user_id: a.user_id, added_at: at(a.added_at) }])).values()]
      for (const chunk of chunks(assignees)) await db.insertInto('zenhub_epic_assignees').values(chunk).execute()
      const labels = [...new Map(meta.labels.map((l) => {
        const { name, color } = checkedLabel(l)
        return [name, { epic_id: epicId, name, color, added_at: at(l.added_at) }]
      })).values()]
      for (const chunk of chunks(labels)) await db.insertInto('zenhub_epic_labels').values(chunk).execute()
      for (const k of meta.key_dates) {
        if (!isCalendarDate(k.date)) throw new Invalid(`key date '${k.date}' is not a date from ${EARLIEST_DAY} to ${LATEST_DAY}`)
        if (k.description.trim().length === 0) throw new Invalid('a key date\'s description must not be blank')
        if (k.id !== undefined && await db.selectFrom('zenhub_epic_key_dates').select('id').where('id', '=', k.id).executeTakeFirst() !== undefined) {
          throw new Conflict(`key date ${k.id} already exists`)
        }
        await db.insertInto('zenhub_epic_key_dates').values({
          ...(k.id === undefined ? {} : { id: k.id }),
          epic_id: epicId,
          date: k.date,
          description: k.description.trim(),
          created_at: at(k.created_at)
        }).execute()
      }
    },

    /** A legacy epic's start and end dates. */
    async setEpicDates (issueId: number, startOn: string | null, endOn: string | null): Promise<void> {
      for (const date of [startOn, endOn]) if (date !== null && !isCalendarDate(date)) throw new Invalid(`${date} is not a calendar date`)
      if (startOn !== null && endOn !== null && startOn > endOn) throw new Invalid('start_on must not be after end_on')
      await db.insertInto('epic_dates').values({ issue_id: issueId, start_on: startOn, end_on: endOn })
        .onConflict((oc) => oc.column('issue_id').doUpdateSet({ start_on: startOn, end_on: endOn })).execute()
    },

    /** After epics and key dates kept their ids: PostgreSQL's identities continue past them (SQLite's AUTOINCREMENT does so itself). */
    async continueZenhubEpicIds (): Promise<void> {
      if (engineOf(db) !== 'postgres') return
      await sql`SELECT setval(pg_get_serial_sequence('zenhub_epics', 'id'), coalesce((SELECT max(id) FROM zenhub_epics), 0) + 1, false)`.execute(db)
      await sql`SELECT setval(pg_get_serial_sequence('zenhub_epic_key_dates', 'id'), coalesce((SELECT max(id) FROM zenhub_epic_key_dates), 0) + 1, false)`.execute(db)
    },

    async makeEpic (id: number, children: number[]): Promise<void> {
      await db.updateTable('issues').set({ is_epic: 1 }).where('id', '=', id).execute()
      if (children.includes(id)) throw new Invalid('an epic cannot contain itself')
      for (const chunk of chunks(children)) {
        await db.insertInto('epic_issues').values(chunk.map((child) => ({ epic_id: id, issue_id: child }))).onConflict((oc) => oc.columns(['epic_id', 'issue_id']).doNothing()).execute()
      }
    },

    async addDependency (blocking: number, blocked: number, createdAt?: string): Promise<void> {
      if (blocking === blocked) throw new Invalid('an issue cannot block itself')
      await db.insertInto('dependencies').values({ blocking_id: blocking, blocked_id: blocked, created_at: createdAt === undefined ? nowIso() : iso(createdAt) })
        .onConflict((oc) => oc.columns(['blocking_id', 'blocked_id']).doNothing()).execute()
    },

    /** Replaces the history the issue's creation recorded (its state and milestone, now) with the fixture's. */
    async setHistory (id: number, repoId: number, history: { states?: Array<{ state: 'open' | 'closed', at: string }>, milestones?: Array<{ milestone_number: number | null, at: string }> }): Promise<void> {
      if (history.states !== undefined) {
        await db.deleteFrom('issue_states').where('issue_id', '=', id).execute()
        for (const rows of chunks(history.states.map((h) => ({ issue_id: id, state: h.state, at: iso(h.at) })))) await db.insertInto('issue_states').values(rows).execute()
      }
      if (history.milestones !== undefined) {
        await db.deleteFrom('issue_milestones').where('issue_id', '=', id).execute()
        const rows = history.milestones.map((h) => ({ issue_id: id, repo_id: repoId, milestone_number: h.milestone_number, at: iso(h.at) }))
        for (const chunk of chunks(rows)) await db.insertInto('issue_milestones').values(chunk).execute()
      }
    },

    async addReleaseChanges (releaseId: string, changes: Array<{ issue_id: number, change: 'added' | 'removed', at: string }>): Promise<void> {
      for (const rows of chunks(changes.map((c) => ({ release_id: releaseId, issue_id: c.issue_id, change: c.change, at: iso(c.at) })))) {
        await db.insertInto('release_issue_changes').values(rows).execute()
      }
    },

    async addReleaseReport (report: RestoredReport, issues: number[]): Promise<string> {
      const id = report.id ?? newObjectId()
      if (await db.selectFrom('release_reports').select('id').where('id', '=', id).executeTakeFirst() !== undefined) throw new Conflict(`release report ${id} already exists`)
      if (Date.parse(report.desired_end_date) < Date.parse(report.start_date)) throw new Invalid('desired_end_date must not be before start_date')
      const state = report.state ?? (report.closed_at === undefined || report.closed_at === null ? 'open' : 'closed')
      await db.insertInto('release_reports').values({
        id,
        seq: sql<number>`(SELECT coalesce(max(seq), 0) + 1 FROM release_reports)`,
        title: report.title,
        description: report.description ?? '',
        start_date: iso(report.start_date),
        desired_end_date: iso(report.desired_end_date),
        created_at: report.created_at === undefined ? nowIso() : iso(report.created_at),
        closed_at: state === 'closed' ? iso(report.closed_at ?? nowIso()) : null,
        state
      }).execute()
      for (const repoId of new Set(report.repositories)) {
        const repo = await db.selectFrom('repositories').select('id').where('id', '=', repoId).executeTakeFirst()
        if (repo === undefined) throw new Invalid(`repository ${repoId} does not exist`)
        await db.insertInto('release_report_repositories').values({ release_id: id, repo_id: repoId }).execute()
      }
      for (const issue of issues) {
        await db.insertInto('release_report_issues').values({ release_id: id, issue_id: issue }).onConflict((oc) => oc.columns(['release_id', 'issue_id']).doNothing()).execute()
      }
      return id
    }
  }
}
