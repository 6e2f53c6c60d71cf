import { httpErrors } from '@fastify/sensible'
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { createHash, timingSafeEqual } from 'node:crypto'
import { createAdminOperations } from '../services/admin.js'
import connectionRoutes from './admin-connections.js'
import type { PermissionName } from '../db/users.js'
import {
  AdminIssue, AdminMilestone, AdminRepository, AdminUser, AdminWorkspace, ChatRoleBody, ChatRoleReply, CreateIssueBody, CreateMilestoneBody,
  CreateRepositoryBody, CreateUserBody, CreateWorkspaceBody, Fixture, ImportReply, IssueNumberParams,
  PermissionBody, PermissionParams, PermissionReply, TokenReply, UpdateIssueBody, UpdateWorkspaceBody, WorkspaceParams
} from '../schemas/admin.js'
import { Type, EmptyBody, errorResponses, ErrorBody, LoginParams, RepoParams } from '../schemas/common.js'

export interface AdminPluginOptions {
  /** `Authorization: Bearer <adminToken>` opens the admin API */
  adminToken: string
}

const digest = (value: string): Buffer => createHash('sha256').update(value).digest()
const errors = { ...errorResponses, 409: ErrorBody }

/** The admin API (README, "Admin API and CLI"): users, tokens, repositories, issues, workspaces, import. */
const adminPlugin: FastifyPluginAsyncTypebox<AdminPluginOptions> = async (fastify, opts) => {
  const expected = digest(opts.adminToken)
  const admin = createAdminOperations(fastify.planningStore)

  fastify.addHook('onRequest', async (request) => {
    const header = request.headers.authorization ?? ''
    const given = /^bearer /i.test(header) ? header.slice(7).trim() : ''
    if (given === '' || !timingSafeEqual(digest(given), expected)) {
      throw httpErrors.unauthorized('the admin API needs Authorization: Bearer <ADMIN_TOKEN>')
    }
  })

  const tags = ['admin']
  fastify.post('/import', {
    bodyLimit: 16 * 1024 * 1024,
    schema: { tags, summary: 'Merge a fixture, all or nothing', body: Fixture, response: { 200: ImportReply, ...errors } }
  }, async (request) => await admin.importFixture(request.body))

  fastify.get('/users', {
    schema: { tags, summary: 'Users', response: { 200: Type.Array(AdminUser), ...errors } }
  }, async () => await admin.listUsers())

  fastify.post('/users', {
    schema: { tags, summary: 'Create a user (no token until one is made)', body: CreateUserBody, response: { 201: AdminUser, ...errors } }
  }, async (request, reply) => reply.status(201).send(await admin.createUser(request.body.login, request.body.id)))

  fastify.post('/users/:login/token', {
    schema: { tags, summary: 'Make a new token (the old one stops working)', params: LoginParams, response: { 200: TokenReply, ...errors } }
  }, async (request) => ({ token: await admin.regenerateToken(request.params.login) }))

  fastify.delete('/users/:login', {
    schema: { tags, summary: 'Delete a user (their token stops working; their events stay)', params: LoginParams, response: { 204: EmptyBody, ...errors } }
  }, async (request, reply) => {
    await admin.deleteUser(request.params.login)
    return await reply.status(204).send(undefined)
  })

  fastify.delete('/users/:login/token', {
    schema: { tags, summary: 'Revoke a user\'s token without making a new one', params: LoginParams, response: { 204: EmptyBody, ...errors } }
  }, async (request, reply) => {
    await admin.revokeToken(request.params.login)
    return await reply.status(204).send(undefined)
  })

  fastify.get('/repositories/:repo_id/permissions', {
    schema: { tags, summary: 'Who has access to the repository', params: RepoParams, response: { 200: Type.Array(Type.Object({ login: Type.String(), permission: Type.String() })), ...errors } }
  }, async (request) => await admin.permissions(request.params.repo_id))

  fastify.get('/repositories/:repo_id/issues', {
    schema: { tags, summary: 'The repository\'s issues', params: RepoParams, response: { 200: Type.Array(AdminIssue), ...errors } }
  }, async (request) => await admin.issues(request.params.repo_id))

  fastify.get('/repositories/:repo_id/milestones', {
    schema: { tags, summary: 'The repository\'s milestones', params: RepoParams, response: { 200: Type.Array(Type.Intersect([AdminMilestone, Type.Object({ start_date: Type.Union([Type.String(), Type.Null()]) })])), ...errors } }
  }, async (request) => await admin.milestones(request.params.repo_id))

  fastify.delete('/repositories/:repo_id', {
    schema: { tags, summary: 'Delete a repository and everything planned on it', params: RepoParams, response: { 204: EmptyBody, ...errors } }
  }, async (request, reply) => {
    await admin.deleteRepository(request.params.repo_id)
    return await reply.status(204).send(undefined)
  })

  fastify.get('/workspaces', {
    schema: { tags, summary: 'Every workspace with its repositories and pipelines', response: { 200: Type.Array(AdminWorkspace), ...errors } }
  }, async () => await admin.workspaces())

  fastify.get('/repositories', {
    schema: { tags, summary: 'Repositories', response: { 200: Type.Array(AdminRepository), ...errors } }
  }, async () => await admin.listRepositories())

  fastify.post('/repositories', {
    schema: { tags, summary: 'Create a repository', body: CreateRepositoryBody, response: { 201: AdminRepository, ...errors } }
  }, async (request, reply) => reply.status(201).send(await admin.createRepository(request.body)))

  fastify.put('/repositories/:repo_id/permissions/:login', {
    schema: { tags, summary: 'Set a user\'s permission on a repository (none removes it)', params: PermissionParams, body: PermissionBody, response: { 200: PermissionReply, ...errors } }
  }, async (request) => await admin.setPermission(request.params.repo_id, request.params.login, request.body.permission as PermissionName))

  fastify.post('/repositories/:repo_id/issues', {
    schema: { tags, summary: 'Create an issue (it lands in each workspace\'s first pipeline)', params: RepoParams, body: CreateIssueBody, response: { 201: AdminIssue, ...errors } }
  }, async (request, reply) => {
    return reply.status(201).send(await admin.createIssue(request.params.repo_id, request.body))
  })

  fastify.patch('/repositories/:repo_id/issues/:number', {
    schema: { tags, summary: 'Retitle, close or reopen an issue', params: IssueNumberParams, body: UpdateIssueBody, response: { 200: AdminIssue, ...errors } }
  }, async (request) => {
    return await admin.updateIssue(request.params.repo_id, request.params.number, request.body)
  })

  fastify.post('/repositories/:repo_id/milestones', {
    schema: { tags, summary: 'Create a milestone', params: RepoParams, body: CreateMilestoneBody, response: { 201: AdminMilestone, ...errors } }
  }, async (request, reply) => reply.status(201).send(
    await admin.createMilestone(request.params.repo_id, request.body.number, request.body.title)))

  fastify.post('/workspaces', {
    schema: { tags, summary: 'Create a workspace with its repositories and pipelines', body: CreateWorkspaceBody, response: { 201: AdminWorkspace, ...errors } }
  }, async (request, reply) => reply.status(201).send(await admin.createWorkspace(request.body)))

  fastify.patch('/workspaces/:workspace_id', {
    schema: { tags, summary: 'Rename, describe, add/remove repositories, add/rename/reorder pipelines', params: WorkspaceParams, body: UpdateWorkspaceBody, response: { 200: AdminWorkspace, ...errors } }
  }, async (request) => await admin.updateWorkspace(request.params.workspace_id, request.body))

  fastify.put('/chat/roles/:login', {
    schema: { tags, summary: 'Set a chat role (one broadcaster at most: naming one demotes the previous)', params: LoginParams, body: ChatRoleBody, response: { 200: ChatRoleReply, ...errors } }
  }, async (request) => await admin.setChatRole(request.params.login, request.body.role))

  await fastify.register(connectionRoutes, { tags, errors })
}

export default adminPlugin
