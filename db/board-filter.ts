import { sql, type RawBuilder, type SqlBool } from 'kysely'
import { containsPattern } from './issue-search.js'

/**
 * The board page's filters, applied in the database to a paged board read (docs/api.md, "Paged
 * boards"): the title (or `#number`), any of these labels, any of these assignees, the estimate.
 */
export interface BoardFilter {
  text?: string
  labels?: string[]
  assignees?: string[]
  /** `none`, `set` or `low-high` (inclusive) */
  estimate?: string
}

/**
 * The filter as one condition on placements `p` joined to issues `i`, or undefined when it keeps
 * everything. Every value is a parameter; labels and assignees are index probes (their primary keys).
 */
export function filterCondition (filter: BoardFilter): RawBuilder<SqlBool> | undefined {
  const parts: Array<RawBuilder<unknown>> = []
  const text = filter.text?.trim() ?? ''
  if (text !== '') {
    const number = /^#?(\d{1,15})$/.exec(text)
    parts.push(number !== null ? sql`i.number = ${Number(number[1])}` : sql`lower(i.title) like ${containsPattern(text)} escape '\\'`)
  }
  if (filter.labels !== undefined && filter.labels.length > 0) {
    parts.push(sql`exists (select 1 from issue_labels l where l.issue_id = i.id and l.name in (${sql.join(filter.labels)}))`)
  }
  if (filter.assignees !== undefined && filter.assignees.length > 0) {
    parts.push(sql`exists (select 1 from issue_assignees a where a.issue_id = i.id and a.login in (${sql.join(filter.assignees)}))`)
  }
  if (filter.estimate === 'none') parts.push(sql`i.estimate is null`)
  else if (filter.estimate === 'set') parts.push(sql`i.estimate is not null`)
  else if (filter.estimate !== undefined && filter.estimate !== '') {
    const [low, high] = filter.estimate.split('-').map(Number)
    parts.push(sql`i.estimate between ${low} and ${high}`)
  }
  return parts.length === 0 ? undefined : sql<SqlBool>`(${sql.join(parts, sql` and `)})`
}
