import { sql } from 'kysely'
import { atomic, type Executor } from './engine/transaction.js'

/** How many recently opened workspaces are kept per user. */
export const RECENT_KEPT = 20
/** A user opening the same workspace again within this time writes nothing. */
export const VIEW_INTERVAL_MS = 60_000
/** How long a recorded view waits in memory, to be written with the others after the read that made it. */
export const VIEW_FLUSH_MS = 1000
/** Bound of the in-memory note of recent writes (cleared whole when full: it only saves statements). */
const NOTED_MAX = 10_000
/** Views waiting to be written at most: past it (the database away for long), a failed write's views are dropped, said to `onError`. */
const PENDING_MAX = 10_000

interface View { userId: number, workspaceId: string, at: number }

/**
 * When each user last opened a workspace (GraphQL's `workspace(id)`, the board page's live stream,
 * `setWorkspaceViewedNow`), for `recentlyViewedWorkspaces`. Reads are hot, so recording is cheap and
 * off their path: a view is noted in memory (at most one per user and workspace a minute) and
 * written with the others a moment later (VIEW_FLUSH_MS) in one transaction, never during the read
 * that made it; the statement checks the minute again across instances, only the last RECENT_KEPT
 * are kept per user, and the write is outside the change counter (`atomic`): a view changes nothing
 * any other reader is shown, so no kept answer is dropped for it. The one read that shows views is
 * never kept (plugins/graphql) and sees this instance's waiting views too. A failed write is told
 * to `onError` and tried again with the next; `close` writes what waits (a normal shutdown).
 */
export function createWorkspaceViews (db: Executor) {
  const noted = new Map<string, number>()
  const pending = new Map<string, View>()
  let timer: NodeJS.Timeout | undefined
  let writing: Promise<void> = Promise.resolve()
  let onError: (err: unknown) => void = () => {}

  /** Writes the views in one transaction: each at most once a minute, then each user's list cut to RECENT_KEPT. */
  const write = async (views: View[]): Promise<void> => {
    await atomic(db, async (trx) => {
      const users = new Set<number>()
      for (const { userId, workspaceId, at: now } of views) {
        const at = new Date(now).toISOString()
        const before = new Date(now - VIEW_INTERVAL_MS).toISOString()
        // Only while both are still there: a view of a person or workspace removed since must not fail the others' write.
        const written = await trx.insertInto('workspace_views').columns(['user_id', 'workspace_id', 'viewed_at'])
          .expression(trx.selectFrom(['users as u', 'workspaces as w']).select(['u.id', 'w.id as workspace_id', sql.val(at).as('viewed_at')])
            .where('u.id', '=', userId).where('w.id', '=', workspaceId))
          .onConflict((oc) => oc.columns(['user_id', 'workspace_id']).doUpdateSet({ viewed_at: at }).where('workspace_views.viewed_at', '<', before))
          .executeTakeFirst()
        if (Number(written.numInsertedOrUpdatedRows ?? 0) > 0) users.add(userId)
      }
      for (const userId of users) {
        await trx.deleteFrom('workspace_views').where('user_id', '=', userId)
          .where('workspace_id', 'not in', trx.selectFrom('workspace_views').select('workspace_id').where('user_id', '=', userId)
            .orderBy('viewed_at', 'desc').orderBy('workspace_id').limit(RECENT_KEPT))
          .execute()
      }
    })
  }

  /** Writes every waiting view (one write at a time); a failure puts them back for the next and rejects. */
  const flush = async (): Promise<void> => {
    if (timer !== undefined) clearTimeout(timer)
    timer = undefined
    const run = writing.then(async () => {
      if (pending.size === 0) return
      const views = [...pending.values()]
      pending.clear()
      try {
        await write(views)
      } catch (err) {
        if (pending.size + views.length > PENDING_MAX) {
          onError(new Error(`${views.length} workspace views were dropped: they could not be written and too many wait`))
        } else {
          for (const view of views) {
            const key = `${view.userId}:${view.workspaceId}`
            if (!pending.has(key)) pending.set(key, view)
          }
          schedule()
        }
        throw err
      }
    })
    writing = run.catch(() => {})
    await run
  }

  function schedule (): void {
    if (timer !== undefined) return
    timer = setTimeout(() => { timer = undefined; flush().catch(onError) }, VIEW_FLUSH_MS)
    timer.unref()
  }

  return {
    /**
     * Notes that the user opened the workspace at `now` (ms), to be written shortly; true when it
     * was noted (false: noted already within the minute). Writes nothing and never fails a read;
     * inside a transaction (a store scope's) it is written there.
     */
    async record (userId: number, workspaceId: string, now = Date.now()): Promise<boolean> {
      const key = `${userId}:${workspaceId}`
      const last = noted.get(key)
      if (last !== undefined && now - last < VIEW_INTERVAL_MS && now >= last) return false
      if (noted.size >= NOTED_MAX) noted.clear()
      noted.set(key, now)
      if (db.isTransaction) {
        await write([{ userId, workspaceId, at: now }])
        return true
      }
      pending.set(key, { userId, workspaceId, at: now })
      schedule()
      return true
    },
    /** The user's recently opened workspaces, most recent first: those written, and this instance's still waiting. */
    async of (userId: number): Promise<Array<{ workspace_id: string, viewed_at: string }>> {
      const rows = await db.selectFrom('workspace_views').select(['workspace_id', 'viewed_at'])
        .where('user_id', '=', userId).orderBy('viewed_at', 'desc').orderBy('workspace_id').limit(RECENT_KEPT).execute()
      const waiting = [...pending.values()].filter((v) => v.userId === userId)
      if (waiting.length === 0) return rows
      const latest = new Map(rows.map((r) => [r.workspace_id, r.viewed_at]))
      for (const v of waiting) {
        const at = new Date(v.at).toISOString()
        if ((latest.get(v.workspaceId) ?? '') < at) latest.set(v.workspaceId, at)
      }
      return [...latest].map(([id, at]) => ({ workspace_id: id, viewed_at: at }))
        .sort((a, b) => a.viewed_at < b.viewed_at ? 1 : a.viewed_at > b.viewed_at ? -1 : a.workspace_id < b.workspace_id ? -1 : 1)
        .slice(0, RECENT_KEPT)
    },
    flush,
    /** Where a failed write in the background is told (the server's log). */
    reportTo (report: (err: unknown) => void): void {
      onError = report
    },
    /** Writes what waits: before the database is closed (a normal shutdown). */
    async close (): Promise<void> {
      await flush()
    }
  }
}

export type WorkspaceViews = ReturnType<typeof createWorkspaceViews>
