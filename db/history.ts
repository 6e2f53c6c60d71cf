import type { Executor } from './engine/transaction.js'

/**
 * What the reports read back later (docs, "Sprints and reports"): each open/close of an issue and
 * each change of its milestone, with its time. Call inside the change's transaction.
 */
export async function recordState (db: Executor, issueId: number, state: 'open' | 'closed', at: string): Promise<void> {
  await db.insertInto('issue_states').values({ issue_id: issueId, state, at }).execute()
}

export async function recordMilestone (db: Executor, issueId: number, repoId: number, milestoneNumber: number | null, at: string): Promise<void> {
  await db.insertInto('issue_milestones').values({ issue_id: issueId, repo_id: repoId, milestone_number: milestoneNumber, at }).execute()
}

export async function recordReleaseChange (db: Executor, releaseId: string, issueIds: number[], change: 'added' | 'removed', at: string): Promise<void> {
  for (const issueId of issueIds) await db.insertInto('release_issue_changes').values({ release_id: releaseId, issue_id: issueId, change, at }).execute()
}

/** An interval of membership (in a sprint, a milestone, a release report): from `from` until `to` (null: still). */
export interface Stay { from: number, to: number | null }

/**
 * Issue states and estimates at any instant, from what was recorded: the last record at or before
 * the instant; before the first record, what that record changed from; with no record at all, the
 * issue's current value (issues and estimates older than the recording: docs, "Sprints and reports").
 */
export class IssueHistory {
  private readonly states = new Map<number, Array<{ at: number, state: 'open' | 'closed' }>>()
  private readonly estimates = new Map<number, Array<{ at: number, from: number | null, to: number | null }>>()
  private readonly current = new Map<number, { state: 'open' | 'closed', estimate: number | null, created: number }>()

  static async load (db: Executor, issueIds: number[]): Promise<IssueHistory> {
    const history = new IssueHistory()
    const ids = [...new Set(issueIds)]
    for (let i = 0; i < ids.length; i += 500) {
      const chunk = ids.slice(i, i + 500)
      const issues = await db.selectFrom('issues').select(['id', 'state', 'estimate', 'created_at']).where('id', 'in', chunk).execute()
      for (const row of issues) history.current.set(Number(row.id), { state: row.state, estimate: row.estimate, created: Date.parse(row.created_at) })
      const states = await db.selectFrom('issue_states').select(['issue_id', 'state', 'at']).where('issue_id', 'in', chunk).orderBy('at').orderBy('id').execute()
      for (const row of states) push(history.states, Number(row.issue_id), { at: Date.parse(row.at), state: row.state })
      const estimates = await db.selectFrom('issue_events').select(['issue_id', 'created_at', 'from_estimate', 'to_estimate'])
        .where('issue_id', 'in', chunk).where('type', '=', 'estimateIssue').orderBy('created_at').orderBy('id').execute()
      for (const row of estimates) {
        push(history.estimates, Number(row.issue_id), { at: Date.parse(row.created_at), from: row.from_estimate, to: row.to_estimate })
      }
    }
    return history
  }

  /** Whether the issue was closed at the instant (`strict`: by a close before it, not at it). */
  closedAt (issueId: number, at: number, strict = false): boolean {
    const records = this.states.get(issueId)
    if (records === undefined) return this.current.get(issueId)?.state === 'closed'
    let state: 'open' | 'closed' | undefined
    for (const r of records) {
      if (strict ? r.at >= at : r.at > at) break
      state = r.state
    }
    if (state !== undefined) return state === 'closed'
    // Before the first record: the state the issue was created in, or what the first change changed from.
    const first = records[0]
    return first.at === this.current.get(issueId)?.created ? first.state === 'closed' : first.state === 'open'
  }

  /** When the issue was last closed, if it is closed now and the close was recorded. */
  lastClosed (issueId: number): number | undefined {
    const records = this.states.get(issueId)
    const last = records?.at(-1)
    return last?.state === 'closed' ? last.at : undefined
  }

  estimateAt (issueId: number, at: number): number {
    const events = this.estimates.get(issueId)
    if (events === undefined) return this.current.get(issueId)?.estimate ?? 0
    let value: number | null | undefined
    for (const e of events) {
      if (e.at > at) break
      value = e.to
    }
    if (value === undefined) value = events[0].from
    return value ?? 0
  }

  /** Estimate changes in [from, to): the change in points and when. */
  estimateChanges (issueId: number, from: number, to: number): Array<{ at: number, delta: number }> {
    return (this.estimates.get(issueId) ?? []).filter((e) => e.at >= from && e.at < to).map((e) => ({ at: e.at, delta: (e.to ?? 0) - (e.from ?? 0) }))
  }
}

function push<T> (map: Map<number, T[]>, key: number, value: T): void {
  const list = map.get(key)
  if (list === undefined) map.set(key, [value])
  else list.push(value)
}

/**
 * Stays from add/remove records in time order. Before the first record the issue was in when that
 * record removed it; with no record, `currently` says whether it has always been.
 */
export function staysFrom (changes: Array<{ at: number, added: boolean }>, currently: boolean, inBefore = !(changes[0]?.added ?? true)): Stay[] {
  if (changes.length === 0) return currently ? [{ from: -Infinity, to: null }] : []
  const stays: Stay[] = []
  let open: Stay | undefined = inBefore ? { from: -Infinity, to: null } : undefined
  for (const c of changes) {
    if (c.added && open === undefined) {
      open = { from: c.at, to: null }
    } else if (!c.added && open !== undefined) {
      open.to = c.at
      stays.push(open)
      open = undefined
    }
  }
  if (open !== undefined) stays.push(open)
  return stays
}

export const inStays = (stays: Stay[], at: number): boolean => stays.some((s) => s.from <= at && (s.to === null || at < s.to))
