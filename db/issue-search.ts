import { sql } from 'kysely'
import type { Executor } from './engine/transaction.js'

export interface IssueSearch {
  workspaceId: string
  /** only these repositories (the caller's readable ones in the workspace) */
  repoIds: number[]
  /** words the title must contain, case-insensitive */
  text?: string
  pipelineId?: string
  label?: string
  assignee?: string
  limit: number
}

export interface FoundIssue {
  repo_id: number
  issue_number: number
  title: string
  pipeline_id: string
  pipeline_name: string
  estimate: number | null
  is_epic: boolean
}

/** `text` as a LIKE pattern matching it anywhere, its own wildcards taken literally. */
export function containsPattern (text: string): string {
  return `%${text.toLowerCase().replace(/[\\%_]/g, (c) => `\\${c}`)}%`
}

/**
 * Open issues on a workspace's board, in the board's order (pipeline, then rank), filtered in the
 * database: one statement whatever the size of the board; `total` counts every match.
 */
export function createIssueSearch (db: Executor) {
  const matching = (search: IssueSearch) => {
    let query = db.selectFrom('placements as p')
      .innerJoin('issues as i', 'i.id', 'p.issue_id')
      .innerJoin('pipelines as pl', 'pl.id', 'p.pipeline_id')
      .where('p.workspace_id', '=', search.workspaceId)
      .where('p.is_open', '=', 1)
      .where('p.repo_id', 'in', search.repoIds)
    if (search.pipelineId !== undefined) query = query.where('p.pipeline_id', '=', search.pipelineId)
    if (search.text !== undefined && search.text !== '') {
      query = query.where(sql<boolean>`lower(i.title) like ${containsPattern(search.text)} escape '\\'`)
    }
    if (search.label !== undefined) {
      const label = search.label
      query = query.where((eb) => eb.exists(eb.selectFrom('issue_labels as l').select('l.issue_id').whereRef('l.issue_id', '=', 'i.id')
        .where(sql<boolean>`lower(l.name) = ${label.toLowerCase()}`)))
    }
    if (search.assignee !== undefined) {
      const login = search.assignee
      query = query.where((eb) => eb.exists(eb.selectFrom('issue_assignees as a').select('a.issue_id').whereRef('a.issue_id', '=', 'i.id')
        .where(sql<boolean>`lower(a.login) = ${login.toLowerCase()}`)))
    }
    return query
  }

  return {
    async search (search: IssueSearch): Promise<{ total: number, issues: FoundIssue[] }> {
      if (search.repoIds.length === 0) return { total: 0, issues: [] }
      const [rows, count] = await Promise.all([
        matching(search)
          .select(['p.repo_id', 'i.number', 'i.title', 'p.pipeline_id', 'pl.name as pipeline_name', 'i.estimate', 'i.is_epic'])
          .orderBy('pl.sort_order').orderBy('p.rank').orderBy('p.repo_id').orderBy('i.number')
          .limit(search.limit).execute(),
        matching(search).select((eb) => eb.fn.countAll<number>().as('total')).executeTakeFirst()
      ])
      return {
        total: Number(count?.total ?? 0),
        issues: rows.map((r) => ({
          repo_id: Number(r.repo_id),
          issue_number: Number(r.number),
          title: r.title,
          pipeline_id: r.pipeline_id,
          pipeline_name: r.pipeline_name,
          estimate: r.estimate,
          is_epic: r.is_epic === 1
        }))
      }
    },

    /** Open issues and their estimates' sum per pipeline of the workspace, over these repositories: one grouped statement. */
    async pipelineCounts (workspaceId: string, repoIds: number[]): Promise<Map<string, { issues: number, points: number }>> {
      if (repoIds.length === 0) return new Map()
      const rows = await db.selectFrom('placements as p').innerJoin('issues as i', 'i.id', 'p.issue_id')
        .select((eb) => ['p.pipeline_id', eb.fn.countAll<number>().as('issues'), eb.fn.sum<number>('i.estimate').as('points')])
        .where('p.workspace_id', '=', workspaceId).where('p.is_open', '=', 1).where('p.repo_id', 'in', repoIds)
        .groupBy('p.pipeline_id').execute()
      return new Map(rows.map((r) => [r.pipeline_id, { issues: Number(r.issues), points: Number(r.points ?? 0) }]))
    }
  }
}
