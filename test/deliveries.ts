import { createHmac } from 'node:crypto'
import type { FastifyInstance } from 'fastify'

export const SECRET = 'a-webhook-secret-for-tests'
export const sign = (body: string, secret = SECRET) => `sha256=${createHmac('sha256', secret).update(body).digest('hex')}`
let deliveries = 0

/** Posts a signed delivery as GitHub does (or Gitea, with `kind: 'gitea'`). */
export async function deliver (app: FastifyInstance, connection: string, event: string, payload: object, extra: { id?: string, kind?: 'github' | 'gitea', secret?: string } = {}) {
  const body = JSON.stringify(payload)
  const id = extra.id ?? `delivery-${++deliveries}-${Math.random()}`
  const headers: Record<string, string> = extra.kind === 'gitea'
    ? { 'x-gitea-event': event, 'x-gitea-delivery': id, 'x-gitea-signature': sign(body, extra.secret).slice(7) }
    : { 'x-github-event': event, 'x-github-delivery': id, 'x-hub-signature-256': sign(body, extra.secret) }
  return await app.inject({ method: 'POST', url: `/integrations/${connection}/webhook`, headers: { 'content-type': 'application/json', ...headers }, payload: body })
}
