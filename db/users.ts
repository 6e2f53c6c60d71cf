import { createHash, randomBytes, timingSafeEqual } from 'node:crypto'
import type { Db } from './connection.js'
import { nowIso } from './ids.js'

export interface User {
  id: number
  login: string
}

export type PermissionName = 'read' | 'write' | 'push' | 'admin' | 'none'
export type AccessLevel = 'read' | 'write' | 'admin'

export const LEVELS: Record<PermissionName, number> = { none: 0, read: 1, write: 2, push: 2, admin: 3 }
export const LEVEL_NAMES = ['none', 'read', 'write', 'admin'] as const

/** Tokens are kept only as SHA-256 digests (they are random, so no salt or slow hash is needed). */
export function hashToken (token: string): string {
  return createHash('sha256').update(token, 'utf8').digest('hex')
}

export function generateToken (): string {
  return randomBytes(24).toString('base64url')
}

/** Users, their tokens and their per-repository permissions. */
export function createUsersRepository (db: Db) {
  const byHash = db.prepare<[string], { id: number, login: string, token_hash: string }>(
    'SELECT id, login, token_hash FROM users WHERE token_hash = ?')
  const byLogin = db.prepare<[string], User>('SELECT id, login FROM users WHERE login = ?')
  const byId = db.prepare<[number], User>('SELECT id, login FROM users WHERE id = ?')
  const all = db.prepare<[], User>('SELECT id, login FROM users ORDER BY id')
  const insert = db.prepare<[number | null, string, string | null, string]>(
    'INSERT INTO users (id, login, token_hash, created_at) VALUES (?, ?, ?, ?)')
  const setHash = db.prepare<[string | null, number]>('UPDATE users SET token_hash = ? WHERE id = ?')
  const level = db.prepare<[number, number], { level: number }>(
    'SELECT level FROM permissions WHERE user_id = ? AND repo_id = ?')
  const upsertPermission = db.prepare<[number, number, number]>(`
    INSERT INTO permissions (user_id, repo_id, level) VALUES (?, ?, ?)
    ON CONFLICT (user_id, repo_id) DO UPDATE SET level = excluded.level`)
  const deletePermission = db.prepare<[number, number]>('DELETE FROM permissions WHERE user_id = ? AND repo_id = ?')
  const readable = db.prepare<[number], { repo_id: number }>(
    'SELECT repo_id FROM permissions WHERE user_id = ? AND level >= 1')

  return {
    /** The user owning this token, or undefined. The digest is compared in constant time. */
    findByToken (token: string): User | undefined {
      const digest = hashToken(token)
      const row = byHash.get(digest)
      if (row === undefined) return undefined
      const a = Buffer.from(row.token_hash, 'hex')
      const b = Buffer.from(digest, 'hex')
      return a.length === b.length && timingSafeEqual(a, b) ? { id: row.id, login: row.login } : undefined
    },

    byLogin (login: string): User | undefined {
      return byLogin.get(login)
    },

    byId (id: number): User | undefined {
      return byId.get(id)
    },

    list (): User[] {
      return all.all()
    },

    create (login: string, id?: number, token?: string): User {
      const info = insert.run(id ?? null, login, token === undefined ? null : hashToken(token), nowIso())
      return { id: Number(info.lastInsertRowid), login }
    },

    /** Makes a new token; the previous one stops working. Returns the token (shown once). */
    regenerateToken (userId: number): string {
      const token = generateToken()
      setHash.run(hashToken(token), userId)
      return token
    },

    level (userId: number, repoId: number): number {
      return level.get(userId, repoId)?.level ?? 0
    },

    readableRepositories (userId: number): Set<number> {
      return new Set(readable.all(userId).map((r) => r.repo_id))
    },

    setPermission (userId: number, repoId: number, permission: PermissionName): void {
      const value = LEVELS[permission]
      if (value === 0) deletePermission.run(userId, repoId)
      else upsertPermission.run(userId, repoId, value)
    }
  }
}

export type UsersRepository = ReturnType<typeof createUsersRepository>
