import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import type { FastifyRequest } from 'fastify'
import { LoginParams, type ErrorBody } from '../schemas/common.js'
import { ResetLink } from '../schemas/invites.js'
import { createAccountOperations } from '../services/accounts.js'
import { mailLink } from '../services/mail.js'
import { absoluteUrl } from './invites.js'

/** Password resets without mail (docs/sign-in.md, "Invites and resets"): a one-use link for 24 hours, passed on by hand. */
interface AdminAccountsOptions {
  tags: string[]
  errors: Record<number, typeof ErrorBody>
  publicUrl?: string
  /** who makes the link: `admin` or `user:<login>` */
  actorOf: (request: FastifyRequest) => string
}

const adminAccounts: FastifyPluginAsyncTypebox<AdminAccountsOptions> = async (fastify, opts) => {
  const ops = createAccountOperations(fastify.planningStore, fastify.planningAuth.sessionLifetimes)
  // The prefix the admin API sits under, less /admin: where the pages are.
  const base = fastify.prefix.replace(/\/admin$/, '')
  fastify.post('/users/:login/password-reset', {
    schema: {
      tags: opts.tags,
      summary: 'Make a password-reset link for a person (one use, 24 hours; shown in this answer only)',
      params: LoginParams,
      response: { 201: ResetLink, ...opts.errors }
    }
  }, async (request, reply) => {
    const made = await ops.createReset(request.params.login, opts.actorOf(request))
    const url = absoluteUrl(request, opts.publicUrl, `${base}/reset/${made.token}`)
    const email = (await fastify.planningStore.accounts.byLogin(made.user.login))?.email ?? null
    const mail = email === null
      ? undefined
      : { to: email, subject: 'Set a new password', text: `Open this link to set a new password for ${made.user.login} (it works once, for 24 hours):\n${url}\n` }
    const mailed = await mailLink(fastify.planningMail, opts.publicUrl, mail, (m) => { request.log.warn(m) })
    return await reply.status(201).send({ url, expires_at: new Date(made.link.expires_at).toISOString(), ...mailed })
  })
}

export default adminAccounts
