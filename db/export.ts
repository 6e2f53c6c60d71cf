import type { Kysely } from 'kysely'
import { engineOf } from './engine/engine.js'
import type { Database } from './schema.js'
import type { Executor } from './engine/transaction.js'

/** Rows read per query: memory stays bounded by a page, however large the database. */
export const EXPORT_PAGE = 1000

const PERMISSION_NAMES = ['none', 'read', 'write', 'admin'] as const

type Json = Record<string, unknown>

const labelRecord = (l: { name: string, color: string | null, description: string | null }): Json =>
  ({ name: l.name, color: l.color ?? 'ededed', ...(l.description === null ? {} : { description: l.description }) })

/** What the issue host said of a repository (migration 029), the defaults left out. */
interface HostFacts {
  created_at: string | null
  is_private: number | string
  is_archived: number | string
  owner_platform_id: number | string | bigint | null
  owner_kind: string | null
  host_updated_at: string | null
}
const hostFacts = (r: HostFacts): Json => ({
  ...(r.created_at === null ? {} : { created_at: r.created_at }),
  ...(r.host_updated_at === null ? {} : { host_updated_at: r.host_updated_at }),
  ...(Number(r.is_private) === 1 ? { is_private: true } : {}),
  ...(Number(r.is_archived) === 1 ? { is_archived: true } : {}),
  ...(r.owner_platform_id === null ? {} : { owner_platform_id: Number(r.owner_platform_id) }),
  ...(r.owner_kind === null ? {} : { owner_kind: r.owner_kind })
})

/**
 * Reads everything the fixture format holds (DESIGN section 5, extended: positions, labels,
 * assignees, events, epics, dependencies, release reports, pipeline host labels, sprints, the
 * reports' history, epics that are not issues, each workspace's own repository) a page at a time, as `[key, record]` pairs in the order an import needs
 * them. No token hashes, connection
 * secrets or webhooks, and so nothing that belongs to a connection (its identities and the
 * permissions they give: docs/operations.md, "Fixtures"). Issues are read up to the highest
 * id when the export began, so later sections never name an issue the file does not hold.
 */
