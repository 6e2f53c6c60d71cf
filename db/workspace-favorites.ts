import { createHash } from 'node:crypto'
import { nowIso } from './ids.js'
import { atomic, type Executor } from './engine/transaction.js'

export interface WorkspaceFavorite { workspace_id: string, created_at: string }

/**
 * The workspaces each user marked as favorites: their own list, shown to nobody else. The caller
 * checks that the user can see the workspace. A change is written outside the change counter
 * (`atomic`): it changes no board, so no kept answer of anybody is dropped for it. The GraphQL
 * answers that show favorites are kept with `favoritesStamp` of what they read and sent again only
 * while the viewer's favorites are the same (plugins/graphql/answer-cache.ts).
 */
export function createWorkspaceFavorites (db: Executor) {
  return {
    /** Marks it (again: the first time is kept); the mark as it stands. */
    async add (userId: number, workspaceId: string): Promise<WorkspaceFavorite> {
      return await atomic(db, async (trx) => {
        await trx.insertInto('workspace_favorites').values({ user_id: userId, workspace_id: workspaceId, created_at: nowIso() })
          .onConflict((oc) => oc.columns(['user_id', 'workspace_id']).doNothing()).execute()
        return await trx.selectFrom('workspace_favorites').select(['workspace_id', 'created_at'])
          .where('user_id', '=', userId).where('workspace_id', '=', workspaceId).executeTakeFirstOrThrow()
      })
    },
    /** Unmarks it; nothing happens when it was not marked. */
    async remove (userId: number, workspaceId: string): Promise<void> {
      await db.deleteFrom('workspace_favorites').where('user_id', '=', userId).where('workspace_id', '=', workspaceId).execute()
    },
    /** The user's favorites, oldest mark first. */
    async of (userId: number): Promise<WorkspaceFavorite[]> {
      return await db.selectFrom('workspace_favorites').select(['workspace_id', 'created_at'])
        .where('user_id', '=', userId).orderBy('created_at').orderBy('workspace_id').execute()
    }
  }
}

/** What a user's favorites are, in a few bytes: equal stamps, the same favorites. */
/** A digest of the viewer's favorites as they stand: the same size however many there are (kept with each answer that read them). */
export const favoritesStamp = (rows: readonly WorkspaceFavorite[]): string =>
  createHash('sha256').update(rows.map((r) => `${r.workspace_id}@${r.created_at}`).join(',')).digest('base64')

export type WorkspaceFavorites = ReturnType<typeof createWorkspaceFavorites>
