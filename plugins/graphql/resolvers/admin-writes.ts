import { Forbidden } from '../../../db/errors.js'
import type { StoreScope } from '../../../db/store.js'
import { mayWrite, type Ctx } from './write-access.js'

/** The admin API's rule for a write it also offers: server administrators only (FORBIDDEN otherwise). */
export async function requireAdministrator (ctx: Ctx, what: string): Promise<void> {
  mayWrite(ctx)
  if (!await ctx.store.accounts.isAdministrator(ctx.user.id)) throw new Forbidden(`${what} are changed by administrators`)
}

/** The audit entry of a write, as the admin API records its own (call it inside the write's transaction). */
export async function recordAudit (s: StoreScope, ctx: Ctx, action: string, target: string, detail: Record<string, unknown>): Promise<void> {
  await s.audit.record({ actor: `user:${ctx.user.login}`, action, target, address: ctx.request.ip, detail: { request: `GraphQL ${action}`, ...detail } })
}
