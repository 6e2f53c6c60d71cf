import type { GraphReads, IssueAssigneeRow, IssueFilter, IssueLabelRow, PlacementNode } from '../../db/graph-reads.js'

/**
 * Rows by id, read once per document: the first call for an id reads it (with the other ids of
 * its batch), later calls of the same document get the same row, also while that read is still
 * in flight. `live` false (a mutation's document: what it reads after writing must be new) reads
 * every time and keeps nothing.
 */
function byId<K, R> (load: (ids: readonly K[]) => Promise<R[]>, idOf: (row: R) => K, live: () => boolean) {
  const kept = new Map<K, Promise<R | undefined>>()
  return {
    async read (ids: readonly K[]): Promise<R[]> {
      if (!live()) return await load(ids)
      const wanted = [...new Set(ids)]
      const missing = wanted.filter((id) => !kept.has(id))
      if (missing.length > 0) {
        const batch = load(missing)
        for (const id of missing) {
          const row = batch.then((rows) => rows.find((r) => idOf(r) === id))
          // a read started ahead (below) that nobody awaits must not fail the process
          row.catch(() => {})
          kept.set(id, row)
        }
        // a failed read is not kept: the next call reads again
        batch.catch(() => { for (const id of missing) kept.delete(id) })
      }
      const rows = await Promise.all(wanted.map(async (id) => await kept.get(id)!))
      return rows.filter((r): r is Awaited<R> => r !== undefined)
    },
    /** a row read some other way */
    put (row: R) {
      if (live()) kept.set(idOf(row), Promise.resolve(row))
    }
  }
}

/** An issue's list (labels, assignees) by issue id, as byId: read once per document, or given by the page that read it. */
function listsById<R extends { issue_id: number | string }> (load: (ids: readonly number[]) => Promise<R[]>, live: () => boolean) {
  const kept = new Map<number, R[]>()
  return {
    async read (ids: readonly number[]): Promise<R[]> {
      if (!live()) return await load(ids)
      const wanted = [...new Set(ids)].sort((a, b) => a - b)
      const missing = wanted.filter((id) => !kept.has(id))
      if (missing.length > 0) {
        const rows = await load(missing)
        for (const id of missing) kept.set(id, [])
        for (const row of rows) kept.get(Number(row.issue_id))?.push(row)
      }
      return wanted.flatMap((id) => kept.get(id) ?? [])
    },
    /** every row of these issues, read some other way */
    put (ids: readonly number[], rows: readonly R[]) {
      if (!live()) return
      for (const id of ids) kept.set(id, [])
      for (const row of rows) kept.get(Number(row.issue_id))!.push(row)
    }
  }
}

const placementKey = (workspaceId: string, issueId: number) => `${issueId}\0${workspaceId}`

/**
 * Pipelines' counts with one filter asked in the same turn (a workspace's pipelines, each with its
 * `issues { totalCount }`): the first is read at once (a lone count, the usual case, waits for
 * nothing), the others asked in that turn after it, in one grouped statement when the filter tests
 * nothing of the issue's own row (else one statement each).
 */
function countsTogether (reads: GraphReads, live: () => boolean) {
  const turns = new Map<string, { ids: Set<string>, counted: Promise<Map<string, number>> }>()
  return async (pipelineId: string, f: IssueFilter): Promise<number> => {
    if (!live()) return await reads.pipelineCount(pipelineId, f)
    const key = JSON.stringify(f)
    const later = turns.get(key)
    if (later === undefined) {
      const ids = new Set<string>()
      const counted = new Promise<Map<string, number>>((resolve, reject) => {
        setImmediate(() => {
          turns.delete(key)
          if (ids.size > 0) reads.pipelineCountsOf([...ids], f).then(resolve, reject)
          else resolve(new Map())
        })
      })
      turns.set(key, { ids, counted })
      return await reads.pipelineCount(pipelineId, f)
    }
    later.ids.add(pipelineId)
    return (await later.counted).get(pipelineId) ?? 0
  }
}

