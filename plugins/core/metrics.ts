import { httpErrors } from '@fastify/sensible'
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import fp from 'fastify-plugin'
import { createHash, timingSafeEqual } from 'node:crypto'
import { Counter, Gauge, Histogram, Registry } from 'prom-client'
import { sql } from 'kysely'
import type { ReadCacheStats } from './cached-answers.js'

/** What other plugins report: webhook attempts, rate-limit refusals, live sockets. */
export interface PlanningMetrics {
  webhookAttempt: (outcome: 'delivered' | 'retry' | 'failed', seconds: number) => void
  rateLimited: () => void
  /** the chat plugin tells how to count its open sockets */
  liveSockets: { count: () => number }
  /** the read cache tells where its counts are */
  readCache: { stats: () => ReadCacheStats | undefined }
  /** the GraphQL answers' cache, the same way */
  graphqlCache: { stats: () => ReadCacheStats | undefined }
  /** times a read answered before routing, as onResponse times the others; null when nobody reads the figures */
  requestTimed: ((method: string, route: string, status: number, seconds: number) => void) | null
}

/** A counter that reports a count kept elsewhere (a plain number on the hot path), read when scraped. */
function countedElsewhere (registry: Registry, name: string, help: string, read: () => number | undefined): void {
  let reported = 0
  new Counter({ // eslint-disable-line no-new
    name,
    help,
    registers: [registry],
    collect () {
      const now = read() ?? 0
      if (now > reported) this.inc(now - reported)
      reported = now
    }
  })
}

declare module 'fastify' {
  interface FastifyInstance {
    planningMetrics: PlanningMetrics
  }
}

export interface MetricsOptions {
  /** `Authorization: Bearer <token>` opens /metrics; without one there is no /metrics */
  token?: string
}

const digest = (value: string): Buffer => createHash('sha256').update(value).digest()

/**
 * Prometheus metrics (docs/operations.md, "Health, metrics and CORS"): requests per route and status with their
 * duration, the webhook outbox's depth, attempts and failures with their latency, live chat
 * sockets, rate-limit refusals, the read cache's hits, misses, evictions and size, boards read
 * whole or patched, and on
 * PostgreSQL how many change-counter queries answered how many reads. Served at /metrics only when a token is configured.
 */
