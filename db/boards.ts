import { sql } from 'kysely'
import type { Static } from '../schemas/common.js'
import type { Board as BoardSchema, BoardIssue as BoardIssueSchema } from '../schemas/boards.js'
import { NOBODY, type DomainEvents } from './domain-events.js'
import { lockFor } from './engine/engine.js'
import { Conflict, Invalid, NotFound } from './errors.js'
import { nowIso } from './ids.js'
import { between, CEILING, spread } from './ranking.js'
import { prepared } from './engine/prepared.js'
import { touchPlanning, type Repository } from './repositories.js'
import { PipelineOrder, PipelineOrders } from './pipeline-order.js'
import { afterCommit, notedEvents, writeTransaction, type Executor } from './engine/transaction.js'
import type { User } from './users.js'
import { namedEventPattern, noteWebhooks } from './webhooks.js'
import { createIssueSearch } from './issue-search.js'
import { createWorkspacesRepository } from './workspaces.js'
import { filterCondition, type BoardFilter } from './board-filter.js'
import { BoardModels, type BoardAt } from './board-model.js'

export type Board = Static<typeof BoardSchema>
export type BoardIssue = Static<typeof BoardIssueSchema>
export type MovePosition = 'top' | 'bottom' | number

type Others = { pipelineId: string, repoId: number, issueId: number }

/** The other open issues of the repository in a pipeline (the moved one left out), in board order. */
function others (db: Executor, p: Others) {
  return db.selectFrom('placements').where('pipeline_id', '=', p.pipelineId).where('repo_id', '=', p.repoId)
    .where('is_open', '=', 1).where('issue_id', '<>', p.issueId)
}

const ranksQuery = prepared<Others & { limit: number, offset: number }>()((db, p) =>
  others(db, p).select(['issue_id', 'rank']).orderBy('rank').orderBy('issue_id').limit(p.limit).offset(p.offset))
const orderQuery = prepared<{ pipelineId: string, repoId: number }>()((db, p) =>
  db.selectFrom('placements').select(['issue_id', 'rank']).where('pipeline_id', '=', p.pipelineId).where('repo_id', '=', p.repoId)
    .where('is_open', '=', 1).orderBy('rank').orderBy('issue_id'))
const countBelowQuery = prepared<Others & { rank: number }>()((db, p) =>
  others(db, p).where('rank', '<', p.rank).select(sql<number>`count(*)`.as('n')))
// What a move starts from, in one statement: the issue, where it is in the workspace, and the
// target pipeline with its workspace's name (null columns tell what is missing).
const moveStartQuery = prepared<{ repoId: number, number: number, workspaceId: string, targetId: string, reprioritized: string, transfer: string }>()((db, p) =>
  db.selectFrom('issues as i')
    .leftJoin('placements as cur', (join) => join.onRef('cur.issue_id', '=', 'i.id').on('cur.workspace_id', '=', p.workspaceId))
    .leftJoin('pipelines as curpl', 'curpl.id', 'cur.pipeline_id')
    .leftJoin('pipelines as t', (join) => join.on('t.id', '=', p.targetId))
    .leftJoin('workspaces as tw', 'tw.id', 't.workspace_id')
    .select(['i.id', 'i.number', 'i.title', 'cur.pipeline_id', 'curpl.name as pipeline_name', 'cur.rank',
      't.workspace_id as target_workspace', 't.name as target_name', 'tw.name as workspace_name'])
    // The counter as this transaction sees it, in the same statement: one round trip fewer per move.
    .select((eb) => eb.selectFrom('change_counter').select('value').where('id', '=', 1).as('version'))
    // Whether a webhook wants either event a move may make (both among the hosted four: a webhook naming none does), ditto.
    .select((eb) => eb.exists(eb.selectFrom('webhooks as w').select('w.id').where('w.repo_id', '=', p.repoId)
      .where(sql<boolean>`(w.events LIKE ${p.reprioritized} OR w.events IS NULL)`)).as('hooked_reprioritized'))
    .select((eb) => eb.exists(eb.selectFrom('webhooks as w').select('w.id').where('w.repo_id', '=', p.repoId)
      .where(sql<boolean>`(w.events LIKE ${p.transfer} OR w.events IS NULL)`)).as('hooked_transfer'))
    .where('i.repo_id', '=', p.repoId).where('i.number', '=', p.number))
const placeQuery = prepared<{ pipelineId: string, rank: number, issueId: number, workspaceId: string }>()((db, p) =>
  db.updateTable('placements').set({ pipeline_id: p.pipelineId, position: p.rank, rank: p.rank })
    .where('issue_id', '=', p.issueId).where('workspace_id', '=', p.workspaceId))
