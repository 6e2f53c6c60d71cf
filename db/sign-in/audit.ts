import type { Static } from '../../schemas/common.js'
import type { AuditEntry } from '../../schemas/audit.js'
import { lockFor } from '../engine/engine.js'
import { Invalid } from '../errors.js'
import { nowIso } from '../ids.js'
import { atomic, type Executor } from '../engine/transaction.js'

export type AuditEntryRow = Static<typeof AuditEntry>

/** What one audit line says; `detail` must never hold a secret (tokens, session ids, codes). */
export interface AuditRecord {
  /** `admin`, `user:<login>`, `system`, `host:<connection id>`, or `anonymous` for a refused sign-in */
  actor: string
  /** dotted name: `token.created`, `session.ended`, `sign_in.refused`, `admin.post` … */
  action: string
  target?: string | null
  /** the client's address (request.ip) */
  address?: string | null
  detail?: Record<string, unknown>
}

const MAX_DETAIL = 2000
const MAX_REASONS = 10

/** The audit log: appended in the same transaction as what it records, listed newest first. */
export function createAuditRepository (db: Executor) {
  return {
    async record (entry: AuditRecord): Promise<void> {
      let detail = entry.detail === undefined ? null : JSON.stringify(entry.detail)
      if (detail !== null && detail.length > MAX_DETAIL) detail = JSON.stringify({ truncated: detail.slice(0, MAX_DETAIL) })
      await db.insertInto('audit_log').values({
        at: nowIso(),
        actor: entry.actor,
        action: entry.action,
        target: entry.target ?? null,
        address: entry.address ?? null,
        detail
      }).execute()
    },

    /**
     * A refusal counted into one entry per actor, action, address and target a window (an hour):
     * the first refusal makes it (`at` is when), later ones raise `detail.count`, set
     * `detail.last_at` and count `detail.reasons` (at most MAX_REASONS distinct ones). Anonymous
     * requests repeated all day then cost 24 rows a day, not one each.
     */
    async count (entry: AuditRecord & { reason: string }, windowMs = 3_600_000, now = Date.now()): Promise<void> {
      const address = entry.address ?? null
      const target = entry.target ?? null
      await atomic(db, async (trx) => {
        // Two refusals at once from one address: one finds the other's row, never two rows.
        await lockFor(trx, `audit-count:${entry.action}:${address ?? ''}`)
        let query = trx.selectFrom('audit_log').select(['id', 'detail'])
          .where('actor', '=', entry.actor).where('action', '=', entry.action)
          .where('at', '>=', new Date(Math.floor(now / windowMs) * windowMs).toISOString())
          .orderBy('id', 'desc').limit(1)
        query = address === null ? query.where('address', 'is', null) : query.where('address', '=', address)
        query = target === null ? query.where('target', 'is', null) : query.where('target', '=', target)
        const found = await query.executeTakeFirst()
        const at = new Date(now).toISOString()
        if (found === undefined) {
          const detail = { ...entry.detail, reason: entry.reason, count: 1, last_at: at, reasons: { [entry.reason]: 1 } }
          await createAuditRepository(trx).record({ ...entry, detail })
          return
        }
        let detail: Record<string, unknown> = {}
        try { detail = JSON.parse(found.detail ?? '{}') as Record<string, unknown> } catch {}
        const reasons = typeof detail.reasons === 'object' && detail.reasons !== null ? detail.reasons as Record<string, number> : {}
        if (entry.reason in reasons || Object.keys(reasons).length < MAX_REASONS) reasons[entry.reason] = (reasons[entry.reason] ?? 0) + 1
        const count = (typeof detail.count === 'number' ? detail.count : 1) + 1
        const next = { ...detail, ...entry.detail, reason: entry.reason, count, last_at: at, reasons }
        await trx.updateTable('audit_log').set({ detail: JSON.stringify(next) }).where('id', '=', found.id).execute()
      })
    },

    /**
     * A page of entries, newest first; `cursor` is the `next_cursor` of the page before. `actor` and
     * `action` keep only the entries with exactly that one (no index: AUDIT_DAYS bounds the scan).
     */
    async list (
      cursor: string | undefined, limit: number, filter: { actor?: string, action?: string } = {}
    ): Promise<{ entries: AuditEntryRow[], next_cursor: string | null }> {
      let before: number | undefined
      if (cursor !== undefined && cursor !== '') {
        before = Number(cursor)
        if (!Number.isSafeInteger(before) || before < 1) throw new Invalid('cursor is not one this server gave (use next_cursor of the page before)')
      }
      let query = db.selectFrom('audit_log').select(['id', 'at', 'actor', 'action', 'target', 'address', 'detail']).orderBy('id', 'desc').limit(limit + 1)
      if (before !== undefined) query = query.where('id', '<', before)
      if (filter.actor !== undefined) query = query.where('actor', '=', filter.actor)
      if (filter.action !== undefined) query = query.where('action', '=', filter.action)
      const rows = await query.execute()
      const page = rows.slice(0, limit)
      return {
        entries: page.map((r) => ({ ...r, id: Number(r.id), detail: r.detail === null ? null : JSON.parse(r.detail) as Record<string, unknown> })),
        next_cursor: rows.length > limit ? String(page[page.length - 1].id) : null
      }
    },

    /** Drops entries older than `days` days. */
    async prune (days: number, now = Date.now()): Promise<number> {
      const done = await db.deleteFrom('audit_log').where('at', '<', new Date(now - days * 86_400_000).toISOString()).executeTakeFirst()
      return Number(done.numDeletedRows)
    }
  }
}

export type AuditRepository = ReturnType<typeof createAuditRepository>