const metrics: FastifyPluginAsyncTypebox<MetricsOptions> = async (fastify, opts) => {
  const registry = new Registry()
  const requests = new Histogram({
    name: 'planning_http_request_duration_seconds',
    help: 'HTTP requests by method, route and status, and how long they took',
    labelNames: ['method', 'route', 'status'],
    buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5],
    registers: [registry]
  })
  const attempts = new Histogram({
    name: 'planning_webhook_attempt_seconds',
    help: 'Webhook delivery attempts by outcome (delivered, retry, failed) and how long they took',
    labelNames: ['outcome'],
    buckets: [0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
    registers: [registry]
  })
  const failures = new Counter({ name: 'planning_webhook_failures_total', help: 'Webhook deliveries given up after their last attempt', registers: [registry] })
  const refusals = new Counter({ name: 'planning_rate_limit_refusals_total', help: 'Requests refused by the rate limit', registers: [registry] })
  const liveSockets = { count: () => 0 }
  new Gauge({ name: 'planning_chat_live_sockets', help: 'Open chat live-feed sockets on this instance', registers: [registry], collect () { this.set(liveSockets.count()) } }) // eslint-disable-line no-new
  const readCache = { stats: (): ReadCacheStats | undefined => undefined }
  const graphqlCache = { stats: (): ReadCacheStats | undefined => undefined }
  countedElsewhere(registry, 'planning_graphql_cache_hits_total', 'GraphQL reads answered from kept bytes', () => graphqlCache.stats()?.hits)
  countedElsewhere(registry, 'planning_graphql_cache_misses_total', 'GraphQL requests that ran their document', () => graphqlCache.stats()?.misses)
  countedElsewhere(registry, 'planning_graphql_cache_before_routing_total', 'Of the GraphQL hits, those answered before routing', () => graphqlCache.stats()?.beforeRouting)
  countedElsewhere(registry, 'planning_read_cache_hits_total', 'Board and issue-data reads answered from kept bytes', () => readCache.stats()?.hits)
  countedElsewhere(registry, 'planning_read_cache_misses_total', 'Board and issue-data reads that built their answer', () => readCache.stats()?.misses)
  countedElsewhere(registry, 'planning_read_cache_before_routing_total', 'Of the hits, those answered before routing', () => readCache.stats()?.beforeRouting)
  countedElsewhere(registry, 'planning_read_cache_evictions_total', 'Kept answers dropped to stay within READ_CACHE_MB', () => readCache.stats()?.evictions)
  new Gauge({ name: 'planning_read_cache_bytes', help: 'What the kept answers cost now (bytes, keys and overhead)', registers: [registry], collect () { this.set(readCache.stats()?.bytes ?? 0) } }) // eslint-disable-line no-new
  new Gauge({ name: 'planning_read_cache_entries', help: 'Answers kept now', registers: [registry], collect () { this.set(readCache.stats()?.entries ?? 0) } }) // eslint-disable-line no-new
  const boardModels = () => fastify.planningStore.boards.modelCounts()
  countedElsewhere(registry, 'planning_board_reads_whole_total', 'Whole-board reads that read every row (no board kept, or a write since that did not name its rows)', () => boardModels().whole)
  countedElsewhere(registry, 'planning_board_reads_patched_total', 'Whole-board reads that read again only the rows the writes since named, on a board kept in memory', () => boardModels().patched)
  const version = fastify.planningVersionStats
  countedElsewhere(registry, 'planning_change_counter_reads_total', 'Requests that needed the change counter', () => version.asked)
  countedElsewhere(registry, 'planning_change_counter_queries_total', 'Reads of the counter made for them, at most one at a time and one per event-loop turn', () => version.queries)
  const watch = fastify.planningWatchStats
  countedElsewhere(registry, 'planning_change_counter_heard_total', 'Writes of other instances this one heard of (PostgreSQL)', () => watch?.heard)
  countedElsewhere(registry, 'planning_write_fence_timeouts_total', 'Writes that stopped waiting for an instance to say it heard them, after 1.5 s', () => watch?.fenceTimeouts)
  countedElsewhere(registry, 'planning_change_counter_watched_total', 'Of the requests, those answered from the counter this instance hears of (PostgreSQL), with no read', () => version.watched)
  const db = fastify.planningStore.db
  new Gauge({ // eslint-disable-line no-new
    name: 'planning_webhook_queue_depth',
    help: 'Webhook deliveries waiting to be sent',
    registers: [registry],
    async collect () {
      const { rows } = await sql<{ n: number }>`SELECT count(*) AS n FROM webhook_deliveries WHERE status = 'pending'`.execute(db)
      this.set(Number(rows[0]?.n ?? 0))
    }
  })

  fastify.decorate('planningMetrics', {
    webhookAttempt (outcome, seconds) {
      attempts.observe({ outcome }, seconds)
      if (outcome === 'failed') failures.inc()
    },
    rateLimited: () => refusals.inc(),
    liveSockets,
    readCache,
    graphqlCache,
    requestTimed: opts.token === undefined ? null : (method, route, status, seconds) => { requests.observe({ method, route, status }, seconds) }
  } satisfies PlanningMetrics)

  // Requests are timed only where someone can read the figures.
  if (opts.token === undefined) return
  fastify.addHook('onResponse', (request, reply, done) => {
    if (request.routeOptions.config.probe !== true) {
      requests.observe({ method: request.method, route: request.routeOptions.url ?? 'unknown', status: reply.statusCode }, reply.elapsedTime / 1000)
    }
    done()
  })
  const expected = digest(opts.token)
  fastify.get('/metrics', {
    config: { probe: true },
    schema: { tags: ['operations'], summary: 'Prometheus metrics (Authorization: Bearer <METRICS_TOKEN>)', hide: false }
  }, async (request, reply) => {
    const header = request.headers.authorization ?? ''
    const given = /^bearer /i.test(header) ? header.slice(7).trim() : ''
    if (given === '' || !timingSafeEqual(digest(given), expected)) throw httpErrors.unauthorized('/metrics needs Authorization: Bearer <METRICS_TOKEN>')
    return await reply.header('content-type', registry.contentType).send(await registry.metrics())
  })
}

export default fp(metrics, { name: 'planning-metrics', fastify: '5.x', dependencies: ['planning-database'] })