const transferQuery = prepared<{ issueId: number, userId: number | null, at: string, from: string, to: string, workspaceId: string }>()((db, p) =>
  db.insertInto('issue_events').values({
    issue_id: p.issueId,
    user_id: p.userId,
    type: 'transferIssue',
    created_at: p.at,
    from_pipeline: p.from,
    to_pipeline: p.to,
    workspace_id: p.workspaceId,
    from_estimate: null,
    to_estimate: null
  }))
const touchQuery = prepared<{ issueId: number, at: string }>()((db, p) =>
  db.updateTable('issues').set({ planning_changed_at: p.at }).where('id', '=', p.issueId))

type PageRow = { pipeline_id: string, number: number, position: number | null, estimate: number | null, is_epic: number }

/** Pipelines per statement of `firstRows` (SQLite allows 500 terms in a compound select). */
const FIRST_ROWS_ARMS = 100

/**
 * Each pipeline's first `limit` open issues of the repository, in board order: one statement (per
 * 100 pipelines), an arm per pipeline that walks `placements_ranked` in board order and stops after
 * `limit`, then the issues of those rows alone. A window over the repository's placements read and
 * joined all of them first (5,000 rows, 15-25 ms on SQLite, for 4 rows a pipeline).
 */
async function firstRows (db: Executor, pipelineIds: string[], repoId: number, limit: number): Promise<PageRow[]> {
  const rows: PageRow[] = []
  for (let at = 0; at < pipelineIds.length; at += FIRST_ROWS_ARMS) {
    const arms = pipelineIds.slice(at, at + FIRST_ROWS_ARMS).map((id, i) => db.selectFrom((eb) => eb.selectFrom('placements as p')
      .select(['p.pipeline_id', 'p.number', 'p.position', 'p.rank', 'p.issue_id'])
      .where('p.pipeline_id', '=', id).where('p.is_open', '=', 1).where('p.repo_id', '=', repoId)
      .orderBy('p.rank').orderBy('p.issue_id').limit(limit).as(`a${i}`)).selectAll())
    const union = arms.slice(1).reduce((all, arm) => all.unionAll(arm), arms[0])
    rows.push(...await db.selectFrom(union.as('r')).innerJoin('issues as i', 'i.id', 'r.issue_id')
      .select(['r.pipeline_id', 'r.number', 'r.position', 'i.estimate', 'i.is_epic'])
      .orderBy('r.pipeline_id').orderBy('r.rank').orderBy('r.issue_id').execute())
  }
  return rows
}
/** Where an open issue stands in a pipeline of the workspace (a page's cursor). */
const cursorQuery = prepared<{ workspaceId: string, repoId: number, pipelineId: string, number: number }>()((db, p) =>
  db.selectFrom('placements').select(['rank', 'issue_id']).where('workspace_id', '=', p.workspaceId).where('repo_id', '=', p.repoId)
    .where('pipeline_id', '=', p.pipelineId).where('number', '=', p.number).where('is_open', '=', 1))
/** The open issues after (rank, issue id) in one pipeline, in board order. */
const afterRowsQuery = prepared<{ repoId: number, pipelineId: string, rank: number, issueId: number, limit: number }>()((db, p) =>
  db.selectFrom('placements as p').innerJoin('issues as i', 'i.id', 'p.issue_id')
    .select(['p.pipeline_id', 'p.number', 'p.position', 'i.estimate', 'i.is_epic'])
    .where('p.pipeline_id', '=', p.pipelineId).where('p.repo_id', '=', p.repoId).where('p.is_open', '=', 1)
    .where((eb) => eb.or([eb('p.rank', '>', p.rank), eb.and([eb('p.rank', '=', p.rank), eb('p.issue_id', '>', p.issueId)])]))
    .orderBy('p.rank').orderBy('p.issue_id').limit(p.limit))

/**
 * A page of the board: `limit` issues per pipeline, or the page after issue `after` of one
 * pipeline; with a filter, of the issues it keeps (totals too).
 */
export interface BoardPage { limit: number, pipelineId?: string, after?: number, filter?: BoardFilter }

type Condition = NonNullable<ReturnType<typeof filterCondition>>

