import { TypeCompiler } from '@sinclair/typebox/compiler'
import { readFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { DomainError, Invalid } from '../db/errors.js'
import { exportRecords, withSnapshot } from '../db/export.js'
import { analyzeAfterBulkLoad, type BulkLoadVacuum } from '../db/engine/analyze.js'
import { withLongDeadline } from '../db/engine/long-work.js'
import { createRestoreRepository } from '../db/restore.js'
import type { BulkIssue } from '../db/bulk-issues.js'
import type { PlanningStore, StoreScope } from '../db/store.js'
import type { PermissionName } from '../db/users.js'
import { Fixture } from '../schemas/fixture.js'
import { registerFormats } from '../schemas/formats.js'

registerFormats()
const checker = TypeCompiler.Compile(Fixture)

/** The bundled demo fixture (resolved when asked: the single executable carries it as an asset instead). */
export function demoFixturePath (): string {
  return fileURLToPath(new URL('../fixtures/demo.json', import.meta.url))
}

export interface FixtureSummary {
  users: number
  repositories: number
  milestones: number
  issues: number
  workspaces: number
  issue_events: number
  epics: number
  dependencies: number
  release_reports: number
  zenhub_epics: number
}

/** Checks the shape; the message names where the first problems are (e.g. `/issues/2/number`). */
export function parseFixture (input: unknown): Fixture {
  if (checker.Check(input)) return input
  const problems = [...checker.Errors(input)].slice(0, 5).map((e) => `${e.path || '/'}: ${e.message}`)
  throw new Invalid(`invalid fixture: ${problems.join('; ')}`)
}

export function readFixtureFile (path: string): Fixture {
  let text: string
  try {
    text = readFileSync(path, 'utf8')
  } catch (err) {
    throw new Error(`cannot read fixture ${path}: ${(err as Error).message}`)
  }
  let json: unknown
  try {
    json = JSON.parse(text)
  } catch (err) {
    throw new Error(`fixture ${path} is not valid JSON: ${(err as Error).message}`)
  }
  return parseFixture(json)
}

/** Says where in the fixture a refusal comes from; the status stays the data layer's. */
async function at<T> (where: string, fn: () => Promise<T>): Promise<T> {
  try {
    return await fn()
  } catch (err) {
    if (err instanceof DomainError) throw new DomainError(`invalid fixture: ${where === '' ? '' : `${where}: `}${err.message}`, err.statusCode)
    throw err
  }
}

/** Told after each batch of issues is written: how many of how many. */
export type FixtureProgress = (done: number, total: number) => void

/** A progress that tells `say` at most once per `everyMs`, and always the last batch: a line a log can keep. */
export function progressLines (say: (line: string) => void, what: string, everyMs = 2000): FixtureProgress {
  let last = Date.now()
  return (done, total) => {
    if (done < total && Date.now() - last < everyMs) return
    last = Date.now()
    say(`${what}: ${done.toLocaleString('en')} of ${total.toLocaleString('en')} issues`)
  }
}

/** How long a fixture's one transaction may take on PostgreSQL (SEED_FILE, admin import), beyond DATABASE_TIMEOUT_MS. */
export const FIXTURE_TIMEOUT_MS = 10 * 60_000

/** Issues per batch: each batch is checked, then written in a few multi-row statements. */
const BATCH = 1000

/** Writes a checked fixture with the repositories of one transaction. */
async function write (tx: StoreScope, fixture: Fixture, progress?: FixtureProgress): Promise<FixtureSummary> {
  const restore = createRestoreRepository(tx.db)
  const userId = async (login: string, where: string): Promise<number> => {
    const user = await tx.users.byLogin(login)
    if (user === undefined) throw new Invalid(`invalid fixture: ${where}: unknown login '${login}'`)
    return user.id
  }
  for (const [i, u] of (fixture.users ?? []).entries()) {
    await at(`users[${i}]`, async () => {
      const user = await tx.users.create(u.login, u.id, u.token)
      if (u.email !== undefined) await tx.users.setEmail(user.id, u.email)
    })
  }
  for (const [i, r] of (fixture.repositories ?? []).entries()) {
    const { id, owner, name, permissions: _permissions, labels: _labels, ...facts } = r
    await at(`repositories[${i}]`, async () => await tx.repositories.create({ id, owner, name }))
    await restore.markRepository(id, facts)
    for (const [login, permission] of Object.entries(r.permissions ?? {})) {
      await tx.users.setPermission(await userId(login, `repositories[${i}].permissions`), r.id, permission as PermissionName)
    }
    for (const [j, label] of (r.labels ?? []).entries()) await at(`repositories[${i}].labels[${j}]`, async () => { await tx.labels.createRepositoryLabel(r.id, label) })
  }
  for (const [i, m] of (fixture.milestones ?? []).entries()) {
    await at(`milestones[${i}]`, async () => {
      await tx.repositories.createMilestone(m.repo_id, m.number, m.title, { due_on: m.due_on, state: m.state, description: m.description })
      if (m.start_date !== undefined) await tx.milestones.setStartDate(m.repo_id, m.number, m.start_date)
      if (m.host_updated_at !== undefined) await restore.setMilestoneHostTime(m.repo_id, m.number, m.host_updated_at)
    })
  }
  for (const [i, { own_repository_id: own, ...w }] of (fixture.workspaces ?? []).entries()) {
    await at(`workspaces[${i}]`, async () => {
      const made = await tx.workspaces.create({ ...w, created_at: w.created_at === undefined ? undefined : new Date(w.created_at).toISOString() })
      if (own !== undefined) await restore.linkOwnRepository(made.id, own)
    })
  }
  const issues = fixture.issues ?? []
  const bulk = tx.bulkIssues()
  const authors = new Map<string, number>()
  for (let start = 0; start < issues.length; start += BATCH) {
    const batch: BulkIssue[] = []
    for (const [j, issue] of issues.slice(start, start + BATCH).entries()) {
      let authorId: number | undefined
      if (issue.author !== undefined) {
        authorId = authors.get(issue.author) ?? await userId(issue.author, `issues[${start + j}].author`)
        authors.set(issue.author, authorId)
      }
      let creatorId: number | undefined
      if (issue.creator !== undefined && issue.creator !== null) {
        creatorId = authors.get(issue.creator) ?? await userId(issue.creator, `issues[${start + j}].creator`)
        authors.set(issue.creator, creatorId)
      }
      const { repo_id: repoId, number, title, state, plus_ones: plusOnes, pipelines, estimate } = issue
      const { milestone_number: milestone, pull_request: pullRequest, created_at: createdAt, labels, assignees, body, host_updated_at: hostUpdatedAt } = issue
      const more = { pullRequest, createdAt, labels, assignees, body, hostUpdatedAt, ...(milestone === undefined ? {} : { milestoneNumber: milestone }) }
      batch.push({ repoId, number, title, state, authorId, plusOnes, pipelines, estimate, ...more, ...(creatorId === undefined ? {} : { creatorId }) })
    }
    await at('', async () => await bulk.create(batch, start, (i) => `issues[${i}]`))
    progress?.(Math.min(start + BATCH, issues.length), issues.length)
  }
  // What the bulk write leaves at its defaults: positions and histories.
  for (const [i, issue] of issues.entries()) {
    const { positions, state_history: states, milestone_history: milestones, priorities, connected_prs: prs } = issue
    if ([positions, states, milestones, priorities, prs].every((v) => v === undefined)) continue
    await at(`issues[${i}]`, async () => {
      const id = await restore.issueId({ repo_id: issue.repo_id, issue_number: issue.number }, 'issue')
      for (const [workspaceId, position] of Object.entries(positions ?? {})) await restore.setPosition(id, workspaceId, position)
      await restore.setHistory(id, issue.repo_id, { states, milestones })
      for (const [workspaceId, name] of Object.entries(priorities ?? {})) await restore.setPriority(id, workspaceId, name)
      for (const pr of prs ?? []) await restore.connectPr(id, await restore.issueId(pr, 'connected_prs'), pr.created_at)
    })
  }
  for (const [i, event] of (fixture.issue_events ?? []).entries()) {
    await at(`issue_events[${i}]`, async () => {
      const { repo_id: repoId, number, ...rest } = event
      if (rest.user_id !== undefined && rest.user_id !== null && await tx.users.byId(rest.user_id) === undefined) throw new Invalid(`unknown user id ${rest.user_id}`)
      await restore.addEvent(await restore.issueId({ repo_id: repoId, issue_number: number }, 'issue'), rest)
    })
  }
  // The issues the epics, dependencies and sprints name, read in a few statements instead of one each.
  await restore.readAhead([
    ...(fixture.epics ?? []).flatMap((epic) => [epic, ...epic.issues]),
    ...(fixture.dependencies ?? []).flatMap((d) => [d.blocking, d.blocked]),
    ...(fixture.sprints ?? []).flatMap((plan) => plan.sprints.flatMap((sprint) => sprint.issues)),
    ...(fixture.zenhub_epics ?? []).flatMap((epic) => epic.issues)
  ])
  const epicEdges: Array<[number, number]> = []
  for (const [i, epic] of (fixture.epics ?? []).entries()) {
    await at(`epics[${i}]`, async () => {
      const id = await restore.issueId(epic, 'epic')
      const children: number[] = []
      for (const child of epic.issues) children.push(await restore.issueId(child, 'issues'))
      await restore.makeEpic(id, children)
      if (epic.start_on != null || epic.end_on != null) await restore.setEpicDates(id, epic.start_on ?? null, epic.end_on ?? null)
      for (const child of children) epicEdges.push([id, child])
    })
  }
  if (hasCycle(epicEdges)) throw new Invalid('invalid fixture: epics: an epic contains itself through other epics')
  const dependencyEdges: Array<[number, number]> = []
  for (const [i, d] of (fixture.dependencies ?? []).entries()) {
    await at(`dependencies[${i}]`, async () => {
      const blocking = await restore.issueId(d.blocking, 'blocking')
      const blocked = await restore.issueId(d.blocked, 'blocked')
      await restore.addDependency(blocking, blocked, d.created_at)
      dependencyEdges.push([blocking, blocked])
    })
  }
  if (hasCycle(dependencyEdges)) throw new Invalid('invalid fixture: dependencies: they form a cycle')
  for (const [i, report] of (fixture.release_reports ?? []).entries()) {
    await at(`release_reports[${i}]`, async () => {
      const { issues = [], issue_changes: changes = [], ...fields } = report
      const outside = [...issues, ...changes].find((ref) => !fields.repositories.includes(ref.repo_id))
      if (outside !== undefined) throw new Invalid(`issue ${outside.repo_id}#${outside.issue_number} is not in the report's repositories`)
      const ids: number[] = []
      for (const ref of issues) ids.push(await restore.issueId(ref, 'issues'))
      const changed = []
      for (const { change, at, ...ref } of changes) changed.push({ issue_id: await restore.issueId(ref, 'issue_changes'), change, at })
      await restore.addReleaseChanges(await restore.addReleaseReport(fields, ids), changed)
    })
  }
  for (const [i, plan] of (fixture.sprints ?? []).entries()) {
    await at(`sprints[${i}]`, async () => {
      const sprints = []
      for (const sprint of plan.sprints) {
        const issues = []
        for (const { repo_id: repoId, issue_number: number, ...member } of sprint.issues) {
          issues.push({ ...member, issue_id: await restore.issueId({ repo_id: repoId, issue_number: number }, `sprint ${sprint.id}`) })
        }
        sprints.push({ ...sprint, issues })
      }
      const events = []
      for (const { issue, user_id: userId, ...event } of plan.events) {
        if (userId !== undefined && await tx.users.byId(userId) === undefined) throw new Invalid(`a sprint event names unknown user id ${userId}`)
        events.push({ ...event, ...(userId === undefined ? {} : { user_id: userId }), ...(issue === undefined ? {} : { issue_id: await restore.issueId(issue, 'sprint event') }) })
      }
      await restore.addSprints({ ...plan, sprints, events })
    })
  }
  for (const [i, { issues, creator, assignees, labels, key_dates: keyDates, ...epic }] of (fixture.zenhub_epics ?? []).entries()) {
    const creatorId = creator === undefined || creator === null ? null : await userId(creator, `zenhub_epics[${i}].creator`)
    const assigned: Array<{ user_id: number, added_at?: string }> = []
    for (const [j, { login, ...rest }] of (assignees ?? []).entries()) assigned.push({ ...rest, user_id: await userId(login, `zenhub_epics[${i}].assignees[${j}]`) })
    await at(`zenhub_epics[${i}]`, async () => {
      const members = []
      for (const { added_at: addedAt, ...ref } of issues) members.push({ issue_id: await restore.issueId(ref, 'issues'), ...(addedAt === undefined ? {} : { added_at: addedAt }) })
      await restore.addZenhubEpic(epic, creatorId, members, { assignees: assigned, labels: labels ?? [], key_dates: keyDates ?? [] })
    })
  }
  const keptIds = (fixture.zenhub_epics ?? []).some((epic) => epic.id !== undefined || (epic.key_dates ?? []).some((k) => k.id !== undefined))
  if (keptIds) await restore.continueZenhubEpicIds()
  for (const [i, label] of (fixture.zenhub_labels ?? []).entries()) await at(`zenhub_labels[${i}]`, async () => { await tx.labels.createOrganizationLabel(label) })
  // Last: the writes above note planning changes of their own.
  for (const issue of fixture.issues ?? []) {
    if (issue.planning_changed_at === undefined) continue
    await restore.setPlanningChangedAt(await restore.issueId({ repo_id: issue.repo_id, issue_number: issue.number }, 'issue'), issue.planning_changed_at)
  }
  if (fixture.chat?.broadcaster !== undefined) await tx.chat.setRole(await userId(fixture.chat.broadcaster, 'chat.broadcaster'), 'broadcaster')
  for (const [i, login] of (fixture.chat?.moderators ?? []).entries()) await tx.chat.setRole(await userId(login, `chat.moderators[${i}]`), 'moderator')
  return {
    users: fixture.users?.length ?? 0,
    repositories: fixture.repositories?.length ?? 0,
    milestones: fixture.milestones?.length ?? 0,
    issues: fixture.issues?.length ?? 0,
    workspaces: fixture.workspaces?.length ?? 0,
    issue_events: fixture.issue_events?.length ?? 0,
    epics: fixture.epics?.length ?? 0,
    dependencies: fixture.dependencies?.length ?? 0,
    release_reports: fixture.release_reports?.length ?? 0,
    zenhub_epics: fixture.zenhub_epics?.length ?? 0
  }
}

/** Whether the directed edges make a loop (an iterative depth-first search). */
function hasCycle (edges: Array<[number, number]>): boolean {
  const next = new Map<number, number[]>()
  for (const [from, to] of edges) next.set(from, [...(next.get(from) ?? []), to])
  const state = new Map<number, 1 | 2>()
  for (const start of next.keys()) {
    if (state.has(start)) continue
    const stack: Array<[number, number]> = [[start, 0]]
    state.set(start, 1)
    while (stack.length > 0) {
      const top = stack[stack.length - 1]
      const out = next.get(top[0]) ?? []
      if (top[1] >= out.length) {
        state.set(top[0], 2)
        stack.pop()
        continue
      }
      const to = out[top[1]++]
      if (state.get(to) === 1) return true
      if (!state.has(to)) {
        state.set(to, 1)
        stack.push([to, 0])
      }
    }
  }
  return false
}

/**
 * Merges a fixture into the database in one transaction: all of it or nothing. Unknown logins or
 * repositories and duplicate keys are refused with a message that says where. Issues go in
 * batches (README, "Fixtures"); `progress` hears after each.
 */
export async function loadFixture (
  store: PlanningStore | StoreScope, input: unknown, progress?: FixtureProgress, analyzed?: FixtureAnalyzed
): Promise<FixtureSummary> {
  const fixture = parseFixture(input)
  if (!('transaction' in store)) return await write(store, fixture, progress)
  const summary = await withLongDeadline(FIXTURE_TIMEOUT_MS, async () => await store.transaction(async (tx) => await write(tx, fixture, progress)))
  await analyzeFixture(store.db, analyzed)
  return summary
}

/** Told how long the vacuum and the planner's statistics took after a load (PostgreSQL), or why they stopped. */
export type FixtureAnalyzed = (vacuum: BulkLoadVacuum) => void

/** After a load has committed (the caller's transaction, for a scope), its tables vacuumed and analyzed; never throws. */
export async function analyzeFixture (db: PlanningStore['db'], analyzed?: FixtureAnalyzed): Promise<void> {
  const vacuum = await analyzeAfterBulkLoad(db)
  if (vacuum !== undefined) analyzed?.(vacuum)
}

/** The log line of `analyzeFixture`'s outcome: `what` names the tables ("loaded", "imported"). */
export function vacuumLine (vacuum: BulkLoadVacuum, what: string): { level: 'info' | 'warn', msg: string } {
  const ms = Math.round(vacuum.ms)
  return vacuum.error === undefined
    ? { level: 'info', msg: `vacuumed and analyzed the ${what} tables in ${ms} ms` }
    : { level: 'warn', msg: `the vacuum and analyze of the ${what} tables stopped after ${ms} ms (${vacuum.error.message}); the ${what} rows are committed, autovacuum will get to them` }
}

/**
 * Everything as one fixture (docs, "Admin API and CLI"), as JSON text in chunks: a page of rows
 * at a time, so a large database is never held in memory. Importing it on an empty server gives
 * the same answers on every endpoint.
 */
export async function * exportFixture (store: PlanningStore, page?: number): AsyncGenerator<string> {
  let section: string | undefined
  let chunk = '{'
  for await (const [key, record] of withSnapshot(store.db, (db) => exportRecords(db, page))) {
    if (key === 'chat') {
      chunk += `${section === undefined ? '' : '],'}"chat":${JSON.stringify(record)}`
      section = 'chat'
      continue
    }
    if (key !== section) {
      chunk += `${section === undefined ? '' : '],'}${JSON.stringify(key)}:[\n`
      section = key
    } else {
      chunk += ',\n'
    }
    chunk += JSON.stringify(record)
    if (chunk.length >= 64 * 1024) {
      yield chunk
      chunk = ''
    }
  }
  yield `${chunk}${section === undefined || section === 'chat' ? '' : ']'}}\n`
}
