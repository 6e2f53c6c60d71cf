import fp from 'fastify-plugin'
import { Redis } from 'ioredis'

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
}

declare module 'fastify' {
  interface FastifyInstance {
    /** the shared Redis connections, or null when REDIS_URL is not set */
    planningRedis: PlanningRedis | null
  }
}

/**
 * Redis for what several instances must share outside the database: rate-limit windows and the
 * chat's live fan-out. Connects at start-up (a Redis that does not answer stops the start with
 * its error) and disconnects in onClose.
 */
export default fp<RedisPluginOptions>(async (fastify, opts) => {
  if (opts.redisUrl === undefined) {
    fastify.decorate('planningRedis', null)
    return
  }
  const prefix = opts.redisPrefix ?? 'planning:'
  const connect = async (keyPrefix?: string): Promise<Redis> => {
    const redis = new Redis(opts.redisUrl!, { lazyConnect: true, keyPrefix, maxRetriesPerRequest: 2, enableOfflineQueue: false })
    redis.on('error', (err: Error) => fastify.log.warn({ err: err.message }, 'redis connection error'))
    await redis.connect()
    return redis
  }
  const client = await connect(prefix)
  const subscriber = await connect()
  fastify.decorate('planningRedis', { client, subscriber, prefix })
  fastify.addHook('onClose', async () => {
    await Promise.all([client.quit().catch(() => {}), subscriber.quit().catch(() => {})])
  })
}, { name: 'planning-redis', fastify: '5.x' })
