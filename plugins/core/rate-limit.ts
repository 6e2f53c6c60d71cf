import rateLimit from '@fastify/rate-limit'
import { httpErrors } from '@fastify/sensible'
import type { FastifyRequest } from 'fastify'
import fp from 'fastify-plugin'

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

const rateKey = Symbol('planningRateKey')
declare module 'fastify' {
  interface FastifyRequest {
    [rateKey]?: string
  }
}

/**
 * 100 requests per minute per token by default. Every response (errors and 404s included)
 * carries X-RateLimit-Limit, X-RateLimit-Used, X-RateLimit-Reset (UTC epoch seconds) and Date;
 * past the limit the answer is 403, as the hosted API's was.
 */
export default fp<RateLimitOptions>(async (fastify, opts) => {
  let store: FixedWindowStore | undefined
  const Store = class extends FixedWindowStore {
    constructor () {
      super(opts.timeWindow)
      store = this
    }
  }
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
    addHeaders: noHeaders,
    addHeadersOnExceeding: noHeaders,
    errorResponseBuilder: (_request, context) => httpErrors.forbidden(
      `API rate limit exceeded: ${context.max} requests per ${Math.round(opts.timeWindow / 1000)} s; retry after ${context.after}`)
  })
  fastify.addHook('onRequest', fastify.rateLimit())
  fastify.addHook('onSend', async (request, reply) => {
    const key = request[rateKey]
    const window = key === undefined ? undefined : store?.peek(key)
    if (window !== undefined) {
      reply.header('x-ratelimit-limit', opts.max)
      reply.header('x-ratelimit-used', window.count)
      reply.header('x-ratelimit-reset', Math.ceil(window.resetAt / 1000))
    }
    reply.header('date', new Date().toUTCString())
  })
}, { name: 'planning-rate-limit', fastify: '5.x', dependencies: ['planning-auth'] })
