import { sql, type ExpressionBuilder } from 'kysely'
import { nowIso } from '../ids.js'
import { writeTransaction, type Executor } from '../engine/transaction.js'
import type { Database, RepositoriesTable } from '../schema.js'

/** What the host should be told about one issue's labels, read when the write is sent. */
export interface WantedLabels {
  connection_id: string
  owner: string
  name: string
  number: number
  /** the labels of the pipelines the issue is in (one per workspace with a labelled pipeline) */
  add: string[]
  /** other pipelines' labels the issue carries on the host, as far as we know */
  remove: string[]
}

export interface ClaimedWrite { issue_id: number, connection_id: string, generation: number, attempts: number }

export interface OutboxEntry {
  repo_id: number
  issue_number: number
  status: 'pending' | 'failed'
  attempts: number
  next_attempt_at: string
  last_status_code: number | null
  last_error: string | null
  updated_at: string
}

const same = (a: string, b: string): boolean => a.toLowerCase() === b.toLowerCase()

/** A workspace holding repository `r` has a pipeline naming a host label: with a token, its issues want label writes. */
const labelledPipeline = ({ exists, selectFrom }: ExpressionBuilder<Database & { r: RepositoriesTable }, 'r'>) =>
  exists(selectFrom('workspace_repositories as wr').innerJoin('pipelines as p', 'p.workspace_id', 'wr.workspace_id')
    .select('p.id').whereRef('wr.repo_id', '=', 'r.id').where('p.host_label', 'is not', null))

/**
 * The outbox of label writes to issue hosts (docs/connections.md, "Two-way sync"): one row per
 * issue, bumped by every change that wants a write, so quick successive moves make one or two
 * writes and never an old label last. Claimed with a lease, so one instance writes an issue at a time.
 */
