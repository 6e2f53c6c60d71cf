import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import fp from 'fastify-plugin'
import { Type, errorResponses, IssueParams } from '../schemas/common.js'
import { EstimateBody, EstimateReply, IssueData, IssueEvent } from '../schemas/issues.js'

/** Endpoints 1, 2 and 5: issue data, issue events and estimates. */
const issues: FastifyPluginAsyncTypebox = async (fastify) => {
  const repo = fastify.planningStore.issues
  const { requireAccess } = fastify.planningAuth
  fastify.addHook('onRequest', fastify.planningAuth.requireUser)
  const tags = ['issues']

  fastify.get('/p1/repositories/:repo_id/issues/:issue_number', {
    schema: { tags, summary: 'Get issue data', params: IssueParams, response: { 200: IssueData, ...errorResponses } }
  }, async (request) => {
    await requireAccess(request, request.params.repo_id, 'read')
    return await repo.data(request.params.repo_id, request.params.issue_number)
  })

  fastify.get('/p1/repositories/:repo_id/issues/:issue_number/events', {
    schema: { tags, summary: 'Get issue events, newest first', params: IssueParams, response: { 200: Type.Array(IssueEvent), ...errorResponses } }
  }, async (request) => {
    await requireAccess(request, request.params.repo_id, 'read')
    return await repo.events(request.params.repo_id, request.params.issue_number)
  })

  fastify.put('/p1/repositories/:repo_id/issues/:issue_number/estimate', {
    schema: { tags, summary: 'Set (or, with null, clear) an estimate', params: IssueParams, body: EstimateBody, response: { 200: EstimateReply, ...errorResponses } }
  }, async (request) => {
    const repository = await requireAccess(request, request.params.repo_id, 'write')
    await repo.setEstimate(request.planningUser!, repository, request.params.issue_number, request.body.estimate)
    return { estimate: request.body.estimate }
  })
}

export default fp(issues, {
  name: 'planning-issues', fastify: '5.x', encapsulate: true, dependencies: ['planning-auth', 'planning-database']
})
