import type { GraphReads } from '../../db/graph-reads.js'

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
        for (const id of missing) kept.set(id, batch.then((rows) => rows.find((r) => idOf(r) === id)))
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

/**
 * The reads of one GraphQL request: `reads`, with pipelines, workspaces and repositories by id
 * kept for the request (byId above). A page's `repository` and `htmlUrl` share one read, and the
 * pipeline a search named is not read again for its cards' `pipelineIssue { pipeline }`.
 */
export function requestReads (reads: GraphReads, live: () => boolean): GraphReads {
  const pipelines = byId(reads.pipelinesByIds, (r) => r.id, live)
  const workspaces = byId(reads.workspacesByIds, (r) => r.id, live)
  const repositories = byId(reads.repositoriesByIds, (r) => r.id, live)
  return {
    ...reads,
    pipelinesByIds: pipelines.read,
    workspacesByIds: workspaces.read,
    repositoriesByIds: repositories.read,
    async pipelineWithRepositories (id: string) {
      const found = await reads.pipelineWithRepositories(id)
      if (found !== undefined) pipelines.put(found.pipeline)
      return found
    }
  }
}
