import { Invalid, NotFound } from './errors.js'
import { nowIso } from './ids.js'
import { isCalendarDate } from './zoned-time.js'
import { lockFor } from './engine/engine.js'
import { writeTransaction, type Executor } from './engine/transaction.js'

export interface EpicAssignee { epic_id: number, user_id: number, login: string, created_at: string }
export interface EpicLabel { epic_id: number, name: string, color: string | null }
export interface KeyDateRow { id: number, epic_id: number, date: string, description: string, created_at: string }
export interface LabelWanted { name: string, color?: string | null }

const LABEL_NAME_MAX = 50
const DESCRIPTION_MAX = 1_000
/** At most this many labels and key dates per epic: every read of an epic's stays small. */
export const MAX_PER_EPIC = 100
const COLOR = /^#?[0-9A-Fa-f]{6}$/
const num = (value: number | string | bigint): number => Number(value)

/** A label as given: a name of 1 to 50 characters, a color of six hex digits (with or without `#`) or none. */
export function checkedLabel (label: LabelWanted): { name: string, color: string | null } {
  const name = label.name.trim()
  if (name.length === 0 || name.length > LABEL_NAME_MAX) throw new Invalid(`a label name must have 1 to ${LABEL_NAME_MAX} characters`)
  const color = label.color ?? null
  if (color !== null && !COLOR.test(color)) throw new Invalid(`label color ${JSON.stringify(color.slice(0, 20))} is not six hex digits`)
  return { name, color: color?.replace(/^#/, '') ?? null }
}

/** An estimate as the issues' are: from 0 to 1e9, or null. */
export function checkedEstimate (value: number | null): number | null {
  if (value !== null && !(value >= 0 && value <= 1e9)) throw new Invalid('value must be from 0 to 1e9, or null to clear the estimate')
  return value
}

/**
 * A ZenhubEpic's assignees, labels, key dates and estimate. Each write is one transaction that
 * first finds every epic (and user) it names: one missing refuses the whole write.
 */
export function createZenhubEpicMetaRepository (db: Executor) {
  const requireEpics = async (trx: Executor, ids: number[]): Promise<number[]> => {
    const unique = [...new Set(ids)]
    if (unique.length === 0) return []
    const found = new Set((await trx.selectFrom('zenhub_epics').select('id').where('id', 'in', unique).execute()).map((r) => num(r.id)))
    const missing = unique.find((id) => !found.has(id))
    if (missing !== undefined) throw new NotFound(`zenhub epic ${missing} not found`)
    return unique
  }
  /** Refuses the write when it left an epic with more than MAX_PER_EPIC rows of `table` (the caller's transaction undoes it). */
  const bounded = async (trx: Executor, table: 'zenhub_epic_labels' | 'zenhub_epic_key_dates', epics: number[], what: string): Promise<void> => {
    // two writes to one epic count one after the other
    for (const id of [...epics].sort((a, b) => a - b)) await lockFor(trx, `zenhub-epic:${id}`)
    const over = await trx.selectFrom(table).select(['epic_id', (eb) => eb.fn.countAll<number>().as('n')]).where('epic_id', 'in', epics)
      .groupBy('epic_id').having((eb) => eb.fn.countAll(), '>', MAX_PER_EPIC).executeTakeFirst()
    if (over !== undefined) throw new Invalid(`zenhub epic ${num(over.epic_id)} would have more than ${MAX_PER_EPIC} ${what}`)
  }

  const touch = async (trx: Executor, ids: number[], at: string): Promise<void> => {
    if (ids.length > 0) await trx.updateTable('zenhub_epics').set({ updated_at: at }).where('id', 'in', ids).execute()
  }

  return {
    /** The epics' assignees, in the order they were assigned. */
    async assigneesOf (epicIds: number[]): Promise<EpicAssignee[]> {
      if (epicIds.length === 0) return []
      const rows = await db.selectFrom('zenhub_epic_assignees as a').innerJoin('users as u', 'u.id', 'a.user_id')
        .select(['a.epic_id', 'a.user_id', 'u.login', 'u.created_at']).where('a.epic_id', 'in', [...new Set(epicIds)])
        .orderBy('a.epic_id').orderBy('a.added_at').orderBy('a.user_id').execute()
      return rows.map((r) => ({ ...r, epic_id: num(r.epic_id), user_id: num(r.user_id) }))
    },

    /** The epics' labels, by name. */
    async labelsOf (epicIds: number[]): Promise<EpicLabel[]> {
      if (epicIds.length === 0) return []
      const rows = await db.selectFrom('zenhub_epic_labels').select(['epic_id', 'name', 'color']).where('epic_id', 'in', [...new Set(epicIds)])
        .orderBy('epic_id').orderBy('name').execute()
      return rows.map((r) => ({ ...r, epic_id: num(r.epic_id) }))
    },

    /** The epics' key dates, earliest first. */
    async keyDatesOf (epicIds: number[]): Promise<KeyDateRow[]> {
      if (epicIds.length === 0) return []
      const rows = await db.selectFrom('zenhub_epic_key_dates').select(['id', 'epic_id', 'date', 'description', 'created_at'])
        .where('epic_id', 'in', [...new Set(epicIds)]).orderBy('epic_id').orderBy('date').orderBy('id').execute()
      return rows.map((r) => ({ ...r, id: num(r.id), epic_id: num(r.epic_id) }))
    },

    async keyDateById (id: number): Promise<KeyDateRow | undefined> {
      const row = await db.selectFrom('zenhub_epic_key_dates').select(['id', 'epic_id', 'date', 'description', 'created_at']).where('id', '=', id).executeTakeFirst()
      return row === undefined ? undefined : { ...row, id: num(row.id), epic_id: num(row.epic_id) }
    },

    /** Assigns (or unassigns) every user to (from) every epic. */
    async changeAssignees (epicIds: number[], userIds: number[], add: boolean): Promise<void> {
      await writeTransaction(db, async (trx) => {
        const epics = await requireEpics(trx, epicIds)
        const users = [...new Set(userIds)]
        if (users.length > 0) {
          const found = new Set((await trx.selectFrom('users').select('id').where('id', 'in', users).execute()).map((r) => num(r.id)))
          const missing = users.find((id) => !found.has(id))
          if (missing !== undefined) throw new NotFound(`zenhub user ${missing} not found`)
        }
        if (epics.length === 0 || users.length === 0) return
        const at = nowIso()
        if (add) {
          await trx.insertInto('zenhub_epic_assignees').values(epics.flatMap((epic) => users.map((user) => ({ epic_id: epic, user_id: user, added_at: at }))))
            .onConflict((oc) => oc.columns(['epic_id', 'user_id']).doNothing()).execute()
        } else {
          await trx.deleteFrom('zenhub_epic_assignees').where('epic_id', 'in', epics).where('user_id', 'in', users).execute()
        }
        await touch(trx, epics, at)
      })
    },

    /** Adds labels (a color given replaces the one kept) to every epic, or removes them by name. */
    async changeLabels (epicIds: number[], wanted: LabelWanted[], add: boolean): Promise<void> {
      const labels = [...new Map(wanted.map(checkedLabel).map((l) => [l.name, l])).values()]
      await writeTransaction(db, async (trx) => {
        const epics = await requireEpics(trx, epicIds)
        if (epics.length === 0 || labels.length === 0) return
        const at = nowIso()
        if (add) {
          await trx.insertInto('zenhub_epic_labels').values(epics.flatMap((epic) => labels.map((l) => ({ epic_id: epic, name: l.name, color: l.color, added_at: at }))))
            .onConflict((oc) => oc.columns(['epic_id', 'name']).doUpdateSet((eb) => ({ color: eb.fn.coalesce(eb.ref('excluded.color'), eb.ref('zenhub_epic_labels.color')) }))).execute()
          await bounded(trx, 'zenhub_epic_labels', epics, 'labels')
        } else {
          await trx.deleteFrom('zenhub_epic_labels').where('epic_id', 'in', epics).where('name', 'in', labels.map((l) => l.name)).execute()
        }
        await touch(trx, epics, at)
      })
    },

    /** Sets (or with null clears) every epic's own estimate. */
    async setEstimate (epicIds: number[], value: number | null): Promise<void> {
      const estimate = checkedEstimate(value)
      await writeTransaction(db, async (trx) => {
        const epics = await requireEpics(trx, epicIds)
        if (epics.length === 0) return
        await trx.updateTable('zenhub_epics').set({ estimate, updated_at: nowIso() }).where('id', 'in', epics).execute()
      })
    },

    async addKeyDate (epicId: number, date: string, description: string): Promise<KeyDateRow> {
      if (!isCalendarDate(date)) throw new Invalid('date must be a YYYY-MM-DD date')
      const text = description.trim()
      if (text.length === 0 || text.length > DESCRIPTION_MAX) throw new Invalid(`description must have 1 to ${DESCRIPTION_MAX} characters`)
      return await writeTransaction(db, async (trx) => {
        await requireEpics(trx, [epicId])
        const at = nowIso()
        const row = await trx.insertInto('zenhub_epic_key_dates').values({ epic_id: epicId, date, description: text, created_at: at })
          .returning(['id', 'epic_id', 'date', 'description', 'created_at']).executeTakeFirstOrThrow()
        await bounded(trx, 'zenhub_epic_key_dates', [epicId], 'key dates')
        await touch(trx, [epicId], at)
        return { ...row, id: num(row.id), epic_id: num(row.epic_id) }
      })
    },

    /** Removes a key date; answers it as it was. */
    async removeKeyDate (id: number): Promise<KeyDateRow> {
      return await writeTransaction(db, async (trx) => {
        const row = await trx.selectFrom('zenhub_epic_key_dates').select(['id', 'epic_id', 'date', 'description', 'created_at']).where('id', '=', id).executeTakeFirst()
        if (row === undefined) throw new NotFound(`key date ${id} not found`)
        await trx.deleteFrom('zenhub_epic_key_dates').where('id', '=', id).execute()
        await touch(trx, [num(row.epic_id)], nowIso())
        return { ...row, id: num(row.id), epic_id: num(row.epic_id) }
      })
    }
  }
}

export type ZenhubEpicMetaRepository = ReturnType<typeof createZenhubEpicMetaRepository>
