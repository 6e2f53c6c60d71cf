import { isUniqueViolation } from '../engine/engine.js'
import { Conflict } from '../errors.js'
import { nowIso } from '../ids.js'
import type { Executor } from '../engine/transaction.js'
import type { User } from '../users.js'

/** People an OpenID provider vouches for (`sub` at `iss`), each linked to one local user. */
export function createOidcIdentitiesRepository (db: Executor) {
  return {
    async userOf (issuer: string, subject: string): Promise<User | undefined> {
      const row = await db.selectFrom('oidc_identities as i').innerJoin('users as u', 'u.id', 'i.user_id')
        .select(['u.id', 'u.login']).where('i.issuer', '=', issuer).where('i.subject', '=', subject).executeTakeFirst()
      return row === undefined ? undefined : { id: Number(row.id), login: row.login }
    },

    /** Whether the user has an identity at this issuer already (another subject never links to them by email). */
    async hasIssuer (userId: number, issuer: string): Promise<boolean> {
      return await db.selectFrom('oidc_identities').select('subject').where('user_id', '=', userId).where('issuer', '=', issuer).executeTakeFirst() !== undefined
    },

    /** Links the identity to the user; one linked already (a concurrent first sign-in) is a conflict. */
    async link (issuer: string, subject: string, userId: number, email: string | null): Promise<void> {
      try {
        await db.insertInto('oidc_identities').values({ issuer, subject, user_id: userId, email, created_at: nowIso() }).execute()
      } catch (err) {
        if (isUniqueViolation(err)) throw new Conflict('this identity was linked meanwhile; sign in again')
        throw err
      }
    },

    async ofUser (userId: number): Promise<Array<{ issuer: string, subject: string, email: string | null, created_at: string }>> {
      return await db.selectFrom('oidc_identities').select(['issuer', 'subject', 'email', 'created_at']).where('user_id', '=', userId).orderBy('created_at').execute()
    }
  }
}
