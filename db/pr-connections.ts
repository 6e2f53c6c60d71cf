import { Invalid, NotFound } from './errors.js'
import { nowIso } from './ids.js'
import { touchPlanning } from './repositories.js'
import { lockFor } from './engine/engine.js'
import { writeTransaction, type Executor } from './engine/transaction.js'

export interface PrConnection { issue_id: number, pull_request_id: number }

/** At most this many pull requests per issue and issues per pull request: every read and export of them stays small. */
export const MAX_PR_CONNECTIONS = 100

/**
 * Pull requests connected to issues (the hosted service's "connect a PR"), any repository to any
 * other: an issue to a pull request, never the other way round nor an issue to an issue. The
 * caller checks who may see and change them.
 */
export function createPrConnectionsRepository (db: Executor) {
  const kinds = async (trx: Executor, issueId: number, pullRequestId: number): Promise<void> => {
    const rows = await trx.selectFrom('issues').select(['id', 'is_pull_request']).where('id', 'in', [issueId, pullRequestId]).execute()
    const pr = (id: number) => rows.find((r) => Number(r.id) === id)
    if (pr(issueId) === undefined) throw new NotFound(`issue ${issueId} not found`)
    if (pr(pullRequestId) === undefined) throw new NotFound(`pull request ${pullRequestId} not found`)
    if (Number(pr(issueId)!.is_pull_request) === 1) throw new Invalid('issueId names a pull request: give the issue the pull request is for')
    if (Number(pr(pullRequestId)!.is_pull_request) !== 1) throw new Invalid('pullRequestId names an issue, not a pull request')
  }

  return {
    /** The connections of these issues (as the issue side). */
    async ofIssues (issueIds: number[]): Promise<PrConnection[]> {
      if (issueIds.length === 0) return []
      return (await db.selectFrom('issue_pr_connections').select(['issue_id', 'pull_request_id', 'created_at'])
        .where('issue_id', 'in', [...new Set(issueIds)]).orderBy('created_at').orderBy('pull_request_id').execute())
        .map((r) => ({ issue_id: Number(r.issue_id), pull_request_id: Number(r.pull_request_id) }))
    },

    /** The connections of these pull requests (as the pull-request side). */
    async ofPullRequests (pullRequestIds: number[]): Promise<PrConnection[]> {
      if (pullRequestIds.length === 0) return []
      return (await db.selectFrom('issue_pr_connections').select(['issue_id', 'pull_request_id', 'created_at'])
        .where('pull_request_id', 'in', [...new Set(pullRequestIds)]).orderBy('created_at').orderBy('issue_id').execute())
        .map((r) => ({ issue_id: Number(r.issue_id), pull_request_id: Number(r.pull_request_id) }))
    },

    /** Connects them (again: nothing changes). */
    async connect (issueId: number, pullRequestId: number): Promise<void> {
      await writeTransaction(db, async (trx) => {
        await kinds(trx, issueId, pullRequestId)
        // The counts below decide the insert: two connects to one end must not both pass them.
        for (const id of [issueId, pullRequestId].sort((a, b) => a - b)) await lockFor(trx, `pr-connections:${id}`)
        const [issueSide, prSide] = await Promise.all([
          trx.selectFrom('issue_pr_connections').select((eb) => eb.fn.countAll<number>().as('n')).where('issue_id', '=', issueId).where('pull_request_id', '<>', pullRequestId).executeTakeFirst(),
          trx.selectFrom('issue_pr_connections').select((eb) => eb.fn.countAll<number>().as('n')).where('pull_request_id', '=', pullRequestId).where('issue_id', '<>', issueId).executeTakeFirst()
        ])
        if (Number(issueSide?.n ?? 0) >= MAX_PR_CONNECTIONS) throw new Invalid(`issue ${issueId} already has ${MAX_PR_CONNECTIONS} connected pull requests, the most it can have`)
        if (Number(prSide?.n ?? 0) >= MAX_PR_CONNECTIONS) throw new Invalid(`pull request ${pullRequestId} is already connected to ${MAX_PR_CONNECTIONS} issues, the most it can be`)
        await trx.insertInto('issue_pr_connections').values({ issue_id: issueId, pull_request_id: pullRequestId, created_at: nowIso() })
          .onConflict((oc) => oc.columns(['issue_id', 'pull_request_id']).doNothing()).execute()
        await touchPlanning(trx, [issueId, pullRequestId])
      })
    },

    /** Disconnects them; NotFound when they were not connected. */
    async disconnect (issueId: number, pullRequestId: number): Promise<void> {
      await writeTransaction(db, async (trx) => {
        const gone = await trx.deleteFrom('issue_pr_connections').where('issue_id', '=', issueId).where('pull_request_id', '=', pullRequestId).executeTakeFirst()
        if (Number(gone.numDeletedRows) === 0) throw new NotFound(`pull request ${pullRequestId} is not connected to issue ${issueId}`)
        await touchPlanning(trx, [issueId, pullRequestId])
      })
    }
  }
}
