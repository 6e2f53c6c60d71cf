import { httpErrors } from '@fastify/sensible'
import type { FastifyReply, FastifyRequest, HookHandlerDoneFunction } from 'fastify'
import fp from 'fastify-plugin'
import type { Principal } from '../../db/sign-in/tokens.js'
import type { User } from '../../db/users.js'
import { INTERNAL_HEADER, isInternalRead } from './internal-reads.js'
import type { PlanningRedis } from './redis.js'

/** The `code` of the error a request past the limit gets (the GraphQL door answers it in its own shape). */
export const RATE_LIMITED = 'PLANNING_RATE_LIMITED'

export interface RateLimitOptions {
  /** requests per window per token (per client address without one) */
  max: number
  timeWindow: number
}

interface Window {
  count: number
  resetAt: number
  /** counted in Redis (not in this instance's windows) */
  shared?: boolean
}

/** The values of X-RateLimit-Limit, X-RateLimit-Used and X-RateLimit-Reset. */
export interface RateHeaders { limit: number, used: number, reset: number }

interface WindowStore {
  /** counts one request in the key's window (starting one if none is open) and returns it */
  incr: (key: string) => Window | Promise<Window>
  /** gives one request back (a 304) to the window `incr` returned */
  refund: (key: string, window: Window) => void
}

/** Fixed windows kept in this process, swept once per window. */
class MemoryWindows implements WindowStore {
  readonly windows = new Map<string, Window>()
  private nextSweep = 0

  constructor (private readonly timeWindow: number) {}

  incr (key: string): Window {
    const now = Date.now()
    if (now >= this.nextSweep) this.sweep(now)
    let window = this.windows.get(key)
    if (window === undefined || window.resetAt <= now) {
      window = { count: 0, resetAt: now + this.timeWindow }
      this.windows.set(key, window)
    }
    window.count++
    return window
  }

  refund (_key: string, window: Window): void {
    if (window.count > 0) window.count--
  }

  /** Whether one more request would keep the key within `max` (nothing counted). */
  within (key: string, max: number): boolean {
    const window = this.windows.get(key)
    return window === undefined || window.resetAt <= Date.now() || window.count < max
  }

  /** Counts one request only if that keeps the key within `max`: the window, or undefined. */
  incrWithin (key: string, max: number): Window | undefined {
    const window = this.windows.get(key)
    if (window !== undefined && window.resetAt > Date.now() && window.count >= max) return undefined
    return this.incr(key)
  }

  private sweep (now: number): void {
    for (const [key, window] of this.windows) if (window.resetAt <= now) this.windows.delete(key)
    this.nextSweep = now + this.timeWindow
  }
}

// One atomic step per request: count, start the window on the first count, report what is left.
const INCREMENT = `
local count = redis.call('INCR', KEYS[1])
if count == 1 then redis.call('PEXPIRE', KEYS[1], ARGV[1]) end
local ttl = redis.call('PTTL', KEYS[1])
if ttl < 0 then redis.call('PEXPIRE', KEYS[1], ARGV[1]); ttl = tonumber(ARGV[1]) end
return {count, ttl}`

// Gives one request back, only to a window that still exists (never starts one without expiry).
const REFUND = `
if redis.call('EXISTS', KEYS[1]) == 1 and tonumber(redis.call('GET', KEYS[1])) > 0 then return redis.call('DECR', KEYS[1]) end
return 0`

/**
 * The same fixed windows kept in Redis, so every instance spends one budget per token. While Redis
 * is away (or a call to it fails), this instance's own windows count instead, so limits still
 * hold per instance; the shared ones are used again as soon as Redis is back.
 */
class RedisWindows implements WindowStore {
  private readonly local: MemoryWindows

  constructor (private readonly redis: PlanningRedis, private readonly timeWindow: number) {
    this.local = new MemoryWindows(timeWindow)
  }

  incr (key: string): Window | Promise<Window> {
    if (!this.redis.available()) return this.local.incr(key)
    return this.redis.client.eval(INCREMENT, 1, `ratelimit:${key}`, this.timeWindow).then(
      (reply) => {
        const [count, ttl] = reply as [number, number]
        return { count, resetAt: Date.now() + ttl, shared: true }
      },
      () => this.local.incr(key)
    )
  }

  refund (key: string, window: Window): void {
    if (window.shared !== true) {
      this.local.refund(key, window)
      return
    }
    if (window.count > 0) window.count--
    this.redis.client.eval(REFUND, 1, `ratelimit:${key}`).catch(() => {})
  }
}

