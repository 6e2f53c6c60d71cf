import { sql } from 'kysely'
import type { Static } from '../schemas/common.js'
import type { Board as BoardSchema, BoardIssue as BoardIssueSchema } from '../schemas/boards.js'
import type { DomainEvents } from './domain-events.js'
import { Conflict, Invalid, NotFound } from './errors.js'
import { nowIso } from './ids.js'
import { between, CEILING, spread } from './ranking.js'
import { issueByNumber, type Repository } from './repositories.js'
import { changeVersion, writeTransaction, type Executor } from './transaction.js'
import type { User } from './users.js'
import { createWorkspacesRepository } from './workspaces.js'

export type Board = Static<typeof BoardSchema>
export type BoardIssue = Static<typeof BoardIssueSchema>
export type MovePosition = 'top' | 'bottom' | number

/** The other open issues of the repository in a pipeline (the moved one left out), in board order. */
function others (db: Executor, pipelineId: string, repoId: number, issueId: number) {
  return db.selectFrom('placements').where('pipeline_id', '=', pipelineId).where('repo_id', '=', repoId)
    .where('is_open', '=', 1).where('issue_id', '<>', issueId)
}

async function ranksFrom (db: Executor, pipelineId: string, repoId: number, issueId: number, limit: number, offset: number) {
  return await others(db, pipelineId, repoId, issueId).select(['issue_id', 'rank'])
    .orderBy('rank').orderBy('issue_id').limit(limit).offset(offset).execute()
}

async function lastRank (db: Executor, pipelineId: string, repoId: number, issueId: number): Promise<number | undefined> {
  const row = await others(db, pipelineId, repoId, issueId).select('rank').orderBy('rank', 'desc').orderBy('issue_id', 'desc').limit(1).executeTakeFirst()
  return row === undefined ? undefined : Number(row.rank)
}

async function countBelow (db: Executor, pipelineId: string, repoId: number, issueId: number, rank: number): Promise<number> {
  const row = await others(db, pipelineId, repoId, issueId).where('rank', '<', rank).select(sql<number>`count(*)`.as('n')).executeTakeFirst()
  return Number(row?.n ?? 0)
}

/**
 * Spreads a window of the pipeline around `index` (growing it until there is room) and returns
 * the rank left for the moved issue. Amortized, this touches a handful of rows per move.
 */
async function respace (db: Executor, pipelineId: string, repoId: number, issueId: number, workspaceId: string, index: number): Promise<number> {
  for (let half = 16; ; half *= 4) {
    const start = Math.max(0, index - half)
    const rows = await ranksFrom(db, pipelineId, repoId, issueId, 2 * half + 1, start)
    const window = rows.slice(0, 2 * half)
    const atEnd = rows.length <= 2 * half
    const lower = start === 0 ? -1 : Number((await ranksFrom(db, pipelineId, repoId, issueId, 1, start - 1))[0].rank)
    const upper = atEnd ? CEILING : Number(rows[2 * half].rank)
    const ranks = spread(lower, upper, window.length + 1, start === 0 && atEnd)
    if (ranks !== undefined) {
      const at = Math.min(index - start, window.length)
      for (let j = 0; j < ranks.length; j++) {
        if (j === at) continue
        const neighbour = window[j < at ? j : j - 1].issue_id
        await db.updateTable('placements').set({ position: ranks[j], rank: ranks[j] })
          .where('issue_id', '=', neighbour).where('workspace_id', '=', workspaceId).execute()
      }
      return ranks[at]
    }
    if (start === 0 && atEnd) throw new Conflict('the pipeline has no room left for this position')
  }
}

/**
 * Boards and moves. A move finds the issue and its new neighbours, picks a rank between them
 * (see `ranking.ts`), writes it and announces the change, all in one transaction.
 */
