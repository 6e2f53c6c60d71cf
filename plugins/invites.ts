import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import type { FastifyRequest } from 'fastify'
import fp from 'fastify-plugin'
import type { AccountLink } from '../db/sign-in/accounts.js'
import { Forbidden, NotFound } from '../db/errors.js'
import { LEVELS } from '../db/users.js'
import { EmptyBody, ErrorBody, errorResponses, Type } from '../schemas/common.js'
import { CreateInviteBody, Invite, InviteParams, InvitesQuery, NewInvite } from '../schemas/invites.js'
import { createAccountOperations, type InvitePermission } from '../services/accounts.js'
import { mailLink } from '../services/mail.js'

export interface InvitesPluginOptions {
  /** PUBLIC_URL (BASE_PATH not included): the invite links' start; else the request's own address */
  publicUrl?: string
}

/** The absolute URL of a page of this server, as a person opens it. */
export function absoluteUrl (request: FastifyRequest, publicUrl: string | undefined, path: string): string {
  return `${publicUrl ?? `${request.protocol}://${request.host}`}${path}`
}

const errors = { ...errorResponses, 409: ErrorBody }
const shape = (l: AccountLink) => ({
  id: l.id,
  workspace_id: l.workspace_id ?? '',
  permission: l.permission as InvitePermission,
  email: l.email,
  created_by: l.created_by,
  created_at: l.created_at,
  expires_at: new Date(l.expires_at).toISOString()
})

/**
 * Invites (docs/sign-in.md, "Invites and resets"): an administrator, or a person with admin
 * permission on every repository of a workspace, makes one-use links into that workspace.
 */
const invites: FastifyPluginAsyncTypebox<InvitesPluginOptions> = async (fastify, opts) => {
  const store = fastify.planningStore
  const auth = fastify.planningAuth
  const ops = createAccountOperations(store, auth.sessionLifetimes)
  fastify.addHook('onRequest', auth.requireUser)
  const tags = ['account']

  /** Administrators, and admins of every repository of the workspace; 404 for who reads none of it, else 403. */
  const mayManage = async (request: FastifyRequest, workspaceId: string): Promise<void> => {
    const user = request.planningUser!
    const workspace = await store.workspaces.byId(workspaceId)
    if (await store.accounts.isAdministrator(user.id)) {
      if (workspace === undefined) throw new NotFound(`workspace ${workspaceId} not found`)
      return
    }
    const levels = workspace === undefined ? new Map<number, number>() : await store.users.levels(user.id, workspace.repositories)
    const values = [...levels.values()]
    if (workspace === undefined || !values.some((l) => l >= LEVELS.read)) throw new NotFound(`workspace ${workspaceId} not found`)
    if (!values.every((l) => l >= LEVELS.admin)) throw new Forbidden('inviting needs admin permission on every repository of the workspace (or an administrator)')
  }
  const actor = (request: FastifyRequest) => `user:${request.planningUser!.login}`

  fastify.post('/invites', {
    schema: { tags, summary: 'Make an invite link into a workspace (its url is shown in this answer only)', body: CreateInviteBody, response: { 201: NewInvite, ...errors } }
  }, async (request, reply) => {
    const { workspace_id: workspaceId, permission, email } = request.body
    await mayManage(request, workspaceId)
    const made = await ops.createInvite({ workspaceId, permission, email, by: actor(request), address: request.ip })
    const url = absoluteUrl(request, opts.publicUrl, `${fastify.prefix}/invite/${made.token}`)
    const workspace = await store.workspaces.byId(workspaceId)
    const mail = email == null
      ? undefined
      : {
          to: email,
          subject: `You are invited to ${workspace?.name ?? 'a workspace'}`,
          text: `${request.planningUser!.login} invites you to the workspace ${workspace?.name ?? workspaceId} with ${permission} permission.\n\n` +
            `Open this link to choose a login and a password (it works once, for 7 days):\n${url}\n`
        }
    const mailed = await mailLink(fastify.planningMail, opts.publicUrl, mail, (m) => { request.log.warn(m) })
    return await reply.status(201).send({ ...shape(made.link), url, ...mailed })
  })

  fastify.get('/invites', {
    schema: { tags, summary: 'The workspace\'s pending invites (never their links)', querystring: InvitesQuery, response: { 200: Type.Array(Invite), ...errors } }
  }, async (request) => {
    await mayManage(request, request.query.workspace_id)
    return (await ops.invites(request.query.workspace_id)).map(shape)
  })

  fastify.delete('/invites/:id', {
    schema: { tags, summary: 'Withdraw an invite (its link stops working)', params: InviteParams, response: { 204: EmptyBody, ...errors } }
  }, async (request, reply) => {
    const invite = await store.accounts.inviteById(request.params.id)
    if (invite === undefined) throw new NotFound(`invite ${request.params.id} not found`)
    await mayManage(request, invite.workspace_id ?? '')
    await ops.removeInvite(invite.id, actor(request), request.ip)
    return await reply.status(204).send(undefined)
  })
}

export default fp(invites, { name: 'planning-invites', fastify: '5.x', encapsulate: true, dependencies: ['planning-auth'] })