export async function * exportRecords (db: Executor, page = EXPORT_PAGE): AsyncGenerator<[string, Json]> {
  const top = await db.selectFrom('issues').select((eb) => eb.fn.max('id').as('id')).executeTakeFirst()
  const lastIssue = Number(top?.id ?? 0)

  for await (const rows of pages(page, (after) => db.selectFrom('users').select(['id', 'login', 'email']).where('id', '>', after).orderBy('id').limit(page).execute())) {
    for (const u of rows) yield ['users', { id: Number(u.id), login: u.login, ...(u.email === null ? {} : { email: u.email }) }]
  }

  for await (const rows of pages(page, (after) => db.selectFrom('repositories').select(['id', 'owner', 'name', 'html_url', 'placeholder', 'created_at', 'is_private', 'is_archived', 'owner_platform_id', 'owner_kind', 'host_updated_at'])
    .where('id', '>', after).orderBy('id').limit(page).execute())) {
    const grants = await db.selectFrom('permissions as p').innerJoin('users as u', 'u.id', 'p.user_id').select(['p.repo_id', 'u.login', 'p.level'])
      .where('p.repo_id', 'in', rows.map((r) => r.id)).orderBy('p.repo_id').orderBy('u.id').execute()
    const made = await db.selectFrom('repository_labels').select(['repo_id', 'name', 'color', 'description'])
      .where('repo_id', 'in', rows.map((r) => r.id)).orderBy('repo_id').orderBy('name').execute()
    for (const r of rows) {
      const permissions: Record<string, string> = {}
      for (const g of grants) if (Number(g.repo_id) === Number(r.id)) permissions[g.login] = PERMISSION_NAMES[g.level] ?? 'read'
      const labels = made.filter((l) => Number(l.repo_id) === Number(r.id)).map((l) => labelRecord(l))
      yield ['repositories', {
        id: Number(r.id),
        owner: r.owner,
        name: r.name,
        ...(r.html_url === null ? {} : { html_url: r.html_url }),
        ...(Number(r.placeholder) === 1 ? { placeholder: true } : {}),
        ...hostFacts(r),
        permissions,
        ...(labels.length === 0 ? {} : { labels })
      }]
    }
  }

  let milestoneAfter: [number, number] = [0, 0]
  for (;;) {
    const [repo, number] = milestoneAfter
    const rows = await db.selectFrom('milestones').select(['repo_id', 'number', 'title', 'description', 'start_date', 'due_on', 'state', 'host_updated_at'])
      .where((eb) => eb.or([eb('repo_id', '>', repo), eb.and([eb('repo_id', '=', repo), eb('number', '>', number)])]))
      .orderBy('repo_id').orderBy('number').limit(page).execute()
    for (const m of rows) {
      yield ['milestones', {
        repo_id: Number(m.repo_id),
        number: Number(m.number),
        title: m.title,
        ...(m.description === null ? {} : { description: m.description }),
        ...(m.start_date === null ? {} : { start_date: m.start_date }),
        ...(m.due_on === null ? {} : { due_on: m.due_on }),
        state: m.state,
        ...(m.host_updated_at === null ? {} : { host_updated_at: m.host_updated_at })
      }]
    }
    if (rows.length < page) break
    milestoneAfter = [Number(rows.at(-1)!.repo_id), Number(rows.at(-1)!.number)]
  }

  // Workspaces are few; their order (oldest first) decides which one p1 operations act on.
  const workspaces = await db.selectFrom('workspaces').select(['id', 'name', 'description', 'created_at']).orderBy('created_at').orderBy('seq').execute()
  for (const w of workspaces) {
    const repos = await db.selectFrom('workspace_repositories').select('repo_id').where('workspace_id', '=', w.id).orderBy('repo_id').execute()
    const lanes = await db.selectFrom('pipelines').select(['id', 'name', 'host_label', 'created_at', 'updated_at'])
      .where('workspace_id', '=', w.id).orderBy('sort_order').execute()
    const pipelines = lanes.map((p) => ({
      id: p.id,
      name: p.name,
      ...(p.host_label === null ? {} : { host_label: p.host_label }),
      ...(p.created_at === null ? {} : { created_at: p.created_at }),
      ...(p.updated_at === null ? {} : { updated_at: p.updated_at })
    }))
    const own = await db.selectFrom('workspace_own_repositories').select('repo_id').where('workspace_id', '=', w.id).executeTakeFirst()
    yield ['workspaces', {
      id: w.id,
      name: w.name,
      description: w.description,
      created_at: w.created_at,
      repositories: repos.map((r) => Number(r.repo_id)),
      pipelines,
      ...(own === undefined ? {} : { own_repository_id: Number(own.repo_id) })
    }]
  }

  for await (const rows of pages(page, (after) => db.selectFrom('issues as i').leftJoin('users as u', 'u.id', 'i.creator_id')
    .select(['i.id', 'i.repo_id', 'i.number', 'i.title', 'i.state', 'i.estimate', 'i.created_at', 'i.planning_changed_at', 'i.milestone_number', 'i.is_pull_request', 'i.body', 'i.host_updated_at', 'u.login as creator'])
    .where('i.id', '>', after).where('i.id', '<=', lastIssue).orderBy('i.id').limit(page).execute())) {
    const ids = rows.map((r) => r.id)
    const placements = await db.selectFrom('placements').select(['issue_id', 'workspace_id', 'pipeline_id', 'position']).where('issue_id', 'in', ids).execute()
    const plusOnes = await db.selectFrom('plus_ones').select(['issue_id', 'created_at']).where('issue_id', 'in', ids).orderBy('created_at').orderBy('id').execute()
    const labels = await db.selectFrom('issue_labels').select(['issue_id', 'name', 'color']).where('issue_id', 'in', ids).orderBy('issue_id').orderBy('name').execute()
    const assignees = await db.selectFrom('issue_assignees').select(['issue_id', 'login', 'avatar_url']).where('issue_id', 'in', ids).orderBy('issue_id').orderBy('login').execute()
    const states = await db.selectFrom('issue_states').select(['issue_id', 'state', 'at']).where('issue_id', 'in', ids).orderBy('issue_id').orderBy('id').execute()
    const milestones = await db.selectFrom('issue_milestones').select(['issue_id', 'milestone_number', 'at']).where('issue_id', 'in', ids).orderBy('issue_id').orderBy('id').execute()
    const priorities = await db.selectFrom('issue_priorities as ip').innerJoin('priorities as p', 'p.id', 'ip.priority_id')
      .select(['ip.issue_id', 'ip.workspace_id', 'p.name']).where('ip.issue_id', 'in', ids).orderBy('ip.issue_id').orderBy('ip.workspace_id').execute()
    const prs = await db.selectFrom('issue_pr_connections as c').innerJoin('issues as pr', 'pr.id', 'c.pull_request_id')
      .select(['c.issue_id', 'pr.repo_id', 'pr.number', 'c.created_at']).where('c.issue_id', 'in', ids).where('pr.id', '<=', lastIssue)
      .orderBy('c.issue_id').orderBy('c.created_at').orderBy('pr.id').execute()
    for (const i of rows) {
      const pipelines: Record<string, string> = {}
      const positions: Record<string, number> = {}
      for (const p of placements) {
        if (Number(p.issue_id) !== Number(i.id)) continue
        pipelines[p.workspace_id] = p.pipeline_id
        if (p.position !== null) positions[p.workspace_id] = Number(p.position)
      }
      const record: Json = { repo_id: Number(i.repo_id), number: Number(i.number), title: i.title, state: i.state, created_at: i.created_at }
      if (i.estimate !== null) record.estimate = i.estimate
      if (i.planning_changed_at !== null) record.planning_changed_at = i.planning_changed_at
      // The issue host's time of what is held: a later delivery older than it is stale.
      if (i.host_updated_at !== null) record.host_updated_at = i.host_updated_at
      if (i.milestone_number !== null) record.milestone_number = Number(i.milestone_number)
      if (Number(i.is_pull_request) === 1) record.pull_request = true
      if (i.body !== null) record.body = i.body
      if (i.creator !== null) record.creator = i.creator
      const ones = plusOnes.filter((p) => Number(p.issue_id) === Number(i.id)).map((p) => p.created_at)
      if (ones.length > 0) record.plus_ones = ones
      if (Object.keys(pipelines).length > 0) record.pipelines = pipelines
      if (Object.keys(positions).length > 0) record.positions = positions
      const own = labels.filter((l) => Number(l.issue_id) === Number(i.id)).map((l) => ({ name: l.name, color: l.color }))
      if (own.length > 0) record.labels = own
      const people = assignees.filter((a) => Number(a.issue_id) === Number(i.id)).map((a) => ({ login: a.login, avatar_url: a.avatar_url }))
      if (people.length > 0) record.assignees = people
      // The reports' history: always the states (an import would otherwise record one, now), the milestones when any.
      record.state_history = states.filter((h) => Number(h.issue_id) === Number(i.id)).map((h) => ({ state: h.state, at: h.at }))
      const moves = milestones.filter((h) => Number(h.issue_id) === Number(i.id))
        .map((h) => ({ milestone_number: h.milestone_number === null ? null : Number(h.milestone_number), at: h.at }))
      if (moves.length > 0 || i.milestone_number !== null) record.milestone_history = moves
      const mine = priorities.filter((p) => Number(p.issue_id) === Number(i.id))
      if (mine.length > 0) record.priorities = Object.fromEntries(mine.map((p) => [p.workspace_id, p.name]))
      const connected = prs.filter((c) => Number(c.issue_id) === Number(i.id))
        .map((c) => ({ repo_id: Number(c.repo_id), issue_number: Number(c.number), created_at: c.created_at }))
      if (connected.length > 0) record.connected_prs = connected
      yield ['issues', record]
    }
  }

  // Events in feed order (the commit order of their writes), so an import keeps that order.
  let eventAfter: [number, number] = [-1, 0]
  for (;;) {
    const [version, id] = eventAfter
    const rows = await db.selectFrom('issue_events as e').innerJoin('issues as i', 'i.id', 'e.issue_id')
      .select(['e.id', 'e.version', 'i.repo_id', 'i.number', 'e.type', 'e.created_at', 'e.user_id', 'e.from_estimate', 'e.to_estimate', 'e.from_pipeline', 'e.to_pipeline', 'e.workspace_id', 'e.subject'])
      .where('e.version', 'is not', null).where('i.id', '<=', lastIssue)
      .where((eb) => eb.or([eb('e.version', '>', version), eb.and([eb('e.version', '=', version), eb('e.id', '>', id)])]))
      .orderBy('e.version').orderBy('e.id').limit(page).execute()
    for (const e of rows) {
      const record: Json = { repo_id: Number(e.repo_id), number: Number(e.number), type: e.type, created_at: e.created_at }
      for (const key of ['user_id', 'from_estimate', 'to_estimate'] as const) if (e[key] !== null) record[key] = Number(e[key])
      for (const key of ['from_pipeline', 'to_pipeline', 'workspace_id', 'subject'] as const) if (e[key] !== null) record[key] = e[key]
      yield ['issue_events', record]
    }
    if (rows.length < page) break
    eventAfter = [Number(rows.at(-1)!.version), Number(rows.at(-1)!.id)]
  }

  for await (const rows of pages(page, (after) => db.selectFrom('issues as i').leftJoin('epic_dates as d', 'd.issue_id', 'i.id')
    .select(['i.id', 'i.repo_id', 'i.number', 'd.start_on', 'd.end_on'])
    .where('i.is_epic', '=', 1).where('i.id', '>', after).where('i.id', '<=', lastIssue).orderBy('i.id').limit(page).execute())) {
    const members = await db.selectFrom('epic_issues as e').innerJoin('issues as i', 'i.id', 'e.issue_id').select(['e.epic_id', 'i.repo_id', 'i.number'])
      .where('e.epic_id', 'in', rows.map((r) => r.id)).where('i.id', '<=', lastIssue).orderBy('i.repo_id').orderBy('i.number').execute()
    for (const epic of rows) {
      const issues = members.filter((m) => Number(m.epic_id) === Number(epic.id)).map((m) => ({ repo_id: Number(m.repo_id), issue_number: Number(m.number) }))
      yield ['epics', {
        repo_id: Number(epic.repo_id),
        issue_number: Number(epic.number),
        ...(epic.start_on == null ? {} : { start_on: epic.start_on }),
        ...(epic.end_on == null ? {} : { end_on: epic.end_on }),
        issues
      }]
    }
  }

  for await (const rows of pages(page, (after) => db.selectFrom('dependencies as d')
    .innerJoin('issues as a', 'a.id', 'd.blocking_id').innerJoin('issues as b', 'b.id', 'd.blocked_id')
    .select(['d.seq as id', 'd.created_at', 'a.repo_id as a_repo', 'a.number as a_number', 'b.repo_id as b_repo', 'b.number as b_number'])
    .where('d.seq', '>', after).where('a.id', '<=', lastIssue).where('b.id', '<=', lastIssue).orderBy('d.seq').limit(page).execute())) {
    for (const d of rows) {
      yield ['dependencies', {
        blocking: { repo_id: Number(d.a_repo), issue_number: Number(d.a_number) },
        blocked: { repo_id: Number(d.b_repo), issue_number: Number(d.b_number) },
        created_at: d.created_at
      }]
    }
  }

  for await (const rows of pages(page, (after) => db.selectFrom('release_reports')
    .select(['seq as id', 'id as release_id', 'title', 'description', 'start_date', 'desired_end_date', 'created_at', 'closed_at', 'state'])
    .where('seq', '>', after).orderBy('seq').limit(page).execute())) {
    for (const r of rows) {
      const repos = await db.selectFrom('release_report_repositories').select('repo_id').where('release_id', '=', r.release_id).orderBy('repo_id').execute()
      const issues = await db.selectFrom('release_report_issues as ri').innerJoin('issues as i', 'i.id', 'ri.issue_id').select(['i.repo_id', 'i.number'])
        .where('ri.release_id', '=', r.release_id).where('i.id', '<=', lastIssue).orderBy('i.repo_id').orderBy('i.number').execute()
      const changes = await db.selectFrom('release_issue_changes as c').innerJoin('issues as i', 'i.id', 'c.issue_id').select(['i.repo_id', 'i.number', 'c.change', 'c.at'])
        .where('c.release_id', '=', r.release_id).where('i.id', '<=', lastIssue).orderBy('c.id').execute()
      yield ['release_reports', {
        id: r.release_id,
        title: r.title,
        description: r.description,
        start_date: r.start_date,
        desired_end_date: r.desired_end_date,
        created_at: r.created_at,
        closed_at: r.closed_at,
        state: r.state,
        repositories: repos.map((x) => Number(x.repo_id)),
        issues: issues.map((i) => ({ repo_id: Number(i.repo_id), issue_number: Number(i.number) })),
        ...(changes.length === 0
          ? {}
          : { issue_changes: changes.map((c) => ({ repo_id: Number(c.repo_id), issue_number: Number(c.number), change: c.change, at: c.at })) })
      }]
    }
  }

  yield * sprintRecords(db, lastIssue)

  for await (const rows of pages(page, (after) => db.selectFrom('zenhub_epics as e').leftJoin('users as u', 'u.id', 'e.creator_id')
    .select(['e.id', 'e.workspace_id', 'e.title', 'e.body', 'e.state', 'e.start_on', 'e.end_on', 'u.login as creator', 'e.created_at', 'e.updated_at', 'e.estimate'])
    .where('e.id', '>', after).orderBy('e.id').limit(page).execute())) {
    const ids = rows.map((r) => r.id)
    const members = await db.selectFrom('zenhub_epic_issues as m').innerJoin('issues as i', 'i.id', 'm.issue_id').select(['m.epic_id', 'i.repo_id', 'i.number', 'm.added_at'])
      .where('m.epic_id', 'in', ids).where('i.id', '<=', lastIssue).orderBy('m.epic_id').orderBy('m.added_at').orderBy('m.issue_id').execute()
    const assignees = await db.selectFrom('zenhub_epic_assignees as a').innerJoin('users as u', 'u.id', 'a.user_id').select(['a.epic_id', 'u.login', 'a.added_at'])
      .where('a.epic_id', 'in', ids).orderBy('a.epic_id').orderBy('a.added_at').orderBy('a.user_id').execute()
    const labels = await db.selectFrom('zenhub_epic_labels').select(['epic_id', 'name', 'color', 'added_at']).where('epic_id', 'in', ids).orderBy('epic_id').orderBy('name').execute()
    const keyDates = await db.selectFrom('zenhub_epic_key_dates').select(['id', 'epic_id', 'date', 'description', 'created_at'])
      .where('epic_id', 'in', ids).orderBy('epic_id').orderBy('date').orderBy('id').execute()
    for (const { estimate, ...e } of rows) {
      const of = <T extends { epic_id: number | string | bigint }>(list: T[]) => list.filter((m) => Number(m.epic_id) === Number(e.id))
      const issues = of(members).map((m) => ({ repo_id: Number(m.repo_id), issue_number: Number(m.number), added_at: m.added_at }))
      yield ['zenhub_epics', {
        ...e,
        id: Number(e.id),
        ...(estimate === null ? {} : { estimate: Number(estimate) }),
        issues,
        assignees: of(assignees).map((a) => ({ login: a.login, added_at: a.added_at })),
        labels: of(labels).map((l) => ({ name: l.name, ...(l.color === null ? {} : { color: l.color }), added_at: l.added_at })),
        key_dates: of(keyDates).map((k) => ({ id: Number(k.id), date: k.date, description: k.description, created_at: k.created_at }))
      }]
    }
  }

  for (const l of await db.selectFrom('zenhub_labels').select(['name', 'color', 'description']).orderBy('name').execute()) yield ['zenhub_labels', labelRecord(l)]

  const roles = await db.selectFrom('chat_members as c').innerJoin('users as u', 'u.id', 'c.user_id').select(['u.login', 'c.role'])
    .where('c.role', 'in', ['broadcaster', 'moderator']).orderBy('u.id').execute()
  const broadcaster = roles.find((r) => r.role === 'broadcaster')?.login
  const moderators = roles.filter((r) => r.role === 'moderator').map((r) => r.login)
  if (broadcaster !== undefined || moderators.length > 0) {
    yield ['chat', { ...(broadcaster === undefined ? {} : { broadcaster }), ...(moderators.length === 0 ? {} : { moderators }) }]
  }
}

