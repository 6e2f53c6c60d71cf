import formbody from '@fastify/formbody'
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import type { FastifyReply, FastifyRequest } from 'fastify'
import type { AccountLink, LinkKind } from '../../db/sign-in/accounts.js'
import { DomainError, Gone, NotFound } from '../../db/errors.js'
import { ErrorBody, errorResponses } from '../../schemas/common.js'
import { FormBody, Joined, JoinBody, LinkParams, ResetBody, SetupBody } from '../../schemas/invites.js'
import { SignedIn } from '../../schemas/passwords.js'
import { createAccountOperations, FieldError, type SignedInUser } from '../../services/accounts.js'
import { MIN_PASSWORD } from '../../services/passwords.js'
import type { User } from '../../db/users.js'
import { formPage, messagePage, PAGE_CSS, type FormField } from './forms.js'
import { refuseForeignOrigin, setSessionCookie, type SessionStart } from './password.js'

const errors = { ...errorResponses, 409: ErrorBody, 410: ErrorBody }

export interface AccountPagesOptions extends SessionStart {
  /** the configured providers' sign-in buttons (OpenID Connect, issue hosts) */
  providers: () => Promise<Array<{ name: string, login_url: string }>>
}

/**
 * The pages before an account exists or when its password is lost (docs/sign-in.md, "Invites and
 * resets", "First start"): an invite's Join form, a reset's Set password form, the first-run
 * setup's Create administrator form (an invite also offers the providers' sign-in, and "Join as" to
 * someone signed in); each posts to its own URL (no script), and each has a JSON
 * twin under /auth/ for clients.
 */
