import { httpErrors } from '@fastify/sensible'
import { transactional, type Db } from './connection.js'
import type { IssueRef } from './issue-refs.js'
import { nowIso } from './ids.js'

export interface Dependency { blocking: IssueRef, blocked: IssueRef }

interface Row { blocking_repo: number, blocking_number: number, blocked_repo: number, blocked_number: number }

const toDependency = (row: Row): Dependency => ({
  blocking: { repo_id: row.blocking_repo, issue_number: row.blocking_number },
  blocked: { repo_id: row.blocked_repo, issue_number: row.blocked_number }
})

/** Blocking dependencies between issues: no cycles, only between repositories sharing a workspace. */
export function createDependenciesRepository (db: Db) {
  const issueId = db.prepare<[number, number], { id: number }>('SELECT id FROM issues WHERE repo_id = ? AND number = ?')
  const forRepo = db.prepare<[number, number], Row>(`
    SELECT a.repo_id AS blocking_repo, a.number AS blocking_number, b.repo_id AS blocked_repo, b.number AS blocked_number
    FROM dependencies d JOIN issues a ON a.id = d.blocking_id JOIN issues b ON b.id = d.blocked_id
    WHERE a.repo_id = ? OR b.repo_id = ?
    ORDER BY d.seq`)
  const exists = db.prepare<[number, number], { one: number }>(
    'SELECT 1 AS one FROM dependencies WHERE blocking_id = ? AND blocked_id = ?')
  const insert = db.prepare<[number, number, string]>('INSERT INTO dependencies (blocking_id, blocked_id, created_at) VALUES (?, ?, ?)')
  const remove = db.prepare<[number, number]>('DELETE FROM dependencies WHERE blocking_id = ? AND blocked_id = ?')
  const shareWorkspace = db.prepare<[number, number], { one: number }>(`
    SELECT 1 AS one FROM workspace_repositories a JOIN workspace_repositories b ON a.workspace_id = b.workspace_id
    WHERE a.repo_id = ? AND b.repo_id = ? LIMIT 1`)
  // Issues that `start` blocks, directly or through others; the search visits only that set.
  const blocksTransitively = db.prepare<[number, number], { one: number }>(`
    WITH RECURSIVE reach(id) AS (
      SELECT ? UNION SELECT d.blocked_id FROM dependencies d JOIN reach ON d.blocking_id = reach.id)
    SELECT 1 AS one FROM reach WHERE id = ? LIMIT 1`)
  // The same, through issues of the listed repositories only (a JSON array).
  const blocksThrough = db.prepare<[number, string, number], { one: number }>(`
    WITH RECURSIVE reach(id) AS (
      SELECT ? UNION SELECT d.blocked_id FROM dependencies d JOIN reach ON d.blocking_id = reach.id
      JOIN issues i ON i.id = d.blocked_id WHERE i.repo_id IN (SELECT value FROM json_each(?)))
    SELECT 1 AS one FROM reach WHERE id = ? LIMIT 1`)
  const reposOfDependencies = db.prepare<[], { repo_id: number }>(
    'SELECT DISTINCT i.repo_id FROM dependencies d JOIN issues i ON i.id = d.blocked_id')

  const requireIssue = (ref: IssueRef, side: string): number => {
    const row = issueId.get(ref.repo_id, ref.issue_number)
    if (row === undefined) throw httpErrors.notFound(`${side} issue ${ref.issue_number} not found in repository ${ref.repo_id}`)
    return row.id
  }

  return {
    /** Dependencies with either side in the repository, keeping pairs readable on both sides. */
    list (repoId: number, canRead: (repoId: number) => boolean): Dependency[] {
      return forRepo.all(repoId, repoId)
        .filter((row) => canRead(row.blocking_repo) && canRead(row.blocked_repo))
        .map(toDependency)
    },

    /** Creates the dependency; an existing pair is returned as it is (never duplicated). */
    create: transactional(db, (dependency: Dependency, canRead: (repoId: number) => boolean): Dependency => {
      const blocking = requireIssue(dependency.blocking, 'blocking')
      const blocked = requireIssue(dependency.blocked, 'blocked')
      if (blocking === blocked) throw httpErrors.badRequest('an issue cannot block itself')
      if (exists.get(blocking, blocked) !== undefined) return dependency
      if (shareWorkspace.get(dependency.blocking.repo_id, dependency.blocked.repo_id) === undefined) {
        throw httpErrors.badRequest(`repositories ${dependency.blocking.repo_id} and ${dependency.blocked.repo_id} are not in the same workspace`)
      }
      if (blocksTransitively.get(blocked, blocking) !== undefined) {
        // Say why only when the caller can see the path; otherwise only that it is refused.
        const readable = JSON.stringify(reposOfDependencies.all().map((r) => r.repo_id).filter(canRead))
        if (blocksThrough.get(blocked, readable, blocking) !== undefined) {
          throw httpErrors.badRequest('this dependency would create a cycle: the blocked issue already blocks the blocking issue, directly or through other issues')
        }
        throw httpErrors.badRequest('this dependency is refused')
      }
      insert.run(blocking, blocked, nowIso())
      return dependency
    }),

    remove: transactional(db, (dependency: Dependency): void => {
      const blocking = requireIssue(dependency.blocking, 'blocking')
      const blocked = requireIssue(dependency.blocked, 'blocked')
      if (remove.run(blocking, blocked).changes === 0) throw httpErrors.notFound('no such dependency')
    })
  }
}

export type DependenciesRepository = ReturnType<typeof createDependenciesRepository>
