import fp from 'fastify-plugin'
import { createMailer, type Mailer } from '../../services/mail.js'

export interface MailPluginOptions {
  /** SMTP_URL: `smtp://…` or `smtps://…`; none: no mail, links are passed on by hand */
  url?: string
  /** SMTP_FROM: the sender (default `planning@` the host of PUBLIC_URL, else `planning@localhost`) */
  from?: string
  publicUrl?: string
}

declare module 'fastify' {
  interface FastifyInstance {
    /** mail out (invites, reset links) when SMTP_URL is set, else null (docs/sign-in.md, "Mail") */
    planningMail: Mailer | null
  }
}

export default fp<MailPluginOptions>(async (fastify, opts) => {
  if (opts.url === undefined) {
    fastify.decorate('planningMail', null)
    return
  }
  const from = opts.from ?? `planning@${opts.publicUrl === undefined ? 'localhost' : new URL(opts.publicUrl).hostname}`
  const mailer = createMailer(opts.url, from)
  fastify.decorate('planningMail', mailer)
  fastify.addHook('onClose', async () => { mailer.close() })
}, { name: 'planning-mail', fastify: '5.x' })
