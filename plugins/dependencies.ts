import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import fp from 'fastify-plugin'
import { createDependenciesRepository } from '../db/dependencies.js'
import { Type, errorResponses, RepoParams } from '../schemas/common.js'
import { Dependency, DependencyList } from '../schemas/dependencies.js'

/** Endpoints 16-18: blocking dependencies. */
const dependencies: FastifyPluginAsyncTypebox = async (fastify) => {
  const repo = createDependenciesRepository(fastify.planningDb)
  const { requireAccess, canRead } = fastify.planningAuth
  fastify.addHook('onRequest', fastify.planningAuth.requireUser)
  const tags = ['dependencies']

  fastify.get('/p1/repositories/:repo_id/dependencies', {
    schema: { tags, summary: 'Dependencies with a side in the repository, readable on both sides', params: RepoParams, response: { 200: DependencyList, ...errorResponses } }
  }, async (request) => {
    requireAccess(request, request.params.repo_id, 'read')
    return { dependencies: repo.list(request.params.repo_id, (id) => canRead(request, id)) }
  })

  fastify.post('/p1/dependencies', {
    schema: { tags, summary: 'Create a dependency (write permission on both repositories)', body: Dependency, response: { 200: Dependency, ...errorResponses } }
  }, async (request) => {
    requireAccess(request, request.body.blocking.repo_id, 'write')
    requireAccess(request, request.body.blocked.repo_id, 'write')
    return repo.create(request.body, (id) => canRead(request, id))
  })

  fastify.delete('/p1/dependencies', {
    schema: { tags, summary: 'Remove a dependency (write permission on both repositories)', body: Dependency, response: { 204: Type.Unsafe<undefined>({ description: 'empty body' }), ...errorResponses } }
  }, async (request, reply) => {
    requireAccess(request, request.body.blocking.repo_id, 'write')
    requireAccess(request, request.body.blocked.repo_id, 'write')
    repo.remove(request.body)
    return reply.status(204).send(undefined)
  })
}

export default fp(dependencies, { name: 'planning-dependencies', fastify: '5.x', encapsulate: true, dependencies: ['planning-auth'] })
