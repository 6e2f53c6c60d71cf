import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import type { FastifyRequest } from 'fastify'
import type { ListedConnection } from '../db/issue-host/connections.js'
import { ConnectionParams, ConnectionReply, CreateConnectionBody, CreateImportBody, LoggedDelivery, RepositoryImport, UpdateConnectionBody } from '../schemas/admin.js'
import { Type, EmptyBody, type ErrorBody } from '../schemas/common.js'
import { checkRepositoryName, connect } from '../services/connections.js'
import { Importer } from '../services/importer.js'

declare module 'fastify' {
  interface FastifyInstance {
    /** runs repository imports from issue hosts in the background */
    planningImporter: Importer
  }
}

/**
 * Admin routes for issue-host connections and repository imports (docs/connections.md);
 * registered inside the admin plugin, behind its token.
 */
const connectionRoutes: FastifyPluginAsyncTypebox<{ tags: string[], errors: Record<number, typeof ErrorBody> }> = async (fastify, { tags, errors }) => {
  const connections = fastify.planningStore.connections
  const importer = new Importer(fastify.planningStore, fastify.log, { fetch: fastify.planningHosts.fetch, leaseMs: fastify.planningHosts.importLeaseMs })
  fastify.decorate('planningImporter', importer)
  fastify.addHook('onReady', async () => {
    await importer.resumeUnfinished()
    importer.watch()
  })
  fastify.addHook('onClose', async () => await importer.stop())

  // This server's prefix (BASE_PATH or a host app's), for the payload and callback paths.
  const prefix = (request: FastifyRequest): string => request.url.split('?')[0].replace(/\/admin\/connections.*$/, '')
  const webhookPath = (request: FastifyRequest, id: string): string => `${prefix(request)}/integrations/${id}/webhook`
  const shape = (request: FastifyRequest, c: ListedConnection, secret?: string) => ({
    id: c.id,
    kind: c.kind,
    web_url: c.web_url,
    api_url: c.api_url,
    webhook_path: webhookPath(request, c.id),
    ...(secret === undefined ? {} : { secret }),
    has_token: c.has_token,
    has_oauth: c.has_oauth,
    oauth_client_id: c.oauth_client_id,
    sign_in_callback_path: `${prefix(request)}/auth/host/${c.id}/callback`,
    created_at: c.created_at
  })

  fastify.post('/connections', {
    schema: { tags, summary: 'Connect an issue host (the webhook secret is shown in this answer only)', body: CreateConnectionBody, response: { 201: ConnectionReply, ...errors } }
  }, async (request, reply) => {
    const { connection, secret } = await connect(fastify.planningStore, request.body)
    const { secret: _secret, token, oauth_client_secret: oauthSecret, ...shown } = connection
    return await reply.status(201).send(shape(request, { ...shown, has_token: token !== null, has_oauth: oauthSecret !== null }, secret))
  })

  fastify.patch('/connections/:id', {
    schema: {
      tags,
      summary: 'Set or clear (null) a connection\'s API token and OAuth app (sign-in through the host); they are never shown again',
      params: ConnectionParams,
      body: UpdateConnectionBody,
      response: { 200: ConnectionReply, ...errors }
    }
  }, async (request) => shape(request, await connections.update(request.params.id, request.body)))

  fastify.get('/connections', {
    schema: { tags, summary: 'Issue-host connections (secrets and tokens are not shown)', response: { 200: Type.Array(ConnectionReply), ...errors } }
  }, async (request) => (await connections.list()).map((c) => shape(request, c)))

  fastify.delete('/connections/:id', {
    schema: { tags, summary: 'Disconnect an issue host (its repositories and issues stay)', params: ConnectionParams, response: { 204: EmptyBody, ...errors } }
  }, async (request, reply) => {
    await connections.remove(request.params.id)
    return await reply.status(204).send(undefined)
  })

  fastify.get('/connections/:id/deliveries', {
    schema: { tags, summary: 'A connection\'s last signed deliveries (event, time, result), newest first', params: ConnectionParams, response: { 200: Type.Array(LoggedDelivery), ...errors } }
  }, async (request) => await connections.recentDeliveries(request.params.id))

  fastify.get('/connections/:id/imports', {
    schema: { tags, summary: 'A connection\'s latest imports, newest first', params: ConnectionParams, response: { 200: Type.Array(RepositoryImport), ...errors } }
  }, async (request) => {
    await connections.require(request.params.id)
    return await connections.recentImports(request.params.id)
  })

  fastify.post('/connections/:id/imports', {
    schema: { tags, summary: 'Import a repository from the issue host, in the background', params: ConnectionParams, body: CreateImportBody, response: { 202: RepositoryImport, ...errors } }
  }, async (request, reply) => {
    const connection = await connections.require(request.params.id)
    checkRepositoryName(connection.kind, request.body.repository)
    const job = await connections.createImport(request.params.id, request.body.repository)
    importer.start(job.id)
    return await reply.status(202).send(job)
  })

  fastify.get('/imports/:id', {
    schema: { tags, summary: 'An import\'s progress', params: ConnectionParams, response: { 200: RepositoryImport, ...errors } }
  }, async (request) => await connections.requireImport(request.params.id))
}

export default connectionRoutes
