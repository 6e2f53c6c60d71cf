import { createHostedImportsRepository, hostedImportShape, hostedTokenContext } from '../../db/issue-host/hosted-imports.js'
import type { PlanningStore } from '../../db/store.js'
import type { HostedImport } from '../../schemas/hosted-import.js'
import { Invalid } from '../../db/errors.js'
import { SECRET_KEY_HINT } from '../../db/engine/secret-box.js'
import { estimateRequests, type HostedImporter } from './importer.js'

export { HostedImporter, estimateRequests, type HostedImporterOptions } from './importer.js'
export { HostedAuthError, HostedError, type Fetch } from './client.js'

export const DEFAULT_API_URL = 'https://api.zenhub.com'

export interface HostedImportInput {
  api_url?: string
  token: string
  repositories: number[]
  closed_issues?: boolean
  issue_events?: boolean
}

/**
 * Records an import with the requests it is known to need; the importer runs it. The token is kept
 * sealed with SECRET_KEY, bound to the import (docs/hosted-import.md, "The token"): without the key
 * the import is refused (400), as connecting an issue host is.
 */
export async function createHostedImport (store: PlanningStore, input: HostedImportInput): Promise<HostedImport> {
  if (!store.secrets.canSeal) {
    throw new Invalid(`an import from the hosted service keeps its token encrypted while it runs: this needs SECRET_KEY on the server (${SECRET_KEY_HINT})`)
  }
  const repositories = [...new Set(input.repositories)]
  const options = { closed_issues: input.closed_issues === true, issue_events: input.issue_events === true }
  const lists = await localLists(store, repositories, options)
  return await store.transaction(async (tx) => {
    const job = await createHostedImportsRepository(tx.db).create({
      api_url: (input.api_url ?? DEFAULT_API_URL).replace(/\/+$/, ''),
      repositories,
      ...options,
      token: (id) => tx.secrets.seal(input.token, hostedTokenContext(id)),
      estimated: estimateRequests(repositories.length, Object.values(lists).reduce((a, b) => a + b, 0)),
      lists
    })
    return hostedImportShape(job)
  })
}

/** Requests for what this server knows of each repository: a start date per milestone, issue data per closed issue, events per issue. */
async function localLists (store: PlanningStore, repos: number[], options: { closed_issues: boolean, issue_events: boolean }): Promise<Record<string, number>> {
  const db = store.db
  const count = (rows: Array<{ repo_id: number, n: number | string | bigint }>, stage: string): Array<[string, number]> => rows.map((r) => [`${Number(r.repo_id)}:${stage}`, Number(r.n)])
  const milestones = await db.selectFrom('milestones').select((eb) => ['repo_id', eb.fn.countAll<number>().as('n')]).where('repo_id', 'in', repos).groupBy('repo_id').execute()
  const closed = options.closed_issues
    ? await db.selectFrom('issues').select((eb) => ['repo_id', eb.fn.countAll<number>().as('n')]).where('repo_id', 'in', repos).where('state', '=', 'closed').groupBy('repo_id').execute()
    : []
  const issues = options.issue_events
    ? await db.selectFrom('issues').select((eb) => ['repo_id', eb.fn.countAll<number>().as('n')]).where('repo_id', 'in', repos).groupBy('repo_id').execute()
    : []
  return Object.fromEntries([...count(milestones, 'milestones'), ...count(closed, 'closed'), ...count(issues, 'events')])
}

export async function hostedImport (store: PlanningStore, id: string): Promise<HostedImport> {
  return hostedImportShape(await createHostedImportsRepository(store.db).require(id))
}

/** Follows an import run in this process to its end (the admin CLI), reporting each change of progress. */
export async function runHostedImport (
  importer: HostedImporter, store: PlanningStore, id: string, progress: (job: HostedImport) => void
): Promise<HostedImport> {
  let finished = false
  const done = importer.runNow(id).finally(() => { finished = true })
  for (;;) {
    const job = await hostedImport(store, id)
    progress(job)
    if (finished || job.state === 'done' || job.state === 'failed') {
      await done
      const last = await hostedImport(store, id)
      progress(last)
      return last
    }
    await Promise.race([done, new Promise((resolve) => setTimeout(resolve, 500))])
  }
}
