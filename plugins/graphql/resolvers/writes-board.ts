import type { MovePosition } from '../../../db/boards.js'
import { Invalid } from '../../../db/errors.js'
import { encodeId, pipelineIssueKey } from '../ids.js'
import { pipelineObject } from './objects.js'
import { echo, mayWrite, MAX_BATCH, writableIssue, type Ctx, type Input, type Target } from './write-access.js'
import { pipelineFor } from './visibility.js'

export interface PipelineIssuesMove {
  pipelineId: string
  pipelineIssueIds: string[]
  position?: 'START' | 'END' | null
  afterPipelineIssueId?: string | null
  beforePipelineIssueId?: string | null
}

/** Board moves of many issues at once: each the operation of POST …/moves. */
export const boardWrites = {
  async movePipelineIssues (_: unknown, { input }: { input: Input & PipelineIssuesMove }, ctx: Ctx) {
    mayWrite(ctx)
    const { pipeline } = await pipelineFor(ctx, input.pipelineId)
    const ways = [input.position, input.afterPipelineIssueId, input.beforePipelineIssueId].filter((w) => w != null).length
    if (ways !== 1) throw new Invalid('give exactly one of position, afterPipelineIssueId and beforePipelineIssueId')
    const keys = [...new Set(input.pipelineIssueIds)].map(pipelineIssueKey)
    if (keys.length > MAX_BATCH) throw new Invalid(`pipelineIssueIds must not list more than ${MAX_BATCH} issues`)
    const targets: Target[] = []
    for (const key of keys) {
      const target = await writableIssue(ctx, encodeId('Issue', key.issueId))
      if (key.workspaceId !== pipeline.workspace_id) throw new Invalid(`pipeline issue of issue ${target.issue.number} is not on the board of pipeline ${input.pipelineId}`)
      targets.push(target)
    }
    const anchorId = input.afterPipelineIssueId ?? input.beforePipelineIssueId
    const anchor = anchorId == null ? undefined : pipelineIssueKey(anchorId)
    if (anchor !== undefined && anchor.workspaceId !== pipeline.workspace_id) throw new Invalid('the anchor is not on this board')
    const move = async ({ issue, repo }: Target, position: MovePosition) =>
      await ctx.store.boards.move(ctx.user, pipeline.workspace_id, repo, issue.number, pipeline.id, position)

    if (input.position === 'START') for (const target of [...targets].reverse()) await move(target, 'top')
    else if (input.position === 'END') for (const target of targets) await move(target, 'bottom')
    else {
      // After (or before) the anchor, in the order given: a 0-based index among the repository's
      // other issues of the pipeline, as the REST move takes it.
      let after = input.afterPipelineIssueId != null ? anchor!.issueId : undefined
      for (const target of targets) {
        const [row] = await ctx.reads.issuesByIds([after ?? anchor!.issueId])
        if (row === undefined || row.repo_id !== target.repo.id) throw new Invalid('the anchor must be an issue of the same repository as the issues moved')
        const board = await ctx.store.boards.board(pipeline.workspace_id, target.repo.id)
        const others = (board.pipelines.find((p) => p.id === pipeline.id)?.issues ?? []).map((i) => i.issue_number).filter((n) => n !== target.issue.number)
        const at = others.indexOf(row.number)
        if (at < 0) throw new Invalid(`issue ${row.number} is not in pipeline ${pipeline.name}`)
        await move(target, after === undefined ? at : at + 1)
        if (after !== undefined) after = target.issue.id
      }
    }
    const placements = await ctx.reads.placementsOf(targets.map((t) => t.issue.id))
    const placed = (t: Target) => placements.find((p) => p.issue_id === t.issue.id && p.workspace_id === pipeline.workspace_id)
    const pipelineIssues = targets.map(placed).filter((p) => p !== undefined)
    return { ...echo(input), pipeline: pipelineObject(pipeline), pipelineIssues: pipelineIssues.map((p) => ({ __typename: 'PipelineIssue' as const, ...p })) }
  }
}
