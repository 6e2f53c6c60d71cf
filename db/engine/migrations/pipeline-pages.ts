import { sql, type Kysely, type Migration } from 'kysely'

/**
 * A pipeline's open cards in board order, and a label's issues: GraphQL's pipeline page walks the
 * first in order and stops at the page's end (placements_order leads with the repository, so the
 * page had to read and sort every card of the pipeline: 10,000 in the big workspace), and a
 * label filter's count finds the label's issues without reading every label of the database.
 */
export function pipelinePagesMigration (): Migration {
  return {
    async up (db: Kysely<unknown>) {
      await sql.raw('CREATE INDEX placements_ranked ON placements (pipeline_id, is_open, rank, issue_id, repo_id)').execute(db)
      await sql.raw('CREATE INDEX issue_labels_name ON issue_labels (name, issue_id)').execute(db)
    }
  }
}