export function createHostWrites (db: Executor) {
  return {
    /**
     * Whether issues of the repository can want a write at all (bound to a connection with a token,
     * held by a workspace with a labelled pipeline): what `enqueue` checks, asked once for many
     * issues (an import of thousands announces none where this is false). One statement.
     */
    async writable (repoId: number): Promise<boolean> {
      const row = await db.selectFrom('repositories as r')
        .innerJoin('connections as c', 'c.id', 'r.connection_id')
        .select('r.id')
        .where('r.id', '=', repoId)
        .where('c.token', 'is not', null)
        .where(labelledPipeline)
        .executeTakeFirst()
      return row !== undefined
    },

    /**
     * Wants the issue's labels written, when its repository is bound to a connection with a token
     * and a workspace holding it has a labelled pipeline; otherwise nothing. One statement, in the
     * caller's transaction. The write waits `coalesceMs`: changes meanwhile join it (the labels are
     * read when it is sent), so quick moves make one write with the last pipeline's label.
     */
    async enqueue (issueId: number, coalesceMs = 0): Promise<void> {
      const now = Date.now()
      const due = now + coalesceMs
      const stamp = nowIso()
      await db.insertInto('host_writes')
        .columns(['issue_id', 'connection_id', 'status', 'generation', 'attempts', 'next_attempt_at', 'updated_at'])
        .expression((eb) => eb.selectFrom('issues as i')
          .innerJoin('repositories as r', 'r.id', 'i.repo_id')
          .innerJoin('connections as c', 'c.id', 'r.connection_id')
          .select([
            'i.id', 'c.id as connection_id', sql.lit('pending').as('status'), sql.lit(1).as('generation'), sql.lit(0).as('attempts'),
            sql.val(due).as('next_attempt_at'), sql.val(stamp).as('updated_at')
          ])
          .where('i.id', '=', issueId)
          .where('c.token', 'is not', null)
          .where(labelledPipeline))
        .onConflict((oc) => oc.column('issue_id').doUpdateSet({
          status: 'pending',
          generation: sql`host_writes.generation + 1`,
          attempts: 0,
          // A write already waiting out its window keeps its time: it goes then, with the newest labels.
          next_attempt_at: sql`CASE WHEN host_writes.status = 'pending' AND host_writes.attempts = 0 AND host_writes.next_attempt_at > ${now} AND host_writes.next_attempt_at <= ${due} THEN host_writes.next_attempt_at ELSE ${due} END`,
          last_error: null,
          updated_at: stamp
        }))
        .execute()
    },

    /** The soonest due write nobody holds, leased to the caller until `leaseUntil`; connections paused by a rate limit are skipped. */
    async claim (now: number, leaseUntil: number, paused: string[]): Promise<ClaimedWrite | undefined> {
      const free = (eb: any) => eb.or([eb('lease_until', 'is', null), eb('lease_until', '<', now)])
      let due = db.selectFrom('host_writes').select('issue_id').where('status', '=', 'pending')
        .where('next_attempt_at', '<=', now).where(free).orderBy('next_attempt_at').limit(1)
      if (paused.length > 0) due = due.where('connection_id', 'not in', paused)
      const row = await db.updateTable('host_writes').set({ lease_until: leaseUntil })
        .where('issue_id', '=', due).where('status', '=', 'pending').where(free)
        .returning(['issue_id', 'connection_id', 'generation', 'attempts']).executeTakeFirst()
      return row === undefined ? undefined : { ...row, issue_id: Number(row.issue_id), generation: Number(row.generation) }
    },

    /** When the next pending write is due (epoch ms), if any. */
    async nextDue (): Promise<number | undefined> {
      const row = await db.selectFrom('host_writes').select(sql<number>`min(next_attempt_at)`.as('at')).where('status', '=', 'pending').executeTakeFirst()
      return row?.at === null || row?.at === undefined ? undefined : Number(row.at)
    },

    async wanted (issueId: number): Promise<WantedLabels | undefined> {
      const issue = await db.selectFrom('issues as i').innerJoin('repositories as r', 'r.id', 'i.repo_id')
        .select(['i.number', 'i.state', 'r.owner', 'r.name', 'r.connection_id']).where('i.id', '=', issueId).executeTakeFirst()
      if (issue === undefined || issue.connection_id === null || issue.state === 'closed') return undefined
      const lanes = await db.selectFrom('issues as i')
        .innerJoin('workspace_repositories as wr', 'wr.repo_id', 'i.repo_id')
        .innerJoin('pipelines as p', 'p.workspace_id', 'wr.workspace_id')
        .leftJoin('placements as pl', (join) => join.onRef('pl.issue_id', '=', 'i.id').onRef('pl.workspace_id', '=', 'wr.workspace_id'))
        .select(['p.id', 'p.host_label', 'pl.pipeline_id']).where('i.id', '=', issueId).where('p.host_label', 'is not', null).execute()
      const add = [...new Set(lanes.filter((l) => l.pipeline_id === l.id).map((l) => l.host_label!))]
      const carried = (await db.selectFrom('issue_labels').select('name').where('issue_id', '=', issueId).execute()).map((r) => r.name)
      const remove = carried.filter((label) => lanes.some((l) => same(l.host_label!, label)) && !add.some((a) => same(a, label)))
      return { connection_id: issue.connection_id, owner: issue.owner, name: issue.name, number: Number(issue.number), add, remove }
    },

    /**
     * The write of `generation` went through: the issue's labels are what was written. Done unless
     * a newer change wants another write, which then goes next.
     */
    async written (write: ClaimedWrite, wanted: WantedLabels | undefined): Promise<void> {
      await writeTransaction(db, async (trx) => {
        if (wanted !== undefined) {
          if (wanted.remove.length > 0) await trx.deleteFrom('issue_labels').where('issue_id', '=', write.issue_id).where('name', 'in', wanted.remove).execute()
          for (const name of wanted.add) {
            await trx.insertInto('issue_labels').values({ issue_id: write.issue_id, name, color: null })
              .onConflict((oc) => oc.columns(['issue_id', 'name']).doNothing()).execute()
          }
        }
        const done = await trx.updateTable('host_writes')
          .set({ status: 'done', lease_until: null, last_status_code: null, last_error: null, updated_at: nowIso() })
          .where('issue_id', '=', write.issue_id).where('generation', '=', write.generation).executeTakeFirst()
        if (Number(done.numUpdatedRows) === 0) await trx.updateTable('host_writes').set({ lease_until: null }).where('issue_id', '=', write.issue_id).execute()
      })
    },

    /** The host refused or could not be reached: try again at `at`, or give up (failed) after the last attempt. */
    async retry (write: ClaimedWrite, at: number, failed: boolean, status: number | null, error: string, countsAsAttempt = true): Promise<void> {
      await db.updateTable('host_writes')
        .set({
          status: failed ? 'failed' : 'pending',
          attempts: write.attempts + (countsAsAttempt ? 1 : 0),
          next_attempt_at: at,
          lease_until: null,
          last_status_code: status,
          last_error: error.slice(0, 300),
          updated_at: nowIso()
        })
        .where('issue_id', '=', write.issue_id).where('generation', '=', write.generation).execute()
      // A newer change came meanwhile: it goes next, with its own attempts.
      await db.updateTable('host_writes').set({ lease_until: null }).where('issue_id', '=', write.issue_id).where('generation', '!=', write.generation).execute()
    },

    /** Pending and failed writes of a connection, with the host's last answer. */
    async outbox (connectionId: string): Promise<OutboxEntry[]> {
      const rows = await db.selectFrom('host_writes as w').innerJoin('issues as i', 'i.id', 'w.issue_id')
        .select(['i.repo_id', 'i.number', 'w.status', 'w.attempts', 'w.next_attempt_at', 'w.last_status_code', 'w.last_error', 'w.updated_at'])
        .where('w.connection_id', '=', connectionId).where('w.status', 'in', ['pending', 'failed']).orderBy('w.next_attempt_at').limit(1000).execute()
      return rows.map((r) => ({
        repo_id: Number(r.repo_id),
        issue_number: Number(r.number),
        status: r.status as 'pending' | 'failed',
        attempts: Number(r.attempts),
        next_attempt_at: new Date(Number(r.next_attempt_at)).toISOString(),
        last_status_code: r.last_status_code,
        last_error: r.last_error,
        updated_at: r.updated_at
      }))
    }
  }
}

export type HostWrites = ReturnType<typeof createHostWrites>
