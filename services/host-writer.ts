import type { FastifyBaseLogger } from 'fastify'
import type { Connection } from '../db/issue-host/connections.js'
import { Invalid } from '../db/errors.js'
import { createHostWrites, type ClaimedWrite, type WantedLabels } from '../db/issue-host/host-writes.js'
import type { PlanningStore } from '../db/store.js'
import { hostRequest, HostAnswer, pathSegment } from './host-api.js'
import { labelIds, labelsById, requireLabelIds } from './host-labels.js'

export interface HostWriterOptions {
  /** how requests reach the host (the address policy plugs in here) */
  fetch?: typeof fetch
  timeoutMs?: number
  /** first retry after this, doubling up to an hour */
  retryBaseMs?: number
  maxAttempts?: number
  /** look for due writes at least this often (writes another instance queued) */
  pollMs?: number
  /** longest wait for a host's rate limit to reset that is honoured */
  maxWaitMs?: number
  /** a queued write waits this long for more changes of its issue to join it (default 1000) */
  coalesceMs?: number
}

const DEFAULTS = { timeoutMs: 5000, retryBaseMs: 1000, maxAttempts: 8, pollMs: 2000, maxWaitMs: 3_600_000, coalesceMs: 1000 }

/**
 * Writes pipeline labels to issue hosts from the outbox (docs/connections.md, "Two-way sync"),
 * in the background: one issue at a time per claim, the wanted labels read at send time, retried
 * with backoff, a connection paused while its rate limit is spent.
 */
export class HostWriter {
  private readonly options: typeof DEFAULTS & { fetch?: typeof fetch }
  private readonly paused = new Map<string, number>()
  private timer: NodeJS.Timeout | undefined
  private running: Promise<void> | undefined
  private again = false
  private stopped = true

  constructor (private readonly store: PlanningStore, private readonly log: FastifyBaseLogger, options: HostWriterOptions = {}) {
    this.options = { ...DEFAULTS, ...Object.fromEntries(Object.entries(options).filter(([, v]) => v !== undefined)) }
  }

  /** How long a queued write waits for later changes of its issue (HostWriterOptions.coalesceMs). */
  get coalesceMs (): number {
    return this.options.coalesceMs
  }

  start (): void {
    this.stopped = false
    this.poke()
  }

  async stop (): Promise<void> {
    this.stopped = true
    clearTimeout(this.timer)
    await this.running
  }

  /** Look for due writes now (after a commit that queued one). */
  poke (): void {
    if (this.stopped) return
    if (this.running !== undefined) {
      this.again = true
      return
    }
    clearTimeout(this.timer)
    this.running = this.drain().catch((err) => this.log.warn({ err: (err as Error).message }, 'host label writes: the outbox could not be read'))
      .finally(() => {
        this.running = undefined
        if (this.again) {
          this.again = false
          this.poke()
        } else {
          this.schedule()
        }
      })
  }

  private schedule (): void {
    if (this.stopped) return
    clearTimeout(this.timer)
    createHostWrites(this.store.db).nextDue().then((at) => {
      if (this.stopped) return
      const wait = at === undefined ? this.options.pollMs : Math.max(0, Math.min(at - Date.now(), this.options.pollMs))
      this.timer = setTimeout(() => this.poke(), Math.max(wait, 20))
      this.timer.unref()
    }, () => {
      this.timer = setTimeout(() => this.poke(), this.options.pollMs)
      this.timer.unref()
    })
  }

  private async drain (): Promise<void> {
    const outbox = createHostWrites(this.store.db)
    for (;;) {
      if (this.stopped) return
      const now = Date.now()
      for (const [id, until] of this.paused) if (until <= now) this.paused.delete(id)
      const write = await outbox.claim(now, now + this.options.timeoutMs * 4 + 5000, [...this.paused.keys()])
      if (write === undefined) return
      await this.send(write)
    }
  }

  private async send (write: ClaimedWrite): Promise<void> {
    const outbox = createHostWrites(this.store.db)
    const wanted = await outbox.wanted(write.issue_id)
    const connection = wanted === undefined ? undefined : await this.store.connections.byId(wanted.connection_id)
    if (wanted === undefined || connection === undefined || connection.token === null || (wanted.add.length === 0 && wanted.remove.length === 0)) {
      await outbox.written(write, wanted)
      return
    }
    try {
      await this.writeLabels(connection, wanted)
      await outbox.written(write, wanted)
    } catch (err) {
      const answer = err instanceof HostAnswer ? err : undefined
      const waitMs = answer?.rateLimitWaitMs()
      if (waitMs !== undefined && waitMs <= this.options.maxWaitMs) {
        // The host's limit, not our fault: wait it out without spending an attempt.
        const until = Date.now() + waitMs
        this.paused.set(connection.id, until)
        await outbox.retry(write, until, false, answer!.status, answer!.message, false)
        this.log.info({ connection: connection.id, wait_ms: waitMs }, 'host label writes paused by the host\'s rate limit')
        return
      }
      const attempts = write.attempts + 1
      const failed = attempts >= this.options.maxAttempts || err instanceof Invalid || (answer !== undefined && [401, 403, 404, 422].includes(answer.status))
      const delay = Math.min(this.options.retryBaseMs * 2 ** (attempts - 1), 3_600_000)
      await outbox.retry(write, Date.now() + delay, failed, answer?.status ?? null, (err as Error).message)
      this.log.warn({ connection: connection.id, issue: wanted.number, attempts, failed, reason: (err as Error).message }, 'host label write refused')
    }
  }

  /** Adds the wanted pipeline labels and takes the other pipelines' labels off. */
  private async writeLabels (connection: Connection, wanted: WantedLabels): Promise<void> {
    const repoPath = `/repos/${pathSegment(wanted.owner, 'owner')}/${pathSegment(wanted.name, 'repository')}`
    const base = `${repoPath}/issues/${wanted.number}/labels`
    const call = { connection, fetch: this.options.fetch, deadline: AbortSignal.timeout(this.options.timeoutMs) }
    if (!labelsById(connection)) {
      // Every path is built before the first call: a label that cannot be one refuses the whole write.
      const removals = wanted.remove.map((label) => `${base}/${pathSegment(label, 'label')}`)
      if (wanted.add.length > 0) await hostRequest({ ...call, method: 'POST', path: base, body: { labels: wanted.add } })
      for (const path of removals) await hostRequest({ ...call, method: 'DELETE', path, allow: [404] })
      return
    }
    // Gitea and Forgejo: by id; a label to take off that the repository does not have is not on the issue either.
    const ids = await labelIds(call, repoPath, [...wanted.add, ...wanted.remove])
    if (wanted.add.length > 0) await hostRequest({ ...call, method: 'POST', path: base, body: { labels: requireLabelIds(ids, wanted.add) } })
    for (const label of wanted.remove) {
      const id = ids.get(label.toLowerCase())
      if (id !== undefined) await hostRequest({ ...call, method: 'DELETE', path: `${base}/${id}`, allow: [404] })
    }
  }
}
