import { sql, type Selectable } from 'kysely'
import type { AccountLinksTable } from '../schema.js'
import { lockFor } from '../engine/engine.js'
import { Conflict, Gone, NotFound } from '../errors.js'
import { newObjectId, nowIso } from '../ids.js'
import type { Executor } from '../engine/transaction.js'
import { generateToken, hashToken, type User } from '../users.js'

export type LinkKind = 'invite' | 'reset' | 'setup'

/** A link as kept, without the digest of its token. */
export type AccountLink = Omit<Selectable<AccountLinksTable>, 'token_hash'>

export interface UserRow extends User {
  email: string | null
  administrator: boolean
  last_sign_in_at: string | null
}

const LINK_COLUMNS = ['id', 'kind', 'workspace_id', 'permission', 'email', 'user_id', 'created_by', 'created_at', 'expires_at', 'used_at'] as const
const linkRow = (r: AccountLink): AccountLink => ({ ...r, expires_at: Number(r.expires_at), user_id: r.user_id === null ? null : Number(r.user_id) })
const sameLogin = (login: string) => sql<boolean>`lower(login) = lower(${login})`

/**
 * Local accounts (docs/sign-in.md, "Passwords"): password hashes, administrators (never none once
 * there is one), the failed-sign-in counts behind the lock-out, and one-use links (invites, resets,
 * first-run setup) kept as digests.
 */
