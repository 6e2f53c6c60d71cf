import { nowIso } from './ids.js'
import { writeTransaction, type Executor } from './engine/transaction.js'

export interface WorkspaceFavorite { workspace_id: string, created_at: string }

/**
 * The workspaces each user marked as favorites: their own list, shown to nobody else. The caller
 * checks that the user can see the workspace. A change is a write like any other (it moves the
 * change counter, so kept GraphQL answers showing `isFavorite` are made again), confined to no
 * repository: the REST reads kept by repository stay.
 */
export function createWorkspaceFavorites (db: Executor) {
  return {
    /** Marks it (again: the first time is kept); the mark as it stands. */
    async add (userId: number, workspaceId: string): Promise<WorkspaceFavorite> {
      return await writeTransaction(db, async (trx) => {
        await trx.insertInto('workspace_favorites').values({ user_id: userId, workspace_id: workspaceId, created_at: nowIso() })
          .onConflict((oc) => oc.columns(['user_id', 'workspace_id']).doNothing()).execute()
        return await trx.selectFrom('workspace_favorites').select(['workspace_id', 'created_at'])
          .where('user_id', '=', userId).where('workspace_id', '=', workspaceId).executeTakeFirstOrThrow()
      }, [])
    },
    /** Unmarks it; nothing happens when it was not marked. */
    async remove (userId: number, workspaceId: string): Promise<void> {
      await writeTransaction(db, async (trx) => {
        await trx.deleteFrom('workspace_favorites').where('user_id', '=', userId).where('workspace_id', '=', workspaceId).execute()
      }, [])
    },
    /** The user's favorites, oldest mark first. */
    async of (userId: number): Promise<WorkspaceFavorite[]> {
      return await db.selectFrom('workspace_favorites').select(['workspace_id', 'created_at'])
        .where('user_id', '=', userId).orderBy('created_at').orderBy('workspace_id').execute()
    }
  }
}

export type WorkspaceFavorites = ReturnType<typeof createWorkspaceFavorites>
