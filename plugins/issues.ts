import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import fp from 'fastify-plugin'
import { httpErrors } from '@fastify/sensible'
import { issueUrl } from '../db/repositories.js'
import type { FeedCursor } from '../db/issues.js'
import { Type, errorResponses, IssueParams, RepoParams } from '../schemas/common.js'
import {
  BulkIssue, BulkIssuesQuery, ChangedQuery, ChangedReply, EstimateBody, EstimateReply, EventsPage, EventsQuery, IssueDetail, IssueEvent, PipelineDuration
} from '../schemas/issues.js'

const MAX_BULK = 100

/** Feed cursors are opaque to clients: the position, base64url-encoded. */
const encodeCursor = (cursor: FeedCursor): string => Buffer.from(`${cursor.version}.${cursor.id}`).toString('base64url')
function decodeCursor (text: string): FeedCursor {
  const match = /^(\d{1,15})\.(\d{1,15})$/.exec(Buffer.from(text, 'base64url').toString())
  if (match === null) throw httpErrors.badRequest('querystring/cursor is not a cursor this server handed out')
  return { version: Number(match[1]), id: Number(match[2]) }
}

/**
 * Endpoints 1, 2 and 5: issue data, issue events and estimates; and the extensions on issues
 * (docs/extensions.md): many issues at once, the repository's events feed, issues
 * whose planning data changed, time spent per pipeline.
 */
const issues: FastifyPluginAsyncTypebox = async (fastify) => {
  const repo = fastify.planningStore.issues
  const { requireAccess } = fastify.planningAuth
  fastify.addHook('onRequest', fastify.planningAuth.requireUser)
  const tags = ['issues']

  fastify.get('/p1/repositories/:repo_id/issues/:issue_number', {
    schema: { tags, summary: 'Get issue data (and, as an extension, its description)', params: IssueParams, response: { 200: IssueDetail, ...errorResponses } }
  }, (request, reply) => {
    const { repo_id: repoId, issue_number: number } = request.params
    return fastify.planningCachedRead(request, reply, repoId, `issue:${repoId}:${number}`, async () => await repo.data(repoId, number))
  })

  fastify.get('/p1/repositories/:repo_id/issues/:issue_number/events', {
    schema: { tags, summary: 'Get issue events, newest first', params: IssueParams, response: { 200: Type.Array(IssueEvent), ...errorResponses } }
  }, async (request) => {
    await requireAccess(request, request.params.repo_id, 'read')
    return await repo.events(request.params.repo_id, request.params.issue_number)
  })

  fastify.get('/p1/repositories/:repo_id/issues', {
    schema: { tags: [...tags, 'extensions'], summary: 'Issue data of many issues at once (extension)', params: RepoParams, querystring: BulkIssuesQuery, response: { 200: Type.Array(BulkIssue), ...errorResponses } }
  }, (request, reply) => {
    const { repo_id: repoId } = request.params
    // Kept like a board: the board page reads its titles 100 at a time, and its live stream looks again at the same URLs.
    return fastify.planningCachedRead(request, reply, repoId, `issues:${repoId}:${request.query.issue_numbers}`, async () => {
      const numbers = [...new Set(request.query.issue_numbers.split(',').map(Number))]
      if (numbers.length > MAX_BULK) throw httpErrors.badRequest(`querystring/issue_numbers must not list more than ${MAX_BULK} issues`)
      if (numbers.some((n) => !Number.isSafeInteger(n))) throw httpErrors.badRequest('querystring/issue_numbers must list positive integers')
      const repository = await requireAccess(request, repoId, 'read')
      const data = await repo.dataOf(repoId, numbers)
      return numbers.filter((n) => data.has(n)).map((n) => ({ issue_number: n, html_url: issueUrl(repository, n), ...data.get(n)! }))
    })
  })

  fastify.get('/p1/repositories/:repo_id/events', {
    schema: { tags: [...tags, 'extensions'], summary: 'Every issue event of the repository, oldest first, a page at a time (extension)', params: RepoParams, querystring: EventsQuery, response: { 200: EventsPage, ...errorResponses } }
  }, async (request) => {
    await requireAccess(request, request.params.repo_id, 'read')
    const cursor = request.query.cursor === undefined ? undefined : decodeCursor(request.query.cursor)
    const page = await repo.feed(request.params.repo_id, { cursor, since: request.query.since, limit: request.query.limit })
    const next = page.last ?? cursor
    return { data: page.data, next_cursor: next === undefined ? null : encodeCursor(next) }
  })

  fastify.get('/p1/repositories/:repo_id/issues/changed', {
    schema: { tags: [...tags, 'extensions'], summary: 'Issues whose planning data changed since a time (extension)', params: RepoParams, querystring: ChangedQuery, response: { 200: ChangedReply, ...errorResponses } }
  }, async (request) => {
    await requireAccess(request, request.params.repo_id, 'read')
    const asOf = new Date().toISOString()
    return { issue_numbers: await repo.changedSince(request.params.repo_id, request.query.since), as_of: asOf }
  })

  fastify.get('/p1/repositories/:repo_id/issues/:issue_number/pipeline_durations', {
    schema: { tags: [...tags, 'extensions'], summary: 'How long the issue stayed in each pipeline (extension)', params: IssueParams, response: { 200: Type.Array(PipelineDuration), ...errorResponses } }
  }, async (request) => {
    await requireAccess(request, request.params.repo_id, 'read')
    return await repo.pipelineDurations(request.params.repo_id, request.params.issue_number)
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
  name: 'planning-issues', fastify: '5.x', encapsulate: true, dependencies: ['planning-auth', 'planning-database', 'planning-read-cache']
})