/**
 * The reads of one GraphQL request: `reads`, with pipelines, workspaces, repositories, their
 * oldest boards, issues' placements in a workspace, labels and assignees kept for the request
 * (byId above). A page's `repository` and `htmlUrl` share one read, the pipeline a search named is
 * not read again for its cards' `pipelineIssue { pipeline }`, a pipeline page's cards come
 * with their placements (and on PostgreSQL the labels and assignees asked for), a workspace's
 * repositories are read once, and pipelines' counts asked together are read together (countsTogether).
 */
export function requestReads (reads: GraphReads, live: () => boolean): GraphReads {
  const pipelines = byId(reads.pipelinesByIds, (r) => r.id, live)
  const workspaces = byId(reads.workspacesByIds, (r) => r.id, live)
  const repositories = byId(reads.repositoriesByIds, (r) => r.id, live)
  const boardsOf = async (ids: readonly number[]) => [...(await reads.firstWorkspacesOf(ids))].map(([repo, board]) => ({ repo, board }))
  const boards = byId(boardsOf, (r) => r.repo, live)
  const placements = byId(async (keys: readonly string[]) => {
    const byWorkspace = new Map<string, number[]>()
    for (const key of keys) {
      const [issue, workspace] = key.split('\0')
      byWorkspace.set(workspace, [...byWorkspace.get(workspace) ?? [], Number(issue)])
    }
    return (await Promise.all([...byWorkspace].map(async ([workspace, ids]) => await reads.placementsIn(workspace, ids)))).flat()
  }, (r: PlacementNode) => placementKey(r.workspace_id, r.issue_id), live)
  const workspaceRepositories = byId(async (ids: readonly string[]) => {
    const byWorkspace = new Map<string, Array<{ workspace_id: string, repo_id: number }>>(ids.map((id) => [id, []]))
    for (const row of await reads.repositoriesOf(ids)) byWorkspace.get(row.workspace_id)?.push(row)
    return [...byWorkspace].map(([id, rows]) => ({ id, rows }))
  }, (r) => r.id, live)
  const labels = listsById<IssueLabelRow>(reads.labelsOf as (ids: readonly number[]) => Promise<IssueLabelRow[]>, live)
  const assignees = listsById<IssueAssigneeRow>(reads.assigneesOf as (ids: readonly number[]) => Promise<IssueAssigneeRow[]>, live)
  return {
    ...reads,
    pipelinesByIds: pipelines.read,
    workspacesByIds: workspaces.read,
    repositoriesByIds: repositories.read,
    async firstWorkspacesOf (ids: readonly number[]) {
      return new Map((await boards.read(ids)).map((r) => [r.repo, r.board]))
    },
    async placementsIn (workspaceId: string, ids: readonly number[]) {
      return await placements.read(ids.map((id) => placementKey(workspaceId, id)))
    },
    labelsOf: labels.read,
    assigneesOf: assignees.read,
    async repositoriesOf (workspaceIds: readonly string[]) {
      return (await workspaceRepositories.read(workspaceIds)).flatMap((w) => w.rows).sort((a, b) => a.repo_id - b.repo_id)
    },
    pipelineCount: countsTogether(reads, live),
    async pipelineWithRepositories (id: string) {
      const found = await reads.pipelineWithRepositories(id)
      if (found !== undefined) pipelines.put(found.pipeline)
      return found
    },
    async pipelinePage (...args: Parameters<GraphReads['pipelinePage']>) {
      const page = await reads.pipelinePage(...args)
      const ids = page.rows.map((r) => r.id)
      for (const placement of page.cards.placements) placements.put(placement)
      if (page.cards.labels !== undefined) labels.put(ids, page.cards.labels)
      if (page.cards.assignees !== undefined) assignees.put(ids, page.cards.assignees)
      return page
    }
  }
}
