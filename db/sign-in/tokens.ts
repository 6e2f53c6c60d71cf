import { timingSafeEqual } from 'node:crypto'
import { sql } from 'kysely'
import type { Static } from '../../schemas/common.js'
import type { AccountToken } from '../../schemas/account.js'
import { lockFor } from '../engine/engine.js'
import { Conflict, Invalid, NotFound } from '../errors.js'
import { newObjectId, nowIso } from '../ids.js'
import { prepared } from '../engine/prepared.js'
import type { Executor } from '../engine/transaction.js'
import { generateToken, hashToken, type User } from '../users.js'

export type TokenScope = 'read' | 'write'
export type AccountTokenRow = Static<typeof AccountToken>

/** What a request presented: a named token, the admin-made ("legacy") one, or a browser session. */
export interface Credential {
  kind: 'token' | 'legacy' | 'session'
  /** the token's id (`legacy` for the admin-made one), or the session's digest */
  id: string
  scope: TokenScope
  /** epoch ms; Infinity when it never expires */
  expiresMs: number
  /** epoch ms of the last use written down (0: never) */
  usedMs: number
  /** what the rate limit counts by: each token on its own, as on the hosted API */
  rateKey: string
}

export interface Principal { user: User, credential: Credential }

/** Tokens a user may hold at once (the legacy one not counted). */
export const MAX_TOKENS = 20
/** `last_used_at` is written at most this often per token. */
export const TOUCH_EVERY_MS = 60_000
export const LEGACY_ID = 'legacy'

// One statement for both kinds: a named token, or the admin-made one kept on the user.
const byHash = prepared<{ hash: string }>()((db, p) => db.selectFrom('api_tokens as t').innerJoin('users as u', 'u.id', 't.user_id')
  .select(['t.id', 't.token_hash', 't.scope', 't.expires_at', 't.last_used_at', 'u.id as user_id', 'u.login']).where('t.token_hash', '=', p.hash)
  .unionAll(db.selectFrom('users as l').select([
    sql<string>`${LEGACY_ID}`.as('id'), sql<string>`l.token_hash`.as('token_hash'), sql<TokenScope>`'write'`.as('scope'), sql<string | null>`NULL`.as('expires_at'),
    'l.token_last_used_at as last_used_at', 'l.id as user_id', 'l.login'
  ]).where('l.token_hash', '=', p.hash)))

const sameDigest = (stored: string, digest: string): boolean => {
  const a = Buffer.from(stored, 'hex')
  const b = Buffer.from(digest, 'hex')
  return a.length === b.length && timingSafeEqual(a, b)
}
const ms = (iso: string | null): number => iso === null ? 0 : Date.parse(iso)

/** API tokens: many named, scoped, expiring ones per user, plus the admin-made legacy one. */
export function createTokensRepository (db: Executor) {
  return {
    /** Who holds the token with this digest (expired ones too: the caller tells expiry apart). */
    async principalByDigest (digest: string): Promise<Principal | undefined> {
      const row = (await byHash(db, { hash: digest })).rows[0]
      if (row === undefined || !sameDigest(row.token_hash, digest)) return undefined
      const userId = Number(row.user_id)
      const legacy = row.id === LEGACY_ID
      return {
        user: { id: userId, login: row.login },
        credential: {
          kind: legacy ? 'legacy' : 'token',
          id: row.id,
          scope: row.scope,
          expiresMs: row.expires_at === null ? Infinity : ms(row.expires_at),
          usedMs: ms(row.last_used_at),
          rateKey: legacy ? `user:${userId}` : `token:${row.id}`
        }
      }
    },

    /**
     * Writes down a use, unless one was written in the last minute (by any instance). Not a
     * planning write: the change counter stays, so cached reads stay valid.
     */
    async touch (userId: number, credential: Credential, at: number): Promise<void> {
      const iso = new Date(at).toISOString()
      const before = new Date(at - TOUCH_EVERY_MS).toISOString()
      if (credential.kind === 'token') {
        await db.updateTable('api_tokens').set({ last_used_at: iso }).where('id', '=', credential.id)
          .where((eb) => eb.or([eb('last_used_at', 'is', null), eb('last_used_at', '<', before)])).execute()
      } else if (credential.kind === 'legacy') {
        await db.updateTable('users').set({ token_last_used_at: iso }).where('id', '=', userId)
          .where((eb) => eb.or([eb('token_last_used_at', 'is', null), eb('token_last_used_at', '<', before)])).execute()
      }
    },

    /** The user's tokens, newest first, the legacy one (when there is one) last. */
    async list (userId: number): Promise<AccountTokenRow[]> {
      const rows = await db.selectFrom('api_tokens').select(['id', 'name', 'scope', 'created_at', 'expires_at', 'last_used_at'])
        .where('user_id', '=', userId).orderBy('created_at', 'desc').orderBy('id', 'desc').execute()
      const out: AccountTokenRow[] = rows.map((r) => ({ ...r, legacy: false }))
      const legacy = await db.selectFrom('users').select(['token_hash', 'token_created_at', 'token_last_used_at']).where('id', '=', userId).executeTakeFirst()
      if (legacy?.token_hash != null) {
        out.push({ id: LEGACY_ID, name: 'legacy', scope: 'write', created_at: legacy.token_created_at, expires_at: null, last_used_at: legacy.token_last_used_at, legacy: true })
      }
      return out
    },

    /** A new token (shown once: only its digest is kept); at most MAX_TOKENS per user. */
    async create (userId: number, input: { name: string, scope: TokenScope, expires_at?: string | null }): Promise<{ token: string, row: AccountTokenRow }> {
      const expires = input.expires_at ?? null
      if (expires !== null && !(Date.parse(expires) > Date.now())) throw new Invalid('expires_at must be a time in the future')
      // Two creations at once on PostgreSQL must not both pass the count.
      await lockFor(db, `api_tokens:${userId}`)
      const { count } = await db.selectFrom('api_tokens').select((eb) => eb.fn.countAll<number>().as('count')).where('user_id', '=', userId).executeTakeFirstOrThrow()
      if (Number(count) >= MAX_TOKENS) throw new Conflict(`a user may hold at most ${MAX_TOKENS} tokens; revoke one first`)
      const token = generateToken()
      const expiresAt = expires === null ? null : new Date(expires).toISOString()
      const row = { id: newObjectId(), name: input.name, scope: input.scope, created_at: nowIso(), expires_at: expiresAt, last_used_at: null }
      await db.insertInto('api_tokens').values({ ...row, user_id: userId, token_hash: hashToken(token) }).execute()
      return { token, row: { ...row, legacy: false } }
    },

    /** The token stops working at once; `legacy` revokes the admin-made one. */
    async revoke (userId: number, tokenId: string): Promise<void> {
      if (tokenId === LEGACY_ID) {
        const done = await db.updateTable('users').set({ token_hash: null, token_last_used_at: null }).where('id', '=', userId).where('token_hash', 'is not', null).executeTakeFirst()
        if (Number(done.numUpdatedRows) === 0) throw new NotFound(`token ${tokenId} not found`)
        return
      }
      const done = await db.deleteFrom('api_tokens').where('user_id', '=', userId).where('id', '=', tokenId).executeTakeFirst()
      if (Number(done.numDeletedRows) === 0) throw new NotFound(`token ${tokenId} not found`)
    }
  }
}

export type TokensRepository = ReturnType<typeof createTokensRepository>
