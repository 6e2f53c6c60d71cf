import fp from 'fastify-plugin'

export interface SignInUpkeepOptions {
  /** audit entries older than this go */
  auditDays: number
  /** sessions idle this long go (ended ones always) */
  sessionIdleMs: number
  /** how often to look (default hourly) */
  everyMs?: number
}

/**
 * Drops audit entries past AUDIT_DAYS, ended sessions and stale sign-in attempts, at start-up and
 * then hourly. Every instance may do it: each pass is a few idempotent deletes.
 */
export default fp<SignInUpkeepOptions>(async (fastify, opts) => {
  const store = fastify.planningStore
  const pass = async () => {
    const now = Date.now()
    try {
      const audit = await store.audit.prune(opts.auditDays, now)
      const sessions = await store.sessions.prune(now, now - opts.sessionIdleMs)
      if (audit + sessions > 0) fastify.log.info({ audit, sessions }, 'pruned old audit entries and ended sessions')
    } catch (err) {
      fastify.log.warn({ err }, 'could not prune the audit log and ended sessions')
    }
  }
  let timer: NodeJS.Timeout | undefined
  fastify.addHook('onReady', async () => {
    await pass()
    timer = setInterval(() => { pass().catch(() => {}) }, opts.everyMs ?? 3_600_000)
    timer.unref()
  })
  fastify.addHook('onClose', async () => { clearInterval(timer) })
}, { name: 'planning-sign-in-upkeep', fastify: '5.x', dependencies: ['planning-database'] })
