import { Octokit } from '@octokit/rest'
import type { FastifyBaseLogger } from 'fastify'
import { setTimeout as sleep } from 'node:timers/promises'
import { createConnectionsRepository, type Connection, type ImportRow } from '../db/connections.js'
import { createHostSync } from '../db/host-sync.js'
import type { PlanningStore } from '../db/store.js'
import { hostIssue, hostRepository, permissionOf } from './issue-host.js'

type Json = Record<string, any>

const PAGE = 100
/** Longest wait for a rate limit to reset; past it the import fails and says why. */
const MAX_WAIT_MS = 3_600_000

export interface ImporterOptions {
  /** waits are cut to at most this (tests) */
  maxWaitMs?: number
}

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

  constructor (private readonly store: PlanningStore, private readonly log: FastifyBaseLogger, private readonly options: ImporterOptions = {}) {}

  start (id: string): void {
    if (this.running.has(id) || this.stopping.signal.aborted) return
    const run = this.run(id).catch((err) => this.log.error({ err, import: id }, 'import bookkeeping failed')).finally(() => this.running.delete(id))
    this.running.set(id, run)
  }

  async resumeUnfinished (): Promise<void> {
    for (const row of await createConnectionsRepository(this.store.db).unfinishedImports()) this.start(row.id)
  }

  async stop (): Promise<void> {
    this.stopping.abort()
    await Promise.all(this.running.values())
  }

  private async run (id: string): Promise<void> {
    const connections = createConnectionsRepository(this.store.db)
    const job = await connections.requireImport(id)
    const connection = await connections.require(job.connection_id)
    await connections.updateImport(id, { state: 'running' })
    try {
      await this.steps(job, connection)
      await connections.updateImport(id, { state: 'done', stage: 'done', error: null })
    } catch (err) {
      if (this.stopping.signal.aborted) return // left 'running': the next start goes on from the stored stage and page
      await connections.updateImport(id, { state: 'failed', error: (err as Error).message })
      this.log.warn({ import: id, err: (err as Error).message }, 'import failed')
    }
  }

  private async steps (start: ImportRow, connection: Connection): Promise<void> {
    const connections = createConnectionsRepository(this.store.db)
    const octokit = new Octokit({
      baseUrl: connection.api_url.replace(/\/$/, ''),
      ...(connection.token === null ? {} : { auth: connection.token }),
      userAgent: 'planning-api-server import',
      request: { signal: this.stopping.signal }
    })
    politeness(octokit, this.stopping.signal, this.options.maxWaitMs ?? MAX_WAIT_MS)
    const [owner, repo] = start.repository.split('/')
    const sync = async <T>(fn: (s: ReturnType<typeof createHostSync>) => Promise<T>): Promise<T> =>
      await this.store.transaction(async (tx) => await fn(createHostSync(tx.db)))
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
        await connections.updateImport(start.id, { ...addCounts(job, counts), next_page: more ? page + 1 : 1, stage: more ? stage : next(stage) })
        if (!more) return
      }
    }

    let job = await connections.requireImport(start.id)
    if (job.stage === 'repository') {
      const { data } = await octokit.request('GET /repos/{owner}/{repo}', { owner, repo })
      const described = hostRepository(data as Json)
      await sync(async (s) => await s.repository(described, connection.id))
      await connections.updateImport(start.id, { repo_id: described.id, stage: 'milestones', next_page: 1 })
    }
    job = await connections.requireImport(start.id)
    const repoId = Number(job.repo_id)
    await paged('GET /repos/{owner}/{repo}/milestones', 'milestones', async (rows) => {
      await sync(async (s) => { for (const m of rows) await s.milestone(repoId, { number: Number(m.number ?? m.id), title: String(m.title) }) })
      return { milestones: rows.length }
    })
    await paged('GET /repos/{owner}/{repo}/issues', 'issues', async (rows) => {
      await sync(async (s) => { for (const item of rows) await s.issue(repoId, hostIssue(item)) })
      const pulls = rows.filter((r) => r.pull_request !== undefined && r.pull_request !== null).length
      return { issues: rows.length - pulls, pull_requests: pulls }
    })
    await paged('GET /repos/{owner}/{repo}/collaborators', 'collaborators', async (rows) => {
      for (const user of rows) {
        let permission = permissionOf(user.permissions ?? user.role_name)
        if (permission === undefined) {
          // Gitea and Forgejo list collaborators without their permission: ask for each.
          const { data } = await octokit.request('GET /repos/{owner}/{repo}/collaborators/{username}/permission', { owner, repo, username: user.login })
          permission = permissionOf((data as Json).permission) ?? 'read'
        }
        await sync(async (s) => await s.permission(await s.user({ id: Number(user.id), login: String(user.login ?? user.username) }), repoId, permission!))
      }
      return { collaborators: rows.length }
    })
  }
}

const STAGES = ['repository', 'milestones', 'issues', 'collaborators', 'done']
const next = (stage: string): string => STAGES[STAGES.indexOf(stage) + 1] ?? 'done'

function addCounts (job: ImportRow, counts: Partial<ImportRow>): Partial<ImportRow> {
  return {
    issues: job.issues + (counts.issues ?? 0),
    pull_requests: job.pull_requests + (counts.pull_requests ?? 0),
    milestones: job.milestones + (counts.milestones ?? 0),
    collaborators: job.collaborators + (counts.collaborators ?? 0)
  }
}
