import { atomic, type Executor } from './engine/transaction.js'

/** How many recently opened workspaces are kept per user. */
export const RECENT_KEPT = 20
/** A user opening the same workspace again within this time writes nothing. */
export const VIEW_INTERVAL_MS = 60_000
/** Bound of the in-memory note of recent writes (cleared whole when full: it only saves statements). */
const NOTED_MAX = 10_000

/**
 * When each user last opened a workspace (GraphQL's `workspace(id)`, the board page's live stream,
 * `setWorkspaceViewedNow`), for `recentlyViewedWorkspaces`. Reads are hot, so recording is cheap and
 * bounded: at most one write per user and workspace a minute (noted in memory first, and checked by
 * the statement itself across instances), only the last RECENT_KEPT kept per user, and outside the
 * change counter (`atomic`): a view changes nothing any other reader is shown, so no kept answer is
 * dropped for it. The one read that shows views is never kept (plugins/graphql).
 */
export function createWorkspaceViews (db: Executor) {
  const noted = new Map<string, number>()
  return {
    /** Records that the user opened the workspace at `now` (ms); true when it wrote. */
    async record (userId: number, workspaceId: string, now = Date.now()): Promise<boolean> {
      const key = `${userId}:${workspaceId}`
      const last = noted.get(key)
      if (last !== undefined && now - last < VIEW_INTERVAL_MS && now >= last) return false
      if (noted.size >= NOTED_MAX) noted.clear()
      noted.set(key, now)
      const at = new Date(now).toISOString()
      const before = new Date(now - VIEW_INTERVAL_MS).toISOString()
      return await atomic(db, async (trx) => {
        const written = await trx.insertInto('workspace_views').values({ user_id: userId, workspace_id: workspaceId, viewed_at: at })
          .onConflict((oc) => oc.columns(['user_id', 'workspace_id']).doUpdateSet({ viewed_at: at }).where('workspace_views.viewed_at', '<', before))
          .executeTakeFirst()
        if (Number(written.numInsertedOrUpdatedRows ?? 0) === 0) return false
        await trx.deleteFrom('workspace_views').where('user_id', '=', userId)
          .where('workspace_id', 'not in', trx.selectFrom('workspace_views').select('workspace_id').where('user_id', '=', userId)
            .orderBy('viewed_at', 'desc').orderBy('workspace_id').limit(RECENT_KEPT))
          .execute()
        return true
      })
    },
    /** The user's recently opened workspaces, most recent first. */
    async of (userId: number): Promise<Array<{ workspace_id: string, viewed_at: string }>> {
      return await db.selectFrom('workspace_views').select(['workspace_id', 'viewed_at'])
        .where('user_id', '=', userId).orderBy('viewed_at', 'desc').orderBy('workspace_id').limit(RECENT_KEPT).execute()
    }
  }
}

export type WorkspaceViews = ReturnType<typeof createWorkspaceViews>
