import { sql } from 'kysely'

/**
 * The closed state as a literal in the statement rather than a value: the partial index of closed
 * issues (`issues_closed`) has the condition `state = 'closed'`. A statement planned with its values
 * (every query here but the prepared ones) uses the index either way; a plan made for any value (a
 * prepared statement's generic plan on PostgreSQL, db/engine/prepared.ts) could not, so a closed-issue
 * query moved to a prepared one keeps it.
 */
export const CLOSED = sql.lit<'closed'>('closed')
