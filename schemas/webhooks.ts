import { Type, ObjectId } from './common.js'

/** The four event types of the hosted API: what a webhook gets unless it names others. */
export const LEGACY_EVENT_TYPES = ['issue_transfer', 'issue_reprioritized', 'estimate_set', 'estimate_cleared'] as const
export const EXTENSION_EVENT_TYPES = [
  'epic_issue_added', 'epic_issue_removed', 'dependency_created', 'dependency_removed', 'release_report_changed',
  'issue_opened', 'issue_closed', 'issue_reopened', 'sprint_started', 'sprint_ended', 'sprint_issue_added', 'sprint_issue_removed',
  'issue_labeled', 'issue_unlabeled', 'issue_assigned', 'issue_unassigned'
] as const

export const Webhook = Type.Object({
  id: Type.String(),
  repo_id: Type.Integer(),
  url: Type.String(),
  description: Type.Union([Type.String(), Type.Null()]),
  created_at: Type.String(),
  events: Type.Array(Type.String(), { description: 'the event types it receives' })
})

export const CreateWebhookBody = Type.Object({
  url: Type.String({ minLength: 1, maxLength: 2000, description: 'http or https URL that receives the POSTs' }),
  description: Type.Optional(Type.String({ maxLength: 500 })),
  secret: Type.Optional(Type.String({ minLength: 8, maxLength: 200, description: 'signs each body (HMAC-SHA256); never returned' })),
  events: Type.Optional(Type.Array(Type.Union([...LEGACY_EVENT_TYPES, ...EXTENSION_EVENT_TYPES].map((type) => Type.Literal(type))), {
    minItems: 1, maxItems: 16, description: 'event types to receive (default: the four of the hosted API)'
  }))
})

export const WebhookParams = Type.Object({ webhook_id: ObjectId })

export const Delivery = Type.Object({
  id: Type.String({ description: 'the delivery id header, the same on every attempt' }),
  event_type: Type.String(),
  status: Type.Union([Type.Literal('pending'), Type.Literal('delivered'), Type.Literal('failed')]),
  attempts: Type.Integer(),
  last_status_code: Type.Union([Type.Integer(), Type.Null()]),
  last_error: Type.Union([Type.String(), Type.Null()]),
  next_attempt_at: Type.Union([Type.String(), Type.Null()]),
  created_at: Type.String(),
  delivered_at: Type.Union([Type.String(), Type.Null()])
})

export const DeliveriesQuery = Type.Object({
  limit: Type.Integer({ minimum: 1, maximum: 100, default: 100, description: 'deliveries per page' }),
  before: Type.Optional(Type.String({ minLength: 1, maxLength: 100, description: 'a delivery id: the page of deliveries older than it' }))
})
