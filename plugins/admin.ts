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
import { Type, errorResponses, ErrorBody, LoginParams, RepoParams } from '../schemas/common.js'

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
    schema: { tags, response: { 200: Type.Array(AdminUser), ...errors } }
  }, async () => await admin.listUsers())

  fastify.post('/users', {
    schema: { tags, body: CreateUserBody, response: { 201: AdminUser, ...errors } }
  }, async (request, reply) => reply.status(201).send(await admin.createUser(request.body.login, request.body.id)))

  fastify.post('/users/:login/token', {
    schema: { tags, summary: 'Make a new token (the old one stops working)', params: LoginParams, response: { 200: TokenReply, ...errors } }
  }, async (request) => ({ token: await admin.regenerateToken(request.params.login) }))

  fastify.get('/repositories', {
    schema: { tags, response: { 200: Type.Array(AdminRepository), ...errors } }
  }, async () => await admin.listRepositories())

  fastify.post('/repositories', {
    schema: { tags, body: CreateRepositoryBody, response: { 201: AdminRepository, ...errors } }
  }, async (request, reply) => reply.status(201).send(await admin.createRepository(request.body)))

  fastify.put('/repositories/:repo_id/permissions/:login', {
    schema: { tags, params: PermissionParams, body: PermissionBody, response: { 200: PermissionReply, ...errors } }
  }, async (request) => await admin.setPermission(request.params.repo_id, request.params.login, request.body.permission as PermissionName))

  fastify.post('/repositories/:repo_id/issues', {
    schema: { tags, params: RepoParams, body: CreateIssueBody, response: { 201: AdminIssue, ...errors } }
  }, async (request, reply) => {
    const issue = await admin.createIssue(request.params.repo_id, request.body)
    return reply.status(201).send({ repo_id: issue.repo_id, number: issue.number, title: issue.title, state: issue.state })
  })

  fastify.patch('/repositories/:repo_id/issues/:number', {
    schema: { tags, summary: 'Retitle, close or reopen an issue', params: IssueNumberParams, body: UpdateIssueBody, response: { 200: AdminIssue, ...errors } }
  }, async (request) => {
    const issue = await admin.updateIssue(request.params.repo_id, request.params.number, request.body)
    return { repo_id: issue.repo_id, number: issue.number, title: issue.title, state: issue.state }
  })

  fastify.post('/repositories/:repo_id/milestones', {
    schema: { tags, params: RepoParams, body: CreateMilestoneBody, response: { 201: AdminMilestone, ...errors } }
  }, async (request, reply) => reply.status(201).send(
    await admin.createMilestone(request.params.repo_id, request.body.number, request.body.title)))

  fastify.post('/workspaces', {
    schema: { tags, body: CreateWorkspaceBody, response: { 201: AdminWorkspace, ...errors } }
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
