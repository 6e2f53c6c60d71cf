import { httpErrors } from '@fastify/sensible'
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import fp from 'fastify-plugin'
import { createHostWrites } from '../db/issue-host/host-writes.js'
import { afterCommit } from '../db/engine/transaction.js'
import { setPipelineLabel } from '../db/workspaces.js'
import { Type, EmptyBody, ErrorBody, errorResponses, ObjectId } from '../schemas/common.js'
import { HostWriter, type HostWriterOptions } from '../services/host-writer.js'
import { createHostIssues } from '../services/host-issues.js'
import { issueUrl } from '../db/repositories.js'
import { BulkIssue } from '../schemas/issues.js'
import { IssueParams, RepoParams } from '../schemas/common.js'
import { parsePosition } from './boards.js'

declare module 'fastify' {
  interface FastifyInstance {
    /** writes pipeline labels to issue hosts from the outbox (two-way sync) */
    planningHostWriter: HostWriter
  }
}

export interface TwoWaySyncOptions extends HostWriterOptions {
  /** write labels in the background (default true; off: they wait in the outbox) */
  worker?: boolean
}

const PipelineParams = Type.Object({ workspace_id: ObjectId, pipeline_id: ObjectId })
const LabelNames = Type.Array(Type.String({ minLength: 1, maxLength: 50 }), { maxItems: 50, uniqueItems: true })
const Logins = Type.Array(Type.String({ minLength: 1, maxLength: 100, pattern: '^[A-Za-z0-9][A-Za-z0-9_.-]*$' }), { maxItems: 10, uniqueItems: true })
const NewIssueBody = Type.Object({
  title: Type.String({ minLength: 1, maxLength: 256 }),
  body: Type.Optional(Type.String({ maxLength: 65_536 })),
  labels: Type.Optional(LabelNames),
  assignees: Type.Optional(Logins),
  pipeline_id: Type.Optional(Type.String({ minLength: 1, maxLength: 100 })),
  position: Type.Optional(Type.Union([Type.String({ maxLength: 20 }), Type.Integer({ minimum: 0 })])),
  estimate: Type.Optional(Type.Number({ minimum: 0, maximum: 1_000_000 }))
}, { additionalProperties: false })
const EditIssueBody = Type.Object({
  title: Type.Optional(Type.String({ minLength: 1, maxLength: 256 })),
  body: Type.Optional(Type.String({ maxLength: 65_536, description: 'the description (Markdown); empty: none' })),
  labels: Type.Optional(LabelNames),
  assignees: Type.Optional(Logins)
}, { additionalProperties: false, minProperties: 1 })
const hostErrors = { ...errorResponses, 409: ErrorBody, 502: ErrorBody, 504: ErrorBody }
export const PipelineLabelBody = Type.Object({
  host_label: Type.Union([Type.String({ minLength: 1, maxLength: 50, pattern: '^[^\\u0000-\\u001f,]+$' }), Type.Null()], {
    description: 'the issue host\'s label an issue gets when it enters this pipeline; null clears it'
  })
}, { additionalProperties: false })

/**
 * Two-way sync (docs/connections.md, "Two-way sync"): pipelines name host labels, and an issue
 * entering one has that label written to its issue host through a durable outbox.
 */
