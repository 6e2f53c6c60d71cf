import { httpErrors } from '@fastify/sensible'
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import type { FastifyReply, FastifyRequest } from 'fastify'
import fp from 'fastify-plugin'
import { boardCsv, sendReport, wantsCsv } from './report-format.js'
import { boardJson } from './board-bytes.js'
import type { SerializedAnswer } from './core/read-cache.js'
import type { MovePosition } from '../db/boards.js'
import { Board, BOARD_FILTERS, BoardQuery, MoveBody, Workspace, WorkspaceIssueParams, WorkspaceRepoParams, WorkspaceSummary } from '../schemas/boards.js'
import type { Board as BoardData } from '../db/boards.js'
import { Type, EmptyBody, errorResponses, IssueParams, RepoParams, type Static } from '../schemas/common.js'

type BoardQueryType = Static<typeof BoardQuery>

/** `top`, `bottom` or a 0-based index given as a number or a numeric string. */
export function parsePosition (value: string | number): MovePosition {
  if (value === 'top' || value === 'bottom') return value
  const index = typeof value === 'number' ? value : /^[0-9]{1,15}$/.test(value) ? Number(value) : Number.NaN
  if (!Number.isSafeInteger(index) || index < 0) {
    throw httpErrors.badRequest(`body/position must be "top", "bottom" or a 0-based index, not ${JSON.stringify(value)}`)
  }
  return index
}

