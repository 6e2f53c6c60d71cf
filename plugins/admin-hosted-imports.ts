import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import type { ErrorBody } from '../schemas/common.js'
import { CreateHostedImportBody, HostedImport, HostedImportParams } from '../schemas/hosted-import.js'
import { createHostedImport, hostedImport, HostedImporter, type Fetch } from '../services/hosted-import/index.js'

/** Tuning of imports from the hosted service (docs, "Move from the hosted service"). */
export interface HostedImportOptions {
  /** requests per minute per import at most (default 100, what the hosted API allows per token) */
  requestsPerMinute?: number
  /** one request's time limit in ms (default 30,000) */
  timeoutMs?: number
  /** first wait before a retry in ms (default 1,000; doubled each time) */
  backoffMs?: number
  /** attempts for network errors and 5xx (default 5) */
  attempts?: number
  /** a lease not renewed for this long lets another instance take the import over (default 60,000) */
  leaseMs?: number
  /** longest rate-limit wait accepted in ms (default one hour) */
  maxWaitMs?: number
  /** a longer answer fails the import (default 16 MiB) */
  maxBodyBytes?: number
  /** warnings a job keeps word for word (default 100); the rest are counted in one more line */
  maxWarnings?: number
  /** every request goes through this (default: the issue-host fetch, `fastify.planningHosts.fetch`, with its address policy) */
  fetch?: Fetch
}

declare module 'fastify' {
  interface FastifyInstance {
    /** runs imports from the hosted service in the background */
    planningHostedImporter: HostedImporter
  }
}

/**
 * `POST /admin/hosted-imports` and `GET /admin/hosted-imports/:id`: import workspaces, boards,
 * epics, dependencies, release reports and start dates through the hosted service's legacy API;
 * registered inside the admin plugin, behind its token.
 */
type RouteOptions = { tags: string[], errors: Record<number, typeof ErrorBody>, hostedImport?: HostedImportOptions }

const hostedImportRoutes: FastifyPluginAsyncTypebox<RouteOptions> = async (fastify, opts) => {
  const { tags, errors } = opts
  const store = fastify.planningStore
  const importer = new HostedImporter(store, fastify.log, { ...opts.hostedImport, fetch: opts.hostedImport?.fetch ?? fastify.planningHosts.fetch })
  fastify.decorate('planningHostedImporter', importer)
  fastify.addHook('onReady', async () => await importer.resumeUnfinished())
  fastify.addHook('onClose', async () => await importer.stop())

  fastify.post('/hosted-imports', {
    schema: {
      tags,
      summary: 'Import from the hosted service through its legacy API, in the background (the token is kept, encrypted with SECRET_KEY, only while it runs)',
      body: CreateHostedImportBody,
      response: { 202: HostedImport, ...errors }
    }
  }, async (request, reply) => {
    const job = await createHostedImport(store, request.body)
    importer.start(job.id)
    return await reply.status(202).send(job)
  })

  fastify.get('/hosted-imports/:id', {
    schema: { tags, summary: 'A hosted import\'s progress', params: HostedImportParams, response: { 200: HostedImport, ...errors } }
  }, async (request) => await hostedImport(store, request.params.id))
}

export default hostedImportRoutes
