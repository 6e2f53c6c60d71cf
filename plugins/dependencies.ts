import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import type { FastifyRequest } from 'fastify'
import fp from 'fastify-plugin'
import { EmptyBody, errorResponses, RepoParams } from '../schemas/common.js'
import { Dependency, DependencyList } from '../schemas/dependencies.js'

/** Endpoints 16-18: blocking dependencies. */
const dependencies: FastifyPluginAsyncTypebox = async (fastify) => {
  const repo = fastify.planningStore.dependencies
  const { requireAccess } = fastify.planningAuth
  const readable = async (request: FastifyRequest) => {
    const set = await fastify.planningAuth.readable(request)
    return (id: number) => set.has(id)
  }
  fastify.addHook('onRequest', fastify.planningAuth.requireUser)
  const tags = ['dependencies']

  fastify.get('/p1/repositories/:repo_id/dependencies', {
    schema: { tags, summary: 'Dependencies with a side in the repository, readable on both sides', params: RepoParams, response: { 200: DependencyList, ...errorResponses } }
  }, async (request) => {
    await requireAccess(request, request.params.repo_id, 'read')
    return { dependencies: await repo.list(request.params.repo_id, await readable(request)) }
  })

  fastify.post('/p1/dependencies', {
    schema: { tags, summary: 'Create a dependency (write permission on both repositories)', body: Dependency, response: { 200: Dependency, ...errorResponses } }
  }, async (request) => {
    await requireAccess(request, request.body.blocking.repo_id, 'write')
    await requireAccess(request, request.body.blocked.repo_id, 'write')
    return await repo.create(request.body, await readable(request), request.planningUser!)
  })

  fastify.delete('/p1/dependencies', {
    schema: { tags, summary: 'Remove a dependency (write permission on both repositories)', body: Dependency, response: { 204: EmptyBody, ...errorResponses } }
  }, async (request, reply) => {
    await requireAccess(request, request.body.blocking.repo_id, 'write')
    await requireAccess(request, request.body.blocked.repo_id, 'write')
    await repo.remove(request.body, request.planningUser!)
    return reply.status(204).send(undefined)
  })
}

export default fp(dependencies, { name: 'planning-dependencies', fastify: '5.x', encapsulate: true, dependencies: ['planning-auth'] })
