import { sql } from 'kysely'
import { lockFor } from './engine/engine.js'
import { writeTransaction, type Executor } from './engine/transaction.js'
import { Conflict, Invalid, NotFound } from './errors.js'
import { nowIso } from './ids.js'

export interface LabelFields { name: string, color: string, description?: string | null }
export interface LabelRow { name: string, color: string | null, description: string | null }

/** The issue hosts' limits: a name of 1 to 50 characters, a 6-digit hex color, a description of at most 100. */
export function checkedLabel (label: LabelFields): LabelRow {
  const name = label.name.trim()
  if (name.length === 0 || name.length > 50) throw new Invalid('name must have 1 to 50 characters')
  const color = label.color.trim().replace(/^#/, '').toLowerCase()
  if (!/^[0-9a-f]{6}$/.test(color)) throw new Invalid('color must be 6 hex digits, such as d73a4a')
  const description = label.description == null || label.description.trim() === '' ? null : label.description.trim()
  if (description !== null && description.length > 100) throw new Invalid('description must have at most 100 characters')
  return { name, color, description }
}

/**
 * Labels kept here: a repository's labels made before any issue wears them (issue_labels holds
 * the worn ones, from the issue host or this server's issue writes), and the organization's labels.
 */
export function createLabelsRepository (db: Executor) {
  return {
    /** A new label of the repository; a name the repository has (made here or worn by an issue, any case) is refused (409). */
    async createRepositoryLabel (repoId: number, label: LabelFields): Promise<LabelRow> {
      const row = checkedLabel(label)
      return await writeTransaction(db, async (trx) => {
        await lockFor(trx, `labels:${repoId}`)
        const repo = await trx.selectFrom('repositories').select('id').where('id', '=', repoId).executeTakeFirst()
        if (repo === undefined) throw new NotFound(`repository ${repoId} not found`)
        const lower = row.name.toLowerCase()
        const made = await trx.selectFrom('repository_labels').select('name').where('repo_id', '=', repoId).where(sql`lower(name)`, '=', lower).executeTakeFirst()
        const worn = await trx.selectFrom('issue_labels as l').innerJoin('issues as i', 'i.id', 'l.issue_id').select('l.name')
          .where('i.repo_id', '=', repoId).where(sql`lower(l.name)`, '=', lower).limit(1).executeTakeFirst()
        if (made !== undefined || worn !== undefined) throw new Conflict(`repository ${repoId} already has a label ${JSON.stringify(made?.name ?? worn?.name)}`)
        await trx.insertInto('repository_labels').values({ repo_id: repoId, ...row, created_at: nowIso() }).execute()
        return row
      }, [repoId])
    },

    /** A new label of the organization; a name it has (any case) is refused (409). */
    async createOrganizationLabel (label: LabelFields): Promise<LabelRow> {
      const row = checkedLabel(label)
      return await writeTransaction(db, async (trx) => {
        await lockFor(trx, 'zenhub-labels')
        const found = await trx.selectFrom('zenhub_labels').select('name').where(sql`lower(name)`, '=', row.name.toLowerCase()).executeTakeFirst()
        if (found !== undefined) throw new Conflict(`the organization already has a label ${JSON.stringify(found.name)}`)
        await trx.insertInto('zenhub_labels').values({ ...row, created_at: nowIso() }).execute()
        return row
      })
    },

    /** Deletes the organization's labels of these names (any case); returns those deleted. */
    async deleteOrganizationLabels (names: string[]): Promise<LabelRow[]> {
      const lower = [...new Set(names.map((n) => n.trim().toLowerCase()))]
      if (lower.length === 0 || lower.length > 100) throw new Invalid('names must list 1 to 100 labels')
      return await writeTransaction(db, async (trx) => {
        await lockFor(trx, 'zenhub-labels')
        const rows = await trx.selectFrom('zenhub_labels').select(['name', 'color', 'description']).where(sql`lower(name)`, 'in', lower).orderBy('name').execute()
        if (rows.length > 0) await trx.deleteFrom('zenhub_labels').where('name', 'in', rows.map((r) => r.name)).execute()
        return rows
      })
    }
  }
}

export type LabelsRepository = ReturnType<typeof createLabelsRepository>