const counted = Symbol('planningRateWindow')
declare module 'fastify' {
  interface FastifyInstance {
    /**
     * For a read answered before routing: counts it in the principal's
     * window and gives the three X-RateLimit headers' values, when the windows are this
     * instance's and the request stays within the limit; else undefined, nothing counted (the
     * request then takes the usual way, which counts it or refuses it).
     */
    planningRateLimitNow: (principal: Principal) => RateHeaders | undefined
    /** Whether `planningRateLimitNow` would count one more request of the principal now (nothing counted). */
    planningRateLimitRoom: (principal: Principal) => boolean
  }
  interface FastifyRequest {
    [counted]: { key: string, window: Window } | null
  }
  interface FastifyContextConfig {
    /** a health or readiness probe: not rate limited, no token */
    probe?: boolean
    /**
     * `false`: outside the per-token and per-address budgets, for routes that authenticate by their
     * own means (the issue host's signed deliveries, the admin token)
     */
    rateLimit?: false
  }
}

/**
 * 100 requests per minute per token by default (per client address without one). Every response
 * (errors and 404s included) carries X-RateLimit-Limit, X-RateLimit-Used and X-RateLimit-Reset (UTC
 * epoch seconds), beside the Date that Node adds; past the limit the answer is 403, as the hosted API's was. A 304 (an
 * unchanged answer to a conditional request) is not counted, as GitHub does not count them: its
 * request is given back. With Redis the windows are shared by every instance; while it is away each
instance counts in its own windows (docs/scale-out.md, "When a store goes away"). Behind a proxy, the client
address is the one TRUST_PROXY lets Fastify read from X-Forwarded-For.
 *
 * One hook of our own rather than @fastify/rate-limit: the hosted API's headers, the 403 and the
 * 304 refund all needed hooks of our own around it, and together they cost a fifth of an unchanged
 * read (docs/development.md, "Benchmarks").
 */
export default fp<RateLimitOptions>(async (fastify, opts) => {
  const redis = fastify.planningRedis
  const store: WindowStore = redis === null ? new MemoryWindows(opts.timeWindow) : new RedisWindows(redis, opts.timeWindow)
  const seconds = Math.round(opts.timeWindow / 1000)
  fastify.decorateRequest(counted, null)

  const headers = (reply: FastifyReply, window: Window) => {
    reply.header('x-ratelimit-limit', opts.max)
    reply.header('x-ratelimit-used', window.count)
    reply.header('x-ratelimit-reset', Math.ceil(window.resetAt / 1000))
  }
  const keyOf = (request: FastifyRequest, user: User | null) => user === null ? `ip:${request.ip}` : request.planningCredential?.rateKey ?? `user:${user.id}`
  fastify.decorate('planningRateLimitRoom', (principal: Principal) => store instanceof MemoryWindows && store.within(principal.credential.rateKey, opts.max))
  fastify.decorate('planningRateLimitNow', (principal: Principal) => {
    if (!(store instanceof MemoryWindows)) return undefined
    const window = store.incrWithin(principal.credential.rateKey, opts.max)
    return window === undefined ? undefined : { limit: opts.max, used: window.count, reset: Math.ceil(window.resetAt / 1000) }
  })

  /** Counts the request in its window: the 403 past the limit, or undefined. */
  const count = (request: FastifyRequest, reply: FastifyReply, key: string, window: Window): Error | undefined => {
    request[counted] = { key, window }
    headers(reply, window)
    if (window.count <= opts.max) return undefined
    fastify.planningMetrics?.rateLimited()
    const after = Math.max(1, Math.ceil((window.resetAt - Date.now()) / 1000))
    return Object.assign(httpErrors.forbidden(`API rate limit exceeded: ${opts.max} requests per ${seconds} s; retry after ${after} s`), { code: RATE_LIMITED })
  }
  const limit = (request: FastifyRequest, reply: FastifyReply, user: User | null, done: HookHandlerDoneFunction) => {
    const key = keyOf(request, user)
    const window = store.incr(key)
    if (window instanceof Promise) {
      window.then((counted) => { done(count(request, reply, key, counted)) }, done)
    } else {
      done(count(request, reply, key, window))
    }
  }

  // Callback style, so that an unchanged read on SQLite is counted without waiting on a promise.
  fastify.addHook('onRequest', (request, reply, done) => {
    // Probes (health, readiness) are not counted: a load balancer must never be refused.
    const { config } = request.routeOptions
    if (config.probe === true || config.rateLimit === false || (request.headers[INTERNAL_HEADER] !== undefined && isInternalRead(request))) {
      done()
      return
    }
    const withUser = () => {
      const user = fastify.planningAuth.userNow(request)
      if (user !== undefined) limit(request, reply, user, done)
      else fastify.planningAuth.user(request).then((found) => { limit(request, reply, found, done) }, done)
    }
    // The counter first (one read answers the whole turn's requests), then the user, cached by it.
    if (fastify.planningVersionNow(request) !== undefined) withUser()
    else fastify.planningVersion(request).then(withUser, done)
  })
  fastify.addHook('onSend', (request: FastifyRequest, reply: FastifyReply, _payload: unknown, done: HookHandlerDoneFunction) => {
    const mine = request[counted]
    if (mine !== null && reply.statusCode === 304) {
      store.refund(mine.key, mine.window)
      headers(reply, mine.window)
    }
    done()
  })
}, { name: 'planning-rate-limit', fastify: '5.x', dependencies: ['planning-auth', 'planning-redis'] })
