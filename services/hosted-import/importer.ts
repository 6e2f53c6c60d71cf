import { analyzeAfterBulkLoad } from '../../db/engine/analyze.js'
import { vacuumLine } from '../fixtures.js'
import type { FastifyBaseLogger } from 'fastify'
import { randomUUID } from 'node:crypto'
import { createHostedImportsRepository, createHostedSync, hostedTokenContext, type HostedJob, type HostedProgress } from '../../db/issue-host/hosted-imports.js'
import { unprioritizedRank } from '../../db/ranking.js'
import type { PlanningStore } from '../../db/store.js'
import {
  RemoteBoard, RemoteDependencies, RemoteEpic, RemoteEpicList, RemoteEvents, RemoteIssueData, RemoteReport, RemoteReportIssues,
  RemoteReportList, RemoteStartDate, RemoteWorkspaces
} from '../../schemas/hosted-import.js'
import { DomainError } from '../../db/errors.js'
import { isDatabaseUnavailable, lockFor } from '../../db/engine/engine.js'
import { SEALED_PREFIX, type SecretBox } from '../../db/engine/secret-box.js'
import { HostedAuthError, HostedClient, HostedError, type Fetch } from './client.js'

export interface HostedImporterOptions {
  /** every request to the hosted service goes through this: the issue-host fetch with its address policy */
  fetch: Fetch
  /** requests per minute per import at most (default 100, the hosted limit) */
  requestsPerMinute?: number
  timeoutMs?: number
  /** first wait before a retry (default 1 s; doubled each time): the hosted service's errors, and the database's */
  backoffMs?: number
  attempts?: number
  maxWaitMs?: number
  maxBodyBytes?: number
  /** how long an instance holds an import without saving before another may take it over (default 60 s) */
  leaseMs?: number
  /** warnings a job keeps word for word (default 100); the rest are counted in one more line */
  maxWarnings?: number
}

/** The longest wait before trying an import again while the database is away. */
const MAX_OUTAGE_WAIT_MS = 5 * 60_000

/** A placeholder repository's milestones are probed until this many numbers in a row have no start date… */
const PROBE_MISSES = 5
/** …and at most this many numbers per run. */
const PROBE_LIMIT = 100

/** Requests a repository needs before its lists are read: workspaces, epics, dependencies, release reports. */
const FIXED = 4

/**
 * The requests an import will make, as known before the hosted lists are read (docs, "Move from
 * the hosted service"): 4 per repository, and one per milestone (and closed issue, and issue) known
 * here. Each list read adds its items: a board per workspace, one per epic, two per release report.
 */
export function estimateRequests (repos: number, local: number): number {
  return repos * FIXED + local
}

class LostLease extends Error {}
/** The import cannot go on (its token cannot be read): it fails with this message. */
class ImportFailure extends Error {}

/** The database out of reach (PostgreSQL away, SQLite busy): the import waits and tries again, it does not fail. */
function storeOutage (err: unknown): boolean {
  return isDatabaseUnavailable(err) || (err as { code?: unknown } | null)?.code === 'SQLITE_BUSY'
}

/** The token, opened with SECRET_KEY (or SECRET_KEY_PREVIOUS during a rotation). */
function openToken (box: SecretBox, stored: string | null, id: string): string {
  if (stored === null) throw new ImportFailure('the token is gone (it is kept only while an import runs); start a new import')
  if (!stored.startsWith(SEALED_PREFIX)) throw new ImportFailure('the token was kept by an older version of this server and cannot be read; start a new import')
  try {
    return box.open(stored, hostedTokenContext(id))
  } catch (err) {
    const why = err instanceof Error && /SECRET_KEY/.test(err.message) ? err.message : 'it does not decrypt with SECRET_KEY'
    throw new ImportFailure(`the token cannot be read (${why}): every instance needs the same SECRET_KEY; start a new import`)
  }
}

/**
 * Runs imports from the hosted service in the background (docs, "Move from the hosted service"):
 * one instance at a time per import (a lease in the database), each item written in one
 * transaction together with the progress, so a crash or restart goes on from the item it reached.
 */
