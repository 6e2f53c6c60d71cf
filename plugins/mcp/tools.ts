import type { FastifyInstance, FastifyRequest } from 'fastify'
import { Type, type Static, type TObject } from '@sinclair/typebox'
import { Invalid, NotFound } from '../../db/errors.js'
import { createIssueSearch } from '../../db/issue-search.js'
import { issueUrl } from '../../db/repositories.js'
import { createReportsRepository } from '../../db/reports.js'
import { createHostIssues } from '../../services/host-issues.js'
import { parsePosition } from '../boards.js'
import { workspaceAccess } from '../sprints.js'

/** What a tool runs with: the app, and the request whose credential it acts for. */
export interface ToolContext { fastify: FastifyInstance, request: FastifyRequest, now: () => number }

export interface Tool<S extends TObject = TObject> {
  name: string
  description: string
  input: S
  /** true: it changes something, so a read-scoped token (or a session from elsewhere) is refused */
  writes: boolean
  run: (ctx: ToolContext, args: Static<S>) => Promise<Record<string, unknown>>
}

const tool = <S extends TObject>(t: Tool<S>): Tool => t as unknown as Tool

const RepoId = Type.Integer({ minimum: 1, maximum: Number.MAX_SAFE_INTEGER, description: 'the repository\'s id (the issue host\'s numeric id)' })
const IssueNumber = Type.Integer({ minimum: 1, maximum: Number.MAX_SAFE_INTEGER, description: 'the issue\'s number in its repository' })
const WorkspaceId = Type.String({ minLength: 1, maxLength: 100, description: 'a workspace id, as list_workspaces gives it' })
const PipelineId = Type.String({ minLength: 1, maxLength: 100, description: 'a pipeline id, as list_workspaces or get_board give it' })
const Position = Type.Union([Type.Literal('top'), Type.Literal('bottom'), Type.Integer({ minimum: 0, maximum: 1_000_000 })], {
  description: '"top", "bottom" or a 0-based index in the pipeline (default "top")'
})
const IssueRef = Type.Object({ repo_id: RepoId, issue_number: IssueNumber }, { additionalProperties: false })
const Limit = (fallback: number, max: number) => Type.Optional(Type.Integer({ minimum: 1, maximum: max, description: `how many issues at most (default ${fallback}, at most ${max})` }))

/** The workspace's repositories the caller can read; the same not-found as an unknown workspace when none. */
async function readableIn (ctx: ToolContext, workspaceId: string): Promise<{ name: string, repositories: number[], canRead: (id: number) => boolean }> {
  const workspace = await workspaceAccess(ctx.fastify).readable(ctx.request, workspaceId)
  return { name: workspace.name, repositories: workspace.repositories.filter(workspace.canRead), canRead: workspace.canRead }
}

/** One issue as an assistant reads it: where it is, what it is, who and what is on it. */
async function describeIssue (ctx: ToolContext, repoId: number, number: number): Promise<Record<string, unknown>> {
  const store = ctx.fastify.planningStore
  const repository = await ctx.fastify.planningAuth.requireAccess(ctx.request, repoId, 'read')
  const data = (await store.issues.dataOf(repoId, [number])).get(number)
  if (data === undefined) throw new NotFound(`issue ${number} not found in repository ${repoId}`)
  const readable = await ctx.fastify.planningAuth.readable(ctx.request)
  const dependencies = (await store.dependencies.list(repoId, (id) => readable.has(id)))
  const same = (ref: { repo_id: number, issue_number: number }) => ref.repo_id === repoId && ref.issue_number === number
  return {
    repo_id: repoId,
    repository: `${repository.owner}/${repository.name}`,
    issue_number: number,
    html_url: issueUrl(repository, number),
    ...data,
    blocked_by: dependencies.filter((d) => same(d.blocked)).map((d) => d.blocking),
    blocks: dependencies.filter((d) => same(d.blocking)).map((d) => d.blocked)
  }
}

const hostIssuesOf = (ctx: ToolContext) => createHostIssues(ctx.fastify.planningStore, { fetch: ctx.fastify.planningHosts.fetch })

/**
 * The MCP tools (docs/mcp.md): each names the operation the REST API's twin calls, with the same
 * permission checks; a refusal comes back as a tool result with `isError`.
 */