const twoWaySync: FastifyPluginAsyncTypebox<TwoWaySyncOptions> = async (fastify, options) => {
  const store = fastify.planningStore
  const writer = new HostWriter(store, fastify.log, { ...options, fetch: options.fetch ?? fastify.planningHosts.fetch })
  fastify.decorate('planningHostWriter', writer)

  // An issue entering a pipeline (a move, a new or reopened issue landing) wants its labels written.
  const wants = new Set(['issue_transfer', 'issue_opened', 'issue_reopened'])
  const unsubscribe = store.events.subscribe(async (trx, event) => {
    if (!('issue' in event)) return
    await createHostWrites(trx).enqueue(event.issue.id, writer.coalesceMs)
    afterCommit(trx, () => writer.poke())
    // Asked per event (in place of an enqueue that would find nothing), and once per repository by a bulk write.
  }, async (trx, type, repoId) => wants.has(type) && await createHostWrites(trx).writable(repoId))
  if (options.worker !== false) fastify.addHook('onReady', async () => writer.start())
  fastify.addHook('onClose', async () => {
    unsubscribe()
    await writer.stop()
  })

  fastify.addHook('onRequest', fastify.planningAuth.requireUser)
  fastify.patch('/p2/workspaces/:workspace_id/pipelines/:pipeline_id', {
    schema: {
      tags: ['boards', 'extensions'],
      summary: 'Name the issue-host label a pipeline writes (admin on every repository of the workspace; extension)',
      params: PipelineParams,
      body: PipelineLabelBody,
      response: { 204: EmptyBody, ...errorResponses, 409: ErrorBody }
    }
  }, async (request, reply) => {
    const { workspace_id: workspaceId, pipeline_id: pipelineId } = request.params
    const workspace = await store.workspaces.byId(workspaceId)
    const readable = await fastify.planningAuth.readable(request)
    if (workspace === undefined || !workspace.repositories.some((id) => readable.has(id))) throw httpErrors.notFound(`workspace ${workspaceId} not found`)
    for (const repoId of workspace.repositories) {
      if (!readable.has(repoId)) throw httpErrors.forbidden('admin permission on every repository of the workspace is required')
      await fastify.planningAuth.requireAccess(request, repoId, 'admin')
    }
    await setPipelineLabel(store.db, workspaceId, pipelineId, request.body.host_label, { actor: `user:${request.planningUser!.login}`, address: request.ip })
    return await reply.status(204).send(undefined)
  })

  // Acting on the host: it answers first; nothing changes here when it refuses or hangs.
  const hostIssues = createHostIssues(store, { fetch: options.fetch ?? fastify.planningHosts.fetch, timeoutMs: options.timeoutMs })
  const answer = async (repoId: number, number: number) => {
    const repository = await store.repositories.requireRepository(repoId)
    const data = (await store.issues.dataOf(repoId, [number])).get(number)!
    return { issue_number: number, html_url: issueUrl(repository, number), ...data }
  }
  const tags = ['issues', 'extensions']

  fastify.post('/p1/repositories/:repo_id/issues', {
    schema: { tags, summary: 'Open an issue on the issue host, then place it here (extension)', params: RepoParams, body: NewIssueBody, response: { 201: BulkIssue, ...hostErrors } }
  }, async (request, reply) => {
    const repo = await fastify.planningAuth.requireAccess(request, request.params.repo_id, 'write')
    const { position, ...rest } = request.body
    const number = await hostIssues.create(request.planningUser!, repo, { ...rest, ...(position === undefined ? {} : { position: parsePosition(position) }) })
    return await reply.status(201).send(await answer(repo.id, number))
  })

  for (const [verb, state] of [['close', 'closed'], ['reopen', 'open']] as const) {
    fastify.post(`/p1/repositories/:repo_id/issues/:issue_number/${verb}`, {
      schema: { tags, summary: `${verb === 'close' ? 'Close' : 'Reopen'} the issue on the issue host, then here (extension)`, params: IssueParams, response: { 200: BulkIssue, ...hostErrors } }
    }, async (request) => {
      const repo = await fastify.planningAuth.requireAccess(request, request.params.repo_id, 'write')
      await hostIssues.setState(repo, request.params.issue_number, state)
      return await answer(repo.id, request.params.issue_number)
    })
  }

  fastify.patch('/p1/repositories/:repo_id/issues/:issue_number', {
    schema: { tags, summary: 'Edit the issue\'s title, description, labels or assignees on the issue host, then here (extension)', params: IssueParams, body: EditIssueBody, response: { 200: BulkIssue, ...hostErrors } }
  }, async (request) => {
    const repo = await fastify.planningAuth.requireAccess(request, request.params.repo_id, 'write')
    await hostIssues.edit(repo, request.params.issue_number, request.body)
    return await answer(repo.id, request.params.issue_number)
  })
}

export default fp(twoWaySync, { name: 'planning-two-way-sync', fastify: '5.x', encapsulate: true, dependencies: ['planning-auth', 'planning-database'] })