export class HostedImporter {
  private readonly owner = randomUUID()
  private readonly running = new Map<string, Promise<void>>()
  private readonly stopping = new AbortController()
  private sweeper: NodeJS.Timeout | undefined
  /** imports that met a database outage: how many times in a row, and the timer of the next try */
  private readonly outages = new Map<string, { count: number, retry: NodeJS.Timeout }>()

  constructor (private readonly store: PlanningStore, private readonly log: FastifyBaseLogger, private readonly options: HostedImporterOptions) {}

  get leaseMs (): number {
    return this.options.leaseMs ?? 60_000
  }

  /** Runs the import here unless it runs already, or waits for the database to come back (`retry`: that wait is over). */
  start (id: string, retry = false): void {
    if (this.running.has(id) || this.stopping.signal.aborted || (this.outages.has(id) && !retry)) return
    const run = this.run(id).then(() => this.recovered(id), (err) => this.failedToRun(id, err)).finally(() => this.running.delete(id))
    this.running.set(id, run)
  }

  private recovered (id: string): void {
    const outage = this.outages.get(id)
    if (outage === undefined) return
    clearTimeout(outage.retry)
    this.outages.delete(id)
    this.log.info({ hostedImport: id }, 'hosted import: the database is back; going on')
  }

  /**
   * The database went away under the import: it is left as it is (its lease runs out, so another
   * instance may take it over) and tried again here after 1, 2, 4… s (up to five minutes), never
   * marked failed for it. Anything else is a bug of ours: logged.
   */
  private failedToRun (id: string, err: unknown): void {
    if (!storeOutage(err)) {
      this.log.error({ err, hostedImport: id }, 'hosted import bookkeeping failed')
      return
    }
    const count = (this.outages.get(id)?.count ?? 0) + 1
    clearTimeout(this.outages.get(id)?.retry)
    if (this.stopping.signal.aborted) return
    const wait = Math.min(MAX_OUTAGE_WAIT_MS, (this.options.backoffMs ?? 1000) * 2 ** (count - 1))
    if (count === 1) this.log.warn({ hostedImport: id, err: { message: (err as Error).message } }, 'hosted import paused: the database is unavailable; trying again with backoff')
    this.outages.set(id, { count, retry: setTimeout(() => this.start(id, true), wait) })
  }

  /** Starts what is unfinished here, now and then again each lease period (an instance that died leaves its imports to the others). */
  async resumeUnfinished (): Promise<void> {
    const sweep = async (): Promise<void> => {
      for (const id of await createHostedImportsRepository(this.store.db).unfinished()) this.start(id)
    }
    await sweep()
    this.sweeper ??= setInterval(() => { sweep().catch((err) => this.log.warn({ err }, 'hosted import sweep failed')) }, this.leaseMs)
  }

  async stop (): Promise<void> {
    if (this.sweeper !== undefined) clearInterval(this.sweeper)
    for (const outage of this.outages.values()) clearTimeout(outage.retry)
    this.outages.clear()
    this.stopping.abort()
    await Promise.all(this.running.values())
  }

  /** Runs to the end (the CLI), or until another instance holds it. */
  async runNow (id: string): Promise<void> {
    this.start(id)
    await this.running.get(id)
  }

