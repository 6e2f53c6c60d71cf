import { httpErrors } from '@fastify/sensible'
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import type { FastifyReply, FastifyRequest } from 'fastify'
import { createHash, timingSafeEqual } from 'node:crypto'
import { Forbidden } from '../db/errors.js'
import { bearerOf } from './core/auth.js'
import { refuseUnknownProperties } from './core/validation.js'
import { createAdminOperations } from '../services/admin.js'
import { progressLines, vacuumLine } from '../services/fixtures.js'
import accountRoutes from './admin-accounts.js'
import connectionRoutes from './admin-connections.js'
import exportRoutes from './admin-export.js'
import hostedImportRoutes, { type HostedImportOptions } from './admin-hosted-imports.js'
import identityRoutes from './admin-identities.js'
import type { PermissionName } from '../db/users.js'
import { AuditPage, AuditQuery } from '../schemas/audit.js'
import { AccountToken } from '../schemas/account.js'
import {
  AdminIssue, AdminMilestone, AdminRepository, AdminRepositoryListed, AdminUserWithEmail, AdminWorkspace,
  ChatRoleBody, ChatRoleReply, CreateIssueBody, CreateMilestoneBody,
  CreateRepositoryBody, CreateUserBody, CreateWorkspaceBody,
  DeletePipelineQuery, Fixture, ImportReply, IssueNumberParams, MilestoneNumberParams, UpdateMilestoneBody,
  PermissionBody, PermissionParams, PermissionReply, PipelineParams, TokenReply, UpdateIssueBody, UpdateUserBody, UpdateWorkspaceBody,
  UserTokenParams, WorkspaceParams, WorkspacePermissionParams, WorkspacePermissionReply
} from '../schemas/admin.js'
import { Type, EmptyBody, errorResponses, ErrorBody, LoginParams, RepoParams } from '../schemas/common.js'

export interface AdminPluginOptions {
  /** `Authorization: Bearer <adminToken>` opens the admin API; without it, only administrators' sessions and tokens do */
  adminToken?: string
  /** PUBLIC_URL (BASE_PATH not included), for the reset links; else the request's own address */
  publicUrl?: string
  /** imports from the hosted service: rate, timeouts, lease (docs, "Move from the hosted service") */
  hostedImport?: HostedImportOptions
}

const digest = (value: string): Buffer => createHash('sha256').update(value).digest()
const errors = { ...errorResponses, 409: ErrorBody }

/** Audit actions of the admin writes, by method and route; any other write is `admin.write`. */
const ACTIONS: Record<string, string> = {
  'POST /import': 'import.fixture',
  'POST /users': 'user.created',
  'PATCH /users/:login': 'user.updated',
  'DELETE /users/:login': 'user.deleted',
  'POST /users/:login/token': 'token.created',
  'POST /users/:login/password-reset': 'password_reset.created',
  'DELETE /users/:login/token': 'token.revoked',
  'DELETE /users/:login/tokens/:token_id': 'token.revoked',
  'POST /repositories': 'repository.created',
  'DELETE /repositories/:repo_id': 'repository.deleted',
  'PUT /repositories/:repo_id/permissions/:login': 'permission.set',
  'POST /repositories/:repo_id/issues': 'issue.created',
  'PATCH /repositories/:repo_id/issues/:number': 'issue.updated',
  'POST /repositories/:repo_id/milestones': 'milestone.created',
  'PATCH /repositories/:repo_id/milestones/:number': 'milestone.updated',
  'DELETE /repositories/:repo_id/milestones/:number': 'milestone.deleted',
  'POST /workspaces': 'workspace.created',
  'PATCH /workspaces/:workspace_id': 'workspace.updated',
  'PUT /workspaces/:workspace_id/permissions/:login': 'permission.set',
  'DELETE /workspaces/:workspace_id/pipelines/:pipeline_id': 'pipeline.deleted',
  'PUT /chat/roles/:login': 'chat_role.set',
  'POST /connections': 'connection.created',
  'DELETE /connections/:id': 'connection.removed',
  'PATCH /connections/:id': 'connection.updated',
  'POST /connections/:id/imports': 'import.started',
  'PUT /users/:login/identities': 'identity.linked',
  'DELETE /users/:login/identities/:connection_id': 'identity.unlinked'
}
/** Writes whose data function records its own, fuller audit entry in its transaction. */
const SELF_AUDITED = new Set(['PATCH /workspaces/:workspace_id/pipelines/:pipeline_id'])
/** Body fields whose values the audit log keeps; of the others (secrets, tokens, fixtures) only the names. */
const KEPT_FIELDS = new Set(['permission', 'role', 'state', 'email', 'kind', 'repository', 'login', 'id', 'name', 'number', 'web_url', 'api_url', 'oauth_client_id'])

