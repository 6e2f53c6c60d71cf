import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import type { FastifyRequest } from 'fastify'
import { createConnectionsRepository, type Connection } from '../db/connections.js'
import { ConnectionParams, ConnectionReply, CreateConnectionBody, CreateImportBody, RepositoryImport } from '../schemas/admin.js'
import { Type, EmptyBody, type ErrorBody } from '../schemas/common.js'
import { connect } from '../services/connections.js'
import { Importer } from '../services/importer.js'

declare module 'fastify' {
  interface FastifyInstance {
    /** runs repository imports from issue hosts in the background */
    planningImporter: Importer
  }
}

/**
 * Admin routes for issue-host connections and repository imports (README, "Connect GitHub,
 * GitHub Enterprise, Gitea or Forgejo"); registered inside the admin plugin, behind its token.
 */
const connectionRoutes: FastifyPluginAsyncTypebox<{ tags: string[], errors: Record<number, typeof ErrorBody> }> = async (fastify, { tags, errors }) => {
  const connections = createConnectionsRepository(fastify.planningStore.db)
  const importer = new Importer(fastify.planningStore, fastify.log)
  fastify.decorate('planningImporter', importer)
  fastify.addHook('onReady', async () => await importer.resumeUnfinished())
  fastify.addHook('onClose', async () => await importer.stop())

  // The payload URL's path, under this server's prefix (BASE_PATH or a host app's).
  const webhookPath = (request: FastifyRequest, id: string): string =>
    `${request.url.split('?')[0].replace(/\/admin\/connections.*$/, '')}/integrations/${id}/webhook`
  const shape = (request: FastifyRequest, c: Connection, secret?: string) => ({
    id: c.id,
    kind: c.kind,
    web_url: c.web_url,
    api_url: c.api_url,
    webhook_path: webhookPath(request, c.id),
    ...(secret === undefined ? {} : { secret }),
    has_token: c.token !== null,
    created_at: c.created_at
  })

  fastify.post('/connections', {
    schema: { tags, summary: 'Connect an issue host (the webhook secret is shown in this answer only)', body: CreateConnectionBody, response: { 201: ConnectionReply, ...errors } }
  }, async (request, reply) => {
    const { connection, secret } = await connect(fastify.planningStore, request.body)
    return await reply.status(201).send(shape(request, connection, secret))
  })

  fastify.get('/connections', {
    schema: { tags, summary: 'Issue-host connections (secrets and tokens are not shown)', response: { 200: Type.Array(ConnectionReply), ...errors } }
  }, async (request) => (await connections.list()).map((c) => shape(request, c)))

  fastify.delete('/connections/:id', {
    schema: { tags, summary: 'Disconnect an issue host (its repositories and issues stay)', params: ConnectionParams, response: { 204: EmptyBody, ...errors } }
  }, async (request, reply) => {
    await connections.remove(request.params.id)
    return await reply.status(204).send(undefined)
  })

  fastify.post('/connections/:id/imports', {
    schema: { tags, summary: 'Import a repository from the issue host, in the background', params: ConnectionParams, body: CreateImportBody, response: { 202: RepositoryImport, ...errors } }
  }, async (request, reply) => {
    await connections.require(request.params.id)
    const job = await connections.createImport(request.params.id, request.body.repository)
    importer.start(job.id)
    return await reply.status(202).send(job)
  })

  fastify.get('/imports/:id', {
    schema: { tags, summary: 'An import\'s progress', params: ConnectionParams, response: { 200: RepositoryImport, ...errors } }
  }, async (request) => await connections.requireImport(request.params.id))
}

export default connectionRoutes
