import { sql } from 'kysely'

/**
 * The closed state as a literal in the statement, not a parameter: a plan made for any value (a
 * prepared statement's generic plan on PostgreSQL) could not use the partial index of closed
 * issues (`issues_closed`), whose condition is `state = 'closed'`.
 */
export const CLOSED = sql.lit<'closed'>('closed')
