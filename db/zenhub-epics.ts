import { Invalid, NotFound } from './errors.js'
import { nowIso } from './ids.js'
import { touchPlanning } from './repositories.js'
import type { ZenhubEpicsTable } from './schema.js'
import type { User } from './users.js'
import { isCalendarDate } from './zoned-time.js'
import { writeTransaction, type Executor } from './engine/transaction.js'

export type ZenhubEpicState = ZenhubEpicsTable['state']
export const ZENHUB_EPIC_STATES: readonly ZenhubEpicState[] = ['OPEN', 'TODO', 'IN_PROGRESS', 'CLOSED']

export interface ZenhubEpicRow {
  id: number
  workspace_id: string
  title: string
  body: string | null
  state: ZenhubEpicState
  start_on: string | null
  end_on: string | null
  creator_id: number | null
  created_at: string
  updated_at: string
  /** its own estimate (its issues' sum is apart) */
  estimate: number | null
}

export interface ZenhubEpicChange {
  title?: string
  body?: string | null
  state?: ZenhubEpicState
  /** YYYY-MM-DD, or null to clear */
  start_on?: string | null
  end_on?: string | null
}

const COLUMNS = ['id', 'workspace_id', 'title', 'body', 'state', 'start_on', 'end_on', 'creator_id', 'created_at', 'updated_at', 'estimate'] as const
const BODY_MAX = 65_536

type Stored = Omit<ZenhubEpicRow, 'id' | 'creator_id' | 'estimate'> & { id: number | string | bigint, creator_id: number | string | bigint | null, estimate: number | string | null }
const orNull = (value: number | string | bigint | null): number | null => value === null ? null : Number(value)
const shape = (row: Stored): ZenhubEpicRow => ({ ...row, id: Number(row.id), creator_id: orNull(row.creator_id), estimate: orNull(row.estimate) })

function checkedTitle (title: string): string {
  const trimmed = title.trim()
  if (trimmed.length === 0 || trimmed.length > 256) throw new Invalid('title must have 1 to 256 characters')
  return trimmed
}

function checkedBody (body: string | null): string | null {
  if (body !== null && body.length > BODY_MAX) throw new Invalid(`body must have at most ${BODY_MAX} characters`)
  return body
}

function checkedDate (value: string | null, field: string): string | null {
  if (value !== null && !isCalendarDate(value)) throw new Invalid(`${field} must be a YYYY-MM-DD date`)
  return value
}

/**
 * Epics that are not issues (the hosted service's ZenhubEpic): each of one workspace, with a title,
 * a body, a state and optional start and end dates, holding issues of any repository. The caller
 * checks who may see and change them; these functions keep the rows consistent.
 */
