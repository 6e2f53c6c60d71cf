import fp from 'fastify-plugin'
import { demoFixturePath, loadFixture, parseFixture, readFixtureFile } from '../../services/fixtures.js'

export interface SeedPluginOptions {
  /** a fixture loaded into an empty database */
  seedFile?: string
  /** on an empty database without seedFile, load the bundled demo and make a token for its first user */
  demo?: boolean
  /** the demo fixture itself, instead of the bundled file (the single executable embeds it) */
  demoFixture?: unknown
  /** where the API is reachable, for the ready-to-paste curl line logged with the demo token */
  publicUrl?: string
}

declare module 'fastify' {
  interface FastifyInstance {
    /** the token made for the demo user when the demo was loaded by this start, else null */
    planningDemoToken: { login: string, token: string } | null
  }
}

/** Fills an empty database at start-up from SEED_FILE or the bundled demo fixture. */
export default fp<SeedPluginOptions>(async (fastify, opts) => {
  const store = fastify.planningStore
  let demo: { login: string, token: string } | null = null
  if (await store.repositories.isEmpty()) {
    if (opts.seedFile !== undefined) {
      const summary = await loadFixture(store, readFixtureFile(opts.seedFile))
      fastify.log.info({ summary, file: opts.seedFile }, 'loaded seed fixture')
    } else if (opts.demo === true) {
      const fixture = opts.demoFixture === undefined ? readFixtureFile(demoFixturePath()) : parseFixture(opts.demoFixture)
      demo = await store.transaction(async (tx) => {
        await loadFixture(tx, fixture)
        const login = fixture.users?.[0]?.login ?? ''
        const user = await tx.users.byLogin(login)
        return user === undefined ? null : { login, token: await tx.users.regenerateToken(user.id) }
      })
      if (demo !== null) {
        const url = `${opts.publicUrl ?? 'http://127.0.0.1:8080'}/p1/repositories/${fixture.repositories?.[0]?.id ?? 0}/board`
        fastify.log.info(`demo data loaded; API token for ${demo.login}: ${demo.token}`)
        fastify.log.info(`try it: curl -H 'X-Authentication-Token: ${demo.token}' ${url}`)
      }
    }
  }
  if (demo === null && opts.demo === true) {
    // A restart says how to get in again: the demo token was shown once, on the first start.
    const demoLogin = (opts.demoFixture === undefined ? readFixtureFile(demoFixturePath()) : parseFixture(opts.demoFixture)).users?.[0]?.login
    if (demoLogin !== undefined && await store.users.byLogin(demoLogin) !== undefined) {
      fastify.log.info(`a token for the demo user: npm run admin -- token ${demoLogin} (the old one stops working)`)
    }
  }
  fastify.decorate('planningDemoToken', demo)
}, { name: 'planning-seed', fastify: '5.x', dependencies: ['planning-database'] })
