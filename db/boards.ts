import { httpErrors } from '@fastify/sensible'
import { transactional, type Db } from './connection.js'
import type { DomainEvents } from './domain-events.js'
import { nowIso } from './ids.js'
import type { Repository } from './repositories.js'
import type { User } from './users.js'
import { createWorkspacesRepository } from './workspaces.js'

export interface BoardIssue {
  issue_number: number
  is_epic: boolean
  estimate?: { value: number }
  position?: number
}

export interface Board {
  pipelines: Array<{ id: string, name: string, issues: BoardIssue[] }>
}

export type MovePosition = 'top' | 'bottom' | number

/** Spacing of positions made by top/bottom moves, and the first position of an empty pipeline. */
const GAP = 65536
const FIRST = 2 ** 32
/** Past the last usable rank (ranks are safe integers). */
const CEILING = 2 ** 53
/** A rebalanced window leaves at least this much room between neighbours. */
const MIN_SPACING = 1024

interface Placement { pipeline_id: string, pipeline_name: string, rank: number, is_open: number }

/**
 * Boards and moves. A pipeline is ordered by `rank` (see migration 1): prioritized issues by
 * position, unprioritized ones by a key derived from their number. A move writes one position
 * between its new neighbours; only when two neighbours leave no room does it respace a small
 * window around the insertion point, so its cost does not grow with the pipeline's size.
 */
