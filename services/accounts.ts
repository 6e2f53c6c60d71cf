import type { AccountLink } from '../db/sign-in/accounts.js'
import { Gone, Invalid, NotFound } from '../db/errors.js'
import type { SessionLifetimes } from '../db/sign-in/sessions.js'
import type { PlanningStore, StoreScope } from '../db/store.js'
import { LEVELS, type PermissionName, type User } from '../db/users.js'
import { hashPassword, MIN_PASSWORD, PASSWORD_RULE } from './passwords.js'

export const INVITE_MS = 7 * 86_400_000
export const RESET_MS = 86_400_000
export const SETUP_MS = 86_400_000
const LOGIN = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,99}$/

export interface SignedInUser { user: User, session: string, administrator: boolean }
export type InvitePermission = 'read' | 'write' | 'admin'

/** Field-named refusals, so a form can say what went wrong next to the field. */
export class FieldError extends Invalid {
  constructor (readonly field: string, message: string) { super(message) }
}

export function checkNewPassword (password: string, field = 'password'): void {
  if (password.length < MIN_PASSWORD) throw new FieldError(field, PASSWORD_RULE)
}

function checkLogin (login: string): void {
  if (!LOGIN.test(login)) throw new FieldError('login', 'a login is 1 to 100 letters, digits, "-", "_" or ".", starting with a letter or digit')
}

/** A new session in this transaction, the last sign-in written down and audited; the cookie's value. */
export async function startSession (
  s: StoreScope, user: User, provider: string, lifetimes: SessionLifetimes, address: string, detail: Record<string, unknown> = {}
): Promise<string> {
  const session = await s.sessions.create(user.id, provider, lifetimes)
  await s.accounts.signedIn(user.id)
  await s.audit.record({ actor: `user:${user.login}`, action: 'sign_in.succeeded', target: `user:${user.login}`, address, detail: { provider, ...detail } })
  return session
}

async function newUser (s: StoreScope, login: string, email: string | null, hash: string): Promise<User> {
  checkLogin(login)
  if (await s.users.byLogin(login) !== undefined) throw new FieldError('login', `the login '${login}' is taken; choose another`)
  const user = await s.users.create(login)
  if (email !== null && await s.users.byEmail(email) === undefined) await s.users.setEmail(user.id, email)
  await s.accounts.setPassword(user.id, hash)
  return user
}

/**
 * Invites, password resets and the first-run setup (docs/sign-in.md, "Invites and resets"): each a
 * one-use link kept as a digest; using one is one transaction, so a refused form leaves it unused.
 */