const accountPages: FastifyPluginAsyncTypebox<AccountPagesOptions> = async (fastify, opts) => {
  await fastify.register(formbody, { bodyLimit: 16 * 1024 })
  const store = fastify.planningStore
  const ops = createAccountOperations(store, opts.lifetimes)
  const base = fastify.prefix
  const css = `${base}/auth/page.css`
  const home = `${base}/`
  const tags = ['sign-in']

  fastify.get('/auth/page.css', { schema: { hide: true } }, async (_request, reply) =>
    await reply.type('text/css; charset=utf-8').header('cache-control', 'public, max-age=3600').send(PAGE_CSS))

  const passwordField = (error?: string): FormField => ({
    name: 'password', label: 'Password', type: 'password', autocomplete: 'new-password', hint: `At least ${MIN_PASSWORD} characters.`, error
  })
  type Values = Record<string, string | undefined>
  type Form = { title: string, intro: string, fields: FormField[], button: string, action: string }
  const forms: Record<LinkKind, (link: AccountLink, token: string, values: Values, error?: FieldError) => Promise<Form>> = {
    invite: async (link, token, values, error) => {
      const workspace = link.workspace_id === null ? undefined : await store.workspaces.byId(link.workspace_id)
      return {
        title: `Join ${workspace?.name ?? 'the team'}`,
        intro: `Choose a login and a password. You get ${link.permission ?? 'read'} permission on the workspace's repositories.`,
        fields: [
          { name: 'login', label: 'Login', type: 'text', autocomplete: 'username', value: values.login, error: error?.field === 'login' ? error.message : undefined },
          passwordField(error?.field === 'password' ? error.message : undefined)
        ],
        button: 'Join',
        action: `${base}/invite/${token}`,
        links: {
          intro: 'Or sign in with an account you have elsewhere, then join:',
          items: (await opts.providers()).map((p) => ({ text: p.name, href: `${p.login_url}?return_to=${encodeURIComponent(`${base}/invite/${token}`)}` }))
        }
      }
    },
    reset: async (link, token, _values, error) => {
      const user = await store.users.byId(link.user_id ?? 0)
      return {
        title: 'Set a new password',
        intro: `Choose the new password of ${user?.login ?? 'your account'}. Your other sessions end.`,
        fields: [passwordField(error?.field === 'password' ? error.message : undefined)],
        button: 'Set password',
        action: `${base}/reset/${token}`
      }
    },
    setup: async (_link, token, values, error) => ({
      title: 'Set up the first administrator',
      intro: 'This server has no administrator yet. The account you make here can invite people and set everything up.',
      fields: [
        { name: 'login', label: 'Login', type: 'text', autocomplete: 'username', value: values.login, error: error?.field === 'login' ? error.message : undefined },
        { name: 'email', label: 'Email', type: 'email', autocomplete: 'email', required: false, value: values.email, error: error?.field === 'email' ? error.message : undefined },
        passwordField(error?.field === 'password' ? error.message : undefined)
      ],
      button: 'Create administrator',
      action: `${base}/setup/${token}`
    })
  }

  /** The invite's page for someone signed in already: one button, no fields. */
  const joinAsForm = async (link: AccountLink, token: string, user: User): Promise<Form> => {
    const workspace = link.workspace_id === null ? undefined : await store.workspaces.byId(link.workspace_id)
    const permission = link.permission ?? 'read'
    return {
      title: `Join ${workspace?.name ?? 'the team'}`,
      intro: `You are signed in as ${user.login}. Joining gives this account ${permission} permission on the workspace's repositories; ` +
        'where it holds a higher permission already, that stays.',
      fields: [],
      button: `Join as ${user.login}`,
      action: `${base}/invite/${token}/join`
    }
  }

  const gonePage = async (reply: FastifyReply, err: DomainError) => err instanceof Gone
    ? await messagePage(reply, 410, 'This link cannot be used any more', `${err.message}.`, home, css)
    : await messagePage(reply, 404, 'Link not found', 'This link is not known here. Check that it was copied whole.', home, css)

  /** The link's form, or why it cannot be used (404 unknown, 410 used or expired). */
  const show = (kind: LinkKind) => async (request: FastifyRequest<{ Params: { token: string } }>, reply: FastifyReply) => {
    const link = await store.accounts.link(request.params.token)
    if (link === undefined || link.kind !== kind) return await gonePage(reply, new NotFound('unknown'))
    if (link.used_at !== null) return await gonePage(reply, new Gone('this link was used already; ask for a new one'))
    if (link.expires_at <= Date.now()) return await gonePage(reply, new Gone('this link has expired; ask for a new one'))
    if (kind === 'setup' && await store.accounts.administrators() > 0) {
      return await gonePage(reply, new Gone('this server has an administrator already; sign in instead'))
    }
    const user = kind === 'invite' ? await fastify.planningAuth.user(request) : null
    if (user !== null) return await formPage(reply, 200, await joinAsForm(link, request.params.token, user), css)
    return await formPage(reply, 200, await forms[kind](link, request.params.token, {}), css)
  }

  /** A form sent: signed in and on to the board, or the form again with what went wrong next to its field. */
  type Run = (token: string, body: Values, address: string) => Promise<SignedInUser & { workspaceId?: string }>
  const submit = (kind: LinkKind, run: Run) =>
    async (request: FastifyRequest<{ Params: { token: string }, Body: Record<string, string | undefined> }>, reply: FastifyReply) => {
      const { token } = request.params
      const origin = fastify.planningAuth.originOf(request)
      if (request.headers.origin !== origin) return await messagePage(reply, 403, 'Refused', `A form must be sent from this server's pages (${origin}).`, home, css)
      const body = request.body ?? {}
      try {
        const done = await run(token, body, request.ip)
        const to = done.workspaceId === undefined ? home : `${home}?board=${encodeURIComponent(done.workspaceId)}`
        return await setSessionCookie(reply, opts, done.session).redirect(to, 303)
      } catch (err) {
        if (err instanceof FieldError) {
          const link = await store.accounts.link(token)
          if (link === undefined) return await gonePage(reply, new NotFound('unknown'))
          const values = { login: body.login, email: body.email }
          return await formPage(reply, 400, { ...await forms[kind](link, token, values, err), error: undefined }, css)
        }
        if (err instanceof Gone || err instanceof NotFound) return await gonePage(reply, err)
        throw err
      }
    }

  const text = (value: string | undefined): string => value ?? ''
  const join: Run = async (token, body, address) => await ops.join(token, text(body.login).trim(), text(body.password), address)
  const reset: Run = async (token, body, address) => await ops.reset(token, text(body.password), address)
  const setup: Run = async (token, body, address) => {
    const email = text(body.email).trim()
    return await ops.setup(token, { login: text(body.login).trim(), email: email === '' ? null : email, password: text(body.password) }, address)
  }

  const pageSchema = (summary: string) => ({ tags, summary, params: LinkParams })
  fastify.get('/invite/:token', { schema: pageSchema('The page of an invite link: a form with Login, Password and Join (410 when used or expired)') }, show('invite'))
  fastify.post('/invite/:token', { schema: { ...pageSchema('The invite page\'s form (use POST /auth/join from a client)'), body: FormBody } }, submit('invite', join))
  fastify.post('/invite/:token/join', {
    schema: { tags, summary: 'The invite page\'s "Join as" button: the signed-in account gets at least the invite\'s permission on every repository of its workspace', params: LinkParams }
  }, async (request, reply) => {
    const { token } = request.params
    const origin = fastify.planningAuth.originOf(request)
    if (request.headers.origin !== origin) return await messagePage(reply, 403, 'Refused', `A form must be sent from this server's pages (${origin}).`, home, css)
    // The browser's session only: an API token (of any scope) cannot take an invite for its owner.
    if (fastify.planningAuth.tokenOf(request) !== undefined) {
      return await messagePage(reply, 403, 'Refused', 'Joining takes the browser\'s session: an API token cannot join an invite. Open the invite link signed in.', home, css)
    }
    const user = fastify.planningAuth.sessionOf(request) === undefined ? null : await fastify.planningAuth.user(request)
    if (user === null) return await messagePage(reply, 401, 'Sign in first', 'You are not signed in (any more). Open the invite link again to join.', home, css)
    try {
      const done = await ops.joinAs(token, user, request.ip)
      return await reply.header('cache-control', 'no-store').redirect(`${home}?board=${encodeURIComponent(done.workspaceId)}`, 303)
    } catch (err) {
      if (err instanceof Gone || err instanceof NotFound) return await gonePage(reply, err)
      throw err
    }
  })
  fastify.get('/reset/:token', { schema: pageSchema('The page of a password-reset link: a form with Password and Set password (410 when used or expired)') }, show('reset'))
  fastify.post('/reset/:token', { schema: { ...pageSchema('The reset page\'s form (use POST /auth/reset from a client)'), body: FormBody } }, submit('reset', reset))
  fastify.get('/setup/:token', { schema: pageSchema('The first-run setup page: Login, Email, Password and Create administrator (410 once used)') }, show('setup'))
  fastify.post('/setup/:token', { schema: { ...pageSchema('The setup page\'s form (use POST /auth/setup from a client)'), body: FormBody } }, submit('setup', setup))

  const signedIn = async (request: FastifyRequest, reply: FastifyReply, status: number, run: () => Promise<SignedInUser & { workspaceId?: string }>) => {
    const foreign = refuseForeignOrigin(request, reply)
    if (foreign !== undefined) return await foreign
    const done = await run()
    const answer = {
      id: done.user.id, login: done.user.login, administrator: done.administrator, ...(done.workspaceId === undefined ? {} : { workspace_id: done.workspaceId })
    }
    return await setSessionCookie(reply, opts, done.session).status(status).send(answer)
  }
  fastify.post('/auth/join', {
    schema: {
      tags,
      summary: 'Use an invite: makes the user with the invite\'s permission on every repository of its workspace, signed in (cookie)',
      body: JoinBody,
      response: { 201: Joined, ...errors }
    }
  }, async (request, reply) => {
    const { token, login, password } = request.body
    return await signedIn(request, reply, 201, async () => await ops.join(token, login, password, request.ip))
  })
  fastify.post('/auth/reset', {
    schema: {
      tags, summary: 'Use a password-reset link: sets the password, ends the person\'s sessions, signs in (cookie)', body: ResetBody, response: { 200: SignedIn, ...errors }
    }
  }, async (request, reply) => await signedIn(request, reply, 200, async () => await ops.reset(request.body.token, request.body.password, request.ip)))
  fastify.post('/auth/setup', {
    schema: { tags, summary: 'Use the first-run setup link: makes the first administrator, signed in (cookie)', body: SetupBody, response: { 201: SignedIn, ...errors } }
  }, async (request, reply) => await signedIn(request, reply, 201, async () =>
    await ops.setup(request.body.token, { login: request.body.login, email: request.body.email ?? null, password: request.body.password }, request.ip)))
}

export default accountPages
