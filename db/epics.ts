import { sql } from 'kysely'
import type { Static } from '../schemas/common.js'
import type { EpicData as EpicDataSchema, EpicList, UpdateEpicIssuesReply } from '../schemas/epics.js'
import { actor, announce, issueContext } from './announce.js'
import type { DomainEvents } from './domain-events.js'
import { lockFor } from './engine/engine.js'
import { reaches } from './graph.js'
import { Invalid, NotFound } from './errors.js'
import { refKey, refuseOverlap, resolveRefs, toRef, type IssueRef, type ResolvedIssue } from './issue-refs.js'
import type { PipelineRef } from './issues.js'
import { issueByNumber, issueUrl, requireIssue, touchPlanning, type Repository } from './repositories.js'
import type { User } from './users.js'
import { reached, writeTransaction, type Executor } from './engine/transaction.js'

export type EpicData = Static<typeof EpicDataSchema>
type EpicChild = EpicData['issues'][number]
type EpicListEntry = Static<typeof EpicList>['epic_issues'][number]
type UpdateReply = Static<typeof UpdateEpicIssuesReply>

/** Whether `epic` is inside `child` (child contains … contains epic): adding child would loop. */
const contains = async (db: Executor, child: number, epic: number, repos?: number[]): Promise<boolean> =>
  await reaches(db, { table: 'epic_issues', from: 'epic_id', to: 'issue_id' }, child, epic, repos)

async function requireEpic (db: Executor, repoId: number, number: number) {
  const row = await requireIssue(db, repoId, number)
  if (row.is_epic !== 1) throw new NotFound(`issue ${number} in repository ${repoId} is not an epic`)
  return row
}

type CanRead = (repoId: number) => boolean

async function addChildren (db: Executor, epicId: number, children: ResolvedIssue[], canRead: CanRead): Promise<IssueRef[]> {
  const added: IssueRef[] = []
  for (const child of children) {
    if (child.id === epicId) throw new Invalid('an epic cannot contain itself')
    if (await contains(db, child.id, epicId)) {
      // Say why only when the caller can see the path; otherwise only that it is refused.
      const repos = await db.selectFrom('epic_issues as e').innerJoin('issues as i', 'i.id', 'e.issue_id').select('i.repo_id').distinct().execute()
      if (!await contains(db, child.id, epicId, repos.map((r) => Number(r.repo_id)).filter(canRead))) throw new Invalid(`adding issue ${refKey(toRef(child))} is refused`)
      throw new Invalid(`issue ${refKey(toRef(child))} already contains this epic (directly or through other epics); adding it would make a loop`)
    }
    const inserted = await db.insertInto('epic_issues').values({ epic_id: epicId, issue_id: child.id })
      .onConflict((oc) => oc.columns(['epic_id', 'issue_id']).doNothing()).returning('issue_id').executeTakeFirst()
    if (inserted !== undefined) added.push(toRef(child))
  }
  return added
}

/**
 * Epics: issues that group other issues (in any repository). Epics may contain epics, but never
 * themselves, directly or through other epics.
 */
