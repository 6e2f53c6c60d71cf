import type { Selectable } from 'kysely'
import type { PrioritiesTable } from './schema.js'
import { Invalid, NotFound } from './errors.js'
import { nowIso } from './ids.js'
import { touchPlanning } from './repositories.js'
import { lockFor } from './engine/engine.js'
import { writeTransaction, type Executor } from './engine/transaction.js'

/**
 * The priorities every workspace starts with (the hosted service gives each workspace one, "High
 * priority"; three let a board say more). The set is fixed: the hosted API has no mutation to
 * change it, so neither has this server.
 */
export const DEFAULT_PRIORITIES: ReadonlyArray<{ name: string, color: string, description: string }> = [
  { name: 'High priority', color: '#e5484d', description: 'Do these first.' },
  { name: 'Medium priority', color: '#f5a623', description: 'Next, once the high ones are moving.' },
  { name: 'Low priority', color: '#4c9aff', description: 'When there is room.' }
]

/** A priority as stored (the table's columns). */
export type PriorityRow = Selectable<PrioritiesTable>

export interface IssuePriorityRow { workspace_id: string, issue_id: number, priority_id: number }

const COLUMNS = ['id', 'workspace_id', 'name', 'color', 'description', 'position', 'created_at', 'updated_at'] as const
const shape = (r: Omit<PriorityRow, 'id' | 'position'> & { id: number | string | bigint, position: number | string }): PriorityRow =>
  ({ ...r, id: Number(r.id), position: Number(r.position) })

/** Gives a new workspace the default priorities (inside the transaction that makes it). */
export async function addDefaultPriorities (db: Executor, workspaceId: string): Promise<void> {
  const at = nowIso()
  await db.insertInto('priorities')
    .values(DEFAULT_PRIORITIES.map((p, position) => ({ workspace_id: workspaceId, ...p, position, created_at: at, updated_at: at })))
    .execute()
}

/**
 * Workspaces' priorities and which issue has which. An issue has at most one priority per
 * workspace, one of that workspace's, and only while its repository is in the workspace. The
 * caller checks who may see and change them.
 */
export function createPrioritiesRepository (db: Executor) {
  /** The issues (by id) that are in the workspace: their repository is one of its repositories. */
  const inWorkspace = async (trx: Executor, workspaceId: string, issueIds: number[]): Promise<void> => {
    const found = await trx.selectFrom('issues as i').innerJoin('workspace_repositories as wr', 'wr.repo_id', 'i.repo_id')
      .select('i.id').where('wr.workspace_id', '=', workspaceId).where('i.id', 'in', issueIds).execute()
    const there = new Set(found.map((r) => Number(r.id)))
    const outside = issueIds.find((id) => !there.has(id))
    if (outside !== undefined) throw new Invalid(`issue ${outside} is not in the priority's workspace (its repository is not one of the workspace's)`)
  }

  return {
    async byIds (ids: number[]): Promise<PriorityRow[]> {
      if (ids.length === 0) return []
      return (await db.selectFrom('priorities').select(COLUMNS).where('id', 'in', [...new Set(ids)]).execute()).map(shape)
    },

    /** The workspaces' priorities, each workspace's in its order. */
    async ofWorkspaces (workspaceIds: string[]): Promise<PriorityRow[]> {
      if (workspaceIds.length === 0) return []
      return (await db.selectFrom('priorities').select(COLUMNS).where('workspace_id', 'in', [...new Set(workspaceIds)])
        .orderBy('workspace_id').orderBy('position').orderBy('id').execute()).map(shape)
    },

    /** The issues' priorities, in every workspace. */
    async ofIssues (issueIds: number[]): Promise<IssuePriorityRow[]> {
      if (issueIds.length === 0) return []
      return (await db.selectFrom('issue_priorities').select(['workspace_id', 'issue_id', 'priority_id']).where('issue_id', 'in', [...new Set(issueIds)]).execute())
        .map((r) => ({ workspace_id: r.workspace_id, issue_id: Number(r.issue_id), priority_id: Number(r.priority_id) }))
    },

    /** Gives every issue the priority (replacing the one it had in that workspace). */
    async set (priorityId: number, issueIds: number[]): Promise<PriorityRow> {
      const issues = [...new Set(issueIds)]
      return await writeTransaction(db, async (trx) => {
        const row = await trx.selectFrom('priorities').select(COLUMNS).where('id', '=', priorityId).executeTakeFirst()
        if (row === undefined) throw new NotFound(`priority ${priorityId} not found`)
        if (issues.length === 0) return shape(row)
        // A repository leaving the workspace takes its issues' priorities with it (db/workspaces.ts): not one set in between.
        await lockFor(trx, `workspace-repositories:${row.workspace_id}`)
        await inWorkspace(trx, row.workspace_id, issues)
        const at = nowIso()
        await trx.insertInto('issue_priorities').values(issues.map((issueId) => ({ workspace_id: row.workspace_id, issue_id: issueId, priority_id: priorityId, set_at: at })))
          .onConflict((oc) => oc.columns(['workspace_id', 'issue_id']).doUpdateSet({ priority_id: priorityId, set_at: at })).execute()
        await touchPlanning(trx, issues)
        return shape(row)
      })
    },

    /** Takes the issues' priority in the workspace away (an issue without one is left as it is). */
    async remove (workspaceId: string, issueIds: number[]): Promise<void> {
      const issues = [...new Set(issueIds)]
      if (issues.length === 0) return
      await writeTransaction(db, async (trx) => {
        await inWorkspace(trx, workspaceId, issues)
        await trx.deleteFrom('issue_priorities').where('workspace_id', '=', workspaceId).where('issue_id', 'in', issues).execute()
        await touchPlanning(trx, issues)
      })
    }
  }
}

export type PrioritiesRepository = ReturnType<typeof createPrioritiesRepository>
