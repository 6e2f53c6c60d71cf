import { createHash, randomBytes } from 'node:crypto'
import { sql } from 'kysely'
import type { Static } from '../schemas/common.js'
import type { AdminUser } from '../schemas/admin.js'
import type { PermissionName as PermissionNameSchema } from '../schemas/fixture.js'
import { engineOf, isUniqueViolation } from './engine/engine.js'
import { Conflict, NotFound } from './errors.js'
import { nowIso } from './ids.js'
import { prepared } from './engine/prepared.js'
import type { Executor } from './engine/transaction.js'

export type User = Static<typeof AdminUser>
export type PermissionName = Static<typeof PermissionNameSchema>
export type AccessLevel = 'read' | 'write' | 'admin'

export const LEVELS: Record<PermissionName, number> = { none: 0, read: 1, write: 2, push: 2, admin: 3 }

/** Tokens are kept only as SHA-256 digests (they are random, so no salt or slow hash is needed). */
export function hashToken (token: string): string {
  return createHash('sha256').update(token, 'utf8').digest('hex')
}

export function generateToken (): string {
  return randomBytes(24).toString('base64url')
}

/** Logins compare case-insensitively, as on the issue-hosting platforms. */
const sameLogin = (login: string) => sql<boolean>`lower(login) = lower(${login})`

const levelOf = prepared<{ userId: number, repoId: number }>()((db, p) =>
  db.selectFrom('permissions').select('level').where('user_id', '=', p.userId).where('repo_id', '=', p.repoId))

