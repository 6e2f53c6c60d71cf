import { httpErrors } from '@fastify/sensible'
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import type { FastifyRequest } from 'fastify'
import fp from 'fastify-plugin'
import { createReportsRepository, type Burndown, type CycleTime, type Velocity } from '../db/reports.js'
import { LEVELS } from '../db/users.js'
import { isTimeZone } from '../db/zoned-time.js'
import { errorResponses } from '../schemas/common.js'
import { Burndown as BurndownSchema, BurndownQuery, CycleTime as CycleTimeSchema, CycleTimeQuery, MilestoneReportParams, ReleaseReportParams, Velocity as VelocitySchema, VelocityQuery } from '../schemas/reports.js'
import { SprintParams, WorkspaceParams } from '../schemas/sprints.js'
import { sendReport, toCsv } from './report-format.js'
import { workspaceAccess } from './sprints.js'

export interface ReportsPluginOptions {
  /** the time reports go by, in epoch ms (default Date.now; tests pass their own) */
  now?: () => number
}

export function burndownCsv (report: Burndown): string {
  const measured = new Map(report.days.map((d) => [d.date, d]))
  const ideal = report.ideal ?? report.days.map((d) => ({ date: d.date, remaining_points: null }))
  return toCsv(['date', 'remaining_points', 'remaining_issues', 'closed_points', 'ideal_points'],
    ideal.map((i) => {
      const day = measured.get(i.date)
      return [i.date, day?.remaining_points, day?.remaining_issues, day?.closed_points, i.remaining_points]
    }))
}

export const velocityCsv = (report: Velocity): string =>
  toCsv(['sprint_id', 'name', 'starts_at', 'ends_at', 'points_closed', 'issues_closed'], report.sprints.map((s) => [s.id, s.name, s.starts_at, s.ends_at, s.points_closed, s.issues_closed]))

export const cycleTimeCsv = (report: CycleTime): string =>
  toCsv(['repo_id', 'issue_number', 'title', 'started_at', 'closed_at', 'days'], report.issues.map((i) => [i.repo_id, i.issue_number, i.title, i.started_at, i.closed_at, i.days]))

/**
 * Burndown, velocity and cycle time (docs, "Sprints and reports"), an extension: computed from the
 * recorded history, counting only issues of repositories the caller can read; CSV on request.
 */
const reports: FastifyPluginAsyncTypebox<ReportsPluginOptions> = async (fastify, opts) => {
  const repo = createReportsRepository(fastify.planningStore.db)
  const { sprints, releases } = fastify.planningStore
  const now = opts.now ?? Date.now
  const access = workspaceAccess(fastify)
  const tags = ['reports', 'extensions']
  fastify.addHook('onRequest', fastify.planningAuth.requireUser)

  const zone = (value: string | undefined): string | undefined => {
    if (value !== undefined && !isTimeZone(value)) throw httpErrors.badRequest('querystring/time_zone must be an IANA time zone such as Europe/Berlin')
    return value
  }
  const canReadOf = async (request: FastifyRequest) => {
    const set = await fastify.planningAuth.readable(request)
    return (repoId: number) => set.has(repoId)
  }

  fastify.get('/p2/sprints/:sprint_id/burndown', {
    schema: { tags, summary: 'Burndown of a sprint (daily, in the workspace\'s time zone)', params: SprintParams, querystring: BurndownQuery, response: { 200: BurndownSchema, ...errorResponses } }
  }, async (request, reply) => {
    const row = await sprints.row(request.params.sprint_id)
    let workspace
    try {
      workspace = await access.readable(request, row.workspace_id)
    } catch {
      throw httpErrors.notFound(`sprint ${request.params.sprint_id} not found`)
    }
    await sprints.settle(row.workspace_id, now())
    const timeZone = zone(request.query.time_zone) ?? await repo.zoneOf(row.workspace_id)
    const report = await repo.sprintBurndown(row, timeZone, workspace.canRead, now())
    return await sendReport(request, reply, report, () => burndownCsv(report), `sprint-${row.id}-burndown.csv`)
  })

  fastify.get('/p1/repositories/:repo_id/milestones/:milestone_number/burndown', {
    schema: { tags, summary: 'Burndown of a milestone, from its start date to its due date (or to today, without an ideal line, when it has none)', params: MilestoneReportParams, querystring: BurndownQuery, response: { 200: BurndownSchema, ...errorResponses } }
  }, async (request, reply) => {
    const { repo_id: repoId, milestone_number: number } = request.params
    await fastify.planningAuth.requireAccess(request, repoId, 'read')
    const report = await repo.milestoneBurndown(repoId, number, zone(request.query.time_zone), await canReadOf(request), now())
    return await sendReport(request, reply, report, () => burndownCsv(report), `milestone-${repoId}-${number}-burndown.csv`)
  })

  fastify.get('/p1/reports/release/:release_id/burndown', {
    schema: { tags, summary: 'Burndown of a release report, from its start date to its desired end date', params: ReleaseReportParams, querystring: BurndownQuery, response: { 200: BurndownSchema, ...errorResponses } }
  }, async (request, reply) => {
    const id = request.params.release_id
    if (await fastify.planningAuth.bestLevel(request, await releases.repositoriesOf(id)) < LEVELS.read) throw httpErrors.notFound(`release report ${id} not found`)
    const report = await repo.releaseBurndown(id, zone(request.query.time_zone), await canReadOf(request), now())
    return await sendReport(request, reply, report, () => burndownCsv(report), `release-${id}-burndown.csv`)
  })

  fastify.get('/p2/workspaces/:workspace_id/velocity', {
    schema: { tags, summary: 'Points and issues closed per closed sprint, with the average', params: WorkspaceParams, querystring: VelocityQuery, response: { 200: VelocitySchema, ...errorResponses } }
  }, async (request, reply) => {
    const workspace = await access.readable(request, request.params.workspace_id)
    await sprints.settle(request.params.workspace_id, now())
    const report = await repo.velocity(request.params.workspace_id, request.query.sprints, workspace.canRead, now())
    return await sendReport(request, reply, report, () => velocityCsv(report), 'velocity.csv')
  })

  fastify.get('/p2/workspaces/:workspace_id/cycle_time', {
    schema: { tags, summary: 'Cycle time per closed issue, from entering the start pipeline to closing, with p50/p85/p95 (days)', params: WorkspaceParams, querystring: CycleTimeQuery, response: { 200: CycleTimeSchema, ...errorResponses } }
  }, async (request, reply) => {
    const workspace = await access.readable(request, request.params.workspace_id)
    const to = request.query.to === undefined ? now() : Date.parse(request.query.to)
    const from = request.query.from === undefined ? to - 90 * 86_400_000 : Date.parse(request.query.from)
    if (from >= to) throw httpErrors.badRequest('querystring/from must be before to')
    const report = await repo.cycleTime(request.params.workspace_id, { from, to, startPipelineId: request.query.start_pipeline_id }, workspace.canRead)
    return await sendReport(request, reply, report, () => cycleTimeCsv(report), 'cycle-time.csv')
  })
}

export default fp(reports, { name: 'planning-reports', fastify: '5.x', encapsulate: true, dependencies: ['planning-auth', 'planning-database'] })
