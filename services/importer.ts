import type { Octokit } from '@octokit/rest'
import type { FastifyBaseLogger } from 'fastify'
import { randomUUID } from 'node:crypto'
import { setTimeout as sleep } from 'node:timers/promises'
import type { Connection, ImportChange, ImportRow } from '../db/issue-host/connections.js'
import { createHostSync, type BoundRepository } from '../db/issue-host/host-sync.js'
import type { PlanningStore } from '../db/store.js'
import { createHostFetch, describeHostError, type HostFetch } from './host-fetch.js'
import { hostIssue, hostMilestone, hostRepository, hostUser, permissionOf } from './issue-host.js'

type Json = Record<string, any>

const PAGE = 100
/** Longest wait for a rate limit to reset; past it the import fails and says why. */
const MAX_WAIT_MS = 3_600_000

export interface ImporterOptions {
  /** waits are cut to at most this (tests) */
  maxWaitMs?: number
  /** every request to the host goes through it (default: the address policy without private addresses) */
  fetch?: HostFetch
  /** how long a claimed import is this instance's without a renewal (default 60,000; renewed every third of it) */
  leaseMs?: number
}

/** The import's lease went to another instance (this one stalled past it): stop, write nothing. */
class LeaseLost extends Error {}

/** Waits on the host's rate limits: until X-RateLimit-Reset when none is left, or Retry-After on a secondary limit. */
function politeness (octokit: Octokit, signal: AbortSignal, maxWaitMs: number): void {
  const wait = async (ms: number): Promise<void> => {
    if (ms > MAX_WAIT_MS) throw new Error(`the issue host's rate limit resets in ${Math.round(ms / 60_000)} min; try the import later`)
    await sleep(Math.min(ms, maxWaitMs), undefined, { signal })
  }
  const resetIn = (headers: Record<string, unknown>): number => Math.max(0, Number(headers['x-ratelimit-reset']) * 1000 - Date.now()) + 1000
  octokit.hook.wrap('request', async (request, options) => {
    for (let attempt = 1; ; attempt++) {
      try {
        const response = await request(options)
        if (response.headers['x-ratelimit-remaining'] === '0') await wait(resetIn(response.headers))
        return response
      } catch (err) {
        const { status, response } = err as { status?: number, response?: { headers: Record<string, unknown> } }
        const headers = response?.headers ?? {}
        if ((status !== 403 && status !== 429) || attempt >= 6) throw err
        if (headers['retry-after'] !== undefined) await wait(Number(headers['retry-after']) * 1000)
        else if (headers['x-ratelimit-remaining'] === '0') await wait(resetIn(headers))
        else throw err
      }
    }
  })
}

/**
 * Imports a repository from its issue host through the host's REST API (GitHub's, or Gitea's and
 * Forgejo's compatible one): the repository, milestones, issues and pull requests in every state,
 * collaborators with their permissions. Idempotent (an issue imported twice is one issue), run in
 * the background one page per transaction (API requests keep being served), and resumable: the
 * stage and page reached are stored, and unfinished imports go on when the server starts.
 */
export class Importer {
  private readonly running = new Map<string, Promise<void>>()
  private readonly stopping = new AbortController()
  /** this instance, as the imports it holds name it */
  private readonly owner = randomUUID()
  private readonly fetch: HostFetch
  private readonly leaseMs: number
  private watcher: NodeJS.Timeout | undefined

  constructor (private readonly store: PlanningStore, private readonly log: FastifyBaseLogger, private readonly options: ImporterOptions = {}) {
    this.fetch = options.fetch ?? createHostFetch()
    this.leaseMs = options.leaseMs ?? 60_000
  }

  /** Runs an import here if no other instance holds it (claimed with a lease, renewed while it runs). */
  start (id: string): void {
    if (this.running.has(id) || this.stopping.signal.aborted) return
    const run = this.run(id).catch((err) => this.log.error({ err, import: id }, 'import bookkeeping failed')).finally(() => this.running.delete(id))
    this.running.set(id, run)
  }

  /** Starts the unfinished imports nobody holds: left by a crash or a restart, or whose lease ran out. */
  async resumeUnfinished (): Promise<void> {
    for (const row of await this.store.connections.unfinishedImports()) this.start(row.id)
  }

  /** Looks for imports to take over once per lease (an instance that died holding one). */
  watch (): void {
    if (this.stopping.signal.aborted || this.watcher !== undefined) return
    this.watcher = setInterval(() => {
      this.resumeUnfinished().catch((err) => this.log.warn({ err }, 'looking for unfinished imports failed'))
    }, this.leaseMs)
    this.watcher.unref()
  }

  /** Stops; the imports running here give their leases up and go on at the next start (or in another instance). */
  async stop (): Promise<void> {
    this.stopping.abort()
    clearInterval(this.watcher)
    await Promise.all(this.running.values())
  }

  private async run (id: string): Promise<void> {
    const connections = this.store.connections
    if (!await connections.claimImport(id, this.owner, Date.now() + this.leaseMs)) return // another instance runs it
    const lease = new AbortController()
    const onStop = (): void => lease.abort()
    this.stopping.signal.addEventListener('abort', onStop, { once: true })
    const renewal = setInterval(() => {
      connections.renewImport(id, this.owner, Date.now() + this.leaseMs)
        .then((held) => { if (!held) lease.abort() })
        .catch((err) => this.log.warn({ err, import: id }, 'renewing an import\'s lease failed'))
    }, Math.max(1, Math.floor(this.leaseMs / 3)))
    try {
      const job = await connections.requireImport(id)
      const connection = await connections.require(job.connection_id)
      await this.steps(job, connection, lease.signal)
      if (!await connections.updateImport(id, { state: 'done', stage: 'done', error: null }, this.owner)) throw new LeaseLost()
    } catch (err) {
      if (this.stopping.signal.aborted) {
        await connections.releaseImport(id, this.owner) // left 'running': it goes on from the stored stage and page
        return
      }
      if (err instanceof LeaseLost || lease.signal.aborted) {
        this.log.warn({ import: id }, 'import taken over by another instance after its lease ran out here')
        return
      }
      const error = describeHostError(err)
      await connections.updateImport(id, { state: 'failed', error }, this.owner)
      this.log.warn({ import: id, error }, 'import failed')
    } finally {
      clearInterval(renewal)
      this.stopping.signal.removeEventListener('abort', onStop)
    }
  }