  private async run (id: string): Promise<void> {
    const jobs = createHostedImportsRepository(this.store.db)
    if (!await jobs.lease(id, this.owner, this.leaseMs)) return
    const job = await jobs.require(id)
    let renew: NodeJS.Timeout | undefined
    try {
      const token = openToken(this.store.secrets, job.token, id)
      const save = async (change: Parameters<typeof jobs.save>[3]): Promise<void> => {
        if (!await jobs.save(id, this.owner, this.leaseMs, change)) throw new LostLease()
      }
      await save({ state: 'running' })
      const client = new HostedClient({
        apiUrl: job.api_url,
        token,
        fetch: this.options.fetch,
        requestsPerMinute: this.options.requestsPerMinute,
        timeoutMs: this.options.timeoutMs,
        backoffMs: this.options.backoffMs,
        attempts: this.options.attempts,
        maxWaitMs: this.options.maxWaitMs,
        maxBodyBytes: this.options.maxBodyBytes,
        signal: this.stopping.signal,
        onRequest: async () => {
          job.requests++
          await save({ requests: job.requests })
        },
        onWait: async (seconds) => {
          this.log.info({ hostedImport: id, seconds }, 'hosted rate limit reached: waiting for its reset')
          await save({ state: 'waiting' })
          // The lease is kept through the wait.
          renew = setInterval(() => { save({}).catch(() => {}) }, Math.max(1000, Math.floor(this.leaseMs / 3)))
        },
        onWaited: async (seconds) => {
          clearInterval(renew)
          renew = undefined
          job.waited_seconds += seconds
          await save({ state: 'running', waited_seconds: job.waited_seconds })
        }
      })
      await new Run(this.store, job, client, this.owner, this.leaseMs, this.options.maxWarnings ?? 100).all()
      await jobs.finish(id, this.owner, 'done', null)
      // The import wrote item by item; the planner learns the sizes once, at the end (an analyze failing loses nothing).
      const vacuum = await analyzeAfterBulkLoad(this.store.db)
      if (vacuum !== undefined) {
        const { level, msg } = vacuumLine(vacuum, 'imported')
        this.log[level]({ hostedImport: id }, `hosted import: ${msg}`)
      }
    } catch (err) {
      if (renew !== undefined) clearInterval(renew)
      // Stopped (the server is closing) or taken over: left unfinished, to go on from the saved item.
      if (this.stopping.signal.aborted || err instanceof LostLease) return
      // The database away: left unfinished too, tried again with backoff (failedToRun).
      if (storeOutage(err)) throw err
      const known = err instanceof HostedAuthError || err instanceof HostedError || err instanceof ImportFailure || err instanceof DomainError
      if (!known) this.log.error({ err, hostedImport: id }, 'hosted import stopped by an unexpected error')
      // Our own messages are shown; anything else (a database's words, which may quote data) only in the server log.
      const message = known ? (err as Error).message : `an unexpected error stopped the import (the server log has it, under hosted import ${id})`
      // Failed: the token is erased with the lease.
      await jobs.finish(id, this.owner, 'failed', message.slice(0, 500))
      this.log.warn({ hostedImport: id, err: message }, 'hosted import failed')
    }
  }
}

type Sync = ReturnType<typeof createHostedSync>

/** One run of an import: the stages of each repository, from the saved progress on. */
class Run {
  constructor (
    private readonly store: PlanningStore,
    private readonly job: HostedJob,
    private readonly client: HostedClient,
    private readonly owner: string,
    private readonly leaseMs: number,
    private readonly maxWarnings: number
  ) {}

  private get progress (): HostedProgress {
    return this.job.progress
  }

  /** Warnings kept are bounded (a hostile source could name millions of things to leave out): past the bound, one line counts the rest. */
  private warn (text: string): void {
    const warnings = this.job.warnings
    const max = this.maxWarnings
    if (warnings.length < max) {
      warnings.push(text)
      return
    }
    const more = /^… and (\d+) more$/.exec(warnings[max] ?? '')
    warnings[max] = `… and ${more === null ? 1 : Number(more[1]) + 1} more`
  }

  /** Writes one item and the progress after it in one transaction: a resumed run goes on from the next item. */
  private async step (next: Partial<HostedProgress>, write?: (sync: Sync) => Promise<void>): Promise<void> {
    Object.assign(this.job.progress, next)
    await this.store.transaction(async (tx) => {
      // Two imports bringing the same workspace or report take turns (PostgreSQL; SQLite writes one at a time).
      await lockFor(tx.db, 'hosted-import')
      if (write !== undefined) await write(createHostedSync(tx.db))
      const { progress, counts, warnings, estimated_requests: estimated } = this.job
      const change = { progress, counts, warnings, estimated_requests: estimated }
      const saved = await createHostedImportsRepository(tx.db).save(this.job.id, this.owner, this.leaseMs, change)
      if (!saved) throw new LostLease()
    })
  }

