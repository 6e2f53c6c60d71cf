import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { createHostWrites } from '../db/issue-host/host-writes.js'
import { createIdentitiesRepository } from '../db/issue-host/identities.js'
import { setPipelineLabel } from '../db/workspaces.js'
import { PipelineLabelBody } from './two-way-sync.js'
import { createUsersRepository } from '../db/users.js'
import { ConnectionParams } from '../schemas/admin.js'
import { Type, EmptyBody, LoginParams, Login, ObjectId, PositiveInt, type ErrorBody } from '../schemas/common.js'

const Identity = Type.Object({
  connection_id: Type.String(),
  platform_user_id: Type.Integer(),
  login: Type.Union([Type.String(), Type.Null()], { description: 'the host\'s login (null until the host has named them)' }),
  user: Type.Union([Type.String(), Type.Null()], { description: 'the local user it is linked to' })
})
const Binding = Type.Object({
  repo_id: Type.Integer({ description: 'the id here (hosted-API clients use it)' }),
  platform_repo_id: Type.Integer({ description: 'the id on the issue host' }),
  owner: Type.String(),
  name: Type.String(),
  html_url: Type.Union([Type.String(), Type.Null()])
})
const LinkBody = Type.Object({ connection_id: Type.String({ minLength: 1, maxLength: 100 }), platform_user_id: PositiveInt }, { additionalProperties: false })
const OutboxEntry = Type.Object({
  repo_id: Type.Integer(),
  issue_number: Type.Integer(),
  status: Type.Union([Type.Literal('pending'), Type.Literal('failed')]),
  attempts: Type.Integer(),
  next_attempt_at: Type.String(),
  last_status_code: Type.Union([Type.Integer(), Type.Null()], { description: 'the host\'s last answer' }),
  last_error: Type.Union([Type.String(), Type.Null()]),
  updated_at: Type.String()
})
const PipelineParams = Type.Object({ workspace_id: ObjectId, pipeline_id: ObjectId })
const UnlinkParams = Type.Object({ login: Login, connection_id: Type.String({ minLength: 1, maxLength: 100 }) })

/**
 * Admin routes for the trust boundary (docs/connections.md, "Identities and bindings"): which
 * repositories each connection owns, the host users it has seen, and their links to local users.
 */
const identityRoutes: FastifyPluginAsyncTypebox<{ tags: string[], errors: Record<number, typeof ErrorBody> }> = async (fastify, { tags, errors }) => {
  const db = fastify.planningStore.db
  const identities = createIdentitiesRepository(db)
  const userOf = async (login: string) => await createUsersRepository(db).requireLogin(login)

  fastify.get('/connections/:id/repositories', {
    schema: { tags, summary: 'The repositories bound to a connection (only its deliveries and imports change them)', params: ConnectionParams, response: { 200: Type.Array(Binding), ...errors } }
  }, async (request) => await identities.bindings(request.params.id))

  fastify.get('/connections/:id/identities', {
    schema: { tags, summary: 'The host users a connection has seen, and the local users they are linked to', params: ConnectionParams, response: { 200: Type.Array(Identity), ...errors } }
  }, async (request) => await identities.ofConnection(request.params.id))

  fastify.get('/connections/:id/outbox', {
    schema: { tags, summary: 'Label writes to the issue host that are pending or failed, with the host\'s last answer (two-way sync)', params: ConnectionParams, response: { 200: Type.Array(OutboxEntry), ...errors } }
  }, async (request) => {
    await identities.bindings(request.params.id)
    return await createHostWrites(db).outbox(request.params.id)
  })

  fastify.patch('/workspaces/:workspace_id/pipelines/:pipeline_id', {
    schema: { tags, summary: 'Name (or with null, clear) the issue-host label a pipeline writes', params: PipelineParams, body: PipelineLabelBody, response: { 204: EmptyBody, ...errors } }
  }, async (request, reply) => {
    await setPipelineLabel(db, request.params.workspace_id, request.params.pipeline_id, request.body.host_label, { actor: 'admin', address: request.ip })
    return await reply.status(204).send(undefined)
  })

  fastify.get('/users/:login/identities', {
    schema: { tags, summary: 'A user\'s identities on issue hosts', params: LoginParams, response: { 200: Type.Array(Identity), ...errors } }
  }, async (request) => await identities.ofUser((await userOf(request.params.login)).id))

  fastify.put('/users/:login/identities', {
    schema: {
      tags,
      summary: 'Link a host user to this user: the host\'s permissions for them become this user\'s',
      params: LoginParams,
      body: LinkBody,
      response: { 200: Identity, ...errors }
    }
  }, async (request) => {
    const user = await userOf(request.params.login)
    return await identities.link(user.id, request.body.connection_id, request.body.platform_user_id)
  })

  fastify.delete('/users/:login/identities/:connection_id', {
    schema: { tags, summary: 'Unlink the user\'s identity of a connection (the access it gave goes)', params: UnlinkParams, response: { 204: EmptyBody, ...errors } }
  }, async (request, reply) => {
    await identities.unlink((await userOf(request.params.login)).id, request.params.connection_id)
    return await reply.status(204).send(undefined)
  })
}

export default identityRoutes
