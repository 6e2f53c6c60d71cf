import { NOBODY, type DomainEvents } from './domain-events.js'
import { lockFor } from './engine/engine.js'
import { notedEvents, writeTransaction, type Executor } from './engine/transaction.js'
import { Conflict, Invalid, NotFound } from './errors.js'
import { nowIso } from './ids.js'
import { CEILING, FIRST, GAP } from './ranking.js'
import { touchPlanning, type Repository } from './repositories.js'
import { placedAt } from './pipeline-times.js'

/**
 * Deletes a pipeline of a workspace, its issues moved first to the end of `destinationId` (another
 * pipeline of the same workspace) in their order, each open one with its `transferIssue` event and
 * `issue_transfer` domain event, as a move would have: one transaction.
 */
export function createPipelineRemoval (db: Executor, events: DomainEvents) {
  return {
    async remove (user: { id: number, login: string } | undefined, workspaceId: string, pipelineId: string, destinationId: string): Promise<{ moved: number }> {
      return await writeTransaction(db, async (trx) => {
        // Deletions in one workspace one at a time: each reads the pipelines the one before left.
        await lockFor(trx, `pipelines-of:${workspaceId}`)
        const workspace = await trx.selectFrom('workspaces').select(['id', 'name']).where('id', '=', workspaceId).executeTakeFirst()
        if (workspace === undefined) throw new NotFound(`workspace ${workspaceId} not found`)
        const lanes = await trx.selectFrom('pipelines').select(['id', 'name']).where('workspace_id', '=', workspaceId).orderBy('sort_order').execute()
        const gone = lanes.find((p) => p.id === pipelineId)
        if (gone === undefined) throw new NotFound(`pipeline ${pipelineId} is not a pipeline of workspace ${workspaceId}`)
        const target = lanes.find((p) => p.id === destinationId)
        if (destinationId === pipelineId) throw new Invalid('destination_pipeline_id must be another pipeline than the one deleted')
        if (target === undefined) throw new Invalid(`destination_pipeline_id ${destinationId} is not a pipeline of workspace ${workspaceId}`)
        // Both pipelines' orders change: moves into either wait.
        for (const id of [pipelineId, destinationId].sort()) await lockFor(trx, `pipeline:${id}`)

        const rows = await trx.selectFrom('placements as p').innerJoin('issues as i', 'i.id', 'p.issue_id')
          .select(['p.issue_id', 'p.repo_id', 'p.is_open', 'i.number', 'i.title'])
          .where('p.pipeline_id', '=', pipelineId).orderBy('p.repo_id').orderBy('p.is_open', 'desc').orderBy('p.rank').orderBy('p.issue_id').execute()
        const lastRank = new Map<number, number>()
        for (const repoId of new Set(rows.map((r) => Number(r.repo_id)))) {
          const top = await trx.selectFrom('placements').select((eb) => eb.fn.max('rank').as('rank'))
            .where('pipeline_id', '=', destinationId).where('repo_id', '=', repoId).executeTakeFirst()
          lastRank.set(repoId, top?.rank === null || top?.rank === undefined ? FIRST - GAP : Number(top.rank))
        }
        const repos = new Map<number, Repository>()
        const at = nowIso()
        const actor = user ?? NOBODY
        for (const row of rows) {
          const repoId = Number(row.repo_id)
          const rank = lastRank.get(repoId)! + GAP
          if (rank >= CEILING) throw new Conflict(`pipeline ${target.name} has no room left at its end; move some issues first`)
          lastRank.set(repoId, rank)
          const issueId = Number(row.issue_id)
          await trx.updateTable('placements').set({ pipeline_id: destinationId, rank, position: rank })
            .where('issue_id', '=', issueId).where('workspace_id', '=', workspaceId).execute()
          if (Number(row.is_open) !== 1) continue
          notedEvents(trx)
          await trx.insertInto('issue_events').values({
            issue_id: issueId,
            user_id: actor.id === NOBODY.id ? null : actor.id,
            type: 'transferIssue',
            created_at: at,
            from_pipeline: gone.name,
            to_pipeline: target.name,
            workspace_id: workspaceId,
            from_estimate: null,
            to_estimate: null
          }).execute()
          let repo = repos.get(repoId)
          if (repo === undefined) {
            const found = await trx.selectFrom('repositories').select(['id', 'owner', 'name', 'html_url']).where('id', '=', repoId).executeTakeFirstOrThrow()
            repo = { ...found, id: Number(found.id) }
            repos.set(repoId, repo)
          }
          await events.emit(trx, {
            type: 'issue_transfer',
            repo,
            issue: { id: issueId, number: Number(row.number), title: row.title },
            user: actor,
            workspace: { id: workspaceId, name: workspace.name },
            from: gone.name,
            to: target.name
          })
        }
        await touchPlanning(trx, rows.map((r) => Number(r.issue_id)))
        await trx.deleteFrom('pipelines').where('id', '=', pipelineId).execute()
        for (const [i, p] of lanes.filter((l) => l.id !== pipelineId).entries()) {
          await trx.updateTable('pipelines').set(placedAt({ sort_order: i }, new Date().toISOString())).where('id', '=', p.id).execute()
        }
        return { moved: rows.length }
      })
    }
  }
}
