import { httpErrors } from '@fastify/sensible'
import { transactional, type Db } from './connection.js'
import { createIssueRefs, refKey, refuseOverlap, toRef, type IssueRef } from './issue-refs.js'
import type { PipelineRef } from './issues.js'
import type { Repository } from './repositories.js'

interface EpicChild { issue_number: number, is_epic: boolean, repo_id: number, estimate?: { value: number }, pipelines: PipelineRef[], pipeline?: PipelineRef }

export interface EpicData {
  total_epic_estimates: { value: number }
  estimate?: { value: number }
  pipeline?: PipelineRef
  pipelines: PipelineRef[]
  issues: EpicChild[]
}

/**
 * Epics: issues that group other issues (in any repository). Epics may contain epics, but never
 * themselves, directly or through other epics.
 */
export function createEpicsRepository (db: Db) {
  const refs = createIssueRefs(db)
  const epicsOf = db.prepare<[number], { number: number, owner: string, name: string }>(`
    SELECT i.number, r.owner, r.name FROM issues i JOIN repositories r ON r.id = i.repo_id
    WHERE i.repo_id = ? AND i.is_epic = 1 ORDER BY i.number`)
  const issue = db.prepare<[number, number], { id: number, number: number, estimate: number | null, is_epic: number }>(
    'SELECT id, number, estimate, is_epic FROM issues WHERE repo_id = ? AND number = ?')
  // The epic and its children with their pipelines, in one statement (no query per child).
  const epicRows = db.prepare<[number, number], {
    id: number, repo_id: number, number: number, estimate: number | null, is_epic: number
    pipeline_name: string | null, pipeline_id: string | null, workspace_id: string | null
  }>(`
    WITH members(id, ord) AS (SELECT ?, 0 UNION ALL SELECT issue_id, 1 FROM epic_issues WHERE epic_id = ?)
    SELECT i.id, i.repo_id, i.number, i.estimate, i.is_epic,
           pl.name AS pipeline_name, pl.id AS pipeline_id, p.workspace_id
    FROM members m
    JOIN issues i ON i.id = m.id
    LEFT JOIN placements p ON p.issue_id = i.id
    LEFT JOIN pipelines pl ON pl.id = p.pipeline_id
    LEFT JOIN workspaces w ON w.id = p.workspace_id
    ORDER BY m.ord, i.repo_id, i.number, w.created_at, w.seq`)
  const setEpic = db.prepare<[number, number]>('UPDATE issues SET is_epic = ? WHERE id = ?')
  const addChild = db.prepare<[number, number]>('INSERT OR IGNORE INTO epic_issues (epic_id, issue_id) VALUES (?, ?)')
  const removeChild = db.prepare<[number, number]>('DELETE FROM epic_issues WHERE epic_id = ? AND issue_id = ?')
  const releaseChildren = db.prepare<[number]>('DELETE FROM epic_issues WHERE epic_id = ?')
  const isChild = db.prepare<[number, number], { one: number }>('SELECT 1 AS one FROM epic_issues WHERE epic_id = ? AND issue_id = ?')
  // Whether `epic` is inside `child` (child contains ... contains epic): adding child would loop.
  const containedIn = db.prepare<[number, number], { one: number }>(`
    WITH RECURSIVE inside(id) AS (
      SELECT ? UNION SELECT e.issue_id FROM epic_issues e JOIN inside ON e.epic_id = inside.id)
    SELECT 1 AS one FROM inside WHERE id = ? LIMIT 1`)
  // The same, through issues of the listed repositories only (a JSON array).
  const containedThrough = db.prepare<[number, string, number], { one: number }>(`
    WITH RECURSIVE inside(id) AS (
      SELECT ? UNION SELECT e.issue_id FROM epic_issues e JOIN inside ON e.epic_id = inside.id
      JOIN issues i ON i.id = e.issue_id WHERE i.repo_id IN (SELECT value FROM json_each(?)))
    SELECT 1 AS one FROM inside WHERE id = ? LIMIT 1`)
  const reposOfChildren = db.prepare<[], { repo_id: number }>(
    'SELECT DISTINCT i.repo_id FROM epic_issues e JOIN issues i ON i.id = e.issue_id')

  function requireEpic (repoId: number, number: number) {
    const row = issue.get(repoId, number)
    if (row === undefined) throw httpErrors.notFound(`issue ${number} not found in repository ${repoId}`)
    if (row.is_epic !== 1) throw httpErrors.notFound(`issue ${number} in repository ${repoId} is not an epic`)
    return row
  }

  function addChildren (epicId: number, children: Array<{ id: number, repo_id: number, number: number }>, canRead: (repoId: number) => boolean): IssueRef[] {
    const added: IssueRef[] = []
    for (const child of children) {
      if (child.id === epicId) throw httpErrors.badRequest('an epic cannot contain itself')
      if (containedIn.get(child.id, epicId) !== undefined) {
        // Say why only when the caller can see the path; otherwise only that it is refused.
        const readable = JSON.stringify(reposOfChildren.all().map((r) => r.repo_id).filter(canRead))
        if (containedThrough.get(child.id, readable, epicId) === undefined) throw httpErrors.badRequest(`adding issue ${refKey(toRef(child))} is refused`)
        throw httpErrors.badRequest(`issue ${refKey(toRef(child))} already contains this epic (directly or through other epics); adding it would make a loop`)
      }
      if (addChild.run(epicId, child.id).changes > 0) added.push(toRef(child))
    }
    return added
  }

  return {
    list (repo: Repository): Array<{ issue_number: number, repo_id: number, issue_url: string }> {
      return epicsOf.all(repo.id).map((e) => ({
        issue_number: e.number,
        repo_id: repo.id,
        issue_url: `https://github.com/${e.owner}/${e.name}/issues/${e.number}`
      }))
    },

    /** Epic data; children in repositories the caller cannot read are left out (and out of the total). */
    data (repoId: number, number: number, canRead: (repoId: number) => boolean): EpicData {
      const epic = requireEpic(repoId, number)
      const members = new Map<number, EpicChild & { own: number | null }>()
      let epicEntry: (EpicChild & { own: number | null }) | undefined
      for (const row of epicRows.all(epic.id, epic.id)) {
        let entry = row.id === epic.id ? epicEntry : members.get(row.id)
        if (entry === undefined) {
          entry = { issue_number: row.number, is_epic: row.is_epic === 1, repo_id: row.repo_id, pipelines: [], own: row.estimate }
          if (row.estimate !== null) entry.estimate = { value: row.estimate }
          if (row.id === epic.id) epicEntry = entry
          else members.set(row.id, entry)
        }
        if (row.pipeline_id !== null && !entry.pipelines.some((p) => p.workspace_id === row.workspace_id)) {
          entry.pipelines.push({ name: row.pipeline_name!, pipeline_id: row.pipeline_id, workspace_id: row.workspace_id! })
        }
      }
      const children = [...members.values()].filter((c) => canRead(c.repo_id))
      const total = children.reduce((sum, c) => sum + (c.own ?? 0), epic.estimate ?? 0)
      const shape = ({ own, ...child }: EpicChild & { own: number | null }): EpicChild =>
        child.pipelines.length > 0 ? { ...child, pipeline: child.pipelines[0] } : child
      const data: EpicData = { total_epic_estimates: { value: total }, pipelines: epicEntry!.pipelines, issues: children.map(shape) }
      if (epic.estimate !== null) data.estimate = { value: epic.estimate }
      if (epicEntry!.pipelines.length > 0) data.pipeline = epicEntry!.pipelines[0]
      return data
    },

    convertToEpic: transactional(db, (repoId: number, number: number, children: IssueRef[], canRead: (repoId: number) => boolean): void => {
      const row = issue.get(repoId, number)
      if (row === undefined) throw httpErrors.notFound(`issue ${number} not found in repository ${repoId}`)
      if (row.is_epic === 1) throw httpErrors.badRequest(`issue ${number} in repository ${repoId} is already an epic`)
      setEpic.run(1, row.id)
      addChildren(row.id, refs.resolve(children, canRead), canRead)
    }),

    /** Back to a regular issue: its children are released (they keep everything else). */
    convertToIssue: transactional(db, (repoId: number, number: number): void => {
      const epic = requireEpic(repoId, number)
      releaseChildren.run(epic.id)
      setEpic.run(0, epic.id)
    }),

    /** Returns what this call changed: issues already in (or not in) the epic are not listed. */
    updateIssues: transactional(db, (repoId: number, number: number, remove: IssueRef[], add: IssueRef[], canRead: (repoId: number) => boolean) => {
      const epic = requireEpic(repoId, number)
      const toRemove = refs.resolve(remove, canRead, 'remove_issues')
      const toAdd = refs.resolve(add, canRead, 'add_issues')
      refuseOverlap(toAdd, toRemove)
      const removed = toRemove.filter((child) => isChild.get(epic.id, child.id) !== undefined && removeChild.run(epic.id, child.id).changes > 0).map(toRef)
      return { removed_issues: removed, added_issues: addChildren(epic.id, toAdd, canRead) }
    })
  }
}

export type EpicsRepository = ReturnType<typeof createEpicsRepository>