export const TOOLS: Tool[] = [
  tool({
    name: 'list_workspaces',
    description: 'List the workspaces you can read, with their repositories (ids) and pipelines (ids and names, in board order). Start here: the other tools take these ids.',
    input: Type.Object({}, { additionalProperties: false }),
    writes: false,
    async run (ctx) {
      const readable = await ctx.fastify.planningAuth.readable(ctx.request)
      const workspaces = await ctx.fastify.planningStore.workspaces.holdingAny([...readable])
      return {
        workspaces: workspaces.map((w) => ({
          id: w.id,
          name: w.name,
          description: w.description,
          repositories: w.repositories.filter((id) => readable.has(id)),
          pipelines: w.pipelines.map((p) => ({ id: p.id, name: p.name }))
        }))
      }
    }
  }),
  tool({
    name: 'get_board',
    description: 'Show a workspace\'s board: each pipeline in order with its count of open issues, the sum of their estimates, and its first issues (repository, number, title, estimate) in board order. Use search_issues to see more of one pipeline.',
    input: Type.Object({
      workspace_id: WorkspaceId,
      repo_id: Type.Optional(RepoId),
      issues_per_pipeline: Type.Optional(Type.Integer({ minimum: 0, maximum: 100, description: 'issues listed per pipeline (default 20, at most 100)' }))
    }, { additionalProperties: false }),
    writes: false,
    async run (ctx, args) {
      const workspace = await readableIn(ctx, args.workspace_id)
      let repositories = workspace.repositories
      if (args.repo_id !== undefined) {
        if (!workspace.repositories.includes(args.repo_id)) throw new NotFound(`workspace ${args.workspace_id} holds no repository ${args.repo_id} you can read`)
        repositories = [args.repo_id]
      }
      const store = ctx.fastify.planningStore
      const search = createIssueSearch(store.db)
      const [pipelines, counts] = await Promise.all([store.workspaces.pipelines(args.workspace_id), search.pipelineCounts(args.workspace_id, repositories)])
      const limit = args.issues_per_pipeline ?? 20
      return {
        workspace: { id: args.workspace_id, name: workspace.name },
        pipelines: await Promise.all(pipelines.map(async (p) => {
          const listed = limit === 0 ? [] : (await search.search({ workspaceId: args.workspace_id, repoIds: repositories, pipelineId: p.id, limit })).issues
          const count = counts.get(p.id) ?? { issues: 0, points: 0 }
          return {
            id: p.id,
            name: p.name,
            issue_count: count.issues,
            total_estimate: count.points,
            issues: listed.map((i) => ({ repo_id: i.repo_id, issue_number: i.issue_number, title: i.title, estimate: i.estimate, is_epic: i.is_epic }))
          }
        }))
      }
    }
  }),
  tool({
    name: 'search_issues',
    description: 'Find open issues on a workspace\'s board by words in the title, pipeline, label or assignee (all optional, combined with AND), in board order. Answers the total count and the first matches.',
    input: Type.Object({
      workspace_id: WorkspaceId,
      query: Type.Optional(Type.String({ maxLength: 200, description: 'words the title contains (case-insensitive)' })),
      pipeline_id: Type.Optional(PipelineId),
      label: Type.Optional(Type.String({ minLength: 1, maxLength: 100, description: 'a label name the issue has' })),
      assignee: Type.Optional(Type.String({ minLength: 1, maxLength: 100, description: 'a login assigned to the issue' })),
      limit: Limit(20, 100)
    }, { additionalProperties: false }),
    writes: false,
    async run (ctx, args) {
      const workspace = await readableIn(ctx, args.workspace_id)
      const found = await createIssueSearch(ctx.fastify.planningStore.db).search({
        workspaceId: args.workspace_id,
        repoIds: workspace.repositories,
        text: args.query,
        pipelineId: args.pipeline_id,
        label: args.label,
        assignee: args.assignee,
        limit: args.limit ?? 20
      })
      return { total: found.total, issues: found.issues }
    }
  }),
  tool({
    name: 'get_issue',
    description: 'Show one issue: title, state, pipeline in each workspace, estimate, labels, assignees, milestone, and the issues it blocks or is blocked by.',
    input: IssueRef,
    writes: false,
    async run (ctx, args) {
      return await describeIssue(ctx, args.repo_id, args.issue_number)
    }
  }),
  tool({
    name: 'move_issue',
    description: 'Move an issue to a pipeline (and a position in it) on a workspace\'s board. Needs write permission on the repository.',
    input: Type.Object({
      workspace_id: WorkspaceId,
      repo_id: RepoId,
      issue_number: IssueNumber,
      pipeline_id: PipelineId,
      position: Type.Optional(Position)
    }, { additionalProperties: false }),
    writes: true,
    async run (ctx, args) {
      const { planningStore: store, planningAuth: auth } = ctx.fastify
      const repository = await auth.requireAccess(ctx.request, args.repo_id, 'write')
      if (!await store.workspaces.holds(args.workspace_id, args.repo_id)) throw new NotFound(`workspace ${args.workspace_id} not found or does not hold repository ${args.repo_id}`)
      await store.boards.move(ctx.request.planningUser!, args.workspace_id, repository, args.issue_number, args.pipeline_id, parsePosition(args.position ?? 'top'))
      return await describeIssue(ctx, args.repo_id, args.issue_number)
    }
  }),
  tool({
    name: 'set_estimate',
    description: 'Set an issue\'s estimate (story points), or clear it with null. Needs write permission on the repository.',
    input: Type.Object({
      repo_id: RepoId,
      issue_number: IssueNumber,
      estimate: Type.Union([Type.Number({ minimum: 0, maximum: 1_000_000 }), Type.Null()], { description: 'points, or null to clear' })
    }, { additionalProperties: false }),
    writes: true,
    async run (ctx, args) {
      const repository = await ctx.fastify.planningAuth.requireAccess(ctx.request, args.repo_id, 'write')
      await ctx.fastify.planningStore.issues.setEstimate(ctx.request.planningUser!, repository, args.issue_number, args.estimate)
      return await describeIssue(ctx, args.repo_id, args.issue_number)
    }
  }),
  tool({
    name: 'create_issue',
    description: 'Open a new issue in a repository (on its issue host when it has one), optionally placed in a pipeline with an estimate. Needs write permission on the repository.',
    input: Type.Object({
      repo_id: RepoId,
      title: Type.String({ minLength: 1, maxLength: 256 }),
      body: Type.Optional(Type.String({ maxLength: 65_536, description: 'the description, in Markdown' })),
      labels: Type.Optional(Type.Array(Type.String({ minLength: 1, maxLength: 50 }), { maxItems: 50, uniqueItems: true })),
      assignees: Type.Optional(Type.Array(Type.String({ minLength: 1, maxLength: 100, pattern: '^[A-Za-z0-9][A-Za-z0-9_.-]*$' }), { maxItems: 10, uniqueItems: true })),
      pipeline_id: Type.Optional(PipelineId),
      position: Type.Optional(Position),
      estimate: Type.Optional(Type.Number({ minimum: 0, maximum: 1_000_000 }))
    }, { additionalProperties: false }),
    writes: true,
    async run (ctx, args) {
      const repository = await ctx.fastify.planningAuth.requireAccess(ctx.request, args.repo_id, 'write')
      const { repo_id: _repo, position, ...rest } = args
      const placed = position === undefined ? {} : { position: parsePosition(position) }
      const number = await hostIssuesOf(ctx).create(ctx.request.planningUser!, repository, { ...rest, ...placed })
      return await describeIssue(ctx, args.repo_id, number)
    }
  }),
  tool({
    name: 'close_issue',
    description: 'Close an issue (on its issue host first when it has one); it leaves every board. Needs write permission on the repository.',
    input: IssueRef,
    writes: true,
    async run (ctx, args) {
      const repository = await ctx.fastify.planningAuth.requireAccess(ctx.request, args.repo_id, 'write')
      await hostIssuesOf(ctx).setState(repository, args.issue_number, 'closed')
      return await describeIssue(ctx, args.repo_id, args.issue_number)
    }
  }),
  tool({
    name: 'add_dependency',
    description: 'Record that one issue blocks another (refused when it would close a cycle). Needs write permission on both repositories.',
    input: Type.Object({ blocking: IssueRef, blocked: IssueRef }, { additionalProperties: false }),
    writes: true,
    async run (ctx, args) {
      const auth = ctx.fastify.planningAuth
      await auth.requireAccess(ctx.request, args.blocking.repo_id, 'write')
      await auth.requireAccess(ctx.request, args.blocked.repo_id, 'write')
      const readable = await auth.readable(ctx.request)
      return await ctx.fastify.planningStore.dependencies.create(args, (id) => readable.has(id), ctx.request.planningUser!)
    }
  }),
  tool({
    name: 'sprint_report',
    description: 'Report on a sprint of a workspace (the active one unless sprint_id is given): its dates, state, points planned and closed, and the daily burndown with its ideal line.',
    input: Type.Object({
      workspace_id: WorkspaceId,
      sprint_id: Type.Optional(Type.String({ minLength: 1, maxLength: 100, description: 'a sprint id; default: the active sprint' }))
    }, { additionalProperties: false }),
    writes: false,
    async run (ctx, args) {
      const workspace = await readableIn(ctx, args.workspace_id)
      const store = ctx.fastify.planningStore
      const now = ctx.now()
      await store.sprints.settle(args.workspace_id, now)
      let sprintId = args.sprint_id
      if (sprintId === undefined) {
        const active = await store.sprints.list(args.workspace_id, workspace.canRead, now, 'active')
        if (active.length === 0) {
          throw new Invalid(`workspace ${args.workspace_id} has no active sprint (set up sprints in its settings, or pass sprint_id)`)
        }
        sprintId = active[0].id
      }
      const row = await store.sprints.row(sprintId).catch(() => undefined)
      if (row === undefined || row.workspace_id !== args.workspace_id) throw new NotFound(`sprint ${sprintId} not found in workspace ${args.workspace_id}`)
      const reports = createReportsRepository(store.db)
      const sprint = await store.sprints.get(sprintId, workspace.canRead, now)
      const burndown = await reports.sprintBurndown(row, await reports.zoneOf(args.workspace_id), workspace.canRead, now)
      return { sprint, burndown }
    }
  })
]