// The filtered twins of the page's statements: their SQL depends on the filter, so they are built per read.
async function firstFilteredRows (db: Executor, p: { workspaceId: string, repoId: number, limit: number }, condition: Condition): Promise<PageRow[]> {
  return await db.selectFrom((eb) => eb.selectFrom('placements as p').innerJoin('issues as i', 'i.id', 'p.issue_id')
    .select(['p.pipeline_id', 'p.number', 'p.position', 'i.estimate', 'i.is_epic'])
    .select(sql<number>`row_number() over (partition by p.pipeline_id order by p.rank, p.issue_id)`.as('n'))
    .where('p.workspace_id', '=', p.workspaceId).where('p.repo_id', '=', p.repoId).where('p.is_open', '=', 1).where(condition).as('ranked'))
    .selectAll().where('n', '<=', p.limit).orderBy('pipeline_id').orderBy('n').execute()
}

type AfterParams = { repoId: number, pipelineId: string, rank: number, issueId: number, limit: number }
async function afterFilteredRows (db: Executor, p: AfterParams, condition: Condition): Promise<PageRow[]> {
  return await db.selectFrom('placements as p').innerJoin('issues as i', 'i.id', 'p.issue_id')
    .select(['p.pipeline_id', 'p.number', 'p.position', 'i.estimate', 'i.is_epic'])
    .where('p.pipeline_id', '=', p.pipelineId).where('p.repo_id', '=', p.repoId).where('p.is_open', '=', 1)
    .where((eb) => eb.or([eb('p.rank', '>', p.rank), eb.and([eb('p.rank', '=', p.rank), eb('p.issue_id', '>', p.issueId)])]))
    .where(condition).orderBy('p.rank').orderBy('p.issue_id').limit(p.limit).execute()
}

type Counts = Map<string, { issues: number, points: number }>
async function filteredCounts (db: Executor, workspaceId: string, repoId: number, condition: Condition): Promise<Counts> {
  const rows = await db.selectFrom('placements as p').innerJoin('issues as i', 'i.id', 'p.issue_id')
    .select((eb) => ['p.pipeline_id', eb.fn.countAll<number>().as('issues'), eb.fn.sum<number>('i.estimate').as('points')])
    .where('p.workspace_id', '=', workspaceId).where('p.is_open', '=', 1).where('p.repo_id', '=', repoId).where(condition)
    .groupBy('p.pipeline_id').execute()
  return new Map(rows.map((r) => [r.pipeline_id, { issues: Number(r.issues), points: Number(r.points ?? 0) }]))
}

function boardIssue (row: PageRow): BoardIssue {
  const issue: BoardIssue = { issue_number: Number(row.number), is_epic: row.is_epic === 1 }
  if (row.estimate !== null) issue.estimate = { value: row.estimate }
  if (row.position !== null) issue.position = Number(row.position)
  return issue
}

async function ranksFrom (db: Executor, pipelineId: string, repoId: number, issueId: number, limit: number, offset: number) {
  return (await ranksQuery(db, { pipelineId, repoId, issueId, limit, offset })).rows
}

async function countBelow (db: Executor, pipelineId: string, repoId: number, issueId: number, rank: number): Promise<number> {
  return Number((await countBelowQuery(db, { pipelineId, repoId, issueId, rank })).rows[0]?.n ?? 0)
}

/**
 * Spreads a window of the pipeline around `index` (growing it until there is room) and returns
 * the rank left for the moved issue. Amortized, this touches a handful of rows per move.
 */
async function respace (
  db: Executor, pipelineId: string, repoId: number, issueId: number, workspaceId: string, index: number, moved: number[]
): Promise<number> {
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
        await touchPlanning(db, [neighbour])
        moved.push(neighbour)
      }
      return ranks[at]
    }
    if (start === 0 && atEnd) throw new Conflict('the pipeline has no room left for this position')
  }
}

interface CommittedMove { pipelineId: string, repoId: number, from: { pipeline_id: string, rank: number }, issueId: number, rank: number }

/** The kept pipeline orders, and how a committed move changes them. */
class MoveOrders extends PipelineOrders {
  /**
   * After a move committed as `committed`, read at `version`: when nothing else was written in
   * between, the two pipelines' orders take the move and every other kept order stays good;
   * otherwise (or after a respacing) the two are read again next time.
   */
  moved (version: number, committed: number, respaced: boolean, move: CommittedMove): void {
    const target = `${move.pipelineId}:${move.repoId}`
    const source = `${move.from.pipeline_id}:${move.repoId}`
    if (committed !== version + 1 || respaced) {
      this.delete(target)
      this.delete(source)
      return
    }
    const to = this.get(target, version)
    const from = this.get(source, version)
    from?.move(committed, from.indexOf(move.from.rank, move.issueId))
    if (to !== undefined) {
      const at = to === from ? -1 : to.indexOf(move.from.rank, move.issueId)
      to.move(committed, source === target ? at : -1, { rank: move.rank, id: move.issueId })
    }
    this.carry(version, committed)
  }
}

