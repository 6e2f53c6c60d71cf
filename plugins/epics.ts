import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import type { FastifyRequest } from 'fastify'
import fp from 'fastify-plugin'
import { EmptyBody, errorResponses, IssueParams, RepoParams } from '../schemas/common.js'
import { ConvertToEpicBody, EpicData, EpicList, EpicParams, UpdateEpicIssuesBody, UpdateEpicIssuesReply } from '../schemas/epics.js'

/** Endpoints 6-10: epics. Children may live in any repository the caller can read. */
const epics: FastifyPluginAsyncTypebox<{ publicUrl?: string }> = async (fastify, opts) => {
  const repo = fastify.planningStore.epics
  const { requireAccess } = fastify.planningAuth
  const readable = async (request: FastifyRequest) => {
    const set = await fastify.planningAuth.readable(request)
    return (id: number) => set.has(id)
  }
  fastify.addHook('onRequest', fastify.planningAuth.requireUser)
  const tags = ['epics']

  fastify.get('/p1/repositories/:repo_id/epics', {
    schema: { tags, summary: 'Epics of a repository', params: RepoParams, response: { 200: EpicList, ...errorResponses } }
  }, async (request) => {
    const repository = await requireAccess(request, request.params.repo_id, 'read')
    const list = await repo.list(repository)
    // A repository with no issue host: the issue on this server's board (oldest workspace holding it), never a guessed github.com address.
    const board = list.some((e) => e.issue_url === null) ? (await fastify.planningStore.workspaces.holdingAny([repository.id]))[0]?.id : undefined
    const link = (number: number) => `${opts.publicUrl ?? ''}${fastify.prefix}/board?${new URLSearchParams({ ...(board === undefined ? {} : { board }), repo: String(repository.id), q: `#${number}` }).toString()}`
    return { epic_issues: list.map((e) => ({ ...e, issue_url: e.issue_url ?? link(e.issue_number) })) }
  })

  fastify.get('/p1/repositories/:repo_id/epics/:epic_id', {
    schema: { tags, summary: 'Epic data', params: EpicParams, response: { 200: EpicData, ...errorResponses } }
  }, async (request) => {
    await requireAccess(request, request.params.repo_id, 'read')
    return await repo.data(request.params.repo_id, request.params.epic_id, await readable(request))
  })

  fastify.post('/p1/repositories/:repo_id/epics/:issue_number/convert_to_issue', {
    schema: { tags, summary: 'Convert an epic to a regular issue (its issues are released)', params: IssueParams, response: { 200: EmptyBody, ...errorResponses } }
  }, async (request, reply) => {
    await requireAccess(request, request.params.repo_id, 'write')
    await repo.convertToIssue(request.params.repo_id, request.params.issue_number, request.planningUser!)
    return reply.status(200).send(undefined)
  })

  fastify.post('/p1/repositories/:repo_id/issues/:issue_number/convert_to_epic', {
    schema: { tags, summary: 'Convert an issue to an epic holding the listed issues', params: IssueParams, body: ConvertToEpicBody, response: { 200: EmptyBody, ...errorResponses } }
  }, async (request, reply) => {
    await requireAccess(request, request.params.repo_id, 'write')
    await repo.convertToEpic(request.params.repo_id, request.params.issue_number, request.body.issues, await readable(request), request.planningUser!)
    return reply.status(200).send(undefined)
  })

  fastify.post('/p1/repositories/:repo_id/epics/:issue_number/update_issues', {
    schema: { tags, summary: 'Add issues to and remove issues from an epic', params: IssueParams, body: UpdateEpicIssuesBody, response: { 200: UpdateEpicIssuesReply, ...errorResponses } }
  }, async (request) => {
    await requireAccess(request, request.params.repo_id, 'write')
    const { remove_issues: remove, add_issues: add } = request.body
    return await repo.updateIssues(request.params.repo_id, request.params.issue_number, remove, add, await readable(request), request.planningUser!)
  })
}

export default fp(epics, { name: 'planning-epics', fastify: '5.x', encapsulate: true, dependencies: ['planning-auth'] })
