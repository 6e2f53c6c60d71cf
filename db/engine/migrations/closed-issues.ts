import { sql, type Kysely, type Migration } from 'kysely'

/**
 * A repository's closed issues, by number: the board's closed pipeline (its count and its pages,
 * highest number first) and GraphQL's closed issues of a workspace read only those. Without it
 * both read every issue of the repositories (50,000 in the big workspace, where none is closed).
 * Partial, so the open issues, most of the table, cost it nothing; the queries that use it name
 * the state as a literal, so a generic plan (a prepared statement's) can use it too.
 */
export function closedIssuesMigration (): Migration {
  return {
    async up (db: Kysely<unknown>) {
      await sql.raw("CREATE INDEX issues_closed ON issues (repo_id, number) WHERE state = 'closed'").execute(db)
    }
  }
}
