import { randomBytes, timingSafeEqual } from 'node:crypto'
import { prepared } from '../engine/prepared.js'
import type { Principal } from './tokens.js'
import type { Executor } from '../engine/transaction.js'
import { hashToken, type User } from '../users.js'
import { openAttempt, sealAttempt } from './attempt-seal.js'

export interface SessionLifetimes {
  /** a session not used for this long ends */
  idleMs: number
  /** a session ends this long after the sign-in, used or not */
  maxMs: number
}

export interface SignInAttempt { provider: string, code_verifier: string, nonce: string, return_to: string }

/** A sign-in begun at a provider and not back yet is kept this long. */
export const ATTEMPT_MS = 10 * 60_000

const byHash = prepared<{ hash: string }>()((db, p) => db.selectFrom('sessions as s').innerJoin('users as u', 'u.id', 's.user_id')
  .select(['s.id_hash', 's.last_seen_at', 's.expires_at', 'u.id as user_id', 'u.login']).where('s.id_hash', '=', p.hash))

/** Digest of a session cookie's value (the table holds digests only, like tokens). */
export const sessionDigest = (id: string): string => hashToken(`session:${id}`)

/**
 * Browser sessions in the database (so any instance serves them) and the sign-ins under way.
 * Session ends (logout, expiry, a deleted user) are planning writes: they move the change
 * counter, so every instance's cache forgets the session at its next request.
 */
export function createSessionsRepository (db: Executor) {
  return {
    /** A new session for the user; returns the cookie's value (never stored). */
    async create (userId: number, provider: string, lifetimes: SessionLifetimes, now = Date.now()): Promise<string> {
      const id = randomBytes(32).toString('base64url')
      await db.insertInto('sessions').values({ id_hash: sessionDigest(id), user_id: userId, provider, created_at: now, last_seen_at: now, expires_at: now + lifetimes.maxMs }).execute()
      return id
    },

    /** The session's user, with when it ends (the sooner of idle and absolute); undefined when unknown. */
    async principalByDigest (digest: string, lifetimes: SessionLifetimes): Promise<Principal | undefined> {
      const row = (await byHash(db, { hash: digest })).rows[0]
      if (row === undefined || !timingSafeEqual(Buffer.from(row.id_hash, 'hex'), Buffer.from(digest, 'hex'))) return undefined
      const lastSeen = Number(row.last_seen_at)
      const user: User = { id: Number(row.user_id), login: row.login }
      return {
        user,
        credential: {
          kind: 'session',
          id: digest,
          scope: 'write',
          expiresMs: Math.min(Number(row.expires_at), lastSeen + lifetimes.idleMs),
          usedMs: lastSeen,
          rateKey: `session:${user.id}`
        }
      }
    },

    /** Writes down a use (not a planning write: the change counter stays). */
    async touch (digest: string, now: number): Promise<void> {
      await db.updateTable('sessions').set({ last_seen_at: now }).where('id_hash', '=', digest).where('last_seen_at', '<', now).execute()
    },

    /** Ends the session; the user it belonged to, if it existed. */
    async remove (digest: string): Promise<number | undefined> {
      const row = await db.deleteFrom('sessions').where('id_hash', '=', digest).returning('user_id').executeTakeFirst()
      return row === undefined ? undefined : Number(row.user_id)
    },

    /** Ends the user's sessions but the one with digest `keep` (undefined: all of them). */
    async removeOthers (userId: number, keep: string | undefined): Promise<number> {
      let query = db.deleteFrom('sessions').where('user_id', '=', userId)
      if (keep !== undefined) query = query.where('id_hash', '<>', keep)
      return Number((await query.executeTakeFirst()).numDeletedRows)
    },

    async removeForUser (userId: number): Promise<number> {
      const done = await db.deleteFrom('sessions').where('user_id', '=', userId).executeTakeFirst()
      return Number(done.numDeletedRows)
    },

    /** Drops ended sessions and stale sign-in attempts (idle ones: last seen before `idleBefore`). */
    async prune (now: number, idleBefore: number): Promise<number> {
      const done = await db.deleteFrom('sessions').where((eb) => eb.or([eb('expires_at', '<=', now), eb('last_seen_at', '<', idleBefore)])).executeTakeFirst()
      await db.deleteFrom('sign_in_attempts').where('created_at', '<', now - ATTEMPT_MS).execute()
      return Number(done.numDeletedRows)
    },

    /** Remembers a sign-in sent to a provider, by its state (digest only; the rest sealed with it). */
    async beginAttempt (state: string, attempt: SignInAttempt, now = Date.now()): Promise<void> {
      const { provider, ...secret } = attempt
      await db.insertInto('sign_in_attempts').values({ state_hash: hashToken(`state:${state}`), provider, ...sealAttempt(state, secret), created_at: now }).execute()
    },

    /** Takes (and forgets) the sign-in with this state: a state works once, within ATTEMPT_MS. */
    async takeAttempt (state: string, now = Date.now()) {
      const row = await db.deleteFrom('sign_in_attempts').where('state_hash', '=', hashToken(`state:${state}`))
        .returning(['provider', 'code_verifier', 'nonce', 'return_to', 'created_at']).executeTakeFirst()
      if (row === undefined || Number(row.created_at) < now - ATTEMPT_MS) return undefined
      const opened = openAttempt(state, { code_verifier: row.code_verifier, nonce: row.nonce, return_to: row.return_to })
      return opened === undefined ? undefined : { ...row, ...opened }
    }
  }
}

export type SessionsRepository = ReturnType<typeof createSessionsRepository>
