import { httpErrors } from '@fastify/sensible'
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import type { FastifyRequest } from 'fastify'
import fp from 'fastify-plugin'
import { createReleasesRepository } from '../db/releases.js'
import { createUsersRepository, LEVELS } from '../db/users.js'
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
  const repo = createReleasesRepository(fastify.planningDb)
  const users = createUsersRepository(fastify.planningDb)
  const { requireAccess, canRead } = fastify.planningAuth
  fastify.addHook('onRequest', fastify.planningAuth.requireUser)
  const tags = ['release reports']

  const reportAccess = (request: FastifyRequest, id: string, level: 'read' | 'write'): void => {
    const user = request.planningUser!
    const best = Math.max(0, ...repo.repositoriesOf(id).map((r) => users.level(user.id, r)))
    if (best < LEVELS.read) throw httpErrors.notFound(`release report ${id} not found`)
    if (best < LEVELS[level]) throw httpErrors.forbidden(`write permission on one of the report's repositories is required`)
  }
  const readable = (request: FastifyRequest) => (repoId: number) => canRead(request, repoId)
  /** A report as this caller may see it: only the repositories it can read are listed. */
  const visible = <R extends { repositories: number[] }>(request: FastifyRequest, report: R): R =>
    ({ ...report, repositories: report.repositories.filter(readable(request)) })

  fastify.post('/p1/repositories/:repo_id/reports/release', {
    schema: { tags, summary: 'Create a release report (push permission on every repository)', params: RepoParams, body: CreateReleaseBody, response: { 200: ReleaseReport, ...errorResponses } }
  }, async (request) => {
    const repositories = [...new Set([request.params.repo_id, ...(request.body.repositories ?? [])])]
    for (const repoId of repositories) requireAccess(request, repoId, 'write')
    return visible(request, repo.create(request.body, repositories))
  })

  fastify.get('/p1/reports/release/:release_id', {
    schema: { tags, summary: 'Get a release report', params: ReleaseParams, response: { 200: ReleaseReport, ...errorResponses } }
  }, async (request) => {
    reportAccess(request, request.params.release_id, 'read')
    return visible(request, repo.get(request.params.release_id))
  })

  fastify.get('/p1/repositories/:repo_id/reports/releases', {
    schema: { tags, summary: 'Release reports of a repository', params: RepoParams, response: { 200: Type.Array(ReleaseReportSummary), ...errorResponses } }
  }, async (request) => {
    requireAccess(request, request.params.repo_id, 'read')
    return repo.listForRepository(request.params.repo_id)
  })

  fastify.patch('/p1/reports/release/:release_id', {
    schema: { tags, summary: 'Edit a release report; state closed/open', params: ReleaseParams, body: UpdateReleaseBody, response: { 200: ReleaseReport, ...errorResponses } }
  }, async (request) => {
    reportAccess(request, request.params.release_id, 'write')
    return visible(request, repo.update(request.params.release_id, request.body))
  })

  fastify.post('/p1/reports/release/:release_id/repository/:repo_id', {
    schema: { tags, summary: 'Add a repository to a release report', params: ReleaseRepoParams, response: { 200: EmptyBody, ...errorResponses } }
  }, async (request, reply) => {
    reportAccess(request, request.params.release_id, 'write')
    requireAccess(request, request.params.repo_id, 'write')
    repo.addRepository(request.params.release_id, request.params.repo_id)
    return reply.status(200).send(undefined)
  })

  fastify.delete('/p1/reports/release/:release_id/repository/:repo_id', {
    schema: { tags, summary: 'Remove a repository (and its issues) from a release report', params: ReleaseRepoParams, response: { 204: EmptyBody, ...errorResponses } }
  }, async (request, reply) => {
    reportAccess(request, request.params.release_id, 'write')
    requireAccess(request, request.params.repo_id, 'write')
    repo.removeRepository(request.params.release_id, request.params.repo_id)
    return reply.status(204).send(undefined)
  })

  fastify.get('/p1/reports/release/:release_id/issues', {
    schema: { tags, summary: 'Issues of a release report', params: ReleaseParams, response: { 200: Type.Array(IssueRef), ...errorResponses } }
  }, async (request) => {
    reportAccess(request, request.params.release_id, 'read')
    return repo.issues(request.params.release_id, readable(request))
  })

  fastify.patch('/p1/reports/release/:release_id/issues', {
    schema: { tags, summary: 'Add and remove issues of a release report', params: ReleaseParams, body: UpdateReleaseIssuesBody, response: { 200: UpdateReleaseIssuesReply, ...errorResponses } }
  }, async (request) => {
    reportAccess(request, request.params.release_id, 'write')
    return repo.updateIssues(request.params.release_id, request.body.add_issues, request.body.remove_issues, readable(request))
  })
}

export default fp(releases, { name: 'planning-releases', fastify: '5.x', encapsulate: true, dependencies: ['planning-auth'] })
