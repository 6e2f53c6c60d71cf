import { httpErrors } from '@fastify/sensible'
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import type { FastifyRequest } from 'fastify'
import fp from 'fastify-plugin'
import { LEVELS } from '../db/users.js'
import { Type, EmptyBody, errorResponses, IssueRef, RepoParams } from '../schemas/common.js'
import {
  CreateReleaseBody, ReleaseParams, ReleaseReport, ReleaseReportSummary, ReleaseRepoParams, UpdateReleaseBody,
  UpdateReleaseIssuesBody, UpdateReleaseIssuesReply
} from '../schemas/releases.js'

/**
 * Endpoints 19-26: release reports. A report is visible to whoever can read one of its
 * repositories (404 otherwise) and editable by whoever can write to one of them (403 otherwise).
 */
const releases: FastifyPluginAsyncTypebox = async (fastify) => {
  const repo = fastify.planningStore.releases
  const { requireAccess, bestLevel } = fastify.planningAuth
  fastify.addHook('onRequest', fastify.planningAuth.requireUser)
  const tags = ['release reports']

  /** Permissions over a report are the best the caller has on one of its repositories (checked by the auth plugin). */
  const reportAccess = async (request: FastifyRequest, id: string, level: 'read' | 'write'): Promise<void> => {
    const best = await bestLevel(request, await repo.repositoriesOf(id))
    if (best < LEVELS.read) throw httpErrors.notFound(`release report ${id} not found`)
    if (best < LEVELS[level]) throw httpErrors.forbidden('write permission on one of the report\'s repositories is required')
  }
  const readable = async (request: FastifyRequest) => {
    const set = await fastify.planningAuth.readable(request)
    return (repoId: number) => set.has(repoId)
  }
  /** A report as this caller may see it: only the repositories it can read are listed. */
  const visible = async <R extends { repositories: number[] }>(request: FastifyRequest, report: R): Promise<R> =>
    ({ ...report, repositories: report.repositories.filter(await readable(request)) })

  fastify.post('/p1/repositories/:repo_id/reports/release', {
    schema: { tags, summary: 'Create a release report (push permission on every repository)', params: RepoParams, body: CreateReleaseBody, response: { 200: ReleaseReport, ...errorResponses } }
  }, async (request) => {
    const repositories = [...new Set([request.params.repo_id, ...(request.body.repositories ?? [])])]
    for (const repoId of repositories) await requireAccess(request, repoId, 'write')
    return await visible(request, await repo.create(request.body, repositories, request.planningUser!))
  })

  fastify.get('/p1/reports/release/:release_id', {
    schema: { tags, summary: 'Get a release report', params: ReleaseParams, response: { 200: ReleaseReport, ...errorResponses } }
  }, async (request) => {
    await reportAccess(request, request.params.release_id, 'read')
    return await visible(request, await repo.get(request.params.release_id))
  })

  fastify.get('/p1/repositories/:repo_id/reports/releases', {
    schema: { tags, summary: 'Release reports of a repository', params: RepoParams, response: { 200: Type.Array(ReleaseReportSummary), ...errorResponses } }
  }, async (request) => {
    await requireAccess(request, request.params.repo_id, 'read')
    return await repo.listForRepository(request.params.repo_id)
  })

  fastify.patch('/p1/reports/release/:release_id', {
    schema: { tags, summary: 'Edit a release report; state closed/open', params: ReleaseParams, body: UpdateReleaseBody, response: { 200: ReleaseReport, ...errorResponses } }
  }, async (request) => {
    await reportAccess(request, request.params.release_id, 'write')
    return await visible(request, await repo.update(request.params.release_id, request.body, request.planningUser!))
  })

  fastify.post('/p1/reports/release/:release_id/repository/:repo_id', {
    schema: { tags, summary: 'Add a repository to a release report', params: ReleaseRepoParams, response: { 200: EmptyBody, ...errorResponses } }
  }, async (request, reply) => {
    await reportAccess(request, request.params.release_id, 'write')
    await requireAccess(request, request.params.repo_id, 'write')
    await repo.addRepository(request.params.release_id, request.params.repo_id, request.planningUser!)
    return reply.status(200).send(undefined)
  })

  fastify.delete('/p1/reports/release/:release_id/repository/:repo_id', {
    schema: { tags, summary: 'Remove a repository (and its issues) from a release report', params: ReleaseRepoParams, response: { 204: EmptyBody, ...errorResponses } }
  }, async (request, reply) => {
    await reportAccess(request, request.params.release_id, 'write')
    await requireAccess(request, request.params.repo_id, 'write')
    await repo.removeRepository(request.params.release_id, request.params.repo_id, request.planningUser!)
    return reply.status(204).send(undefined)
  })

  fastify.get('/p1/reports/release/:release_id/issues', {
    schema: { tags, summary: 'Issues of a release report', params: ReleaseParams, response: { 200: Type.Array(IssueRef), ...errorResponses } }
  }, async (request) => {
    await reportAccess(request, request.params.release_id, 'read')
    return await repo.issues(request.params.release_id, await readable(request))
  })

  fastify.patch('/p1/reports/release/:release_id/issues', {
    schema: { tags, summary: 'Add and remove issues of a release report', params: ReleaseParams, body: UpdateReleaseIssuesBody, response: { 200: UpdateReleaseIssuesReply, ...errorResponses } }
  }, async (request) => {
    await reportAccess(request, request.params.release_id, 'write')
    const { add_issues: add, remove_issues: remove } = request.body
    return await repo.updateIssues(request.params.release_id, add, remove, await readable(request), request.planningUser!)
  })
}

export default fp(releases, { name: 'planning-releases', fastify: '5.x', encapsulate: true, dependencies: ['planning-auth'] })