export function createBoardsRepository (db: Executor, events: DomainEvents) {
  const workspaces = createWorkspacesRepository(db)

  async function buildBoard (workspaceId: string, repoId: number): Promise<Board> {
    const pipelines = (await workspaces.pipelines(workspaceId)).map((p) => ({ id: p.id, name: p.name, issues: [] as BoardIssue[] }))
    const byId = new Map(pipelines.map((p) => [p.id, p]))
    const rows = await db.selectFrom('placements as p').innerJoin('issues as i', 'i.id', 'p.issue_id')
      .select(['p.pipeline_id', 'p.number', 'p.position', 'i.estimate', 'i.is_epic'])
      .where('p.workspace_id', '=', workspaceId).where('p.repo_id', '=', repoId).where('p.is_open', '=', 1)
      .orderBy('p.pipeline_id').orderBy('p.rank').orderBy('p.issue_id').execute()
    for (const row of rows) {
      const issue: BoardIssue = { issue_number: Number(row.number), is_epic: row.is_epic === 1 }
      if (row.estimate !== null) issue.estimate = { value: row.estimate }
      if (row.position !== null) issue.position = Number(row.position)
      byId.get(row.pipeline_id)?.issues.push(issue)
    }
    return { pipelines }
  }

  // Boards are read far more often than they change (dashboards poll them), so built boards are
  // kept until anything is written: the change counter moves with every write transaction, in
  // this process or another (the admin CLI, another server on the same database).
  const cache = new Map<string, { version: number, board: Board }>()

  return {
    /** The board of one repository in a workspace; callers must not modify what they get. */
    async board (workspaceId: string, repoId: number): Promise<Board> {
      const key = `${workspaceId}\u0000${repoId}`
      const version = await changeVersion(db)
      const hit = cache.get(key)
      if (hit !== undefined && hit.version === version) return hit.board
      const board = await buildBoard(workspaceId, repoId)
      if (cache.size >= 256) cache.delete(cache.keys().next().value!)
      cache.set(key, { version, board })
      return board
    },

    /** Moves an issue to a pipeline of the workspace at `position`; one transaction with its events. */
    async move (user: User, workspaceId: string, repo: Repository, issueNumber: number, pipelineId: string, position: MovePosition): Promise<void> {
      await writeTransaction(db, async (trx) => {
        const spaces = createWorkspacesRepository(trx)
        const issue = await issueByNumber(trx, repo.id, issueNumber)
        if (issue === undefined) throw new NotFound(`issue ${issueNumber} not found in repository ${repo.id}`)
        const target = await spaces.pipeline(pipelineId)
        if (target === undefined || target.workspace_id !== workspaceId) {
          throw new Invalid(`pipeline_id ${pipelineId} is not a pipeline of workspace ${workspaceId}`)
        }
        const current = await trx.selectFrom('placements as p').innerJoin('pipelines as pl', 'pl.id', 'p.pipeline_id')
          .select(['p.pipeline_id', 'pl.name as pipeline_name', 'p.rank'])
          .where('p.issue_id', '=', issue.id).where('p.workspace_id', '=', workspaceId).executeTakeFirst()
        if (current === undefined) throw new NotFound(`issue ${issueNumber} is not on the board of workspace ${workspaceId}`)

        const workspace = await spaces.requireWorkspace(workspaceId)
        const samePipeline = current.pipeline_id === pipelineId
        const wantsIndexes = samePipeline && await events.wants(trx, 'issue_reprioritized', repo.id)
        const fromIndex = wantsIndexes ? await countBelow(trx, pipelineId, repo.id, issue.id, Number(current.rank)) : 0

        let index: number
        let prev: number | undefined
        let next: number | undefined
        if (position === 'bottom') {
          index = Number.POSITIVE_INFINITY
          prev = await lastRank(trx, pipelineId, repo.id, issue.id)
        } else {
          index = position === 'top' ? 0 : position
          const around = await ranksFrom(trx, pipelineId, repo.id, issue.id, index === 0 ? 1 : 2, Math.max(0, index - 1))
          if (index === 0) {
            next = around[0] === undefined ? undefined : Number(around[0].rank)
          } else if (around.length === 0) {
            // Past the end: the bottom.
            index = Number.POSITIVE_INFINITY
            prev = await lastRank(trx, pipelineId, repo.id, issue.id)
          } else {
            prev = Number(around[0].rank)
            next = around[1] === undefined ? undefined : Number(around[1].rank)
          }
        }
        let rank = between(prev, next)
        if (rank === undefined) {
          const at = Number.isFinite(index) ? index : await countBelow(trx, pipelineId, repo.id, issue.id, CEILING)
          rank = await respace(trx, pipelineId, repo.id, issue.id, workspaceId, at)
        }
        await trx.updateTable('placements').set({ pipeline_id: pipelineId, position: rank, rank })
          .where('issue_id', '=', issue.id).where('workspace_id', '=', workspaceId).execute()

        const context = { repo, issue, user, workspace: { id: workspace.id, name: workspace.name } }
        if (!samePipeline) {
          await trx.insertInto('issue_events').values({
            issue_id: issue.id, user_id: user.id, type: 'transferIssue', created_at: nowIso(), from_pipeline: current.pipeline_name,
            to_pipeline: target.name, workspace_id: workspaceId, from_estimate: null, to_estimate: null
          }).execute()
          await events.emit(trx, { ...context, type: 'issue_transfer', from: current.pipeline_name, to: target.name })
        } else if (wantsIndexes) {
          const toIndex = await countBelow(trx, pipelineId, repo.id, issue.id, rank)
          if (toIndex !== fromIndex) {
            await events.emit(trx, { ...context, type: 'issue_reprioritized', pipeline: target.name, from: fromIndex, to: toIndex })
          }
        }
      })
    }
  }
}

export type BoardsRepository = ReturnType<typeof createBoardsRepository>