/** The admin API (docs/operations.md, "Admin API and CLI"): users, tokens, repositories, issues, workspaces, import. */
const adminPlugin: FastifyPluginAsyncTypebox<AdminPluginOptions> = async (fastify, opts) => {
  fastify.addHook('onRoute', refuseUnknownProperties)
  const expected = opts.adminToken === undefined ? undefined : digest(opts.adminToken)
  const admin = createAdminOperations(fastify.planningStore)
  /** Who made the request, for the audit log: `admin` (ADMIN_TOKEN) or `user:<login>` (an administrator). */
  const actors = new WeakMap<FastifyRequest, string>()
  const requireUser = async (request: FastifyRequest, reply: FastifyReply): Promise<void> => {
    await new Promise<void>((resolve, reject) => {
      fastify.planningAuth.requireUser(request, reply, (err) => { err === undefined || err === null ? resolve() : reject(err) })
    })
  }

  // ADMIN_TOKEN, or an administrator's session or token: `read` tokens may only read, a session's
  // writes must come from this server's pages (the Origin rule), everybody else gets 403.
  fastify.addHook('onRequest', async (request, reply) => {
    const given = bearerOf(request.headers) ?? ''
    if (expected !== undefined && given !== '' && timingSafeEqual(digest(given), expected)) {
      actors.set(request, 'admin')
      return
    }
    const auth = fastify.planningAuth
    if (await auth.user(request) === null && auth.tokenOf(request) === undefined && auth.sessionOf(request) === undefined) {
      throw httpErrors.unauthorized('the admin API needs an administrator\'s session or API token, or Authorization: Bearer <ADMIN_TOKEN>')
    }
    await requireUser(request, reply)
    const user = request.planningUser!
    if (!await fastify.planningStore.accounts.isAdministrator(user.id)) throw new Forbidden('the admin API is for administrators')
    actors.set(request, `user:${user.login}`)
  })

  // Every admin write that succeeded goes to the audit log before its answer leaves.
  fastify.addHook('onSend', async (request, reply) => {
    if (request.method === 'GET' || request.method === 'HEAD' || reply.statusCode >= 400) return
    const route = (request.routeOptions.url ?? '').slice(request.routeOptions.url?.startsWith(fastify.prefix) === true ? fastify.prefix.length : 0)
    if (SELF_AUDITED.has(`${request.method} ${route}`)) return
    const params = (request.params ?? {}) as Record<string, unknown>
    const body = request.body !== null && typeof request.body === 'object' && !Array.isArray(request.body) ? request.body as Record<string, unknown> : {}
    const fields: Record<string, unknown> = {}
    for (const [name, value] of Object.entries(body)) fields[name] = KEPT_FIELDS.has(name) && (typeof value !== 'object' || value === null) ? value : '[not kept]'
    const target = typeof params.login === 'string'
      ? `user:${params.login}`
      : params.repo_id !== undefined ? `repository:${String(params.repo_id)}` : typeof params.id === 'string' ? `connection:${params.id}` : typeof params.workspace_id === 'string' ? `workspace:${params.workspace_id}` : null
    try {
      await fastify.planningStore.audit.record({
        actor: actors.get(request) ?? 'admin', action: ACTIONS[`${request.method} ${route}`] ?? 'admin.write', target, address: request.ip, detail: { request: `${request.method} ${route}`, params, fields }
      })
    } catch (err) {
      request.log.error({ err }, 'could not write the audit entry of an admin write')
    }
  })

  const tags = ['admin']
  fastify.post('/import', {
    // An export of a large team: about 200 bytes an issue.
    bodyLimit: 256 * 1024 * 1024,
    schema: { tags, summary: 'Merge a fixture, all or nothing', body: Fixture, response: { 200: ImportReply, ...errors } }
  }, async (request) => await admin.importFixture(
    request.body, (vacuum) => {
      const { level, msg } = vacuumLine(vacuum, 'imported')
      request.log[level](msg)
    }, progressLines((line) => request.log.info(line), 'importing')
  ))

  fastify.get('/users', {
    schema: { tags, summary: 'Users', response: { 200: Type.Array(AdminUserWithEmail), ...errors } }
  }, async () => await admin.listUsers())

  fastify.post('/users', {
    schema: { tags, summary: 'Create a user (no token until one is made)', body: CreateUserBody, response: { 201: AdminUserWithEmail, ...errors } }
  }, async (request, reply) => {
    const { login, id, email, administrator } = request.body
    return reply.status(201).send(await admin.createUser(login, id, email, administrator))
  })

  fastify.patch('/users/:login', {
    schema: { tags, summary: 'Set or clear (null) a user\'s email; make or unmake an administrator (never the last one: 409)', params: LoginParams, body: UpdateUserBody, response: { 200: AdminUserWithEmail, ...errors } }
  }, async (request) => await admin.updateUser(request.params.login, request.body))

  fastify.get('/users/:login/tokens', {
    schema: { tags, summary: 'A user\'s API tokens (the admin-made one as `legacy`)', params: LoginParams, response: { 200: Type.Array(AccountToken), ...errors } }
  }, async (request) => await admin.userTokens(request.params.login))

  fastify.delete('/users/:login/tokens/:token_id', {
    schema: { tags, summary: 'Revoke one of a user\'s tokens (`legacy`: the admin-made one)', params: UserTokenParams, response: { 204: EmptyBody, ...errors } }
  }, async (request, reply) => {
    await admin.revokeUserToken(request.params.login, request.params.token_id)
    return await reply.status(204).send(undefined)
  })

  fastify.get('/audit', {
    schema: { tags, summary: 'The audit log, newest first (sign-ins, sessions, tokens, permissions, connections, imports, admin writes), optionally of one person and one action', querystring: AuditQuery, response: { 200: AuditPage, ...errors } }
  }, async (request) => await admin.audit(request.query.cursor, request.query.limit, { actor: request.query.actor, action: request.query.action }))

  fastify.post('/users/:login/token', {
    schema: { tags, summary: 'Make a new token (the old one stops working)', params: LoginParams, response: { 200: TokenReply, ...errors } }
  }, async (request) => ({ token: await admin.regenerateToken(request.params.login) }))

  fastify.delete('/users/:login', {
    schema: { tags, summary: 'Delete a user (their tokens and sessions stop working; their events stay; never the last administrator: 409)', params: LoginParams, response: { 204: EmptyBody, ...errors } }
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
    schema: { tags, summary: 'Repositories, each with the issue-host connection it is bound to (null: none)', response: { 200: Type.Array(AdminRepositoryListed), ...errors } }
  }, async () => await admin.listRepositories())

  fastify.post('/repositories', {
    schema: { tags, summary: 'Create a repository (an administrator who makes it gets admin on it)', body: CreateRepositoryBody, response: { 201: AdminRepository, ...errors } }
  }, async (request, reply) => reply.status(201).send(await admin.createRepository(request.body, actors.get(request) === 'admin' ? undefined : request.planningUser ?? undefined)))

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
  }, async (request, reply) => {
    const { number, title, ...fields } = request.body
    return reply.status(201).send(await admin.createMilestone(request.params.repo_id, number, title, fields))
  })

  fastify.patch('/repositories/:repo_id/milestones/:number', {
    schema: { tags, summary: 'Retitle a milestone, set or clear its due date, close or reopen it', params: MilestoneNumberParams, body: UpdateMilestoneBody, response: { 200: AdminMilestone, ...errors } }
  }, async (request) => await admin.updateMilestone(request.params.repo_id, request.params.number, request.body))

  fastify.delete('/repositories/:repo_id/milestones/:number', {
    schema: { tags, summary: 'Delete a milestone (its issues have none from then on)', params: MilestoneNumberParams, response: { 200: AdminMilestone, ...errors } }
  }, async (request) => await admin.deleteMilestone(request.params.repo_id, request.params.number))

  fastify.post('/workspaces', {
    schema: { tags, summary: 'Create a workspace with its repositories and pipelines', body: CreateWorkspaceBody, response: { 201: AdminWorkspace, ...errors } }
  }, async (request, reply) => reply.status(201).send(await admin.createWorkspace(request.body)))

  fastify.put('/workspaces/:workspace_id/permissions/:login', {
    schema: {
      tags,
      summary: 'Set a user\'s permission on every repository of a workspace, in one transaction (none removes it)',
      params: WorkspacePermissionParams,
      body: PermissionBody,
      response: { 200: WorkspacePermissionReply, ...errors }
    }
  }, async (request) => await admin.setWorkspacePermission(request.params.workspace_id, request.params.login, request.body.permission as PermissionName))

  fastify.patch('/workspaces/:workspace_id', {
    schema: { tags, summary: 'Rename, describe, add/remove repositories, add/rename/reorder pipelines', params: WorkspaceParams, body: UpdateWorkspaceBody, response: { 200: AdminWorkspace, ...errors } }
  }, async (request) => await admin.updateWorkspace(request.params.workspace_id, request.body))

  fastify.delete('/workspaces/:workspace_id/pipelines/:pipeline_id', {
    schema: {
      tags,
      summary: 'Delete a pipeline; its issues move to the end of destination_pipeline_id first (one transaction, each move an event)',
      params: PipelineParams,
      querystring: DeletePipelineQuery,
      response: { 200: AdminWorkspace, ...errors }
    }
  }, async (request) => await admin.deletePipeline(actors.get(request) === 'admin' ? undefined : request.planningUser ?? undefined,
    request.params.workspace_id, request.params.pipeline_id, request.query.destination_pipeline_id))

  fastify.put('/chat/roles/:login', {
    schema: { tags, summary: 'Set a chat role (one broadcaster at most: naming one demotes the previous)', params: LoginParams, body: ChatRoleBody, response: { 200: ChatRoleReply, ...errors } }
  }, async (request) => await admin.setChatRole(request.params.login, request.body.role))

  await fastify.register(accountRoutes, { tags, errors, publicUrl: opts.publicUrl, actorOf: (request) => actors.get(request) ?? 'admin' })
  await fastify.register(connectionRoutes, { tags, errors })
  await fastify.register(exportRoutes, { tags, errors })
  await fastify.register(hostedImportRoutes, { tags, errors, hostedImport: opts.hostedImport })
  await fastify.register(identityRoutes, { tags, errors })
}

export default adminPlugin