export function createEpicsRepository (db: Executor, events?: DomainEvents) {
  /**
   * Announces membership changes and notes the planning change of everyone involved. Membership
   * is on no board row: the members' repositories are reached, none of their rows.
   */
  const changed = async (trx: Executor, epicId: number, added: ResolvedIssue[], removed: ResolvedIssue[], user?: User): Promise<void> => {
    for (const member of [...added, ...removed]) reached(trx, Number(member.repo_id), [])
    await touchPlanning(trx, [epicId, ...added.map((i) => i.id), ...removed.map((i) => i.id)])
    if (added.length + removed.length === 0) return
    const context = { ...await issueContext(trx, epicId), user: actor(user) }
    for (const child of added) await announce(trx, events, { ...context, type: 'epic_issue_added', child: toRef(child) })
    for (const child of removed) await announce(trx, events, { ...context, type: 'epic_issue_removed', child: toRef(child) })
  }

  return {
    /** The repository's epics; `issue_url` null for a repository with no issue host (the REST plugin links its board). */
    async list (repo: Repository): Promise<Array<Omit<EpicListEntry, 'issue_url'> & { issue_url: string | null }>> {
      const rows = await db.selectFrom('issues').select('number').where('repo_id', '=', repo.id).where('is_epic', '=', 1).orderBy('number').execute()
      return rows.map((e) => ({
        issue_number: Number(e.number),
        repo_id: repo.id,
        issue_url: issueUrl(repo, Number(e.number))
      }))
    },

    /** Epic data; children in repositories the caller cannot read are left out (and out of the total). */
    async data (repoId: number, number: number, canRead: (repoId: number) => boolean): Promise<EpicData> {
      const epic = await requireEpic(db, repoId, number)
      // The epic and its children with their pipelines, in one statement (no query per child).
      const { rows } = await sql<{
        id: number,
        repo_id: number,
        number: number,
        estimate: number | null,
        is_epic: number
        pipeline_name: string | null,
        pipeline_id: string | null,
        workspace_id: string | null
      }>`
        WITH members(id, ord) AS (SELECT CAST(${epic.id} AS BIGINT), 0 UNION ALL SELECT issue_id, 1 FROM epic_issues WHERE epic_id = ${epic.id})
        SELECT i.id, i.repo_id, i.number, i.estimate, i.is_epic, pl.name AS pipeline_name, pl.id AS pipeline_id, p.workspace_id
        FROM members m
        JOIN issues i ON i.id = m.id
        LEFT JOIN placements p ON p.issue_id = i.id
        LEFT JOIN pipelines pl ON pl.id = p.pipeline_id
        LEFT JOIN workspaces w ON w.id = p.workspace_id
        ORDER BY m.ord, i.repo_id, i.number, w.created_at, w.seq`.execute(db)
      const members = new Map<number, EpicChild & { own: number | null }>()
      let epicEntry: (EpicChild & { own: number | null }) | undefined
      for (const row of rows) {
        const id = Number(row.id)
        let entry = id === epic.id ? epicEntry : members.get(id)
        if (entry === undefined) {
          entry = { issue_number: Number(row.number), is_epic: Number(row.is_epic) === 1, repo_id: Number(row.repo_id), pipelines: [], own: row.estimate }
          if (row.estimate !== null) entry.estimate = { value: row.estimate }
          if (id === epic.id) epicEntry = entry
          else members.set(id, entry)
        }
        if (row.pipeline_id !== null && !entry.pipelines.some((p: PipelineRef) => p.workspace_id === row.workspace_id)) {
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

    async convertToEpic (repoId: number, number: number, children: IssueRef[], canRead: (repoId: number) => boolean, user?: User): Promise<void> {
      await writeTransaction(db, async (trx) => {
        await lockFor(trx, 'epics')
        const row = await issueByNumber(trx, repoId, number)
        if (row === undefined) throw new NotFound(`issue ${number} not found in repository ${repoId}`)
        if (row.is_epic === 1) throw new Invalid(`issue ${number} in repository ${repoId} is already an epic`)
        await trx.updateTable('issues').set({ is_epic: 1 }).where('id', '=', row.id).execute()
        // The flag is on its board row.
        reached(trx, repoId, [row.id])
        const resolved = await resolveRefs(trx, children, canRead)
        const added = await addChildren(trx, row.id, resolved, canRead)
        await changed(trx, row.id, resolved.filter((r) => added.some((a) => a.repo_id === Number(r.repo_id) && a.issue_number === Number(r.number))), [], user)
      }, [repoId], [])
    },

    /** Back to a regular issue: its children are released (they keep everything else). */
    async convertToIssue (repoId: number, number: number, user?: User): Promise<void> {
      await writeTransaction(db, async (trx) => {
        const epic = await requireEpic(trx, repoId, number)
        const released = await trx.selectFrom('epic_issues as e').innerJoin('issues as i', 'i.id', 'e.issue_id')
          .select(['i.id', 'i.repo_id', 'i.number', 'i.estimate', 'i.is_epic']).where('e.epic_id', '=', epic.id).execute()
        await trx.deleteFrom('epic_issues').where('epic_id', '=', epic.id).execute()
        await changed(trx, epic.id, [], released, user)
        await trx.updateTable('issues').set({ is_epic: 0 }).where('id', '=', epic.id).execute()
        reached(trx, repoId, [epic.id])
      }, [repoId], [])
    },

    /** Returns what this call changed: issues already in (or not in) the epic are not listed. */
    async updateIssues (repoId: number, number: number, remove: IssueRef[], add: IssueRef[], canRead: CanRead, user?: User): Promise<UpdateReply> {
      return await writeTransaction(db, async (trx) => {
        // Membership changes take turns, so two that together make a loop cannot both pass the check.
        await lockFor(trx, 'epics')
        const epic = await requireEpic(trx, repoId, number)
        const toRemove = await resolveRefs(trx, remove, canRead, 'remove_issues')
        const toAdd = await resolveRefs(trx, add, canRead, 'add_issues')
        refuseOverlap(toAdd, toRemove)
        const removed: IssueRef[] = []
        for (const child of toRemove) {
          const result = await trx.deleteFrom('epic_issues').where('epic_id', '=', epic.id).where('issue_id', '=', child.id).executeTakeFirst()
          if (Number(result.numDeletedRows) > 0) removed.push(toRef(child))
        }
        const added = await addChildren(trx, epic.id, toAdd, canRead)
        const isIn = (refs: IssueRef[]) => (i: ResolvedIssue) => refs.some((r) => r.repo_id === Number(i.repo_id) && r.issue_number === Number(i.number))
        await changed(trx, epic.id, toAdd.filter(isIn(added)), toRemove.filter(isIn(removed)), user)
        return { removed_issues: removed, added_issues: added }
      }, [repoId], [])
    }
  }
}

export type EpicsRepository = ReturnType<typeof createEpicsRepository>
