import type { PlanningStore } from '../db/store.js'
import type { User } from '../db/users.js'
import { verifyPassword } from './passwords.js'

/** 10 failures within 10 minutes lock a login for 10 minutes (docs/sign-in.md, "Passwords"). */
export const LOCK_OUT = { failures: 10, windowMs: 10 * 60_000, lockMs: 10 * 60_000 }

/** The same for a wrong password and an unknown login: the answer never tells which. */
export const WRONG_PASSWORD = 'the login or the password is not right'

export type PasswordCheck =
  | { kind: 'ok', user: User }
  | { kind: 'wrong' }
  | { kind: 'locked', retryAfterSeconds: number }

/**
 * Checks a login's password against the lock-out: a locked login is refused without looking at the
 * password; a wrong one counts a failure. Each wrong password is one audit entry; the refusals of a
 * locked login are counted into one `sign_in.locked_out` entry per address and hour, so hammering a
 * locked login adds no row a request.
 */
export async function checkPassword (store: PlanningStore, login: string, password: string, address: string, now = Date.now()): Promise<PasswordCheck> {
  const key = login.toLowerCase()
  const locked = await store.accounts.lockedUntil(key, now)
  if (locked > 0) {
    await store.audit.count({
      actor: 'anonymous', action: 'sign_in.locked_out', target: `login:${key}`, address, detail: { provider: 'password' }, reason: 'locked out after too many failures'
    }, 3_600_000, now)
    return { kind: 'locked', retryAfterSeconds: Math.max(1, Math.ceil((locked - now) / 1000)) }
  }
  const found = await store.accounts.passwordOf(login)
  if (found !== undefined && found.hash !== null && await verifyPassword(password, found.hash)) return { kind: 'ok', user: found.user }
  if (found === undefined || found.hash === null) await verifyPassword(password, undefined)
  await store.transaction(async (s) => {
    const until = await s.accounts.recordFailure(key, now, LOCK_OUT.failures, LOCK_OUT.windowMs, LOCK_OUT.lockMs)
    await s.audit.record({
      actor: 'anonymous',
      action: 'sign_in.refused',
      target: `login:${key}`,
      address,
      detail: { provider: 'password', reason: until > 0 ? `wrong login or password; locked for ${LOCK_OUT.lockMs / 60_000} minutes` : 'wrong login or password' }
    })
  })
  return { kind: 'wrong' }
}
