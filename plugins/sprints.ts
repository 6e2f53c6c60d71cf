import { httpErrors } from '@fastify/sensible'
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import type { FastifyInstance, FastifyRequest } from 'fastify'
import fp from 'fastify-plugin'
import { LEVELS } from '../db/users.js'
import { isCalendarDate, isTimeZone } from '../db/zoned-time.js'
import { EARLIEST_DAY, LATEST_DAY } from '../schemas/formats.js'
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

/** Who may see a workspace (anyone who can read one of its repositories) and the level they hold over all of it. */
export function workspaceAccess (fastify: FastifyInstance) {
  const { workspaces } = fastify.planningStore
  return {
    /** The workspace's repositories, or the same 404 as an unknown workspace when none is readable. */
    async readable (request: FastifyRequest, workspaceId: string): Promise<{ repositories: number[], name: string, canRead: (repoId: number) => boolean }> {
      const workspace = await workspaces.byId(workspaceId)
      const set = await fastify.planningAuth.readable(request)
      if (workspace === undefined || !workspace.repositories.some((id) => set.has(id))) throw httpErrors.notFound(`workspace ${workspaceId} not found`)
      return { repositories: workspace.repositories, name: workspace.name, canRead: (repoId) => set.has(repoId) }
    },
    /** 403 unless the caller is admin on every repository of the workspace. */
    async requireAdminOfAll (request: FastifyRequest, repositories: number[]): Promise<void> {
      const user = request.planningUser!
      const levels = await fastify.planningStore.users.levels(user.id, repositories)
      if (repositories.some((id) => (levels.get(id) ?? 0) < LEVELS.admin)) throw httpErrors.forbidden('admin permission on every repository of the workspace is required')
    }
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

  /** The sprint and its workspace as the caller may see them (404 as for an unknown id otherwise), settled up to now. */
  const visibleSprint = async (request: FastifyRequest, id: string) => {
    const row = await repo.row(id)
    let workspace
    try {
      workspace = await access.readable(request, row.workspace_id)
    } catch {
      throw httpErrors.notFound(`sprint ${id} not found`)
    }
    await repo.settle(row.workspace_id, now())
    return { row, workspace }
  }

  /** Write access to each readable repository named (unreadable ones are refused as unknown issues by the data layer). */
  const requireWriteOnAll = async (request: FastifyRequest, repoIds: number[], canRead: (repoId: number) => boolean): Promise<void> => {
    for (const repoId of new Set(repoIds)) if (canRead(repoId)) await fastify.planningAuth.requireAccess(request, repoId, 'write')
  }

  fastify.put('/p2/workspaces/:workspace_id/sprint_config', {
    schema: { tags, summary: 'Set the sprint configuration (admin on every repository of the workspace); future sprints are re-planned', params: WorkspaceParams, body: SprintConfig, response: { 200: SprintConfig, ...errors } }
  }, async (request) => {
    const workspace = await access.readable(request, request.params.workspace_id)
    await access.requireAdminOfAll(request, workspace.repositories)
    const config = request.body
    if (!isCalendarDate(config.starts_on)) throw httpErrors.badRequest(`body/starts_on must be a calendar date, YYYY-MM-DD, from ${EARLIEST_DAY} to ${LATEST_DAY}`)
    if (!isTimeZone(config.time_zone)) throw httpErrors.badRequest('body/time_zone must be an IANA time zone such as Europe/Berlin')
    return await repo.setConfig(request.params.workspace_id, config, now())
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
    const { workspace } = await visibleSprint(request, request.params.sprint_id)
    return await repo.get(request.params.sprint_id, workspace.canRead, now())
  })

  fastify.post('/p2/sprints/:sprint_id/issues', {
    schema: { tags, summary: 'Add issues (at most 100, write access to each); each leaves the open sprint it was in', params: SprintParams, body: SprintIssuesBody, response: { 200: SprintIssuesAdded, ...errors } }
  }, async (request) => {
    const { workspace } = await visibleSprint(request, request.params.sprint_id)
    await requireWriteOnAll(request, request.body.issues.map((i) => i.repo_id), workspace.canRead)
    return await repo.addIssues(request.params.sprint_id, request.body.issues, workspace.canRead, request.planningUser!, now())
  })

  fastify.delete('/p2/sprints/:sprint_id/issues', {
    schema: { tags, summary: 'Remove issues (at most 100, write access to each)', params: SprintParams, body: SprintIssuesBody, response: { 200: SprintIssuesRemoved, ...errors } }
  }, async (request) => {
    const { workspace } = await visibleSprint(request, request.params.sprint_id)
    await requireWriteOnAll(request, request.body.issues.map((i) => i.repo_id), workspace.canRead)
    return await repo.removeIssues(request.params.sprint_id, request.body.issues, workspace.canRead, request.planningUser!, now())
  })

  fastify.get('/p2/sprints/:sprint_id/review', {
    schema: { tags, summary: 'Committed and completed work, scope changes, carry-over and recent velocity', params: SprintParams, querystring: ReportQuery, response: { 200: SprintReview, ...errors } }
  }, async (request, reply) => {
    const { row, workspace } = await visibleSprint(request, request.params.sprint_id)
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
