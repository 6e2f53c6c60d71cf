import { httpErrors } from '@fastify/sensible'
import { transactional, type Db } from './connection.js'
import { newObjectId, nowIso } from './ids.js'
import { createIssueRefs, refKey, refuseOverlap, toRef, type IssueRef } from './issue-refs.js'

export interface ReleaseSummary {
  release_id: string
  title: string
  description: string
  start_date: string
  desired_end_date: string
  created_at: string
  closed_at: string | null
  state: 'open' | 'closed'
}

export interface ReleaseReport extends ReleaseSummary {
  repositories: number[]
}

export interface NewRelease { title: string, description?: string, start_date: string, desired_end_date: string }
export interface ReleaseChange { title: string, description?: string, start_date?: string, desired_end_date?: string, state?: 'open' | 'closed' }

interface Row { id: string, title: string, description: string, start_date: string, desired_end_date: string, created_at: string, closed_at: string | null, state: 'open' | 'closed' }

const toReport = (row: Row): ReleaseSummary => ({
  release_id: row.id,
  title: row.title,
  description: row.description,
  start_date: row.start_date,
  desired_end_date: row.desired_end_date,
  created_at: row.created_at,
  closed_at: row.closed_at,
  state: row.state
})

const iso = (value: string): string => new Date(value).toISOString()

function checkDates (start: string, end: string): void {
  if (Date.parse(end) < Date.parse(start)) throw httpErrors.badRequest('desired_end_date must not be before start_date')
}

/** Release reports over one or more repositories, with the issues planned for them. */
export function createReleasesRepository (db: Db) {
  const refs = createIssueRefs(db)
  const byId = db.prepare<[string], Row>('SELECT * FROM release_reports WHERE id = ?')
  const forRepo = db.prepare<[number], Row>(`
    SELECT r.* FROM release_reports r JOIN release_report_repositories rr ON rr.release_id = r.id
    WHERE rr.repo_id = ? ORDER BY r.created_at, r.rowid`)
  const reposOf = db.prepare<[string], { repo_id: number }>(
    'SELECT repo_id FROM release_report_repositories WHERE release_id = ? ORDER BY repo_id')
  const insert = db.prepare<[string, string, string, string, string, string]>(`
    INSERT INTO release_reports (id, title, description, start_date, desired_end_date, created_at) VALUES (?, ?, ?, ?, ?, ?)`)
  const update = db.prepare<[string, string, string, string, string | null, string, string]>(`
    UPDATE release_reports SET title = ?, description = ?, start_date = ?, desired_end_date = ?, closed_at = ?, state = ? WHERE id = ?`)
  const addRepo = db.prepare<[string, number]>('INSERT OR IGNORE INTO release_report_repositories (release_id, repo_id) VALUES (?, ?)')
  const removeRepo = db.prepare<[string, number]>('DELETE FROM release_report_repositories WHERE release_id = ? AND repo_id = ?')
  const removeRepoIssues = db.prepare<[string, number]>(`
    DELETE FROM release_report_issues WHERE release_id = ? AND issue_id IN (SELECT id FROM issues WHERE repo_id = ?)`)
  const issuesOf = db.prepare<[string], { repo_id: number, number: number }>(`
    SELECT i.repo_id, i.number FROM release_report_issues ri JOIN issues i ON i.id = ri.issue_id
    WHERE ri.release_id = ? ORDER BY i.repo_id, i.number`)
  const addIssue = db.prepare<[string, number]>('INSERT OR IGNORE INTO release_report_issues (release_id, issue_id) VALUES (?, ?)')
  const removeIssue = db.prepare<[string, number]>('DELETE FROM release_report_issues WHERE release_id = ? AND issue_id = ?')

  function requireReport (id: string): Row {
    const row = byId.get(id)
    if (row === undefined) throw httpErrors.notFound(`release report ${id} not found`)
    return row
  }

  const withRepositories = (row: Row): ReleaseReport => ({ ...toReport(row), repositories: reposOf.all(row.id).map((r) => r.repo_id) })

  return {
    /** The report's repositories, or a 404 when there is no such report. */
    repositoriesOf (id: string): number[] {
      requireReport(id)
      return reposOf.all(id).map((r) => r.repo_id)
    },

    get (id: string): ReleaseReport {
      return withRepositories(requireReport(id))
    },

    /** Reports holding the repository, oldest first, without their repositories. */
    listForRepository (repoId: number): ReleaseSummary[] {
      return forRepo.all(repoId).map(toReport)
    },

    create: transactional(db, (input: NewRelease, repositories: number[]): ReleaseReport => {
      checkDates(input.start_date, input.desired_end_date)
      const id = newObjectId()
      insert.run(id, input.title, input.description ?? '', iso(input.start_date), iso(input.desired_end_date), nowIso())
      for (const repoId of repositories) addRepo.run(id, repoId)
      return withRepositories(requireReport(id))
    }),

    /** Edits; `state: closed` stamps closed_at (kept if already closed), `open` clears it. */
    update: transactional(db, (id: string, change: ReleaseChange): ReleaseReport => {
      const row = requireReport(id)
      const start = change.start_date === undefined ? row.start_date : iso(change.start_date)
      const end = change.desired_end_date === undefined ? row.desired_end_date : iso(change.desired_end_date)
      checkDates(start, end)
      const state = change.state ?? row.state
      const closedAt = state === 'open' ? null : row.closed_at ?? nowIso()
      update.run(change.title, change.description ?? row.description, start, end, closedAt, state, id)
      return withRepositories(requireReport(id))
    }),

    addRepository: transactional(db, (id: string, repoId: number): void => {
      requireReport(id)
      addRepo.run(id, repoId)
    }),

    /** Removes a repository and the report's issues from it; a report keeps at least one. */
    removeRepository: transactional(db, (id: string, repoId: number): void => {
      const repos = reposOf.all(id).map((r) => r.repo_id)
      if (!repos.includes(repoId)) throw httpErrors.notFound(`repository ${repoId} is not in release report ${id}`)
      if (repos.length === 1) throw httpErrors.badRequest('a release report needs at least one repository')
      removeRepoIssues.run(id, repoId)
      removeRepo.run(id, repoId)
    }),

    issues (id: string, canRead: (repoId: number) => boolean): IssueRef[] {
      return issuesOf.all(id).filter((i) => canRead(i.repo_id)).map(toRef)
    },

    /** Adds and removes issues in one go; lists only what changed. Issues must be in the report's repositories. */
    updateIssues: transactional(db, (id: string, add: IssueRef[], remove: IssueRef[], canRead: (repoId: number) => boolean) => {
      const repos = new Set(reposOf.all(id).map((r) => r.repo_id))
      const toAdd = refs.resolve(add, canRead, 'add_issues')
      const toRemove = refs.resolve(remove, canRead, 'remove_issues')
      const outside = toAdd.filter((i) => !repos.has(i.repo_id))
      if (outside.length > 0) {
        throw httpErrors.badRequest(`issues not in the report's repositories: ${outside.map((i) => refKey(toRef(i))).join(', ')}`)
      }
      refuseOverlap(toAdd, toRemove)
      return {
        added: toAdd.filter((i) => addIssue.run(id, i.id).changes > 0).map(toRef),
        removed: toRemove.filter((i) => removeIssue.run(id, i.id).changes > 0).map(toRef)
      }
    })
  }
}

export type ReleasesRepository = ReturnType<typeof createReleasesRepository>
