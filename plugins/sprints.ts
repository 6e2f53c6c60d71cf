import { httpErrors } from '@fastify/sensible'
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import type { FastifyInstance, FastifyRequest } from 'fastify'
import fp from 'fastify-plugin'
import { requireAdminOfAll, visibleSprint, visibleWorkspace } from '../db/workspace-access.js'
import { Type, errorResponses, ErrorBody } from '../schemas/common.js'
import {
  Sprint, SprintConfig, SprintEvent, SprintEventsQuery, SprintIssuesAdded, SprintIssuesBody, SprintIssuesRemoved, SprintParams, SprintReview, SprintsQuery,
  WorkspaceParams
} from '../schemas/sprints.js'
import { createReportsRepository, type SprintReview as Review } from '../db/reports.js'
import { sendReport, ReportQuery, toCsv } from './report-format.js'

export interface SprintsPluginOptions {
  /** the time sprints go by, in epoch ms (default Date.now; tests pass their own) */
  now?: () => number
  /** how often each instance looks for sprint boundaries to settle (default 30 s; 0: only when sprints are read or written) */
  tickMs?: number
}

/** Who may see a workspace and the level they hold over all of it (db/workspace-access.ts), for a request. */
export function workspaceAccess (fastify: FastifyInstance) {
  const { workspaces, users } = fastify.planningStore
  return {
    /** The workspace's repositories, or the same 404 as an unknown workspace when none is readable. */
    readable: async (request: FastifyRequest, workspaceId: string) =>
      await visibleWorkspace(workspaces, workspaceId, await fastify.planningAuth.readable(request)),
    /** 403 unless the caller is admin on every repository of the workspace. */
    requireAdminOfAll: async (request: FastifyRequest, repositories: number[]) => await requireAdminOfAll(users, request.planningUser!.id, repositories)
  }
}

/** The review's issue lists as one table: added, removed and carried-over issues. */
export function reviewCsv (review: Review): string {
  return toCsv(['change', 'repo_id', 'issue_number', 'at', 'points', 'carried', 'to_sprint_id'], [
    ...review.added.map((a) => ['added', a.repo_id, a.issue_number, a.at, a.points, a.carried, null]),
    ...review.removed.map((r) => ['removed', r.repo_id, r.issue_number, r.at, r.points, null, null]),
    ...review.carried_over.map((c) => ['carried_over', c.repo_id, c.issue_number, review.sprint.ends_at, c.points, true, c.to_sprint_id])
  ])
}

/**
 * Sprints (docs, "Sprints and reports"), an extension: a workspace's sprint configuration, the
 * sprints generated from it, their issues, review and events. Boundaries are settled when sprints
 * are read or written and by a periodic tick, whichever instance comes first.
 */
