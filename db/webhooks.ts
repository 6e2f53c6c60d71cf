import { randomUUID } from 'node:crypto'
import { sql } from 'kysely'
import type { Static } from '../schemas/common.js'
import type { Delivery, Webhook as WebhookSchema } from '../schemas/webhooks.js'
import { lockFor } from './engine/engine.js'
import { Invalid } from './errors.js'
import { newObjectId, nowIso } from './ids.js'
import { LEGACY_EVENT_TYPES } from './domain-events.js'
import { prepared } from './engine/prepared.js'
import { SecretBox } from './engine/secret-box.js'
import { writeTransaction, type Executor } from './engine/transaction.js'

export type Webhook = Static<typeof WebhookSchema>
export type DeliveryLogEntry = Static<typeof Delivery>

export interface PendingDelivery {
  seq: number
  /** epoch ms */
  next_attempt_at: number
  id: string
  webhook_id: string
  event_type: string
  body: string
  attempts: number
  url: string
  secret: string | null
}

const WEBHOOK_COLUMNS = ['id', 'repo_id', 'url', 'description', 'created_at', 'events'] as const
const toWebhook = (row: Omit<Webhook, 'events'> & { events: string | null }): Webhook =>
  ({ ...row, repo_id: Number(row.repo_id), events: row.events === null ? [...LEGACY_EVENT_TYPES] : JSON.parse(row.events) as string[] })

/** The LIKE pattern a webhook's stored event list matches when it names the type (not one of the legacy four). */
export const namedEventPattern = (type: string): string => `%"${type}"%`

/** What a statement of a write compares a webhook's stored events with to tell whether it wants the type (see `hooksOf`). */
export const wantedBy = (type: string): { pattern: string, legacy: number } => {
  const { pattern, legacy } = filter(0, type)
  return { pattern, legacy }
}

/** Webhooks that want an event type: those that named it, or named none when it is one of the hosted API's four. */
const filter = (repoId: number, type: string) =>
  ({ repoId, pattern: namedEventPattern(type), legacy: (LEGACY_EVENT_TYPES as readonly string[]).includes(type) ? 1 : 0 })
const hooksOf = prepared<{ repoId: number, pattern: string, legacy: number }>()((db, p) =>
  db.selectFrom('webhooks').select('id').where('repo_id', '=', p.repoId)
    .where(sql<boolean>`(events LIKE ${p.pattern} OR (events IS NULL AND ${p.legacy} = 1))`))

/** What a write already learned in its own statements about its repositories' webhooks, by type and repository. */
const learned = new WeakMap<Executor, Map<string, boolean>>()

/**
 * Notes, for the rest of this transaction, whether the repository has a webhook wanting the event
 * type: a write that read it in one of its own statements (db/dependencies.ts) saves the query.
 */
export function noteWebhooks (trx: Executor, repoId: number, type: string, wanted: boolean): void {
  const known = learned.get(trx) ?? new Map<string, boolean>()
  known.set(`${type}:${repoId}`, wanted)
  learned.set(trx, known)
}

/** Writes one delivery per webhook of the repository; call inside the change's transaction. */
export async function enqueueDeliveries (trx: Executor, repoId: number, eventType: string, body: string): Promise<number> {
  const hooks = (await hooksOf(trx, filter(repoId, eventType))).rows
  const now = Date.now()
  const created = nowIso()
  for (const hook of hooks) {
    await trx.insertInto('webhook_deliveries').values({
      id: randomUUID(),
      webhook_id: hook.id,
      event_type: eventType,
      body,
      next_attempt_at: now,
      created_at: created,
      last_status_code: null,
      last_error: null,
      delivered_at: null,
      lease_until: null
    }).execute()
  }
  return hooks.length
}

/** What a webhook's sealed secret is bound to (its row). */
export const webhookSecretContext = (id: string): string => `webhooks.secret:${id}`

/**
 * Webhook configuration and the outbox of deliveries the worker sends. A webhook's secret is
 * sealed with SECRET_KEY when the server has one (stored as given otherwise; docs/operations.md,
 * "Secrets at rest") and opened only for signing.
 */
