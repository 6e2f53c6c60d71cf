import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import fp from 'fastify-plugin'
import { errorResponses } from '../schemas/common.js'
import { MilestoneParams, StartDate } from '../schemas/milestones.js'

/** Endpoints 14 and 15: milestone start dates. */
const milestones: FastifyPluginAsyncTypebox = async (fastify) => {
  const repo = fastify.planningStore.milestones
  const { requireAccess } = fastify.planningAuth
  fastify.addHook('onRequest', fastify.planningAuth.requireUser)
  const tags = ['milestones']
  const url = '/p1/repositories/:repo_id/milestones/:milestone_number/start_date'

  fastify.post(url, {
    schema: { tags, summary: 'Set a milestone start date', params: MilestoneParams, body: StartDate, response: { 200: StartDate, ...errorResponses } }
  }, async (request) => {
    await requireAccess(request, request.params.repo_id, 'write')
    return { start_date: await repo.setStartDate(request.params.repo_id, request.params.milestone_number, request.body.start_date) }
  })

  fastify.get(url, {
    schema: { tags, summary: 'Get a milestone start date', params: MilestoneParams, response: { 200: StartDate, ...errorResponses } }
  }, async (request) => {
    await requireAccess(request, request.params.repo_id, 'read')
    return { start_date: await repo.startDate(request.params.repo_id, request.params.milestone_number) }
  })
}

export default fp(milestones, { name: 'planning-milestones', fastify: '5.x', encapsulate: true, dependencies: ['planning-auth'] })