  private more (requests: number): void {
    this.job.estimated_requests += requests
  }

  /** A list read from this server: the estimate counted what it held when the import began. */
  private local (repoId: number, stage: string, size: number): void {
    const key = `${repoId}:${stage}`
    this.more(size - (this.progress.lists[key] ?? 0))
    this.progress.lists[key] = size
  }

  async all (): Promise<void> {
    const stages = ['workspaces', 'boards', 'epic-list', 'epics', 'dependencies', 'report-list', 'reports', 'milestones', 'closed', 'events']
    while (this.progress.repo < this.job.repositories.length) {
      const repoId = this.job.repositories[this.progress.repo]
      const at = (stage: string) => stages.indexOf(this.progress.stage) <= stages.indexOf(stage)
      if (at('workspaces') && !await this.workspaces(repoId)) {
        await this.step({ repo: this.progress.repo + 1, stage: 'workspaces', item: 0, list: [] })
        continue
      }
      if (at('boards')) await this.boards(repoId)
      if (at('epic-list')) await this.epicList(repoId)
      if (at('epics')) await this.epics(repoId)
      if (at('dependencies')) await this.dependencies(repoId)
      if (at('report-list')) await this.reportList(repoId)
      if (at('reports')) await this.reports()
      if (at('milestones')) await this.milestones(repoId)
      if (at('closed')) await this.closed(repoId)
      if (at('events')) await this.events(repoId)
      await this.step({ repo: this.progress.repo + 1, stage: 'workspaces', item: 0, list: [] })
    }
  }

  private async workspaces (repoId: number): Promise<boolean> {
    const list = await this.client.get(`/p2/repositories/${repoId}/workspaces`, RemoteWorkspaces)
    if (list === undefined) {
      this.warn(`repository ${repoId}: not found on the hosted service (or not readable with this token); skipped`)
      this.more(-FIXED + 1)
      return false
    }
    this.more(list.length)
    await this.step({ stage: 'boards', item: 0, list: list.map((w) => ({ id: w.id, name: w.name, description: w.description ?? null })) })
    return true
  }

  private async boards (repoId: number): Promise<void> {
    const list = (this.progress.list ?? []) as Array<{ id: string, name: string, description: string | null }>
    while (this.progress.item < list.length) {
      const ws = list[this.progress.item]
      const board = await this.client.get(`/p2/workspaces/${ws.id}/repositories/${repoId}/board`, RemoteBoard)
      await this.step({ item: this.progress.item + 1 }, async (sync) => {
        if (board === undefined) return this.warn(`workspace ${ws.id} (${ws.name}): its board of repository ${repoId} is not found; skipped`)
        const written = await sync.workspace(ws, repoId, board.pipelines, this.progress.item)
        if (written.clash !== undefined) return this.warn(written.clash)
        if (written.created) this.job.counts.workspaces++
        this.job.counts.pipelines += written.pipelines
        const placed = await sync.board(ws.id, repoId, board.pipelines)
        this.job.counts.issues_placed += placed.placed
        this.job.counts.estimates += placed.estimates
        if (!ordered(board.pipelines)) this.warn(`workspace ${ws.id}: the board of repository ${repoId} lists issues out of their positions' order; positions kept as given`)
      })
    }
    await this.step({ stage: 'epic-list', item: 0, list: [] })
  }

  private async epicList (repoId: number): Promise<void> {
    const list = await this.client.get(`/p1/repositories/${repoId}/epics`, RemoteEpicList)
    const numbers = (list?.epic_issues ?? []).filter((e) => e.repo_id === repoId).map((e) => e.issue_number)
    this.more(numbers.length)
    await this.step({ stage: 'epics', item: 0, list: numbers })
  }