export function createAccountsRepository (db: Executor) {
  /** Serializes every change to who is an administrator (PostgreSQL; SQLite's write lock does it there). */
  const lockAdministrators = async () => { await lockFor(db, 'administrators') }
  const administrators = async (): Promise<number> => {
    const row = await db.selectFrom('users').select((eb) => eb.fn.countAll<number>().as('count')).where('administrator', '=', 1).executeTakeFirstOrThrow()
    return Number(row.count)
  }
  return {
    async list (): Promise<UserRow[]> {
      const rows = await db.selectFrom('users').select(['id', 'login', 'email', 'administrator', 'last_sign_in_at']).orderBy('id').execute()
      return rows.map((r) => ({ ...r, id: Number(r.id), administrator: Number(r.administrator) === 1 }))
    },

    async byLogin (login: string): Promise<UserRow | undefined> {
      const r = await db.selectFrom('users').select(['id', 'login', 'email', 'administrator', 'last_sign_in_at']).where(sameLogin(login)).executeTakeFirst()
      return r === undefined ? undefined : { ...r, id: Number(r.id), administrator: Number(r.administrator) === 1 }
    },

    /** The user with this login and their password hash (null: none set); undefined: no such login. */
    async passwordOf (login: string): Promise<{ user: User, hash: string | null } | undefined> {
      const r = await db.selectFrom('users').select(['id', 'login', 'password_hash']).where(sameLogin(login)).executeTakeFirst()
      return r === undefined ? undefined : { user: { id: Number(r.id), login: r.login }, hash: r.password_hash }
    },

    async passwordHash (userId: number): Promise<string | null> {
      return (await db.selectFrom('users').select('password_hash').where('id', '=', userId).executeTakeFirst())?.password_hash ?? null
    },

    async setPassword (userId: number, hash: string): Promise<void> {
      await db.updateTable('users').set({ password_hash: hash }).where('id', '=', userId).execute()
    },

    async isAdministrator (userId: number): Promise<boolean> {
      const r = await db.selectFrom('users').select('administrator').where('id', '=', userId).executeTakeFirst()
      return Number(r?.administrator ?? 0) === 1
    },

    administrators,
    lockAdministrators,

    /** Makes or unmakes an administrator; unmaking the last one is a conflict. */
    async setAdministrator (userId: number, administrator: boolean): Promise<void> {
      await lockAdministrators()
      if (!administrator) {
        const current = await db.selectFrom('users').select('administrator').where('id', '=', userId).executeTakeFirst()
        if (Number(current?.administrator ?? 0) === 1 && await administrators() <= 1) throw new Conflict('this is the last administrator: make another one first')
      }
      await db.updateTable('users').set({ administrator: administrator ? 1 : 0 }).where('id', '=', userId).execute()
    },

    /** Refuses (409) to remove the last administrator; call in the transaction that removes the user. */
    async guardRemoval (userId: number): Promise<void> {
      await lockAdministrators()
      const current = await db.selectFrom('users').select('administrator').where('id', '=', userId).executeTakeFirst()
      if (Number(current?.administrator ?? 0) === 1 && await administrators() <= 1) throw new Conflict('this is the last administrator: make another one before removing them')
    },

    async signedIn (userId: number): Promise<void> {
      await db.updateTable('users').set({ last_sign_in_at: nowIso() }).where('id', '=', userId).execute()
    },

    /** Until when (epoch ms) the login is locked out; 0: it is not. */
    async lockedUntil (loginKey: string, now: number): Promise<number> {
      const r = await db.selectFrom('password_failures').select('locked_until').where('login_key', '=', loginKey).executeTakeFirst()
      const until = Number(r?.locked_until ?? 0)
      return until > now ? until : 0
    },

    /**
     * Counts a failed sign-in; the `limit`-th within `windowMs` locks the login for `lockMs`.
     * Returns until when it is locked (0: not). One statement at a time under the login's lock.
     */
    async recordFailure (loginKey: string, now: number, limit: number, windowMs: number, lockMs: number): Promise<number> {
      await lockFor(db, `password-failures:${loginKey}`)
      const r = await db.selectFrom('password_failures').select(['failures', 'window_start', 'locked_until']).where('login_key', '=', loginKey).executeTakeFirst()
      const fresh = r === undefined || Number(r.window_start) <= now - windowMs || (Number(r.locked_until) !== 0 && Number(r.locked_until) <= now)
      const failures = fresh ? 1 : Number(r.failures) + 1
      const lockedUntil = failures >= limit ? now + lockMs : 0
      const row = { failures, window_start: fresh ? now : Number(r.window_start), locked_until: lockedUntil }
      await db.insertInto('password_failures').values({ login_key: loginKey, ...row })
        .onConflict((oc) => oc.column('login_key').doUpdateSet(row)).execute()
      return lockedUntil
    },

    async clearFailures (loginKey: string): Promise<void> {
      await db.deleteFrom('password_failures').where('login_key', '=', loginKey).execute()
    },

    /** Drops counts older than `before` (epoch ms) that hold no lock any more. */
    async pruneFailures (before: number): Promise<void> {
      await db.deleteFrom('password_failures').where('window_start', '<', before).where('locked_until', '<', before).execute()
    },

    /** A new one-use link; returns its token (shown once: only the digest is kept). */
    async createLink (input: {
      kind: LinkKind, workspaceId?: string, permission?: string, email?: string | null, userId?: number, createdBy: string, expiresAt: number
    }): Promise<{ token: string, link: AccountLink }> {
      const token = generateToken()
      const link: AccountLink = {
        id: newObjectId(),
        kind: input.kind,
        workspace_id: input.workspaceId ?? null,
        permission: input.permission ?? null,
        email: input.email ?? null,
        user_id: input.userId ?? null,
        created_by: input.createdBy,
        created_at: nowIso(),
        expires_at: input.expiresAt,
        used_at: null
      }
      await db.insertInto('account_links').values({ ...link, token_hash: hashToken(`link:${token}`) }).execute()
      return { token, link }
    },

    /** The link with this token, used or not; undefined when unknown. */
    async link (token: string): Promise<AccountLink | undefined> {
      const r = await db.selectFrom('account_links').select(LINK_COLUMNS).where('token_hash', '=', hashToken(`link:${token}`)).executeTakeFirst()
      return r === undefined ? undefined : linkRow(r)
    },

    /**
     * Uses the link of this kind up (one atomic update, so two uses at once cannot both pass);
     * unknown: 404, used or expired: 410.
     */
    async takeLink (token: string, kind: LinkKind, now: number): Promise<AccountLink> {
      const hash = hashToken(`link:${token}`)
      const taken = await db.updateTable('account_links').set({ used_at: nowIso() })
        .where('token_hash', '=', hash).where('kind', '=', kind).where('used_at', 'is', null).where('expires_at', '>', now)
        .returning(LINK_COLUMNS).executeTakeFirst()
      if (taken !== undefined) return linkRow(taken)
      const known = await db.selectFrom('account_links').select(['kind']).where('token_hash', '=', hash).executeTakeFirst()
      if (known === undefined || known.kind !== kind) throw new NotFound('this link is not known here')
      throw new Gone('this link was used already or has expired; ask for a new one')
    },

    /** Pending invites of the workspace (not used, not expired), newest first. */
    async invites (workspaceId: string, now: number): Promise<AccountLink[]> {
      const rows = await db.selectFrom('account_links').select(LINK_COLUMNS).where('kind', '=', 'invite').where('workspace_id', '=', workspaceId)
        .where('used_at', 'is', null).where('expires_at', '>', now).orderBy('created_at', 'desc').orderBy('id', 'desc').execute()
      return rows.map(linkRow)
    },

    async inviteById (id: string): Promise<AccountLink | undefined> {
      const r = await db.selectFrom('account_links').select(LINK_COLUMNS).where('id', '=', id).where('kind', '=', 'invite').executeTakeFirst()
      return r === undefined ? undefined : linkRow(r)
    },

    async removeLink (id: string): Promise<void> {
      await db.deleteFrom('account_links').where('id', '=', id).execute()
    },

    /** Ends every unused link of this kind (a new setup link replaces the last one). */
    async dropUnused (kind: LinkKind): Promise<void> {
      await db.deleteFrom('account_links').where('kind', '=', kind).where('used_at', 'is', null).execute()
    },

    /** Drops links that ended more than `keepMs` ago (used ones answer 410 until then). */
    async pruneLinks (now: number, keepMs: number): Promise<void> {
      await db.deleteFrom('account_links').where('expires_at', '<', now - keepMs).execute()
    }
  }
}

export type AccountsRepository = ReturnType<typeof createAccountsRepository>