export function createWebhooksRepository (db: Executor, secrets: SecretBox = new SecretBox()) {
  const byId = async (id: string): Promise<Webhook | undefined> => {
    const row = await db.selectFrom('webhooks').select(WEBHOOK_COLUMNS).where('id', '=', id).executeTakeFirst()
    return row === undefined ? undefined : toWebhook(row)
  }

  return {
    byId,

    async create (repoId: number, url: string, description: string | null, secret: string | null, events?: string[]): Promise<Webhook> {
      const id = newObjectId()
      await writeTransaction(db, async (trx) => {
        await lockFor(trx, 'webhooks.seq')
        await trx.insertInto('webhooks').values({
          id,
          seq: sql<number>`(SELECT coalesce(max(seq), 0) + 1 FROM webhooks)`,
          repo_id: repoId,
          url,
          description,
          secret: secret !== null && secrets.canSeal ? secrets.seal(secret, webhookSecretContext(id)) : secret,
          created_at: nowIso(),
          events: events === undefined ? null : JSON.stringify([...new Set(events)])
        }).execute()
      })
      return (await byId(id))!
    },

    async list (repoId: number): Promise<Webhook[]> {
      const rows = await db.selectFrom('webhooks').select(WEBHOOK_COLUMNS).where('repo_id', '=', repoId).orderBy('created_at').orderBy('seq').execute()
      return rows.map(toWebhook)
    },

    async remove (id: string): Promise<void> {
      await writeTransaction(db, async (trx) => { await trx.deleteFrom('webhooks').where('id', '=', id).execute() })
    },

    /** Whether any webhook of the repository wants events of this type. */
    async hasWebhooks (repoId: number, type: string): Promise<boolean> {
      return learned.get(db)?.get(`${type}:${repoId}`) ?? (await hooksOf(db, filter(repoId, type))).rows.length > 0
    },

    /**
     * The oldest pending delivery of every webhook, soonest due first: one webhook's go out in
     * order. A head that another sender holds a lease on is left out (and so is the rest of its
     * webhook's queue, until that attempt is done).
     */
    async heads (now = Date.now()): Promise<PendingDelivery[]> {
      const { rows } = await sql<PendingDelivery>`
        SELECT d.seq, d.next_attempt_at, d.id, d.webhook_id, d.event_type, d.body, d.attempts, w.url, w.secret
        FROM (SELECT webhook_id, min(seq) AS seq FROM webhook_deliveries WHERE status = 'pending' GROUP BY webhook_id) h
        JOIN webhook_deliveries d ON d.seq = h.seq
        JOIN webhooks w ON w.id = d.webhook_id
        WHERE d.lease_until IS NULL OR d.lease_until < ${now}
        ORDER BY d.next_attempt_at, d.seq`.execute(db)
      return rows.map((row) => ({
        ...row,
        secret: row.secret === null ? null : secrets.open(row.secret, webhookSecretContext(row.webhook_id)),
        seq: Number(row.seq),
        next_attempt_at: Number(row.next_attempt_at),
        attempts: Number(row.attempts)
      }))
    },

    /**
     * Claims a pending delivery for one attempt until `until` (epoch ms), in one conditional
     * update: of several senders racing for it, exactly one gets it (true).
     */
    async claim (seq: number, until: number, now = Date.now()): Promise<boolean> {
      const result = await db.updateTable('webhook_deliveries').set({ lease_until: until })
        .where('seq', '=', seq).where('status', '=', 'pending')
        .where((eb) => eb.or([eb('lease_until', 'is', null), eb('lease_until', '<', now)]))
        .executeTakeFirst()
      return Number(result.numUpdatedRows) === 1
    },

    /** Gives a claimed delivery back untried (the sender is stopping). */
    async release (seq: number): Promise<void> {
      await db.updateTable('webhook_deliveries').set({ lease_until: null }).where('seq', '=', seq).execute()
    },

    async markDelivered (seq: number, attempts: number, statusCode: number): Promise<void> {
      await db.updateTable('webhook_deliveries')
        .set({ status: 'delivered', attempts, last_status_code: statusCode, last_error: null, delivered_at: nowIso(), lease_until: null })
        .where('seq', '=', seq).execute()
    },

    async markRetry (seq: number, attempts: number, statusCode: number | null, error: string | null, nextAttemptAt: number): Promise<void> {
      await db.updateTable('webhook_deliveries')
        .set({ attempts, last_status_code: statusCode, last_error: error, next_attempt_at: nextAttemptAt, lease_until: null })
        .where('seq', '=', seq).execute()
    },

    async markFailed (seq: number, attempts: number, statusCode: number | null, error: string | null): Promise<void> {
      await db.updateTable('webhook_deliveries')
        .set({ status: 'failed', attempts, last_status_code: statusCode, last_error: error, lease_until: null })
        .where('seq', '=', seq).execute()
    },

    /** Newest first; `before` (a delivery id of this webhook) pages back to older ones. */
    async deliveries (webhookId: string, limit = 100, before?: string): Promise<DeliveryLogEntry[]> {
      let query = db.selectFrom('webhook_deliveries')
        .select(['id', 'event_type', 'status', 'attempts', 'last_status_code', 'last_error', 'next_attempt_at', 'created_at', 'delivered_at'])
        .where('webhook_id', '=', webhookId)
      if (before !== undefined) {
        const row = await db.selectFrom('webhook_deliveries').select('seq').where('id', '=', before).where('webhook_id', '=', webhookId).executeTakeFirst()
        if (row === undefined) throw new Invalid(`querystring/before: delivery ${before} is not a delivery of webhook ${webhookId}`)
        query = query.where('seq', '<', row.seq)
      }
      const rows = await query.orderBy('seq', 'desc').limit(limit).execute()
      return rows.map((row) => ({
        ...row,
        attempts: Number(row.attempts),
        next_attempt_at: row.status === 'pending' ? new Date(Number(row.next_attempt_at)).toISOString() : null
      }))
    }
  }
}

export type WebhooksRepository = ReturnType<typeof createWebhooksRepository>