export function createAccountOperations (store: PlanningStore, lifetimes: SessionLifetimes) {
  return {
    async createInvite (input: {
      workspaceId: string, permission: InvitePermission, email?: string | null, by: string, address: string
    }): Promise<{ token: string, link: AccountLink }> {
      return await store.transaction(async (s) => {
        await s.workspaces.requireWorkspace(input.workspaceId)
        const made = await s.accounts.createLink({
          kind: 'invite', workspaceId: input.workspaceId, permission: input.permission, email: input.email ?? null, createdBy: input.by, expiresAt: Date.now() + INVITE_MS
        })
        await s.audit.record({
          actor: input.by,
          action: 'invite.created',
          target: `workspace:${input.workspaceId}`,
          address: input.address,
          detail: { invite_id: made.link.id, permission: input.permission, email: input.email ?? null }
        })
        return made
      })
    },

    async invites (workspaceId: string): Promise<AccountLink[]> {
      await store.workspaces.requireWorkspace(workspaceId)
      return await store.accounts.invites(workspaceId, Date.now())
    },

    async removeInvite (id: string, by: string, address: string): Promise<void> {
      await store.transaction(async (s) => {
        const invite = await s.accounts.inviteById(id)
        if (invite === undefined) throw new NotFound(`invite ${id} not found`)
        await s.accounts.removeLink(id)
        await s.audit.record({ actor: by, action: 'invite.removed', target: `workspace:${invite.workspace_id ?? ''}`, address, detail: { invite_id: id } })
      })
    },

    /**
     * A new user from an invite: its permission on every repository of its workspace that the person
     * who made it still administers (all of them for an administrator or the admin token), signed in.
     */
    async join (token: string, login: string, password: string, address: string): Promise<SignedInUser & { workspaceId: string }> {
      checkLogin(login)
      checkNewPassword(password)
      const hash = await hashPassword(password)
      return await store.transaction(async (s) => {
        const taken = await takeInvite(s, token)
        const user = await newUser(s, login, taken.invite.email, hash)
        await grantInvite(s, taken, user, address)
        const session = await startSession(s, user, 'password', lifetimes, address, { via: 'invite' })
        return { user, session, administrator: false, workspaceId: taken.workspaceId }
      })
    },

    /**
     * An invite taken by someone signed in already: the same grant as a join, but never lowering a
     * permission the account holds on a repository (it gets at least the invited one).
     */
    async joinAs (token: string, user: User, address: string): Promise<{ workspaceId: string }> {
      return await store.transaction(async (s) => {
        const taken = await takeInvite(s, token)
        await grantInvite(s, taken, user, address)
        return { workspaceId: taken.workspaceId }
      })
    },

    /** A reset link for the person (the admin API's audit entry records who made it). */
    async createReset (login: string, by: string): Promise<{ token: string, link: AccountLink, user: User }> {
      return await store.transaction(async (s) => {
        const user = await s.users.requireLogin(login)
        const made = await s.accounts.createLink({ kind: 'reset', userId: user.id, createdBy: by, expiresAt: Date.now() + RESET_MS })
        return { ...made, user }
      })
    },

    /** Sets the password a reset link is for; the person's sessions end, and they are signed in anew. */
    async reset (token: string, password: string, address: string): Promise<SignedInUser> {
      checkNewPassword(password)
      const hash = await hashPassword(password)
      return await store.transaction(async (s) => {
        const link = await s.accounts.takeLink(token, 'reset', Date.now())
        const user = await s.users.byId(link.user_id ?? 0)
        if (user === undefined) throw new Gone('the account of this link no longer exists')
        await s.accounts.setPassword(user.id, hash)
        await s.accounts.clearFailures(user.login.toLowerCase())
        const ended = await s.sessions.removeOthers(user.id, undefined)
        await s.audit.record({ actor: `user:${user.login}`, action: 'password.reset', target: `user:${user.login}`, address, detail: { link_id: link.id, sessions_ended: ended } })
        const session = await startSession(s, user, 'password', lifetimes, address, { via: 'reset' })
        return { user, session, administrator: await s.accounts.isAdministrator(user.id) }
      })
    },

    /** The first-run setup link, made anew (the previous unused one ends) while no administrator exists; undefined once one does. */
    async setupLink (): Promise<{ token: string, link: AccountLink } | undefined> {
      return await store.transaction(async (s) => {
        if (await s.accounts.administrators() > 0) return undefined
        await s.accounts.dropUnused('setup')
        return await s.accounts.createLink({ kind: 'setup', createdBy: 'system', expiresAt: Date.now() + SETUP_MS })
      })
    },

    /** Makes the first administrator from the setup link, signed in; the link is used up. */
    async setup (token: string, input: { login: string, email: string | null, password: string }, address: string): Promise<SignedInUser> {
      checkLogin(input.login)
      if (input.email !== null && !/^[^\s@]+@[^\s@]+$/.test(input.email)) throw new FieldError('email', 'this is not an email address')
      checkNewPassword(input.password)
      const hash = await hashPassword(input.password)
      return await store.transaction(async (s) => {
        await s.accounts.takeLink(token, 'setup', Date.now())
        await s.accounts.lockAdministrators()
        if (await s.accounts.administrators() > 0) throw new Gone('an administrator exists already; sign in instead')
        if (input.email !== null && await s.users.byEmail(input.email) !== undefined) throw new FieldError('email', 'this email belongs to another user')
        const user = await newUser(s, input.login, input.email, hash)
        await s.accounts.setAdministrator(user.id, true)
        // The server's first administrator may grant themselves anything: they get admin on what is
        // here already (demo data, an import, a fixture), so its boards open for them at once.
        await s.users.grantEverywhere(user.id, 'admin')
        await s.audit.record({ actor: `user:${user.login}`, action: 'user.created', target: `user:${user.login}`, address, detail: { via: 'first-run setup', administrator: true } })
        const session = await startSession(s, user, 'password', lifetimes, address, { via: 'setup' })
        return { user, session, administrator: true }
      })
    }
  }
}

