import fp from 'fastify-plugin'
import type { Redis } from 'ioredis'

export interface RedisPluginOptions {
  /** `redis://…`; without it every instance keeps its own limits and live fan-out */
  redisUrl?: string
  /** prefix of every key and channel (default `planning:`), so deployments can share a server */
  redisPrefix?: string
}

export interface PlanningRedis {
  /** commands (keys are prefixed) */
  client: Redis
  /** a second connection that only subscribes */
  subscriber: Redis
  /** the prefix of keys and channels */
  prefix: string
  /** whether both connections are up; while not, rate limits are per instance and chat fan-out pauses */
  available: () => boolean
}

declare module 'fastify' {
  interface FastifyInstance {
    /** the shared Redis connections, or null when REDIS_URL is not set */
    planningRedis: PlanningRedis | null
  }
}

/**
 * Redis for what several instances must share outside the database: rate-limit windows and the
 * chat's live fan-out. Connects at start-up (a Redis that does not answer then stops the start with
 * its error, so a wrong REDIS_URL shows at once) and disconnects in onClose. Once running, Redis
 * going away degrades rather than fails (docs/scale-out.md, "When a store goes away"): commands fail at once
 * instead of queueing, ioredis reconnects (resubscribing), and one warning says when it went and
 * one when it is back.
 */
export default fp<RedisPluginOptions>(async (fastify, opts) => {
  if (opts.redisUrl === undefined) {
    fastify.decorate('planningRedis', null)
    return
  }
  // ioredis is imported only when REDIS_URL is set: a start without Redis does not load it.
  const { Redis } = await import('ioredis')
  const prefix = opts.redisPrefix ?? 'planning:'
  const options = { lazyConnect: true, maxRetriesPerRequest: 2, enableOfflineQueue: false, commandTimeout: 2000 }
  const client = new Redis(opts.redisUrl, { ...options, keyPrefix: prefix })
  const subscriber = new Redis(opts.redisUrl, options)
  // Changes are reported once both have connected at start-up, and no more once closing.
  let watching = false
  let up = false
  const available = (): boolean => client.status === 'ready' && subscriber.status === 'ready'
  const noteState = (reason?: Error): void => {
    const now = available()
    if (!watching || now === up) return
    up = now
    if (now) fastify.log.warn('Redis is back: shared rate limits and chat fan-out resumed')
    else fastify.log.warn({ err: reason?.message }, 'Redis is unreachable: rate limits are per instance and chat fan-out pauses until it is back')
  }
  for (const redis of [client, subscriber]) {
    // Connection errors repeat on every reconnection attempt: the state change is what is logged.
    redis.on('error', (err: Error) => noteState(err))
    redis.on('ready', () => noteState())
    redis.on('close', () => noteState())
    redis.on('end', () => noteState())
  }
  try {
    await Promise.all([client.connect(), subscriber.connect()])
  } catch (err) {
    client.disconnect()
    subscriber.disconnect()
    throw err
  }
  up = available()
  watching = true
  fastify.decorate('planningRedis', { client, subscriber, prefix, available })
  fastify.addHook('onClose', async () => {
    watching = false
    // QUIT waits for an answer: only to a Redis that is there.
    await Promise.all([client, subscriber].map(async (redis) => {
      if (redis.status === 'ready') await redis.quit().catch(() => {})
      else redis.disconnect()
    }))
  })
}, { name: 'planning-redis', fastify: '5.x' })
