import type { FastifyPluginAsync } from 'fastify'
import fp from 'fastify-plugin'
import { createAccountOperations } from '../services/accounts.js'

/** The first-run setup link made by this start: its token and its path under the plugin's prefix. */
export interface SetupLink { token: string, path: string }

export interface SetupLinkOptions {
  /** PUBLIC_URL (BASE_PATH not included): the link's start; else the address the app listens on */
  publicUrl?: string
  /** takes the link instead of the log (the log then says where it went) */
  onSetupLink?: (link: SetupLink) => void
}

/**
 * First start without an administrator (docs/sign-in.md, "First start"): each start while none
 * exists makes a new one-use setup link (24 h; the one an earlier start printed stops working) and
 * prints `Set up the first administrator: <absolute URL>`. Once an administrator exists, nothing.
 */
const setupLink: FastifyPluginAsync<SetupLinkOptions> = async (fastify, opts) => {
  const made = await createAccountOperations(fastify.planningStore, fastify.planningAuth.sessionLifetimes).setupLink()
  if (made === undefined) return
  const link = { token: made.token, path: `${fastify.prefix}/setup/${made.token}` }
  if (opts.onSetupLink !== undefined) {
    fastify.log.info('no administrator yet; the first-run setup link went to onSetupLink')
    opts.onSetupLink(link)
    return
  }
  const say = (origin: string) => { fastify.log.info(`Set up the first administrator: ${origin}${link.path}`) }
  if (opts.publicUrl !== undefined) say(opts.publicUrl)
  // An app only injected into never listens, and never logs the line.
  else fastify.addHook('onListen', async () => { say(fastify.listeningOrigin) })
}

export default fp(setupLink, { name: 'planning-setup-link', fastify: '5.x', dependencies: ['planning-auth'] })
