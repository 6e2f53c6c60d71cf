import { createHmac } from 'node:crypto'
import http from 'node:http'
import https from 'node:https'
import type { LookupFunction } from 'node:net'
import type { FastifyBaseLogger } from 'fastify'
import { isDatabaseUnavailable } from '../db/engine/engine.js'
import type { PendingDelivery, WebhooksRepository } from '../db/webhooks.js'
import { abortable, RefusedAddressError, resolveTarget } from './address-policy.js'

export interface DeliveryOptions {
  /** per attempt, connection to end of response */
  timeoutMs: number
  /** attempts before a delivery is marked failed */
  maxAttempts: number
  /** allow loopback and private targets (link-local and metadata addresses never) */
  allowPrivate: boolean
  /** first retry delay; doubles per attempt, with jitter */
  retryBaseMs: number
  /** longest retry delay */
  retryMaxMs: number
  /** deliveries in flight at once (one per webhook at most, to keep each webhook's order) */
  concurrency: number
  /** of those, at most this many retries (receivers that already failed or timed out once) */
  retryConcurrency: number
}

export const DELIVERY_HEADER = 'x-planning-delivery'
export const EVENT_HEADER = 'x-planning-event'
export const SIGNATURE_HEADER = 'x-planning-signature-256'

/** `sha256=<hex>`: HMAC-SHA256 of the exact request body with the webhook's secret. */
export function signature (secret: string, body: string): string {
  return `sha256=${createHmac('sha256', secret).update(body).digest('hex')}`
}

type Outcome = { ok: true, status: number } | { ok: false, status: number | null, error: string | null, permanent: boolean }

/**
 * Sends the outbox: the oldest pending delivery of each webhook, several webhooks at once, so a
 * slow or dead receiver holds up only its own webhook: each webhook has at most one send in
 * flight, and retries (receivers that already failed once) share a part of the slots, so fresh
 * deliveries to healthy receivers always find one. Failures are retried with exponential backoff
 * and jitter; state lives in the database, so a restart resumes where it stopped.
 */
export class DeliveryWorker {
  private timer: NodeJS.Timeout | undefined
  private stopped = true
  private readonly inFlight = new Map<string, { controller: AbortController, done: Promise<void>, retry: boolean }>()
  private retriesInFlight = 0
  private scanning = false
  private scanned: Promise<void> = Promise.resolve()
  private rescan = false
  /** scans failed in a row (the database away): the next waits longer, up to 15 s */
  private failedScans = 0

  constructor (
    private readonly outbox: WebhooksRepository,
    private readonly options: DeliveryOptions,
    private readonly log: FastifyBaseLogger,
    /** told each attempt's outcome and duration (metrics) */
    private readonly observe: (outcome: 'delivered' | 'retry' | 'failed', seconds: number) => void = () => {}
  ) {}

  /** How long a claimed attempt is ours: the attempt's timeout and a margin for the bookkeeping. */
  private get leaseMs (): number {
    return this.options.timeoutMs + 5000
  }

  start (): void {
    this.stopped = false
    this.poke()
  }

  /** Look for due deliveries now (after new events, or when a send finished). */
  poke (): void {
    this.schedule(0)
  }

  /** Stops sending; attempts cut short by the stop are not counted and will be sent again. */
  async stop (): Promise<void> {
    this.stopped = true
    clearTimeout(this.timer)
    await this.scanned
    for (const { controller } of this.inFlight.values()) controller.abort()
    await Promise.all([...this.inFlight.values()].map((f) => f.done))
  }

  private schedule (delay: number): void {
    if (this.stopped) return
    clearTimeout(this.timer)
    this.timer = setTimeout(() => this.tick(), delay)
  }

  private tick (): void {
    if (this.stopped || this.scanning) {
      this.rescan ||= this.scanning
      return
    }
    this.scanning = true
    this.scanned = this.scan().finally(() => {
      this.scanning = false
      if (this.rescan) {
        this.rescan = false
        this.poke()
      }
    }).catch(() => {})
  }

  private async scan (): Promise<void> {
    try {
      const heads = await this.outbox.heads()
      if (this.stopped) return
      const now = Date.now()
      let next = Number.POSITIVE_INFINITY
      for (const head of heads) {
        if (this.inFlight.has(head.webhook_id)) continue
        if (head.next_attempt_at > now) next = Math.min(next, head.next_attempt_at)
        else if (this.hasSlotFor(head) && await this.outbox.claim(head.seq, Date.now() + this.leaseMs)) this.launch(head)
      }
      // Look again now and then: deliveries another instance wrote or leased and then dropped.
      next = Math.min(next, now + this.leaseMs)
      // Due heads left over by the concurrency limit are picked up when a send finishes.
      if (Number.isFinite(next)) this.schedule(next - now)
      if (this.failedScans > 0) this.log.info({ failedScans: this.failedScans }, 'webhook outbox reachable again; sending resumed')
      this.failedScans = 0
    } catch (err) {
      // The database away (a restart, a hang): one warning, then try again later and later.
      this.failedScans++
      if (this.failedScans === 1) this.log.warn({ err: { message: (err as Error).message, code: (err as { code?: string }).code } }, 'webhook outbox unreachable; retrying with backoff')
      this.schedule(Math.min(15_000, 500 * 2 ** this.failedScans))
    }
  }

