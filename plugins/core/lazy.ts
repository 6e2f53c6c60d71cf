import type { FastifyPluginAsync, FastifyPluginCallback, FastifyPluginOptions } from 'fastify'
import fp from 'fastify-plugin'

type Loaded<Options extends FastifyPluginOptions> = Promise<{ default: FastifyPluginAsync<Options> | FastifyPluginCallback<Options> }>

/**
 * A plugin whose module is imported when it is registered, not when the package is: importing the
 * package does nothing heavy and a host pays only for the domains it registers (docs/plugin.md).
 * The wrapper shares its scope (fastify-plugin), so the loaded plugin gets the options, the prefix,
 * its own name and its dependency checks as if it were registered directly.
 */
export function lazyPlugin<Options extends FastifyPluginOptions = Record<never, never>> (load: () => Loaded<Options>): FastifyPluginAsync<Options> {
  const loader: FastifyPluginAsync<Options> = async (fastify, opts) => {
    const { default: plugin } = await load()
    await fastify.register(plugin as FastifyPluginAsync<Options>, opts)
  }
  return fp(loader, { fastify: '5.x' })
}
