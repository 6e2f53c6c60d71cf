import { randomUUID } from 'node:crypto'
import type { FastifyBaseLogger } from 'fastify'
import type { ChatEvent, ChatRepository } from '../../db/chat/repository.js'
import { timerDue } from './pace.js'
import { countersIn, expand, randomInt } from './variables.js'

export interface TimerRunnerOptions {
  /** how often due timers are looked for (default 10 s) */
  tickMs?: number
  /** how long an instance holds the timers it runs without renewing (default 60 s) */
  leaseMs?: number
  /** the clock (epoch ms); tests pass a fake one */
  now?: () => number
}

/**
 * Runs the chat's timers on this instance: each tick it takes or renews the leases of the timers
 * (one instance holds each), then runs those that are due. A run is stored with the bot's message,
 * so after a restart the next run comes from what is stored: none skipped, none made twice.
 */
export class TimerRunner {
  readonly owner = randomUUID()
  private handle: NodeJS.Timeout | undefined
  private running: Promise<void> | undefined
  readonly now: () => number
  private readonly tickMs: number
  private readonly leaseMs: number

  constructor (
    private readonly repo: ChatRepository,
    private readonly publish: (events: ChatEvent[]) => Promise<void>,
    private readonly log: FastifyBaseLogger,
    options: TimerRunnerOptions = {}
  ) {
    this.now = options.now ?? Date.now
    this.tickMs = options.tickMs ?? 10_000
    this.leaseMs = options.leaseMs ?? 60_000
  }

  start (): void {
    this.handle = setInterval(() => {
      if (this.running !== undefined) return
      this.running = this.tick().catch((err: Error) => this.log.error({ err }, 'chat timers failed')).finally(() => { this.running = undefined })
    }, this.tickMs)
    this.handle.unref()
  }

  /** Stops ticking, waits for a run under way, and hands the leases back for another instance. */
  async stop (): Promise<void> {
    clearInterval(this.handle)
    await this.running
    // Without the hand-back the leases simply run out (`leaseMs`), so a failure here is no reason to fail the shutdown.
    await this.repo.timers.release(this.owner).catch((err: Error) => this.log.warn({ err: err.message }, 'chat timer leases not handed back'))
  }

  /** One round: lease, then run what is due. */
  async tick (): Promise<void> {
    const now = this.now()
    const held = await this.repo.timers.lease(this.owner, now, this.leaseMs)
    for (const timer of held) {
      if (!timerDue(timer, now, Number.MAX_SAFE_INTEGER)) continue
      const counters = await this.repo.counters.values(countersIn(timer.message))
      const events = await this.repo.timers.run(timer.id, this.owner, now, (stored, lines) => timerDue(stored, now, lines),
        (stored) => expand(stored.message, { user: 'bot', args: [], count: stored.runs, counters, now, random: randomInt }))
      if (events.length > 0) await this.publish(events)
    }
  }
}