  /** A free slot for this delivery: retries may hold only their own share of the slots. */
  private hasSlotFor (head: PendingDelivery): boolean {
    if (this.inFlight.size >= this.options.concurrency) return false
    return head.attempts === 0 || this.retriesInFlight < this.options.retryConcurrency
  }

  private launch (delivery: PendingDelivery): void {
    const controller = new AbortController()
    const retry = delivery.attempts > 0
    if (retry) this.retriesInFlight++
    const done = this.attempt(delivery, controller.signal)
      .catch((err: unknown) => {
        // The database away: the lease runs out and the delivery is sent again (at least once).
        if (isDatabaseUnavailable(err)) this.log.warn({ err: { message: (err as Error).message }, delivery: delivery.id }, 'webhook delivery not recorded: the database is unavailable; it will be sent again')
        else this.log.error({ err, delivery: delivery.id }, 'webhook delivery bookkeeping failed')
      })
      .finally(() => {
        if (retry) this.retriesInFlight--
        this.inFlight.delete(delivery.webhook_id)
        this.poke()
      })
    this.inFlight.set(delivery.webhook_id, { controller, done, retry })
  }

  private async attempt (delivery: PendingDelivery, stop: AbortSignal): Promise<void> {
    const started = performance.now()
    const outcome = await this.post(delivery, stop)
    const seconds = (performance.now() - started) / 1000
    if (this.stopped && stop.aborted) {
      await this.outbox.release(delivery.seq)
      return
    }
    const attempts = delivery.attempts + 1
    if (outcome.ok) {
      await this.outbox.markDelivered(delivery.seq, attempts, outcome.status)
      this.observe('delivered', seconds)
      return
    }
    if (outcome.permanent || attempts >= this.options.maxAttempts) {
      await this.outbox.markFailed(delivery.seq, attempts, outcome.status, outcome.error)
      this.observe('failed', seconds)
      this.log.warn({ delivery: delivery.id, webhook: delivery.webhook_id, attempts, status: outcome.status, error: outcome.error }, 'webhook delivery failed')
      return
    }
    const backoff = Math.min(this.options.retryMaxMs, this.options.retryBaseMs * 2 ** (attempts - 1))
    const jittered = Math.round(backoff * (0.75 + Math.random() * 0.5))
    await this.outbox.markRetry(delivery.seq, attempts, outcome.status, outcome.error, Date.now() + jittered)
    this.observe('retry', seconds)
  }

  private async post (delivery: PendingDelivery, stop: AbortSignal): Promise<Outcome> {
    // A plain timer that aborts this attempt's own controller: it is held by the event loop, so
    // it always fires (a composed AbortSignal.timeout can be collected before it does).
    const controller = new AbortController()
    const onStop = (): void => controller.abort()
    stop.addEventListener('abort', onStop, { once: true })
    let timedOut = false
    const timer = setTimeout(() => {
      timedOut = true
      controller.abort()
    }, this.options.timeoutMs)
    try {
      return await this.send(delivery, controller.signal, () => timedOut)
    } finally {
      clearTimeout(timer)
      stop.removeEventListener('abort', onStop)
    }
  }

  private async send (delivery: PendingDelivery, signal: AbortSignal, timedOut: () => boolean): Promise<Outcome> {
    const timeout = (): Outcome => ({ ok: false, status: null, error: `timed out after ${this.options.timeoutMs} ms`, permanent: false })
    let url: URL
    let target: { address: string, family: 4 | 6 }
    try {
      url = new URL(delivery.url)
      target = await abortable(resolveTarget(url.hostname, this.options.allowPrivate), signal)
    } catch (err) {
      if (signal.aborted) return timedOut() ? timeout() : { ok: false, status: null, error: 'stopped', permanent: false }
      const permanent = err instanceof RefusedAddressError || err instanceof TypeError
      return { ok: false, status: null, error: (err as Error).message, permanent }
    }
    const headers: Record<string, string | number> = {
      'content-type': 'application/x-www-form-urlencoded',
      'content-length': Buffer.byteLength(delivery.body),
      'user-agent': 'planning-api-webhooks/1',
      [DELIVERY_HEADER]: delivery.id,
      [EVENT_HEADER]: delivery.event_type
    }
    if (delivery.secret !== null) headers[SIGNATURE_HEADER] = signature(delivery.secret, delivery.body)
    const lookup: LookupFunction = (_hostname, options, callback) => {
      if (options.all === true) (callback as (e: null, a: Array<{ address: string, family: number }>) => void)(null, [target])
      else callback(null, target.address, target.family)
    }
    const client = url.protocol === 'https:' ? https : http
    return await new Promise<Outcome>((resolve) => {
      const request = client.request(url, { method: 'POST', headers, lookup, signal }, (response) => {
        response.resume()
        response.on('end', () => {
          const status = response.statusCode ?? 0
          resolve(status >= 200 && status < 300
            ? { ok: true, status }
            : { ok: false, status, error: `receiver answered ${status}`, permanent: false })
        })
        response.on('error', (err) => resolve(timedOut() ? timeout() : { ok: false, status: null, error: err.message, permanent: false }))
      })
      request.on('error', (err) => resolve(timedOut() ? timeout() : { ok: false, status: null, error: err.message, permanent: false }))
      request.end(delivery.body)
    })
  }
}
