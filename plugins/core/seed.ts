import fp from 'fastify-plugin'
import { lockFor } from '../../db/engine/engine.js'
import { withLongDeadline } from '../../db/engine/long-work.js'
import type { Fixture } from '../../schemas/fixture.js'
import { analyzeFixture, vacuumLine, demoFixturePath, loadFixture, parseFixture, progressLines, readFixtureFile } from '../../services/fixtures.js'

export interface SeedPluginOptions {
  /** a fixture loaded into an empty database */
  seedFile?: string
  /** on an empty database without seedFile, load the bundled demo and make a token for its first user */
  demo?: boolean
  /** the demo fixture itself, instead of the bundled file (the single executable embeds it) */
  demoFixture?: unknown
  /** where the API is reachable, for the ready-to-paste curl line logged with the demo token */
  publicUrl?: string
  /** takes the demo token instead of the log (the log then says where it went) */
  onDemoToken?: (demo: DemoToken) => void
  /** a restart names the admin CLI (the standalone server) rather than the admin API */
  cliHints?: boolean
}

/** The demo user's token, made when this start loaded the demo; `board` is the demo board's path under the plugin's prefix. */
export interface DemoToken { login: string, token: string, board: string }

declare module 'fastify' {
  interface FastifyInstance {
    /** the token made for the demo user when the demo was loaded by this start, else null */
    planningDemoToken: DemoToken | null
  }
}

/** How long a start may spend loading SEED_FILE: `buildApp` raises Fastify's plugin timeout to this. */
export const SEED_TIMEOUT_MS = 10 * 60_000

/**
 * Fills an empty database at start-up from SEED_FILE or the bundled demo fixture. The check and
 * the load are one transaction under a lock of their own, so instances starting together on an
 * empty PostgreSQL load it once: the others wait, then find it filled (SQLite's write lock does
 * the same between processes).
 */
export default fp<SeedPluginOptions>(async (fastify, opts) => {
  const store = fastify.planningStore
  const demoFixture = (): Fixture => opts.demoFixture === undefined ? readFixtureFile(demoFixturePath()) : parseFixture(opts.demoFixture)
  const fixture = opts.seedFile !== undefined ? readFixtureFile(opts.seedFile) : opts.demo === true ? demoFixture() : undefined
  let demo: DemoToken | null = null
  const progress = progressLines((line) => fastify.log.info(line), `loading ${opts.seedFile === undefined ? 'the demo' : opts.seedFile}`)
  if (fixture !== undefined) {
    const loaded = await withLongDeadline(SEED_TIMEOUT_MS, async () => await store.transaction(async (tx) => {
      await lockFor(tx.db, 'planning-seed')
      if (!await tx.repositories.isEmpty()) return undefined
      const summary = await loadFixture(tx, fixture, progress)
      if (opts.seedFile !== undefined) return { summary, demo: null }
      const login = fixture.users?.[0]?.login ?? ''
      const user = await tx.users.byLogin(login)
      const board = `${fastify.prefix}/p1/repositories/${fixture.repositories?.[0]?.id ?? 0}/board`
      return { summary, demo: user === undefined ? null : { login, token: await tx.users.regenerateToken(user.id), board } }
    }))
    if (loaded !== undefined) {
      await analyzeFixture(store.db, (vacuum) => {
        const { level, msg } = vacuumLine(vacuum, 'loaded')
        fastify.log[level](msg)
      })
    }
    if (loaded !== undefined && opts.seedFile !== undefined) fastify.log.info({ summary: loaded.summary, file: opts.seedFile }, 'loaded seed fixture')
    demo = loaded?.demo ?? null
    if (demo !== null) announce(demo)
  }
  if (demo === null && opts.demo === true) {
    // A restart says how to get in again: the demo token was shown once, on the first start.
    const demoLogin = demoFixture().users?.[0]?.login
    if (demoLogin !== undefined && await store.users.byLogin(demoLogin) !== undefined) {
      const how = opts.cliHints === true ? `npm run admin -- token ${demoLogin}` : `POST ${fastify.prefix}/admin/users/${demoLogin}/token with the admin token`
      fastify.log.info(`a token for the demo user: ${how} (the old one stops working)`)
    }
  }
  fastify.decorate('planningDemoToken', demo)

  function announce (demo: DemoToken): void {
    if (opts.onDemoToken !== undefined) {
      fastify.log.info(`demo data loaded; the API token for ${demo.login} went to onDemoToken`)
      opts.onDemoToken(demo)
      return
    }
    fastify.log.info(`demo data loaded; API token for ${demo.login}: ${demo.token}`)
    const curl = (url: string) => `try it: curl -H 'X-Authentication-Token: ${demo.token}' ${url}`
    // publicUrl ends with the prefix; without it the address is known once the app listens (an app only injected into never logs the line).
    if (opts.publicUrl !== undefined) fastify.log.info(curl(`${opts.publicUrl}${demo.board.slice(fastify.prefix.length)}`))
    else fastify.addHook('onListen', async () => { fastify.log.info(curl(`${fastify.listeningOrigin}${demo.board}`)) })
  }
}, { name: 'planning-seed', fastify: '5.x', dependencies: ['planning-database'] })