/**
 * Boards and moves. A move finds the issue and its new neighbours, picks a rank between them
 * (see `ranking.ts`), writes it and announces the change, all in one transaction.
 */
export function createBoardsRepository (db: Executor, events: DomainEvents) {
  const workspaces = createWorkspacesRepository(db)

  const models = new BoardModels(db)

  /**
   * A page of the board in three statements whatever its size: the pipelines, their rows (the
   * first `limit` of each, one window query; or those after a cursor), and the counts and sums
   * of every pipeline in one grouped query.
   */
  async function buildPage (workspaceId: string, repoId: number, page: BoardPage): Promise<Board> {
    let pipelines = (await workspaces.pipelines(workspaceId)).map((p) => ({ id: p.id, name: p.name, issues: [] as BoardIssue[] }))
    if (page.pipelineId !== undefined) pipelines = pipelines.filter((p) => p.id === page.pipelineId)
    if (pipelines.length === 0) throw new Invalid(`querystring/pipeline_id ${page.pipelineId ?? ''} is not a pipeline of workspace ${workspaceId}`)
    const byId = new Map(pipelines.map((p) => [p.id, p]))
    // One row more than asked tells whether a next page exists.
    const condition = page.filter === undefined ? undefined : filterCondition(page.filter)
    let rows: PageRow[]
    if (page.after === undefined) {
      const p = { workspaceId, repoId, limit: page.limit + 1 }
      rows = condition === undefined ? await firstRows(db, pipelines.map((x) => x.id), repoId, p.limit) : await firstFilteredRows(db, p, condition)
    } else {
      if (page.pipelineId === undefined) throw new Invalid('querystring/after needs pipeline_id: a page after an issue is a page of one pipeline')
      const cursor = (await cursorQuery(db, { workspaceId, repoId, pipelineId: page.pipelineId, number: page.after })).rows[0]
      if (cursor === undefined) throw new Invalid(`querystring/after: issue ${page.after} is not open in pipeline ${page.pipelineId}`)
      const after = { rank: Number(cursor.rank), issueId: Number(cursor.issue_id) }
      const p = { repoId, pipelineId: page.pipelineId, ...after, limit: page.limit + 1 }
      rows = condition === undefined ? (await afterRowsQuery(db, p)).rows : await afterFilteredRows(db, p, condition)
    }
    const counts = condition === undefined
      ? await createIssueSearch(db).pipelineCounts(workspaceId, [repoId])
      : await filteredCounts(db, workspaceId, repoId, condition)
    const more = new Set<string>()
    for (const row of rows) {
      const pipeline = byId.get(row.pipeline_id)
      if (pipeline === undefined) continue
      if (pipeline.issues.length < page.limit) pipeline.issues.push(boardIssue(row))
      else more.add(row.pipeline_id)
    }
    return {
      pipelines: pipelines.map((p) => {
        const total = counts.get(p.id)
        const last = p.issues[p.issues.length - 1]
        return { ...p, issues_total: total?.issues ?? 0, points_total: total?.points ?? 0, next_after: more.has(p.id) ? last.issue_number : null }
      })
    }
  }

  const orders = new MoveOrders()

  /** The pipeline's order as of `version`: kept from the last move if nothing was written since, read otherwise. */
  async function orderOf (trx: Executor, pipelineId: string, repoId: number, version: number): Promise<PipelineOrder> {
    const kept = orders.get(`${pipelineId}:${repoId}`, version)
    if (kept !== undefined) return kept
    const { rows } = await orderQuery(trx, { pipelineId, repoId })
    const order = new PipelineOrder(version, rows.map((r) => Number(r.rank)), rows.map((r) => Number(r.issue_id)))
    orders.set(`${pipelineId}:${repoId}`, order)
    return order
  }

  return {
    /**
     * The board of one repository in a workspace, read in a fixed number of statements. Routes keep
     * its serialized answer until the change counter moves (docs/api.md, "Conditional requests").
     * With `at` it is kept in memory too, and after the writes that say which rows they changed
     * only those are read again (db/board-model.ts).
     */
    async board (workspaceId: string, repoId: number, at?: BoardAt): Promise<Board> {
      return await models.board(workspaceId, repoId, at)
    },

    /** How many boards were read whole, and how many kept ones patched, since start. */
    modelCounts: () => ({ ...models.counts }),

    /** A page of that board with each pipeline's totals (docs/api.md, "Paged boards"). */
    async boardPage (workspaceId: string, repoId: number, page: BoardPage): Promise<Board> {
      return await buildPage(workspaceId, repoId, page)
    },

    /** Moves an issue to a pipeline of the workspace at `position`; one transaction with its events. */
    async move (user: User, workspaceId: string, repo: Repository, issueNumber: number, pipelineId: string, position: MovePosition): Promise<void> {
      // The board rows a move changes: the issue's and those of the neighbours a respacing moved.
      const boardRows: number[] = []
      await writeTransaction(db, async (trx) => {
        // Moves into one pipeline take turns: each picks its rank from the neighbours it sees.
        await lockFor(trx, `pipeline:${pipelineId}`)
        const start = (await moveStartQuery(trx, {
          repoId: repo.id, number: issueNumber, workspaceId, targetId: pipelineId, reprioritized: namedEventPattern('issue_reprioritized'), transfer: namedEventPattern('issue_transfer')
        })).rows[0]
        if (start === undefined) throw new NotFound(`issue ${issueNumber} not found in repository ${repo.id}`)
        noteWebhooks(trx, repo.id, 'issue_reprioritized', Boolean(start.hooked_reprioritized))
        noteWebhooks(trx, repo.id, 'issue_transfer', Boolean(start.hooked_transfer))
        if (start.target_workspace !== workspaceId) {
          throw new Invalid(`pipeline_id ${pipelineId} is not a pipeline of workspace ${workspaceId}`)
        }
        if (start.pipeline_id === null) throw new NotFound(`issue ${issueNumber} is not on the board of workspace ${workspaceId}`)
        const issue = { id: Number(start.id), number: Number(start.number), title: start.title }
        boardRows.push(issue.id)
        const current = { pipeline_id: start.pipeline_id, pipeline_name: start.pipeline_name!, rank: Number(start.rank) }
        const target = { name: start.target_name!, workspace_name: start.workspace_name! }

        const samePipeline = current.pipeline_id === pipelineId
        const version = Number(start.version)
        const order = await orderOf(trx, pipelineId, repo.id, version)
        // The others: the pipeline's open issues with the moved one left out.
        const at = samePipeline ? order.indexOf(current.rank, issue.id) : -1
        const size = order.size - (at >= 0 ? 1 : 0)
        const rankOf = (k: number) => order.rankAt(at >= 0 && k >= at ? k + 1 : k)
        const below = (rank: number) => order.below(rank) - (at >= 0 && current.rank < rank ? 1 : 0)
        const wantsIndexes = samePipeline && await events.wants(trx, 'issue_reprioritized', repo.id)
        const fromIndex = wantsIndexes ? below(current.rank) : 0

        let index = position === 'top' ? 0 : position === 'bottom' ? Number.POSITIVE_INFINITY : position
        // Past the end: the bottom.
        if (index > size) index = Number.POSITIVE_INFINITY
        const prev = index === 0 || size === 0 ? undefined : rankOf(Math.min(index, size) - 1)
        const next = index < size ? rankOf(index) : undefined
        let rank = between(prev, next)
        let respaced = false
        if (rank === undefined) {
          rank = await respace(trx, pipelineId, repo.id, issue.id, workspaceId, Number.isFinite(index) ? index : size, boardRows)
          respaced = true
        }
        const placed = rank
        const committedMove = { pipelineId, repoId: repo.id, from: current, issueId: issue.id, rank: placed }
        afterCommit(trx, (committed) => orders.moved(version, committed, respaced, committedMove))
        await placeQuery(trx, { pipelineId, rank, issueId: issue.id, workspaceId })
        await touchQuery(trx, { issueId: issue.id, at: nowIso() })

        const context = { repo, issue, user, workspace: { id: workspaceId, name: target.workspace_name } }
        if (!samePipeline) {
          notedEvents(trx)
          // Moves the issue host caused (a label put on the issue there) were made by no user of ours.
          const userId = user.id === NOBODY.id ? null : user.id
          await transferQuery(trx, { issueId: issue.id, userId, at: nowIso(), from: current.pipeline_name, to: target.name, workspaceId })
          await events.emit(trx, { ...context, type: 'issue_transfer', from: current.pipeline_name, to: target.name })
        } else if (wantsIndexes) {
          const toIndex = respaced ? await countBelow(trx, pipelineId, repo.id, issue.id, rank) : below(rank)
          if (toIndex !== fromIndex) {
            await events.emit(trx, { ...context, type: 'issue_reprioritized', pipeline: target.name, from: fromIndex, to: toIndex })
          }
        }
      }, [repo.id], boardRows)
    }
  }
}

export type BoardsRepository = ReturnType<typeof createBoardsRepository>