export function createBoardsRepository (db: Db, events: DomainEvents) {
  const workspaces = createWorkspacesRepository(db)
  const boardRows = db.prepare<[string, number], {
    pipeline_id: string, number: number, position: number | null, estimate: number | null, is_epic: number
  }>(`
    SELECT p.pipeline_id, p.number, p.position, i.estimate, i.is_epic
    FROM placements p JOIN issues i ON i.id = p.issue_id
    WHERE p.workspace_id = ? AND p.repo_id = ? AND p.is_open = 1
    ORDER BY p.pipeline_id, p.rank, p.issue_id`)
  const issueByNumber = db.prepare<[number, number], { id: number, number: number, title: string }>(
    'SELECT id, number, title FROM issues WHERE repo_id = ? AND number = ?')
  const placement = db.prepare<[number, string], Placement>(`
    SELECT p.pipeline_id, pl.name AS pipeline_name, p.rank, p.is_open
    FROM placements p JOIN pipelines pl ON pl.id = p.pipeline_id
    WHERE p.issue_id = ? AND p.workspace_id = ?`)
  // The other open issues of the repository in a pipeline, in order (index-only scans).
  const ranksFrom = db.prepare<[string, number, number, number, number], { issue_id: number, rank: number }>(`
    SELECT issue_id, rank FROM placements
    WHERE pipeline_id = ? AND repo_id = ? AND is_open = 1 AND issue_id <> ?
    ORDER BY rank, issue_id LIMIT ? OFFSET ?`)
  const lastRank = db.prepare<[string, number, number], { rank: number }>(`
    SELECT rank FROM placements
    WHERE pipeline_id = ? AND repo_id = ? AND is_open = 1 AND issue_id <> ?
    ORDER BY rank DESC, issue_id DESC LIMIT 1`)
  const countBelow = db.prepare<[string, number, number, number], { n: number }>(`
    SELECT count(*) AS n FROM placements
    WHERE pipeline_id = ? AND repo_id = ? AND is_open = 1 AND issue_id <> ? AND rank < ?`)
  const setPlacement = db.prepare<[string, number, number, string]>(
    'UPDATE placements SET pipeline_id = ?, position = ? WHERE issue_id = ? AND workspace_id = ?')
  const setPosition = db.prepare<[number, number, string]>(
    'UPDATE placements SET position = ? WHERE issue_id = ? AND workspace_id = ?')
  const insertTransfer = db.prepare<[number, number, string, string, string, string]>(`
    INSERT INTO issue_events (issue_id, user_id, type, created_at, from_pipeline, to_pipeline, workspace_id)
    VALUES (?, ?, 'transferIssue', ?, ?, ?, ?)`)

  /** A rank strictly between two neighbours (undefined: the pipeline's start or end), if there is room. */
  function between (prev: number | undefined, next: number | undefined): number | undefined {
    if (prev === undefined && next === undefined) return FIRST
    if (next === undefined) return prev! + GAP < CEILING ? prev! + GAP : undefined
    if (prev === undefined) {
      if (next > FIRST) return FIRST
      return next - GAP >= 0 ? next - GAP : (next >= 2 ? Math.floor(next / 2) : undefined)
    }
    const mid = prev + Math.floor((next - prev) / 2)
    return mid > prev && mid < next ? mid : undefined
  }

  /**
   * Spreads a window of the pipeline around `index` (growing it until there is room) and returns
   * the rank left for the moved issue. Amortized, this touches a handful of rows per move.
   */
  function respace (pipelineId: string, repoId: number, issueId: number, workspaceId: string, index: number): number {
    for (let half = 16; ; half *= 4) {
      const start = Math.max(0, index - half)
      const rows = ranksFrom.all(pipelineId, repoId, issueId, 2 * half + 1, start)
      const window = rows.slice(0, 2 * half)
      const atEnd = rows.length <= 2 * half
      const lower = start === 0 ? -1 : ranksFrom.get(pipelineId, repoId, issueId, 1, start - 1)!.rank
      const upper = atEnd ? CEILING : rows[2 * half].rank
      const count = window.length + 1
      const step = Math.floor((upper - lower) / (count + 1))
      if (step >= MIN_SPACING || (start === 0 && atEnd && step >= 1)) {
        const at = Math.min(index - start, window.length)
        let rank = lower
        let mine = 0
        for (let j = 0; j < count; j++) {
          rank += step
          if (j === at) mine = rank
          else setPosition.run(rank, window[j < at ? j : j - 1].issue_id, workspaceId)
        }
        return mine
      }
      if (start === 0 && atEnd) throw httpErrors.conflict('the pipeline has no room left for this position')
    }
  }

  // Boards are read far more often than they change (dashboards poll them), so built boards are
  // kept until anything is written: total_changes() counts this connection's writes and
  // data_version moves when another connection (the admin CLI, say) commits.
  const writes = db.prepare<[], { changes: number }>('SELECT total_changes() AS changes')
  const cache = new Map<string, { version: string, board: Board }>()
  const version = (): string => `${writes.get()!.changes}:${db.pragma('data_version', { simple: true }) as number}`

  function buildBoard (workspaceId: string, repoId: number): Board {
    const pipelines = workspaces.pipelines(workspaceId).map((p) => ({ id: p.id, name: p.name, issues: [] as BoardIssue[] }))
    const byId = new Map(pipelines.map((p) => [p.id, p]))
    for (const row of boardRows.all(workspaceId, repoId)) {
      const issue: BoardIssue = { issue_number: row.number, is_epic: row.is_epic === 1 }
      if (row.estimate !== null) issue.estimate = { value: row.estimate }
      if (row.position !== null) issue.position = row.position
      byId.get(row.pipeline_id)?.issues.push(issue)
    }
    return { pipelines }
  }

  return {
    /** The board of one repository in a workspace; callers must not modify what they get. */
    board (workspaceId: string, repoId: number): Board {
      const key = `${workspaceId}\u0000${repoId}`
      const now = version()
      const hit = cache.get(key)
      if (hit !== undefined && hit.version === now) return hit.board
      const board = buildBoard(workspaceId, repoId)
      if (cache.size >= 256) cache.delete(cache.keys().next().value!)
      cache.set(key, { version: now, board })
      return board
    },

    /** Moves an issue to a pipeline of the workspace at `position`; one transaction with its events. */
    move: transactional(db, (user: User, workspaceId: string, repo: Repository, issueNumber: number, pipelineId: string, position: MovePosition): void => {
      const issue = issueByNumber.get(repo.id, issueNumber)
      if (issue === undefined) throw httpErrors.notFound(`issue ${issueNumber} not found in repository ${repo.id}`)
      const target = workspaces.pipeline(pipelineId)
      if (target === undefined || target.workspace_id !== workspaceId) {
        throw httpErrors.badRequest(`pipeline_id ${pipelineId} is not a pipeline of workspace ${workspaceId}`)
      }
      const current = placement.get(issue.id, workspaceId)
      if (current === undefined) throw httpErrors.notFound(`issue ${issueNumber} is not on the board of workspace ${workspaceId}`)

      const workspace = workspaces.requireWorkspace(workspaceId)
      const samePipeline = current.pipeline_id === pipelineId
      const wantsIndexes = samePipeline && events.wants('issue_reprioritized', repo.id)
      const fromIndex = wantsIndexes ? countBelow.get(pipelineId, repo.id, issue.id, current.rank)!.n : 0

      let index: number
      let prev: number | undefined
      let next: number | undefined
      if (position === 'bottom') {
        index = Number.POSITIVE_INFINITY
        prev = lastRank.get(pipelineId, repo.id, issue.id)?.rank
      } else {
        index = position === 'top' ? 0 : position
        const around = ranksFrom.all(pipelineId, repo.id, issue.id, index === 0 ? 1 : 2, Math.max(0, index - 1))
        if (index === 0) {
          next = around[0]?.rank
        } else if (around.length === 0) {
          // Past the end: the bottom.
          index = Number.POSITIVE_INFINITY
          prev = lastRank.get(pipelineId, repo.id, issue.id)?.rank
        } else {
          prev = around[0].rank
          next = around[1]?.rank
        }
      }
      let rank = between(prev, next)
      if (rank === undefined) {
        const at = Number.isFinite(index) ? index : countBelow.get(pipelineId, repo.id, issue.id, CEILING)!.n
        rank = respace(pipelineId, repo.id, issue.id, workspaceId, at)
      }
      setPlacement.run(pipelineId, rank, issue.id, workspaceId)

      const context = { repo, issue, user, workspace: { id: workspace.id, name: workspace.name } }
      if (!samePipeline) {
        insertTransfer.run(issue.id, user.id, nowIso(), current.pipeline_name, target.name, workspaceId)
        events.emit({ ...context, type: 'issue_transfer', from: current.pipeline_name, to: target.name })
      } else if (wantsIndexes) {
        const toIndex = countBelow.get(pipelineId, repo.id, issue.id, rank)!.n
        if (toIndex !== fromIndex) {
          events.emit({ ...context, type: 'issue_reprioritized', pipeline: target.name, from: fromIndex, to: toIndex })
        }
      }
    })
  }
}

export type BoardsRepository = ReturnType<typeof createBoardsRepository>