/** Users, their tokens and their per-repository permissions. */
export function createUsersRepository (db: Executor) {
  const byLogin = async (login: string): Promise<User | undefined> =>
    await db.selectFrom('users').select(['id', 'login']).where(sameLogin(login)).executeTakeFirst()

  const byId = async (id: number): Promise<User | undefined> =>
    await db.selectFrom('users').select(['id', 'login']).where('id', '=', id).executeTakeFirst()

  return {
    byLogin,

    async requireLogin (login: string): Promise<User> {
      const user = await byLogin(login)
      if (user === undefined) throw new NotFound(`user '${login}' not found`)
      return user
    },

    byId,

    async list (): Promise<User[]> {
      return await db.selectFrom('users').select(['id', 'login']).orderBy('id').execute()
    },

    /** Creates a user; a taken login or id is a conflict. */
    async create (login: string, id?: number, token?: string): Promise<User> {
      if (await byLogin(login) !== undefined) throw new Conflict(`login '${login}' already exists`)
      if (id !== undefined && await byId(id) !== undefined) throw new Conflict(`user id ${id} already exists`)
      let row
      try {
        const now = nowIso()
        const tokenHash = token === undefined ? null : hashToken(token)
        row = await db.insertInto('users')
          .values({ ...(id === undefined ? {} : { id }), login, token_hash: tokenHash, token_created_at: tokenHash === null ? null : now, created_at: now })
          .returning('id').executeTakeFirstOrThrow()
      } catch (err) {
        if (isUniqueViolation(err)) throw new Conflict(`login '${login}' or user id ${id ?? ''} already exists`)
        throw err
      }
      // A given id leaves PostgreSQL's id sequence behind: move it past the highest id.
      if (id !== undefined && engineOf(db) === 'postgres') await sql`SELECT setval(pg_get_serial_sequence('users', 'id'), (SELECT max(id) FROM users))`.execute(db)
      return { id: Number(row.id), login }
    },

    /** Makes a new token; the previous one stops working. Returns the token (shown once). */
    async regenerateToken (userId: number): Promise<string> {
      const token = generateToken()
      await db.updateTable('users').set({ token_hash: hashToken(token), token_created_at: nowIso(), token_last_used_at: null }).where('id', '=', userId).execute()
      return token
    },

    async level (userId: number, repoId: number): Promise<number> {
      return (await levelOf(db, { userId, repoId })).rows[0]?.level ?? 0
    },

    /** Each repository's level for the user, 0 where none. */
    async levels (userId: number, repoIds: number[]): Promise<Map<number, number>> {
      const out = new Map(repoIds.map((id) => [id, 0]))
      if (repoIds.length === 0) return out
      const rows = await db.selectFrom('permissions').select(['repo_id', 'level']).where('user_id', '=', userId).where('repo_id', 'in', repoIds).execute()
      for (const row of rows) out.set(Number(row.repo_id), row.level)
      return out
    },

    /** Every repository the user may read, with the permission's name. */
    async permissionsOf (userId: number): Promise<Array<{ repo_id: number, permission: 'read' | 'write' | 'admin' }>> {
      const rows = await db.selectFrom('permissions').select(['repo_id', 'level']).where('user_id', '=', userId).where('level', '>=', 1).orderBy('repo_id').execute()
      const names = ['none', 'read', 'write', 'admin'] as const
      return rows.map((r) => ({ repo_id: Number(r.repo_id), permission: names[Math.min(3, r.level)] as 'read' | 'write' | 'admin' }))
    },

    async readableRepositories (userId: number): Promise<Set<number>> {
      const rows = await db.selectFrom('permissions').select('repo_id').where('user_id', '=', userId).where('level', '>=', 1).execute()
      return new Set(rows.map((r) => Number(r.repo_id)))
    },

    /** Everyone with access to the repository, by login, with the permission's name. */
    async permissionsOn (repoId: number): Promise<Array<{ login: string, permission: PermissionName }>> {
      const rows = await db.selectFrom('permissions as p').innerJoin('users as u', 'u.id', 'p.user_id')
        .select(['u.login', 'p.level']).where('p.repo_id', '=', repoId).orderBy('u.login').execute()
      const names: PermissionName[] = ['none', 'read', 'write', 'admin']
      return rows.map((r) => ({ login: r.login, permission: names[r.level] }))
    },

    /** The token stops working; no new one is made. */
    async revokeToken (userId: number): Promise<void> {
      await db.updateTable('users').set({ token_hash: null, token_last_used_at: null }).where('id', '=', userId).execute()
    },

    /** The user, their token and permissions go; their events stay, without a user. */
    async remove (userId: number): Promise<void> {
      await db.deleteFrom('users').where('id', '=', userId).execute()
    },

    /** Users with their email (null: none), by id. */
    async listWithEmail (): Promise<Array<User & { email: string | null }>> {
      return await db.selectFrom('users').select(['id', 'login', 'email']).orderBy('id').execute()
    },

    async emailOf (userId: number): Promise<string | null> {
      return (await db.selectFrom('users').select('email').where('id', '=', userId).executeTakeFirst())?.email ?? null
    },

    /** The user with this email (compared case-insensitively), if any. */
    /**
     * The user whose email is exactly this one. Linking a sign-in by email uses this: case is kept
     * by some providers and not others, and `Alice@x` may be a different mailbox than `alice@x`.
     */
    async byExactEmail (email: string): Promise<User | undefined> {
      const row = await db.selectFrom('users').select(['id', 'login']).where('email', '=', email).executeTakeFirst()
      return row === undefined ? undefined : { id: Number(row.id), login: row.login }
    },

    async byEmail (email: string): Promise<User | undefined> {
      return await db.selectFrom('users').select(['id', 'login']).where(sql<boolean>`lower(email) = lower(${email})`).executeTakeFirst()
    },

    /** Sets or clears (null) the user's email; one taken by another user is a conflict. */
    async setEmail (userId: number, email: string | null): Promise<void> {
      const conflict = () => new Conflict(`email '${email ?? ''}' belongs to another user`)
      if (email !== null) {
        const holder = await db.selectFrom('users').select('id').where(sql<boolean>`lower(email) = lower(${email})`).where('id', '<>', userId).executeTakeFirst()
        if (holder !== undefined) throw conflict()
      }
      try {
        await db.updateTable('users').set({ email }).where('id', '=', userId).execute()
      } catch (err) {
        if (isUniqueViolation(err)) throw conflict()
        throw err
      }
    },

    /** Gives the user `permission` on every repository there is now (the first administrator's own boards). */
    async grantEverywhere (userId: number, permission: PermissionName): Promise<void> {
      const level = LEVELS[permission]
      await db.insertInto('permissions').columns(['user_id', 'repo_id', 'level'])
        .expression(db.selectFrom('repositories').select([sql.lit(userId).as('user_id'), 'id', sql.lit(level).as('level')]).where(sql<boolean>`true`))
        .onConflict((oc) => oc.columns(['user_id', 'repo_id']).doUpdateSet({ level })).execute()
    },

    /**
     * Gives the user at least `permission` on the repository, in one statement that never lowers
     * what they hold: a concurrent raise committed first (PostgreSQL READ COMMITTED) is kept.
     */
    async raisePermission (userId: number, repoId: number, permission: PermissionName): Promise<void> {
      const level = LEVELS[permission]
      if (level === 0) return
      await db.insertInto('permissions').values({ user_id: userId, repo_id: repoId, level })
        .onConflict((oc) => oc.columns(['user_id', 'repo_id'])
          .doUpdateSet({ level: sql<number>`CASE WHEN permissions.level < excluded.level THEN excluded.level ELSE permissions.level END` })).execute()
    },

    async setPermission (userId: number, repoId: number, permission: PermissionName): Promise<void> {
      const level = LEVELS[permission]
      if (level === 0) {
        await db.deleteFrom('permissions').where('user_id', '=', userId).where('repo_id', '=', repoId).execute()
        return
      }
      await db.insertInto('permissions').values({ user_id: userId, repo_id: repoId, level })
        .onConflict((oc) => oc.columns(['user_id', 'repo_id']).doUpdateSet({ level })).execute()
    }
  }
}

export type UsersRepository = ReturnType<typeof createUsersRepository>