  private async steps (start: ImportRow, connection: Connection, signal: AbortSignal): Promise<void> {
    const connections = this.store.connections
    // Progress is written only while this instance holds the import's lease.
    const progress = async (change: ImportChange): Promise<void> => {
      if (!await connections.updateImport(start.id, change, this.owner)) throw new LeaseLost()
    }
    // Octokit is imported by the first import, not when the server starts.
    const { Octokit } = await import('@octokit/rest')
    const octokit = new Octokit({
      baseUrl: connection.api_url.replace(/\/$/, ''),
      ...(connection.token === null ? {} : { auth: connection.token }),
      userAgent: 'planning-api-server import',
      request: { signal, fetch: this.fetch },
      log: { debug () {}, info () {}, warn () {}, error () {} }
    })
    politeness(octokit, signal, this.options.maxWaitMs ?? MAX_WAIT_MS)
    const [owner, repo] = start.repository.split('/')
    const sync = async <T>(fn: (s: ReturnType<typeof createHostSync>) => Promise<T>): Promise<T> =>
      await this.store.transaction(async (tx) => await fn(createHostSync(tx.db, connection, this.store.events)), [], [])
    const paged = async (route: string, stage: string, each: (rows: Json[]) => Promise<Partial<ImportRow>>): Promise<void> => {
      let job = await connections.requireImport(start.id)
      if (stage !== job.stage) return
      for (let page = job.next_page; ; page++) {
        const { data, headers } = await octokit.request(route, { owner, repo, state: 'all', per_page: PAGE, limit: PAGE, page })
        const rows = data as Json[]
        const counts = rows.length === 0 ? {} : await each(rows)
        job = await connections.requireImport(start.id)
        // Both GitHub and Gitea say in the Link header whether a next page exists.
        const more = rows.length > 0 && /rel="next"/.test(String(headers.link ?? ''))
        await progress({ ...addCounts(job, counts), next_page: more ? page + 1 : 1, stage: more ? stage : next(stage) })
        if (!more) return
      }
    }

    let job = await connections.requireImport(start.id)
    if (job.stage === 'repository') {
      const { data } = await octokit.request('GET /repos/{owner}/{repo}', { owner, repo })
      const described = hostRepository(data, 'the repository')
      const local = await sync(async (s) => await s.bind(described, { takeOver: true }))
      if ('refused' in local) throw new Error(local.refused)
      await progress({ repo_id: local.id, stage: 'milestones', next_page: 1 })
    }
    job = await connections.requireImport(start.id)
    const repoId = Number(job.repo_id)
    // Every page works on the repository bound to this connection, or stops: it went meanwhile.
    const bound = async <T>(fn: (s: ReturnType<typeof createHostSync>, local: BoundRepository) => Promise<T>): Promise<T> =>
      await sync(async (s) => {
        const local = await s.local(repoId)
        if (local === undefined) throw new Error(`repository ${repoId} is no longer bound to this connection`)
        return await fn(s, local)
      })
    await paged('GET /repos/{owner}/{repo}/milestones', 'milestones', async (rows) => {
      const milestones = rows.map((m, i) => hostMilestone(m, `milestones/${i}`))
      await bound(async (s, local) => { for (const m of milestones) await s.milestone(local, m) })
      return { milestones: rows.length }
    })
    await paged('GET /repos/{owner}/{repo}/issues', 'issues', async (rows) => {
      const issues = rows.map((item, i) => hostIssue(item, `issues/${i}`))
      await bound(async (s, local) => { for (const item of issues) await s.issue(local, item) })
      const pulls = rows.filter((r) => r.pull_request !== undefined && r.pull_request !== null).length
      return { issues: rows.length - pulls, pull_requests: pulls }
    })
    await paged('GET /repos/{owner}/{repo}/collaborators', 'collaborators', async (rows) => {
      for (const [i, user] of rows.entries()) {
        const member = hostUser(user, `collaborators/${i}`)
        let permission = permissionOf(user.permissions ?? user.role_name)
        if (permission === undefined) {
          // Gitea and Forgejo list collaborators without their permission: ask for each.
          const { data } = await octokit.request('GET /repos/{owner}/{repo}/collaborators/{username}/permission', { owner, repo, username: member.login })
          permission = permissionOf((data as Json).permission) ?? 'read'
        }
        const granted = permission
        await bound(async (s, local) => { await s.permission(await s.identity(member), local, granted) })
      }
      return { collaborators: rows.length }
    })
  }
}

const STAGES = ['repository', 'milestones', 'issues', 'collaborators', 'done']
const next = (stage: string): string => STAGES[STAGES.indexOf(stage) + 1] ?? 'done'

function addCounts (job: ImportRow, counts: Partial<ImportRow>): ImportChange {
  return {
    issues: job.issues + (counts.issues ?? 0),
    pull_requests: job.pull_requests + (counts.pull_requests ?? 0),
    milestones: job.milestones + (counts.milestones ?? 0),
    collaborators: job.collaborators + (counts.collaborators ?? 0)
  }
}
