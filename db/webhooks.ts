import { httpErrors } from '@fastify/sensible'
import { randomUUID } from 'node:crypto'
import type { Db } from './connection.js'
import { newObjectId, nowIso } from './ids.js'

export interface Webhook { id: string, repo_id: number, url: string, description: string | null, created_at: string }
export interface WebhookTarget { id: string, url: string, secret: string | null }

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

export interface DeliveryLogEntry {
  id: string
  event_type: string
  status: 'pending' | 'delivered' | 'failed'
  attempts: number
  last_status_code: number | null
  last_error: string | null
  next_attempt_at: string | null
  created_at: string
  delivered_at: string | null
}

/** Webhook configuration and the outbox of deliveries the worker sends. */
export function createWebhooksRepository (db: Db) {
  const insert = db.prepare<[string, number, string, string | null, string | null, string]>(
    'INSERT INTO webhooks (id, repo_id, url, description, secret, created_at) VALUES (?, ?, ?, ?, ?, ?)')
  const byId = db.prepare<[string], Webhook>('SELECT id, repo_id, url, description, created_at FROM webhooks WHERE id = ?')
  const forRepo = db.prepare<[number], Webhook>(
    'SELECT id, repo_id, url, description, created_at FROM webhooks WHERE repo_id = ? ORDER BY created_at, rowid')
  const targets = db.prepare<[number], WebhookTarget>('SELECT id, url, secret FROM webhooks WHERE repo_id = ?')
  const hasAny = db.prepare<[number], { one: number }>('SELECT 1 AS one FROM webhooks WHERE repo_id = ? LIMIT 1')
  const remove = db.prepare<[string]>('DELETE FROM webhooks WHERE id = ?')
  const enqueue = db.prepare<[string, string, string, string, number, string]>(`
    INSERT INTO webhook_deliveries (id, webhook_id, event_type, body, next_attempt_at, created_at) VALUES (?, ?, ?, ?, ?, ?)`)
  // The oldest pending delivery of each webhook: deliveries to one webhook go out in order.
  const heads = db.prepare<[], PendingDelivery>(`
    SELECT d.seq, d.next_attempt_at, d.id, d.webhook_id, d.event_type, d.body, d.attempts, w.url, w.secret
    FROM (SELECT webhook_id, min(seq) AS seq FROM webhook_deliveries WHERE status = 'pending' GROUP BY webhook_id) h
    JOIN webhook_deliveries d ON d.seq = h.seq
    JOIN webhooks w ON w.id = d.webhook_id
    ORDER BY d.next_attempt_at, d.seq`)
  const delivered = db.prepare<[number, number, string, number]>(`
    UPDATE webhook_deliveries SET status = 'delivered', attempts = ?, last_status_code = ?, last_error = NULL, delivered_at = ?
    WHERE seq = ?`)
  const retry = db.prepare<[number, number | null, string | null, number, number]>(`
    UPDATE webhook_deliveries SET attempts = ?, last_status_code = ?, last_error = ?, next_attempt_at = ? WHERE seq = ?`)
  const failed = db.prepare<[number, number | null, string | null, number]>(`
    UPDATE webhook_deliveries SET status = 'failed', attempts = ?, last_status_code = ?, last_error = ? WHERE seq = ?`)
  const log = db.prepare<[string, number, number], Omit<DeliveryLogEntry, 'next_attempt_at'> & { next_attempt_at: number }>(`
    SELECT id, event_type, status, attempts, last_status_code, last_error, next_attempt_at, created_at, delivered_at
    FROM webhook_deliveries WHERE webhook_id = ? AND seq < ? ORDER BY seq DESC LIMIT ?`)
  const seqOf = db.prepare<[string, string], { seq: number }>('SELECT seq FROM webhook_deliveries WHERE id = ? AND webhook_id = ?')

  return {
    create (repoId: number, url: string, description: string | null, secret: string | null): Webhook {
      const id = newObjectId()
      insert.run(id, repoId, url, description, secret, nowIso())
      return byId.get(id)!
    },

    byId (id: string): Webhook | undefined {
      return byId.get(id)
    },

    requireWebhook (id: string): Webhook {
      const hook = byId.get(id)
      if (hook === undefined) throw httpErrors.notFound(`webhook ${id} not found`)
      return hook
    },

    list (repoId: number): Webhook[] {
      return forRepo.all(repoId)
    },

    remove (id: string): void {
      remove.run(id)
    },

    hasWebhooks (repoId: number): boolean {
      return hasAny.get(repoId) !== undefined
    },

    /** Writes one delivery per webhook of the repository; call inside the change's transaction. */
    enqueue (repoId: number, eventType: string, body: string): number {
      const now = Date.now()
      const created = nowIso()
      const hooks = targets.all(repoId)
      for (const hook of hooks) enqueue.run(randomUUID(), hook.id, eventType, body, now, created)
      return hooks.length
    },

    /** The oldest pending delivery of every webhook, soonest due first. */
    heads (): PendingDelivery[] {
      return heads.all()
    },

    markDelivered (seq: number, attempts: number, statusCode: number): void {
      delivered.run(attempts, statusCode, nowIso(), seq)
    },

    markRetry (seq: number, attempts: number, statusCode: number | null, error: string | null, nextAttemptAt: number): void {
      retry.run(attempts, statusCode, error, nextAttemptAt, seq)
    },

    markFailed (seq: number, attempts: number, statusCode: number | null, error: string | null): void {
      failed.run(attempts, statusCode, error, seq)
    },

    /** Newest first; `before` (a delivery id of this webhook) pages back to older ones. */
    deliveries (webhookId: string, limit = 100, before?: string): DeliveryLogEntry[] {
      let below = Number.MAX_SAFE_INTEGER
      if (before !== undefined) {
        const row = seqOf.get(before, webhookId)
        if (row === undefined) throw httpErrors.badRequest(`querystring/before: delivery ${before} is not a delivery of webhook ${webhookId}`)
        below = row.seq
      }
      return log.all(webhookId, below, limit).map((row) => ({
        ...row,
        next_attempt_at: row.status === 'pending' ? new Date(row.next_attempt_at).toISOString() : null
      }))
    }
  }
}

export type WebhooksRepository = ReturnType<typeof createWebhooksRepository>
