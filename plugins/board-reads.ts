import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { httpErrors } from '@fastify/sensible'
import fp from 'fastify-plugin'
import { createBoardReads } from '../db/board-reads.js'
import { issueUrl, webUrl } from '../db/repositories.js'
import { ClosedIssuesPage, ClosedIssuesQuery, NamedRepository, SprintIssues, SprintParams, WorkspaceParams } from '../schemas/board-reads.js'
import { Type, errorResponses, RepoParams } from '../schemas/common.js'
import { workspaceAccess } from './sprints.js'

/**
 * Reads the board page needs and the hosted API lacks (docs/board-page.md, "Reads for the board
 * page"): the names of a workspace's readable repositories, a repository's closed issues, newest
 * first, a page at a time, and a sprint's issues (the board's sprint filter). The legacy board answers stay as they are.
 */
const boardReads: FastifyPluginAsyncTypebox = async (fastify) => {
  const reads = createBoardReads(fastify.planningStore.db)
  const { requireAccess } = fastify.planningAuth
  fastify.addHook('onRequest', fastify.planningAuth.requireUser)
  const tags = ['boards', 'extensions']

  fastify.get('/p2/workspaces/:workspace_id/repositories', {
    schema: { tags, summary: 'The workspace\'s repositories you can read, with their names (extension)', params: WorkspaceParams, response: { 200: Type.Array(NamedRepository), ...errorResponses } }
  }, async (request) => {
    const readable = await fastify.planningAuth.readable(request)
    const workspace = (await fastify.planningStore.workspaces.holdingAny([...readable])).find((w) => w.id === request.params.workspace_id)
    // A workspace without a readable repository is not there, as far as this user can tell.
    if (workspace === undefined) throw httpErrors.notFound(`workspace ${request.params.workspace_id} not found`)
    return (await reads.named(workspace.repositories)).map((r) => ({ id: r.id, owner: r.owner, name: r.name, html_url: webUrl(r) }))
  })

  const access = workspaceAccess(fastify)
  fastify.get('/p2/sprints/:sprint_id/issues', {
    schema: { tags: ['sprints', 'extensions'], summary: 'The sprint\'s issues you can read (extension)', params: SprintParams, response: { 200: SprintIssues, ...errorResponses } }
  }, async (request) => {
    const row = await fastify.planningStore.sprints.row(request.params.sprint_id)
    let workspace
    try {
      workspace = await access.readable(request, row.workspace_id)
    } catch {
      // A sprint of a workspace you cannot read is not there, as far as you can tell.
      throw httpErrors.notFound(`sprint ${request.params.sprint_id} not found`)
    }
    return { issues: (await reads.sprintIssues(row.id)).filter((i) => workspace.canRead(i.repo_id)) }
  })

  fastify.get('/p1/repositories/:repo_id/issues/closed', {
    schema: { tags: ['issues', 'extensions'], summary: 'The repository\'s closed issues, highest number first, a page at a time (extension)', params: RepoParams, querystring: ClosedIssuesQuery, response: { 200: ClosedIssuesPage, ...errorResponses } }
  }, async (request) => {
    const repository = await requireAccess(request, request.params.repo_id, 'read')
    const { limit, before } = request.query
    // One more than asked tells whether another page follows.
    const [rows, total] = await Promise.all([reads.closed(repository.id, limit + 1, before), reads.closedCount(repository.id)])
    const page = rows.slice(0, limit)
    return {
      data: page.map((issue) => ({ ...issue, html_url: issueUrl(repository, issue.issue_number) })),
      next_before: rows.length > limit ? page[page.length - 1].issue_number : null,
      total
    }
  })
}

export default fp(boardReads, { name: 'planning-board-reads', fastify: '5.x', encapsulate: true, dependencies: ['planning-auth', 'planning-database'] })