/** Endpoints 3, 4, 11, 12 and 13: workspaces, boards and moves. */
const boards: FastifyPluginAsyncTypebox = async (fastify) => {
  const { workspaces, boards: board } = fastify.planningStore
  const { requireAccess } = fastify.planningAuth
  fastify.addHook('onRequest', fastify.planningAuth.requireUser)
  const tags = ['boards']

  const oldestWorkspace = async (repoId: number): Promise<string> => {
    const id = await workspaces.oldestFor(repoId)
    if (id === undefined) throw httpErrors.notFound(`repository ${repoId} is in no workspace`)
    return id
  }
  const workspaceHolding = async (workspaceId: string, repoId: number): Promise<string> => {
    if (!await workspaces.holds(workspaceId, repoId)) {
      throw httpErrors.notFound(`workspace ${workspaceId} not found or does not hold repository ${repoId}`)
    }
    return workspaceId
  }

  /** `?format=csv` or `Accept: text/csv` (an extension): the board as one row per issue, past the read cache. */
  const boardAsCsv = async (request: FastifyRequest, reply: FastifyReply, repoId: number, build: () => Promise<BoardData>) => {
    await requireAccess(request, repoId, 'read')
    const answer = await build()
    return await sendReport(request, reply, answer, () => boardCsv(answer), `board-${repoId}.csv`)
  }

  /** `?pipeline_id=` (an extension): that pipeline only; 400 when the workspace has no such pipeline. */
  const only = (board: BoardData, workspaceId: string, pipelineId?: string): BoardData => {
    if (pipelineId === undefined) return board
    const pipeline = board.pipelines.find((p) => p.id === pipelineId)
    if (pipeline === undefined) throw httpErrors.badRequest(`querystring/pipeline_id ${pipelineId} is not a pipeline of workspace ${workspaceId}`)
    return { pipelines: [pipeline] }
  }

  /**
   * The board, or with `?limit=` a page of it (docs/api.md, "Paged boards"); without `limit` the
   * answer is the whole board as it always was.
   */
  const boardOrPage = async (
    reply: FastifyReply, workspaceId: string, repoId: number, query: BoardQueryType, version: number
  ): Promise<BoardData | SerializedAnswer> => {
    if (query.limit === undefined) {
      if (query.after !== undefined) throw httpErrors.badRequest('querystring/after needs limit')
      unfiltered(query)
      // Kept in memory and patched for the writes that say which rows they changed (db/board-model.ts);
      // only the pipelines a write changed are serialized again.
      const at = { version, changed: (from: number, to: number) => fastify.planningWrites.boardRows(repoId, from, to) }
      return boardJson(reply, only(await board.board(workspaceId, repoId, at), workspaceId, query.pipeline_id))
    }
    const names = (list?: string) => list === undefined ? undefined : [...new Set(list.split(',').map((s) => s.trim()).filter((s) => s !== ''))]
    const filter = { text: query.q, labels: names(query.label), assignees: names(query.assignee), estimate: query.estimate }
    return await board.boardPage(workspaceId, repoId, { limit: query.limit, pipelineId: query.pipeline_id, after: query.after, filter })
  }
  /** The filters are those of a paged read: a whole board (or its CSV) is never filtered. */
  const unfiltered = (query: BoardQueryType) => {
    const given = BOARD_FILTERS.find((name) => query[name] !== undefined)
    if (given !== undefined) throw httpErrors.badRequest(`querystring/${given} needs limit`)
  }
  const cacheKey = (query: BoardQueryType) => `${query.pipeline_id ?? ''}${query.limit === undefined
    ? ''
    : `:${query.limit}:${query.after ?? ''}:${JSON.stringify(BOARD_FILTERS.map((name) => query[name] ?? null))}`}`

  fastify.get('/p2/workspaces', {
    schema: { tags: [...tags, 'extensions'], summary: 'Workspaces holding a repository you can read, with those repositories and their pipelines (extension)', response: { 200: Type.Array(WorkspaceSummary), ...errorResponses } }
  }, async (request) => await workspaces.holdingAny([...await fastify.planningAuth.readable(request)]))

  fastify.get('/p2/repositories/:repo_id/workspaces', {
    schema: { tags, summary: 'Workspaces holding the repository, oldest first', params: RepoParams, response: { 200: Type.Array(Workspace), ...errorResponses } }
  }, async (request) => {
    await requireAccess(request, request.params.repo_id, 'read')
    const readable = await fastify.planningAuth.readable(request)
    return (await workspaces.forRepository(request.params.repo_id)).map((w) => ({ ...w, repositories: w.repositories.filter((id) => readable.has(id)) }))
  })

  fastify.get('/p2/workspaces/:workspace_id/repositories/:repo_id/board', {
    schema: { tags, summary: 'Board of a workspace for one repository', params: WorkspaceRepoParams, querystring: BoardQuery, response: { 200: Board, ...errorResponses } }
  }, (request, reply) => {
    const { workspace_id: workspaceId, repo_id: repoId } = request.params
    const pipelineId = request.query.pipeline_id
    if (wantsCsv(request)) {
      unfiltered(request.query)
      return boardAsCsv(request, reply, repoId, async () => {
        await workspaceHolding(workspaceId, repoId)
        return only(await board.board(workspaceId, repoId), workspaceId, pipelineId)
      })
    }
    return fastify.planningCachedRead(request, reply, repoId, `board:${workspaceId}:${repoId}:${cacheKey(request.query)}`, async (version) => {
      await workspaceHolding(workspaceId, repoId)
      return await boardOrPage(reply, workspaceId, repoId, request.query, version)
    })
  })

  fastify.get('/p1/repositories/:repo_id/board', {
    schema: { tags, summary: 'Board of the oldest workspace holding the repository', params: RepoParams, querystring: BoardQuery, response: { 200: Board, ...errorResponses } }
  }, (request, reply) => {
    const { repo_id: repoId } = request.params
    const pipelineId = request.query.pipeline_id
    if (wantsCsv(request)) {
      unfiltered(request.query)
      return boardAsCsv(request, reply, repoId, async () => {
        const workspaceId = await oldestWorkspace(repoId)
        return only(await board.board(workspaceId, repoId), workspaceId, pipelineId)
      })
    }
    return fastify.planningCachedRead(request, reply, repoId, `board:oldest:${repoId}:${cacheKey(request.query)}`, async (version) => {
      return await boardOrPage(reply, await oldestWorkspace(repoId), repoId, request.query, version)
    })
  })

  fastify.post('/p2/workspaces/:workspace_id/repositories/:repo_id/issues/:issue_number/moves', {
    schema: { tags, summary: 'Move an issue in a workspace', params: WorkspaceIssueParams, body: MoveBody, response: { 200: EmptyBody, ...errorResponses } }
  }, async (request, reply) => {
    const { workspace_id: workspaceId, repo_id: repoId, issue_number: number } = request.params
    const repository = await requireAccess(request, repoId, 'write')
    const position = parsePosition(request.body.position)
    await board.move(request.planningUser!, await workspaceHolding(workspaceId, repoId), repository, number, request.body.pipeline_id, position)
    return reply.status(200).send(undefined)
  })

  fastify.post('/p1/repositories/:repo_id/issues/:issue_number/moves', {
    schema: { tags, summary: 'Move an issue in the oldest workspace', params: IssueParams, body: MoveBody, response: { 200: EmptyBody, ...errorResponses } }
  }, async (request, reply) => {
    const { repo_id: repoId, issue_number: number } = request.params
    const repository = await requireAccess(request, repoId, 'write')
    const position = parsePosition(request.body.position)
    await board.move(request.planningUser!, await oldestWorkspace(repoId), repository, number, request.body.pipeline_id, position)
    return reply.status(200).send(undefined)
  })
}

export default fp(boards, {
  name: 'planning-boards', fastify: '5.x', encapsulate: true, dependencies: ['planning-auth', 'planning-database', 'planning-read-cache']
})