/**
 * Each workspace's sprint configuration with its sprints (as settled so far: started, ended),
 * their issues and the sprint events, so the sprint answers and reports are the same after an
 * import. Workspaces are few; a workspace's sprints and events are read whole.
 */
async function * sprintRecords (db: Executor, lastIssue: number): AsyncGenerator<[string, Json]> {
  const configs = await db.selectFrom('sprint_configs as c').innerJoin('workspaces as w', 'w.id', 'c.workspace_id')
    .select(['c.workspace_id', 'c.length_weeks', 'c.starts_on', 'c.time_zone', 'c.carry_over', 'c.updated_at']).orderBy('w.created_at').orderBy('w.seq').execute()
  for (const c of configs) {
    const sprints = await db.selectFrom('sprints').select(['id', 'number', 'name', 'starts_at', 'ends_at', 'started', 'ended'])
      .where('workspace_id', '=', c.workspace_id).orderBy('starts_at').execute()
    const members = await db.selectFrom('sprint_issues as s').innerJoin('issues as i', 'i.id', 's.issue_id')
      .select(['s.sprint_id', 'i.repo_id', 'i.number', 's.open', 's.added_at', 's.carried_from'])
      .where('s.workspace_id', '=', c.workspace_id).where('i.id', '<=', lastIssue).orderBy('s.added_at').orderBy('i.repo_id').orderBy('i.number').execute()
    const events = await db.selectFrom('sprint_events as e').leftJoin('issues as i', 'i.id', 'e.issue_id')
      .select(['e.sprint_id', 'e.type', 'i.repo_id', 'i.number', 'e.user_id', 'e.carried', 'e.at'])
      .where('e.workspace_id', '=', c.workspace_id).where((eb) => eb.or([eb('e.issue_id', 'is', null), eb('e.issue_id', '<=', lastIssue)])).orderBy('e.id').execute()
    yield ['sprints', {
      workspace_id: c.workspace_id,
      length_weeks: Number(c.length_weeks),
      starts_on: c.starts_on,
      time_zone: c.time_zone,
      carry_over: Number(c.carry_over) === 1,
      updated_at: c.updated_at,
      sprints: sprints.map((s) => ({
        id: s.id,
        number: Number(s.number),
        name: s.name,
        starts_at: s.starts_at,
        ends_at: s.ends_at,
        started: Number(s.started) === 1,
        ended: Number(s.ended) === 1,
        issues: members.filter((m) => m.sprint_id === s.id).map((m) => ({
          repo_id: Number(m.repo_id),
          issue_number: Number(m.number),
          added_at: m.added_at,
          open: Number(m.open) === 1,
          ...(m.carried_from === null ? {} : { carried_from: m.carried_from })
        }))
      })),
      events: events.map((e) => ({
        sprint_id: e.sprint_id,
        type: e.type,
        ...(e.repo_id === null || e.number === null ? {} : { issue: { repo_id: Number(e.repo_id), issue_number: Number(e.number) } }),
        ...(e.user_id === null ? {} : { user_id: Number(e.user_id) }),
        ...(Number(e.carried) === 1 ? { carried: true } : {}),
        at: e.at
      }))
    }]
  }
}

