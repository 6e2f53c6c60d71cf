import { httpErrors } from '@fastify/sensible'
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import type { FastifyRequest } from 'fastify'
import fp from 'fastify-plugin'
import { isIP } from 'node:net'
import { afterCommit } from '../db/engine/transaction.js'
import { createWebhooksRepository, enqueueDeliveries, type Webhook } from '../db/webhooks.js'
import { refusal } from '../delivery/address-policy.js'
import { formEncode, webhookPayload } from '../delivery/payload.js'
import { DeliveryWorker, type DeliveryOptions } from '../delivery/worker.js'
import { Type, EmptyBody, errorResponses, RepoParams } from '../schemas/common.js'
import { CreateWebhookBody, DeliveriesQuery, Delivery, Webhook as WebhookSchema, WebhookParams } from '../schemas/webhooks.js'

export interface WebhooksPluginOptions extends Partial<DeliveryOptions> {
  /** run the delivery worker (default true) */
  worker?: boolean
}

export const DELIVERY_DEFAULTS: DeliveryOptions = {
  timeoutMs: 5000, maxAttempts: 8, allowPrivate: false, retryBaseMs: 1000, retryMaxMs: 3_600_000, concurrency: 256, retryConcurrency: 64
}

/**
 * Webhook configuration (repository admins), the in-transaction outbox writer for board and
 * estimate events, and the background worker that delivers them.
 */
const webhooks: FastifyPluginAsyncTypebox<WebhooksPluginOptions> = async (fastify, opts) => {
  const options: DeliveryOptions = { ...DELIVERY_DEFAULTS, ...Object.fromEntries(Object.entries(opts).filter(([, v]) => v !== undefined)) }
  const outbox = fastify.planningStore.webhooks
  const worker = new DeliveryWorker(outbox, options, fastify.log, (outcome, seconds) => fastify.planningMetrics?.webhookAttempt(outcome, seconds))
  const { requireAccess } = fastify.planningAuth

  // Deliveries are written in the change's own transaction; the worker is told once it commits.
  const unsubscribe = fastify.planningEvents.subscribe(async (trx, event) => {
    if (await enqueueDeliveries(trx, event.repo.id, event.type, formEncode(webhookPayload(event))) > 0) afterCommit(trx, () => worker.poke())
  }, async (trx, type, repoId) => await createWebhooksRepository(trx).hasWebhooks(repoId, type))

  if (opts.worker !== false) fastify.addHook('onReady', async () => worker.start())
  fastify.addHook('onClose', async () => {
    unsubscribe()
    await worker.stop()
  })

  fastify.addHook('onRequest', fastify.planningAuth.requireUser)
  const tags = ['webhooks']

  const checkUrl = (raw: string): string => {
    let url: URL
    try {
      url = new URL(raw)
    } catch {
      throw httpErrors.badRequest('body/url must be an absolute http or https URL')
    }
    if (url.protocol !== 'http:' && url.protocol !== 'https:') throw httpErrors.badRequest(`body/url must use http or https, not ${url.protocol.replace(':', '')}`)
    if (url.username !== '' || url.password !== '') throw httpErrors.badRequest('body/url must not carry credentials; use a secret instead')
    const host = url.hostname.replace(/^\[|\]$/g, '')
    const why = isIP(host) !== 0 ? refusal(host, options.allowPrivate) : null
    if (why !== null) throw httpErrors.badRequest(`body/url is not allowed: ${why}`)
    return url.toString()
  }

  /** The webhook, if the caller can read its repository; otherwise the same 404 as an unknown id. */
  const readableWebhook = async (request: FastifyRequest, id: string): Promise<Webhook> => {
    const hook = await outbox.byId(id)
    if (hook === undefined || !(await fastify.planningAuth.readable(request)).has(hook.repo_id)) throw httpErrors.notFound(`webhook ${id} not found`)
    return hook
  }

  fastify.post('/p1/repositories/:repo_id/webhooks', {
    schema: { tags, summary: 'Add a webhook (repository admin)', params: RepoParams, body: CreateWebhookBody, response: { 201: WebhookSchema, ...errorResponses } }
  }, async (request, reply) => {
    await requireAccess(request, request.params.repo_id, 'admin')
    const url = checkUrl(request.body.url)
    const { description, secret, events } = request.body
    return reply.status(201).send(await outbox.create(request.params.repo_id, url, description ?? null, secret ?? null, events))
  })

  fastify.get('/p1/repositories/:repo_id/webhooks', {
    schema: { tags, summary: 'Webhooks of a repository (repository admin)', params: RepoParams, response: { 200: Type.Array(WebhookSchema), ...errorResponses } }
  }, async (request) => {
    await requireAccess(request, request.params.repo_id, 'admin')
    return await outbox.list(request.params.repo_id)
  })

  fastify.delete('/p1/webhooks/:webhook_id', {
    schema: { tags, summary: 'Delete a webhook and its pending deliveries', params: WebhookParams, response: { 204: EmptyBody, ...errorResponses } }
  }, async (request, reply) => {
    const hook = await readableWebhook(request, request.params.webhook_id)
    await requireAccess(request, hook.repo_id, 'admin')
    await outbox.remove(hook.id)
    return reply.status(204).send(undefined)
  })

  fastify.get('/p1/webhooks/:webhook_id/deliveries', {
    schema: {
      tags,
      summary: 'Deliveries, newest first, a page at a time (`before` and `Link: rel="next"` page back)',
      params: WebhookParams,
      querystring: DeliveriesQuery,
      response: { 200: Type.Array(Delivery), ...errorResponses }
    }
  }, async (request, reply) => {
    const hook = await readableWebhook(request, request.params.webhook_id)
    await requireAccess(request, hook.repo_id, 'admin')
    const page = await outbox.deliveries(hook.id, request.query.limit, request.query.before)
    if (page.length === request.query.limit) {
      const next = `${request.url.split('?')[0]}?limit=${request.query.limit}&before=${encodeURIComponent(page.at(-1)!.id)}`
      reply.header('link', `<${next}>; rel="next"`)
    }
    return page
  })
}

export default fp(webhooks, { name: 'planning-webhooks', fastify: '5.x', encapsulate: true, dependencies: ['planning-auth', 'planning-database'] })