export function createZenhubEpicsRepository (db: Executor) {
  const byIds = async (ids: number[]): Promise<ZenhubEpicRow[]> => {
    if (ids.length === 0) return []
    return (await db.selectFrom('zenhub_epics').select(COLUMNS).where('id', 'in', [...new Set(ids)]).execute()).map(shape)
  }

  const requireEpic = async (trx: Executor, id: number): Promise<ZenhubEpicRow> => {
    const row = await trx.selectFrom('zenhub_epics').select(COLUMNS).where('id', '=', id).executeTakeFirst()
    if (row === undefined) throw new NotFound(`zenhub epic ${id} not found`)
    return shape(row)
  }

  /** The issues an epic change touches: their planning changed (cached reads of them go stale). */
  const issuesOfEpic = async (trx: Executor, id: number): Promise<number[]> =>
    (await trx.selectFrom('zenhub_epic_issues').select('issue_id').where('epic_id', '=', id).execute()).map((r) => Number(r.issue_id))

  /** Adds (or removes) every issue to (from) every epic; returns the epics after. */
  const membership = async (epicIds: number[], issueIds: number[], add: boolean): Promise<ZenhubEpicRow[]> => {
    return await writeTransaction(db, async (trx) => {
      const epics = []
      for (const id of new Set(epicIds)) epics.push(await requireEpic(trx, id))
      const issues = [...new Set(issueIds)]
      if (issues.length > 0) {
        const found = await trx.selectFrom('issues').select('id').where('id', 'in', issues).execute()
        if (found.length !== issues.length) throw new NotFound('an issue of issueIds was not found')
      }
      const at = nowIso()
      for (const epic of epics) {
        if (issues.length === 0) continue
        if (add) {
          for (const issueId of issues) {
            await trx.insertInto('zenhub_epic_issues').values({ epic_id: epic.id, issue_id: issueId, added_at: at })
              .onConflict((oc) => oc.columns(['epic_id', 'issue_id']).doNothing()).execute()
          }
        } else {
          await trx.deleteFrom('zenhub_epic_issues').where('epic_id', '=', epic.id).where('issue_id', 'in', issues).execute()
        }
        await trx.updateTable('zenhub_epics').set({ updated_at: at }).where('id', '=', epic.id).execute()
      }
      await touchPlanning(trx, issues)
      return await createZenhubEpicsRepository(trx).byIds(epics.map((e) => e.id))
    })
  }

  return {
    byIds,

    /** The workspace's epics, oldest first. */
    async list (workspaceId: string): Promise<ZenhubEpicRow[]> {
      return (await db.selectFrom('zenhub_epics').select(COLUMNS).where('workspace_id', '=', workspaceId).orderBy('id').execute()).map(shape)
    },

    /** Which epic holds which issue, for the epics given. */
    async issuesOf (epicIds: number[]): Promise<Array<{ epic_id: number, issue_id: number }>> {
      if (epicIds.length === 0) return []
      const rows = await db.selectFrom('zenhub_epic_issues').select(['epic_id', 'issue_id']).where('epic_id', 'in', [...new Set(epicIds)])
        .orderBy('epic_id').orderBy('added_at').orderBy('issue_id').execute()
      return rows.map((r) => ({ epic_id: Number(r.epic_id), issue_id: Number(r.issue_id) }))
    },

    /** Which epic holds which issue, for the issues given. */
    async epicsOf (issueIds: number[]): Promise<Array<{ epic_id: number, issue_id: number }>> {
      if (issueIds.length === 0) return []
      const rows = await db.selectFrom('zenhub_epic_issues').select(['epic_id', 'issue_id']).where('issue_id', 'in', [...new Set(issueIds)]).orderBy('epic_id').execute()
      return rows.map((r) => ({ epic_id: Number(r.epic_id), issue_id: Number(r.issue_id) }))
    },

    async create (user: User, workspaceId: string, input: { title: string, body?: string | null }): Promise<ZenhubEpicRow> {
      const title = checkedTitle(input.title)
      const body = checkedBody(input.body ?? null)
      return await writeTransaction(db, async (trx) => {
        const workspace = await trx.selectFrom('workspaces').select('id').where('id', '=', workspaceId).executeTakeFirst()
        if (workspace === undefined) throw new NotFound(`workspace ${workspaceId} not found`)
        const at = nowIso()
        const row = await trx.insertInto('zenhub_epics')
          .values({ workspace_id: workspaceId, title, body, state: 'OPEN', start_on: null, end_on: null, creator_id: user.id, created_at: at, updated_at: at })
          .returning(COLUMNS).executeTakeFirstOrThrow()
        return shape(row)
      })
    },

    /** Changes what `change` names; a start after the end is refused. */
    async update (id: number, change: ZenhubEpicChange): Promise<ZenhubEpicRow> {
      const set: Partial<Omit<ZenhubEpicRow, 'id'>> = {}
      if (change.title !== undefined) set.title = checkedTitle(change.title)
      if (change.body !== undefined) set.body = checkedBody(change.body)
      if (change.state !== undefined) {
        if (!ZENHUB_EPIC_STATES.includes(change.state)) throw new Invalid(`state must be one of ${ZENHUB_EPIC_STATES.join(', ')}`)
        set.state = change.state
      }
      if (change.start_on !== undefined) set.start_on = checkedDate(change.start_on, 'startOn')
      if (change.end_on !== undefined) set.end_on = checkedDate(change.end_on, 'endOn')
      return await writeTransaction(db, async (trx) => {
        const before = await requireEpic(trx, id)
        const start = set.start_on === undefined ? before.start_on : set.start_on
        const end = set.end_on === undefined ? before.end_on : set.end_on
        if (start !== null && end !== null && start > end) throw new Invalid('startOn must not be after endOn')
        await trx.updateTable('zenhub_epics').set({ ...set, updated_at: nowIso() }).where('id', '=', id).execute()
        await touchPlanning(trx, await issuesOfEpic(trx, id))
        return await requireEpic(trx, id)
      })
    },

    /** The epic goes; its issues stay, out of it. */
    async remove (id: number): Promise<void> {
      await writeTransaction(db, async (trx) => {
        await requireEpic(trx, id)
        const issues = await issuesOfEpic(trx, id)
        await trx.deleteFrom('zenhub_epic_issues').where('epic_id', '=', id).execute()
        await trx.deleteFrom('zenhub_epics').where('id', '=', id).execute()
        await touchPlanning(trx, issues)
      })
    },

    addIssues: async (epicIds: number[], issueIds: number[]) => await membership(epicIds, issueIds, true),
    removeIssues: async (epicIds: number[], issueIds: number[]) => await membership(epicIds, issueIds, false)
  }
}

export type ZenhubEpicsRepository = ReturnType<typeof createZenhubEpicsRepository>