export type AccountOperations = ReturnType<typeof createAccountOperations>

interface TakenInvite { invite: AccountLink, workspaceId: string, granted: number[] }

/**
 * Whether the invite could be used now: the checks of takeInvite (unused, unexpired, its workspace
 * and its maker still here), without using it up.
 */
export async function inviteUsable (s: StoreScope, token: string): Promise<boolean> {
  const invite = await s.accounts.link(token)
  if (invite?.kind !== 'invite' || invite.used_at !== null || invite.expires_at <= Date.now()) return false
  if (await s.workspaces.byId(invite.workspace_id ?? '') === undefined) return false
  const maker = invite.created_by
  return !maker.startsWith('user:') || await s.accounts.byLogin(maker.slice('user:'.length)) !== undefined
}

/**
 * A user just made by a sign-in from an invite's page takes the invite, in the transaction that made
 * them (404 or 410 when it cannot be used: the caller's transaction, and the user, are undone), so
 * one invite makes at most one account; the workspace to open.
 */
export async function joinNewUser (s: StoreScope, token: string, user: User, address: string): Promise<string> {
  const taken = await takeInvite(s, token)
  await grantInvite(s, taken, user, address)
  return taken.workspaceId
}

/** Uses the invite up (404 unknown, 410 used, expired, or its workspace or maker gone) and says what it may grant. */
async function takeInvite (s: StoreScope, token: string): Promise<TakenInvite> {
  const invite = await s.accounts.takeLink(token, 'invite', Date.now())
  const workspace = await s.workspaces.byId(invite.workspace_id ?? '')
  if (workspace === undefined) throw new Gone('the workspace of this invite no longer exists')
  return { invite, workspaceId: workspace.id, granted: await grantable(s, invite.created_by, workspace.repositories) }
}

/** The invited permission on each repository it may grant, where the user holds less; audited. */
async function grantInvite (s: StoreScope, taken: TakenInvite, user: User, address: string): Promise<void> {
  const { invite } = taken
  const permission = invite.permission as PermissionName
  const held = await s.users.levels(user.id, taken.granted)
  const raised = taken.granted.filter((id) => (held.get(id) ?? 0) < LEVELS[permission])
  for (const repoId of raised) await s.users.raisePermission(user.id, repoId, permission)
  await s.audit.record({
    actor: `user:${user.login}`,
    action: 'invite.used',
    target: `user:${user.login}`,
    address,
    detail: {
      invite_id: invite.id, workspace_id: taken.workspaceId, permission: invite.permission, invited_by: invite.created_by, repositories_raised: raised.length
    }
  })
}

/**
 * The repositories an invite may grant when it is used: the workspace's repositories now, but only
 * those its maker could grant now (a workspace admin needs admin on each; repositories added since,
 * which the maker does not administer, are left out). A maker whose account is gone grants nothing.
 */
async function grantable (s: StoreScope, createdBy: string, repositories: number[]): Promise<number[]> {
  if (!createdBy.startsWith('user:')) return repositories
  const maker = await s.accounts.byLogin(createdBy.slice('user:'.length))
  if (maker === undefined) throw new Gone('the person who made this invite no longer has an account here; ask for a new invite')
  if (maker.administrator) return repositories
  const levels = await s.users.levels(maker.id, repositories)
  return repositories.filter((id) => (levels.get(id) ?? 0) >= LEVELS.admin)
}