  private async epics (repoId: number): Promise<void> {
    const list = (this.progress.list ?? []) as number[]
    while (this.progress.item < list.length) {
      const number = list[this.progress.item]
      const epic = await this.client.get(`/p1/repositories/${repoId}/epics/${number}`, RemoteEpic)
      await this.step({ item: this.progress.item + 1 }, async (sync) => {
        if (epic === undefined) return this.warn(`epic ${repoId}#${number}: not found; skipped`)
        // Only issues of the repositories asked for: a reference elsewhere would make issues on boards the import was not given.
        const [children, outside] = partition(epic.issues, (ref) => this.job.repositories.includes(ref.repo_id))
        if (outside.length > 0) this.warn(`epic ${repoId}#${number}: ${outside.map((r) => `${r.repo_id}#${r.issue_number}`).join(', ')} left out (repositories not imported)`)
        const written = await sync.epic(repoId, number, epic.estimate?.value ?? null, children)
        if (written.changed) this.job.counts.epics++
        if (written.refused.length > 0) this.warn(`epic ${repoId}#${number}: ${written.refused.join(', ')} left out (they contain the epic)`)
      })
    }
    await this.step({ stage: 'dependencies', item: 0, list: [] })
  }

  private async dependencies (repoId: number): Promise<void> {
    const listed = await this.client.get(`/p1/repositories/${repoId}/dependencies`, RemoteDependencies)
    await this.step({ stage: 'report-list', item: 0, list: [] }, async (sync) => {
      const inside = (ref: { repo_id: number }) => this.job.repositories.includes(ref.repo_id)
      const [between, outside] = partition(listed?.dependencies ?? [], (d) => inside(d.blocking) && inside(d.blocked))
      for (const d of outside) {
        this.warn(`dependency ${d.blocking.repo_id}#${d.blocking.issue_number} blocks ${d.blocked.repo_id}#${d.blocked.issue_number}: left out (a repository not imported)`)
      }
      const written = await sync.dependencies(repoId, between, this.job.repositories)
      this.job.counts.dependencies += written.changed
      for (const refused of written.refused) this.warn(`dependency ${refused}: left out (it would make a cycle here)`)
    })
  }

  private async reportList (repoId: number): Promise<void> {
    const list = await this.client.get(`/p1/repositories/${repoId}/reports/releases`, RemoteReportList)
    const ids = (list ?? []).map((r) => r.release_id).filter((id) => !this.progress.reports.includes(id))
    this.more(2 * ids.length)
    await this.step({ stage: 'reports', item: 0, list: ids })
  }

  private async reports (): Promise<void> {
    const list = (this.progress.list ?? []) as string[]
    while (this.progress.item < list.length) {
      const id = list[this.progress.item]
      const report = await this.client.get(`/p1/reports/release/${id}`, RemoteReport)
      const issues = report === undefined ? undefined : await this.client.get(`/p1/reports/release/${id}/issues`, RemoteReportIssues)
      await this.step({ item: this.progress.item + 1, reports: [...this.progress.reports, id] }, async (sync) => {
        if (report === undefined) return this.warn(`release report ${id}: not found; skipped`)
        const [inside, outside] = partition(issues ?? [], (ref) => this.job.repositories.includes(ref.repo_id))
        if (outside.length > 0) this.warn(`release report ${id}: ${outside.length} issues of repositories not imported left out`)
        const written = await sync.releaseReport(report, inside)
        if (written.clash !== undefined) return this.warn(written.clash)
        if (written.changed) this.job.counts.release_reports++
      })
    }
    await this.step({ stage: 'milestones', item: 0, list: [] })
  }

  /**
   * Start dates of the milestones known here: the hosted service has no list of them. A repository
   * whose milestones the issue host has not brought (a placeholder) is probed past its highest known
   * number until PROBE_MISSES numbers in a row have no start date (at most PROBE_LIMIT per run); a
   * milestone found that way is made with its number only, as a placeholder's issues are.
   */
  private async milestones (repoId: number): Promise<void> {
    if (this.progress.item === 0 && (this.progress.list ?? []).length === 0) {
      const known = await createHostedSync(this.store.db).milestones(repoId)
      this.local(repoId, 'milestones', known.numbers.length)
      await this.step({ list: known.numbers, item: 0, probe: known.placeholder ? { from: known.numbers.length, misses: 0 } : undefined })
    }
    for (;;) {
      const list = (this.progress.list ?? []) as number[]
      const probe = this.progress.probe
      const probing = this.progress.item >= list.length
      if (probing && (probe === undefined || probe.misses >= PROBE_MISSES || list.length - probe.from >= PROBE_LIMIT)) break
      const number = probing ? Math.max(0, ...list) + 1 : list[this.progress.item]
      if (probing) this.more(1)
      const found = await this.client.get(`/p1/repositories/${repoId}/milestones/${number}/start_date`, RemoteStartDate)
      const next = probing ? { list: [...list, number], probe: { from: probe!.from, misses: found === undefined ? probe!.misses + 1 : 0 } } : {}
      await this.step({ ...next, item: this.progress.item + 1 }, async (sync) => {
        if (found === undefined) {
          if (!probing) this.warn(`milestone ${repoId}/${number}: no start date could be looked up`)
          return
        }
        if (await sync.startDate(repoId, number, found.start_date, probing)) this.job.counts.milestone_start_dates++
      })
    }
    await this.step({ stage: 'closed', item: 0, list: [], probe: undefined })
  }

  private async closed (repoId: number): Promise<void> {
    if (this.job.closed_issues) {
      if (this.progress.item === 0 && (this.progress.list ?? []).length === 0) {
        const numbers = await createHostedSync(this.store.db).issueNumbers(repoId, 'closed')
        this.local(repoId, 'closed', numbers.length)
        await this.step({ list: numbers, item: 0 })
      }
      const list = (this.progress.list ?? []) as number[]
      while (this.progress.item < list.length) {
        const number = list[this.progress.item]
        const data = await this.client.get(`/p1/repositories/${repoId}/issues/${number}`, RemoteIssueData)
        await this.step({ item: this.progress.item + 1 }, async (sync) => {
          if (data === undefined) return this.warn(`closed issue ${repoId}#${number}: not found on the hosted service`)
          const id = await sync.ensureIssue(repoId, number)
          if (await sync.setEstimate(id, data.estimate?.value ?? null)) this.job.counts.estimates++
          for (const p of data.pipelines ?? []) if (await sync.placeClosed(id, p.workspace_id, p.pipeline_id)) this.job.counts.issues_placed++
        })
      }
    }
    await this.step({ stage: 'events', item: 0, list: [] })
  }

  private async events (repoId: number): Promise<void> {
    if (!this.job.issue_events) return
    if (this.progress.item === 0 && (this.progress.list ?? []).length === 0) {
      const numbers = await createHostedSync(this.store.db).issueNumbers(repoId)
      this.local(repoId, 'events', numbers.length)
      await this.step({ list: numbers, item: 0 })
    }
    const list = (this.progress.list ?? []) as number[]
    while (this.progress.item < list.length) {
      const number = list[this.progress.item]
      const events = await this.client.get(`/p1/repositories/${repoId}/issues/${number}/events`, RemoteEvents)
      await this.step({ item: this.progress.item + 1 }, async (sync) => {
        if (events === undefined) return
        this.job.counts.issue_events += await sync.events(await sync.ensureIssue(repoId, number), events)
      })
    }
  }
}

/** Whether each pipeline lists its issues in the order their ranks give here (a position, else one derived from the number). */
function ordered (pipelines: Array<{ issues: Array<{ issue_number: number, position?: number }> }>): boolean {
  return pipelines.every((p) => {
    let last = -1
    for (const issue of p.issues) {
      const rank = issue.position ?? unprioritizedRank(issue.issue_number)
      if (rank < last) return false
      last = rank
    }
    return true
  })
}

/** The items that pass, then the others. */
function partition<T> (items: readonly T[], passes: (item: T) => boolean): [T[], T[]] {
  const yes: T[] = []
  const no: T[] = []
  for (const item of items) (passes(item) ? yes : no).push(item)
  return [yes, no]
}