const sprints: FastifyPluginAsyncTypebox<SprintsPluginOptions> = async (fastify, opts) => {
  const repo = fastify.planningStore.sprints
  const reports = createReportsRepository(fastify.planningStore.db)
  const now = opts.now ?? Date.now
  const access = workspaceAccess(fastify)
  const tags = ['sprints', 'extensions']
  const errors = { ...errorResponses, 409: ErrorBody }

  const tickMs = opts.tickMs ?? 30_000
  if (tickMs > 0) {
    let timer: NodeJS.Timeout | undefined
    let running: Promise<void> | undefined
    const tick = async (): Promise<void> => {
      try {
        for (const workspaceId of await repo.due(now())) await repo.settle(workspaceId, now())
      } catch (err) {
        fastify.log.warn({ err }, 'settling sprint boundaries failed; the next tick or read tries again')
      }
    }
    fastify.addHook('onReady', async () => {
      timer = setInterval(() => { running ??= tick().finally(() => { running = undefined }) }, tickMs)
      timer.unref()
    })
    fastify.addHook('onClose', async () => {
      clearInterval(timer)
      await running
    })
  }

  fastify.addHook('onRequest', fastify.planningAuth.requireUser)

  const visible = async (request: FastifyRequest, id: string) =>
    await visibleSprint(fastify.planningStore, id, await fastify.planningAuth.readable(request), now())

  /** Write access to each readable repository named (unreadable ones are refused as unknown issues by the data layer). */
  const requireWriteOnAll = async (request: FastifyRequest, repoIds: number[], canRead: (repoId: number) => boolean): Promise<void> => {
    for (const repoId of new Set(repoIds)) if (canRead(repoId)) await fastify.planningAuth.requireAccess(request, repoId, 'write')
  }

  fastify.put('/p2/workspaces/:workspace_id/sprint_config', {
    schema: { tags, summary: 'Set the sprint configuration (admin on every repository of the workspace); future sprints are re-planned', params: WorkspaceParams, body: SprintConfig, response: { 200: SprintConfig, ...errors } }
  }, async (request) => {
    const workspace = await access.readable(request, request.params.workspace_id)
    await access.requireAdminOfAll(request, workspace.repositories)
    return await repo.setConfig(request.params.workspace_id, request.body, now())
  })

  fastify.get('/p2/workspaces/:workspace_id/sprint_config', {
    schema: { tags, summary: 'The sprint configuration', params: WorkspaceParams, response: { 200: SprintConfig, ...errors } }
  }, async (request) => {
    await access.readable(request, request.params.workspace_id)
    const config = await repo.configOf(request.params.workspace_id)
    if (config === undefined) throw httpErrors.notFound(`workspace ${request.params.workspace_id} has no sprint configuration; PUT one first`)
    return config
  })

  fastify.get('/p2/workspaces/:workspace_id/sprints', {
    schema: { tags, summary: 'Sprints of the workspace, oldest first (state=active|future|closed)', params: WorkspaceParams, querystring: SprintsQuery, response: { 200: Type.Array(Sprint), ...errors } }
  }, async (request) => {
    const workspace = await access.readable(request, request.params.workspace_id)
    await repo.settle(request.params.workspace_id, now())
    return await repo.list(request.params.workspace_id, workspace.canRead, now(), request.query.state)
  })

  fastify.get('/p2/sprints/:sprint_id', {
    schema: { tags, summary: 'A sprint', params: SprintParams, response: { 200: Sprint, ...errors } }
  }, async (request) => {
    const { workspace } = await visible(request, request.params.sprint_id)
    return await repo.get(request.params.sprint_id, workspace.canRead, now())
  })

  fastify.post('/p2/sprints/:sprint_id/issues', {
    schema: { tags, summary: 'Add issues (at most 100, write access to each); each leaves the open sprint it was in', params: SprintParams, body: SprintIssuesBody, response: { 200: SprintIssuesAdded, ...errors } }
  }, async (request) => {
    const { workspace } = await visible(request, request.params.sprint_id)
    await requireWriteOnAll(request, request.body.issues.map((i) => i.repo_id), workspace.canRead)
    return await repo.addIssues(request.params.sprint_id, request.body.issues, workspace.canRead, request.planningUser!, now())
  })

  fastify.delete('/p2/sprints/:sprint_id/issues', {
    schema: { tags, summary: 'Remove issues (at most 100, write access to each)', params: SprintParams, body: SprintIssuesBody, response: { 200: SprintIssuesRemoved, ...errors } }
  }, async (request) => {
    const { workspace } = await visible(request, request.params.sprint_id)
    await requireWriteOnAll(request, request.body.issues.map((i) => i.repo_id), workspace.canRead)
    return await repo.removeIssues(request.params.sprint_id, request.body.issues, workspace.canRead, request.planningUser!, now())
  })

  fastify.get('/p2/sprints/:sprint_id/review', {
    schema: { tags, summary: 'Committed and completed work, scope changes, carry-over and recent velocity', params: SprintParams, querystring: ReportQuery, response: { 200: SprintReview, ...errors } }
  }, async (request, reply) => {
    const { row, workspace } = await visible(request, request.params.sprint_id)
    const sprint = await repo.get(row.id, workspace.canRead, now())
    const review = await reports.review(row, sprint, workspace.canRead, now())
    return await sendReport(request, reply, review, () => reviewCsv(review), `sprint-${row.id}-review.csv`)
  })

  fastify.get('/p2/workspaces/:workspace_id/sprint_events', {
    schema: { tags, summary: 'Sprint events of the workspace, oldest first, after an event id (a feed to poll)', params: WorkspaceParams, querystring: SprintEventsQuery, response: { 200: Type.Array(SprintEvent), ...errors } }
  }, async (request) => {
    const workspace = await access.readable(request, request.params.workspace_id)
    await repo.settle(request.params.workspace_id, now())
    return await reports.sprintEvents(request.params.workspace_id, request.query.after, request.query.limit, workspace.canRead)
  })
}

export default fp(sprints, { name: 'planning-sprints', fastify: '5.x', encapsulate: true, dependencies: ['planning-auth', 'planning-database'] })
