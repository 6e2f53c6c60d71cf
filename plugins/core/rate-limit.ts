import rateLimit from '@fastify/rate-limit'
import { httpErrors } from '@fastify/sensible'
import type { FastifyRequest } from 'fastify'
import fp from 'fastify-plugin'
import type { Redis } from 'ioredis'

export interface RateLimitOptions {
  /** requests per window per token (per client address without one) */
  max: number
  timeWindow: number
}

interface Window { count: number, resetAt: number }

/**
 * A fixed-window counter store for @fastify/rate-limit that also lets us read a key's window
 * back, so every response can carry the hosted API's X-RateLimit-Used and an absolute reset time.
 */
class FixedWindowStore {
  readonly windows = new Map<string, Window>()
  private nextSweep = 0

  constructor (private readonly timeWindow: number) {}

  incr (key: string, cb: (err: Error | null, res?: { current: number, ttl: number }) => void): void {
    const now = Date.now()
    if (now >= this.nextSweep) this.sweep(now)
    let window = this.windows.get(key)
    if (window === undefined || window.resetAt <= now) {
      window = { count: 0, resetAt: now + this.timeWindow }
      this.windows.set(key, window)
    }
    window.count++
    cb(null, { current: window.count, ttl: window.resetAt - now })
  }

  child (): this {
    return this
  }

  peek (key: string): Window | undefined {
    return this.windows.get(key)
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

/**
 * The same fixed windows kept in Redis, so every instance spends one budget per token. The last
 * answer per key is remembered here only for the response headers.
 */
class RedisWindowStore {
  private readonly seen = new Map<string, Window>()

  constructor (private readonly redis: Redis, private readonly timeWindow: number) {}

  incr (key: string, cb: (err: Error | null, res?: { current: number, ttl: number }) => void): void {
    this.redis.eval(INCREMENT, 1, `ratelimit:${key}`, this.timeWindow).then((result) => {
      const [current, ttl] = result as [number, number]
      if (this.seen.size >= 10_000) this.seen.clear()
      this.seen.set(key, { count: current, resetAt: Date.now() + ttl })
      cb(null, { current, ttl })
    }, (err: Error) => cb(err))
  }

  child (): this {
    return this
  }

  peek (key: string): Window | undefined {
    return this.seen.get(key)
  }
}

const rateKey = Symbol('planningRateKey')
declare module 'fastify' {
  interface FastifyRequest {
    [rateKey]?: string
  }
  interface FastifyContextConfig {
    /** a health or readiness probe: not rate limited, no token */
    probe?: boolean
  }
}

/**
 * 100 requests per minute per token by default. Every response (errors and 404s included)
 * carries X-RateLimit-Limit, X-RateLimit-Used, X-RateLimit-Reset (UTC epoch seconds) and Date;
 * past the limit the answer is 403, as the hosted API's was.
 */
export default fp<RateLimitOptions>(async (fastify, opts) => {
  const redis = fastify.planningRedis
  const store = redis === null ? new FixedWindowStore(opts.timeWindow) : new RedisWindowStore(redis.client, opts.timeWindow)
  // @fastify/rate-limit builds its store from a class; hand it the one made here.
  const Store = function () { return store } as unknown as new () => FixedWindowStore
  const keyOf = async (request: FastifyRequest): Promise<string> => {
    const user = await fastify.planningAuth.user(request)
    const key = user === null ? `ip:${request.ip}` : `user:${user.id}`
    request[rateKey] = key
    return key
  }
  const noHeaders = { 'x-ratelimit-limit': false, 'x-ratelimit-remaining': false, 'x-ratelimit-reset': false, 'retry-after': false }

  await fastify.register(rateLimit, {
    global: false,
    max: opts.max,
    timeWindow: opts.timeWindow,
    store: Store,
    keyGenerator: keyOf,
    // Redis unreachable: serve rather than refuse everyone (the error is logged).
    skipOnError: true,
    addHeaders: noHeaders,
    addHeadersOnExceeding: noHeaders,
    errorResponseBuilder: (_request, context) => {
      fastify.planningMetrics?.rateLimited()
      return httpErrors.forbidden(
      `API rate limit exceeded: ${context.max} requests per ${Math.round(opts.timeWindow / 1000)} s; retry after ${context.after}`)
    }
  })
  const limit = fastify.rateLimit()
  // Probes (health, readiness) are not counted: a load balancer must never be refused.
  fastify.addHook('onRequest', async function (request, reply) {
    if (request.routeOptions.config.probe === true) return
    await limit.call(this, request, reply)
  })
  fastify.addHook('onSend', async (request, reply) => {
    const key = request[rateKey]
    const window = key === undefined ? undefined : store.peek(key)
    if (window !== undefined) {
      reply.header('x-ratelimit-limit', opts.max)
      reply.header('x-ratelimit-used', window.count)
      reply.header('x-ratelimit-reset', Math.ceil(window.resetAt / 1000))
    }
    reply.header('date', new Date().toUTCString())
  })
}, { name: 'planning-rate-limit', fastify: '5.x', dependencies: ['planning-auth', 'planning-redis'] })
