import type { ExpressionBuilder } from 'kysely'
import type { Database } from './schema.js'

/** A pipeline's times (docs/graphql.md): made, and last renamed or moved. */
export const madeAt = (now: string) => ({ created_at: now, updated_at: now })

/** A pipeline's new name and place; `updated_at` moves only when one of them differs. */
export function placedAt (change: { name?: string, sort_order: number }, now: string) {
  return (eb: ExpressionBuilder<Database, 'pipelines'>) => {
    const differs = [eb('sort_order', '!=', change.sort_order), ...(change.name === undefined ? [] : [eb('name', '!=', change.name)])]
    return { ...change, updated_at: eb.case().when(eb.or(differs)).then(now).else(eb.ref('updated_at')).end() }
  }
}
