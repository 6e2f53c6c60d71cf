import { httpErrors } from '@fastify/sensible'
import type { Db } from './connection.js'
import { nowIso } from './ids.js'

export interface Repository {
  id: number
  owner: string
  name: string
}

export interface IssueRow {
  id: number
  repo_id: number
  number: number
  title: string
  state: 'open' | 'closed'
  estimate: number | null
  is_epic: number
}

export interface NewIssue {
  number: number
  title: string
  state?: 'open' | 'closed'
  /** login whose first placement event is recorded; without one the placement has no event */
  authorId?: number
  plusOnes?: string[]
  /** pipeline (id or name) per workspace id, instead of the workspace's first pipeline */
  pipelines?: Record<string, string>
}

/**
 * The issue-hosting platform's side: repositories, their issues and milestones. Creating or
 * reopening an issue keeps its board placements in step (DESIGN.md section 4).
 */
export function createRepositoriesRepository (db: Db) {
  const repoById = db.prepare<[number], Repository>('SELECT id, owner, name FROM repositories WHERE id = ?')
  const allRepos = db.prepare<[], Repository>('SELECT id, owner, name FROM repositories ORDER BY id')
  const insertRepo = db.prepare<[number, string, string]>('INSERT INTO repositories (id, owner, name) VALUES (?, ?, ?)')
  const issueByNumber = db.prepare<[number, number], IssueRow>(
    'SELECT id, repo_id, number, title, state, estimate, is_epic FROM issues WHERE repo_id = ? AND number = ?')
  const insertIssue = db.prepare<[number, number, string, string, string]>(
    'INSERT INTO issues (repo_id, number, title, state, created_at) VALUES (?, ?, ?, ?, ?)')
  const insertPlusOne = db.prepare<[number, string]>('INSERT INTO plus_ones (issue_id, created_at) VALUES (?, ?)')
  const firstPipelines = db.prepare<[number], { workspace_id: string, pipeline_id: string, name: string }>(`
    SELECT wr.workspace_id, p.id AS pipeline_id, p.name
    FROM workspace_repositories wr
    JOIN pipelines p ON p.id = (
      SELECT id FROM pipelines WHERE workspace_id = wr.workspace_id ORDER BY sort_order LIMIT 1)
    WHERE wr.repo_id = ?`)
  const pipelineIn = db.prepare<[string, string, string], { id: string, name: string }>(
    'SELECT id, name FROM pipelines WHERE workspace_id = ? AND (id = ? OR name = ?) ORDER BY sort_order LIMIT 1')
  const insertPlacement = db.prepare<[number, string, string, number, number, number]>(`
    INSERT INTO placements (issue_id, workspace_id, pipeline_id, repo_id, number, is_open)
    VALUES (?, ?, ?, ?, ?, ?)`)
  const insertTransfer = db.prepare<[number, number, string, string, string]>(`
    INSERT INTO issue_events (issue_id, user_id, type, created_at, to_pipeline, workspace_id)
    VALUES (?, ?, 'transferIssue', ?, ?, ?)`)
  const setTitle = db.prepare<[string, number]>('UPDATE issues SET title = ? WHERE id = ?')
  const setState = db.prepare<[string, number]>('UPDATE issues SET state = ? WHERE id = ?')
  const setPlacementsOpen = db.prepare<[number, number]>('UPDATE placements SET is_open = ? WHERE issue_id = ?')
  const insertMilestone = db.prepare<[number, number, string]>(
    'INSERT INTO milestones (repo_id, number, title) VALUES (?, ?, ?)')

  function requireRepository (id: number): Repository {
    const repo = repoById.get(id)
    if (repo === undefined) throw httpErrors.notFound(`repository ${id} not found`)
    return repo
  }

  return {
    byId (id: number): Repository | undefined {
      return repoById.get(id)
    },

    requireRepository,

    list (): Repository[] {
      return allRepos.all()
    },

    create (repo: Repository): Repository {
      if (repoById.get(repo.id) !== undefined) throw httpErrors.conflict(`repository ${repo.id} already exists`)
      try {
        insertRepo.run(repo.id, repo.owner, repo.name)
      } catch (err) {
        if ((err as { code?: string }).code === 'SQLITE_CONSTRAINT_UNIQUE') {
          throw httpErrors.conflict(`repository ${repo.owner}/${repo.name} already exists`)
        }
        throw err
      }
      return repo
    },

    issue (repoId: number, number: number): IssueRow | undefined {
      return issueByNumber.get(repoId, number)
    },

    /** Creates an issue and lands it, unprioritized, in the first pipeline of each workspace. */
    createIssue (repoId: number, issue: NewIssue): IssueRow {
      requireRepository(repoId)
      if (issueByNumber.get(repoId, issue.number) !== undefined) {
        throw httpErrors.conflict(`issue ${issue.number} already exists in repository ${repoId}`)
      }
      const state = issue.state ?? 'open'
      const now = nowIso()
      const id = Number(insertIssue.run(repoId, issue.number, issue.title, state, now).lastInsertRowid)
      for (const at of issue.plusOnes ?? []) insertPlusOne.run(id, at)
      const holding = firstPipelines.all(repoId)
      for (const [workspaceId, wanted] of Object.entries(issue.pipelines ?? {})) {
        if (!holding.some((h) => h.workspace_id === workspaceId)) {
          throw httpErrors.badRequest(`workspace ${workspaceId} does not hold repository ${repoId}`)
        }
        if (pipelineIn.get(workspaceId, wanted, wanted) === undefined) {
          throw httpErrors.badRequest(`workspace ${workspaceId} has no pipeline '${wanted}'`)
        }
      }
      for (const first of holding) {
        const wanted = issue.pipelines?.[first.workspace_id]
        const target = wanted === undefined
          ? { id: first.pipeline_id, name: first.name }
          : pipelineIn.get(first.workspace_id, wanted, wanted)!
        insertPlacement.run(id, first.workspace_id, target.id, repoId, issue.number, state === 'open' ? 1 : 0)
        if (issue.authorId !== undefined) insertTransfer.run(id, issue.authorId, now, target.name, first.workspace_id)
      }
      return issueByNumber.get(repoId, issue.number)!
    },

    /** Retitles, closes (off every board) or reopens (back to its last pipeline at once). */
    updateIssue (repoId: number, number: number, change: { title?: string, state?: 'open' | 'closed' }): IssueRow {
      const issue = issueByNumber.get(repoId, number)
      if (issue === undefined) throw httpErrors.notFound(`issue ${number} not found in repository ${repoId}`)
      if (change.title !== undefined) setTitle.run(change.title, issue.id)
      if (change.state !== undefined && change.state !== issue.state) {
        setState.run(change.state, issue.id)
        setPlacementsOpen.run(change.state === 'open' ? 1 : 0, issue.id)
      }
      return issueByNumber.get(repoId, number)!
    },

    createMilestone (repoId: number, number: number, title: string): { repo_id: number, number: number, title: string } {
      requireRepository(repoId)
      try {
        insertMilestone.run(repoId, number, title)
      } catch (err) {
        if ((err as { code?: string }).code === 'SQLITE_CONSTRAINT_PRIMARYKEY') {
          throw httpErrors.conflict(`milestone ${number} already exists in repository ${repoId}`)
        }
        throw err
      }
      return { repo_id: repoId, number, title }
    }
  }
}

export type RepositoriesRepository = ReturnType<typeof createRepositoriesRepository>