/** Keyset pages over a numeric `id` column until a short page. */
async function * pages<R extends { id: number | string | bigint }> (page: number, read: (after: number) => Promise<R[]>): AsyncGenerator<R[]> {
  let after = 0
  for (;;) {
    const rows = await read(after)
    if (rows.length > 0) yield rows
    if (rows.length < page) return
    after = Number(rows.at(-1)!.id)
  }
}

/**
 * Runs `fn` over one consistent view of the data: on PostgreSQL a read-only repeatable-read
 * transaction (one snapshot however long the export takes); SQLite serves the app from one
 * connection, so the pages are read as they come (each statement consistent on its own).
 */
export async function * withSnapshot<T> (db: Kysely<Database>, fn: (db: Executor) => AsyncGenerator<T>): AsyncGenerator<T> {
  if (engineOf(db) !== 'postgres') {
    yield * fn(db)
    return
  }
  const trx = await db.startTransaction().setIsolationLevel('repeatable read').setAccessMode('read only').execute()
  try {
    yield * fn(trx)
    await trx.commit().execute()
  } catch (err) {
    await trx.rollback().execute()
    throw err
  } finally {
    // A consumer that stops early (the client went away) ends the generator without an error.
    if (!trx.isCommitted && !trx.isRolledBack) await trx.rollback().execute()
  }
}
