import { sql } from 'kysely'
import { engineOf } from './engine.js'
import { prepared } from './prepared.js'
import type { Executor } from '../schema.js'

export type { Executor }

const bump = prepared<Record<string, never>>()((db) => db.updateTable('change_counter').set({ value: sql`value + 1` }).where('id', '=', 1).returning('value'))
const stamp = prepared<{ version: number }>()((db, p) => db.updateTable('issue_events').set({ version: p.version }).where('version', 'is', null))

/**
 * On PostgreSQL the bump goes with the commit, in one round trip (two statements in one simple
 * query; db/engine/postgres-round-trips.ts answers the commit Kysely sends after it). It also says which
 * instances watch the counter (their list is in its row) and stamps the issue events the
 * transaction wrote. What the write reached goes into the counter's row, prefixed with the value
 * this bump leaves; a trigger sends it to the other instances (db/engine/migrations/write-reach.ts).
 * It is written as a literal of digits and separators only (`reachText`), so the statement needs no
 * parameter and goes as one simple query, as a text without values always does.
 */
const bumpSql = (literal: string) => `UPDATE change_counter SET value = value + 1, reach = (value + 1)::text || ' ' || ${literal} WHERE id = 1 RETURNING value, listeners`
/** The committing statements, the plain one and the one that also stamps the transaction's issue events, with the reach's literal. */
const COMMITTING_STATEMENTS = [
  (literal: string) => `${bumpSql(literal)}; COMMIT`,
  (literal: string) => `WITH bumped AS (${bumpSql(literal)}), ` +
    'stamped AS (UPDATE issue_events SET version = (SELECT value FROM bumped) WHERE version IS NULL) SELECT value, listeners FROM bumped; COMMIT'
]
const REACH_CHARACTERS = /^[0-9,|*]*$/
function committingStatement (stamps: boolean, reach: string | null): string {
  if (reach !== null && !REACH_CHARACTERS.test(reach)) throw new Error('a reach is digits and separators only')
  return COMMITTING_STATEMENTS[stamps ? 1 : 0](reach === null ? 'NULL' : `'${reach}'`)
}
const escaped = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')
const COMMITTING = new RegExp(`^(?:${COMMITTING_STATEMENTS.map((make) => make('\u0000').split('\u0000').map(escaped).join("(?:NULL|'[0-9,|*]*')")).join('|')})$`)
/** Whether `text` is a statement that commits the transaction it ends (db/engine/postgres-round-trips.ts sends it as one simple query). */
export function isCommitting (text: string): boolean {
  return text.length < 4000 && COMMITTING.test(text)
}

/**
 * The longest reach sent to other instances: kept in the counter's row, written with every write, it
 * keeps the row near PostgreSQL's ~2 kB threshold past which values are moved out of the row. A
 * longer one is written as null and not sent (the others then read such boards whole).
 */
const MAX_REACH_TEXT = 1800

/**
 * A write's reach as other instances read it (`parseReach`): its repositories, a bar, then the
 * issues whose board rows it changed or `*` when it did not say; null when it may have changed
 * anything, names an id that is not a whole number of at most 15 digits, or would be too long.
 */
export function reachText (repositories: readonly number[] | undefined, boardRows: readonly number[] | undefined): string | null {
  if (repositories === undefined) return null
  const all = [...repositories, ...boardRows ?? []]
  if (all.some((n) => !Number.isSafeInteger(n) || n < 0 || n >= 1e15)) return null
  const ids = (list: readonly number[]) => [...new Set(list)].join(',')
  const text = `${ids(repositories)}|${boardRows === undefined ? '*' : ids(boardRows)}`
  return text.length <= MAX_REACH_TEXT ? text : null
}

const REACH = /^(\d{1,15}) ((?:\d{1,15}(?:,\d{1,15})*)?)\|(\*|(?:\d{1,15}(?:,\d{1,15})*)?)$/
/** A reach heard from another instance: the version it left, its repositories and board rows (undefined: not said); undefined when malformed. */
export function parseReach (payload: string): { version: number, repositories: number[], boardRows: number[] | undefined } | undefined {
  const match = payload.length <= 8000 ? REACH.exec(payload) : null
  if (match === null) return undefined
  const list = (text: string) => text === '' ? [] : text.split(',').map(Number)
  return { version: Number(match[1]), repositories: list(match[2]), boardRows: match[3] === '*' ? undefined : list(match[3]) }
}

/** What to do once a transaction has committed (tell the webhook worker, say), by transaction. */
const commitHooks = new WeakMap<object, Array<(version: number) => void>>()

/**
 * Runs `fn` after the transaction commits (at once when `db` is not a transaction); never on
 * rollback. It gets the change counter's value the commit left (-1 when not known).
 */
export function afterCommit (db: Executor, fn: (version: number) => void): void {
  if (!db.isTransaction) {
    fn(-1)
    return
  }
  const hooks = commitHooks.get(db) ?? []
  hooks.push(fn)
  commitHooks.set(db, hooks)
}

/**
 * Instances that answer reads from a counter they watch must all have seen a write before it is
 * acknowledged: with a fence for the database, each write waits for it after its commit.
 */
export interface CommitFence {
  /** Waits until every instance in `listeners` has seen `version` (bounded in time). */
  wait: (version: number, listeners: readonly string[]) => Promise<void>
}

const fences = new WeakMap<object, CommitFence>()

/** Makes every write transaction on `db` wait for `fence` after committing (PostgreSQL instances). */
export function fenceCommits (db: Executor, fence: CommitFence): void {
  fences.set(db, fence)
}

/**
 * Told of each committed write made through `writeTransaction` on a database: the counter's value
 * it left, the repositories its changes are confined to (undefined: anything may have changed) and
 * the issues whose board rows it changed (undefined: not said; see `writeTransaction`).
 */
export type CommitListener = (version: number, repositories: readonly number[] | undefined, boardRows: readonly number[] | undefined) => void

const commitListeners = new WeakMap<object, CommitListener>()

/** Tells `listener` of every write transaction committed on `db` from now on (one listener per database). */
export function listenToCommits (db: Executor, listener: CommitListener): void {
  commitListeners.set(db, listener)
}

/** Transactions that wrote issue events: those get the committing version stamped on them. */
const wroteEvents = new WeakSet<object>()

/** Marks the transaction as one that wrote issue events (see `writeTransaction`). */
export function notedEvents (trx: Executor): void {
  wroteEvents.add(trx)
}
const version = prepared<Record<string, never>>()((db) => db.selectFrom('change_counter').select('value').where('id', '=', 1))

/** Transactions whose last statement bumped the counter itself: the value it left (-1: it wrote nothing) and the listeners. */
const bumpedByStatements = new WeakMap<object, { version: number, listeners: readonly string[] }>()

/**
 * Says that the write transaction `trx` (PostgreSQL) bumped the change counter in its last
 * statement, which wrote no issue events, to `version` (-1 when that statement wrote nothing and left
 * the counter alone): `writeTransaction` then commits it without a bump of its own. Such a statement
 * follows a lock taken `beforeLastStatement`, which may send the commit with it (one round trip).
 */
export function bumpedByStatement (trx: Executor, version: number, listeners: readonly string[]): void {
  bumpedByStatements.set(trx, { version, listeners })
}

/** What the parts of a write added to the reach its transaction declared: undefined once one may change anything (or did not say its rows). */
interface Reach { repositories: number[] | undefined, boardRows: number[] | undefined }
const reaches = new WeakMap<object, Reach>()

/**
 * Adds to what the write transaction `trx` declared of its reach (`writeTransaction`'s
 * `repositories` and `boardRows`): repository `repoId`, on whose boards the write changed the rows
 * of `boardRows` (undefined: not said, such a board is read whole; empty: none). `repoId` undefined:
 * the write may change anything, and every kept answer goes after it. A transaction that declared
 * nothing already reaches anything: this changes nothing then.
 */
export function reached (trx: Executor, repoId: number | undefined, boardRows?: readonly number[]): void {
  const reach = reaches.get(trx)
  if (reach === undefined) return
  if (repoId === undefined) {
    reach.repositories = undefined
    return
  }
  if (reach.repositories !== undefined && !reach.repositories.includes(repoId)) reach.repositories.push(repoId)
  if (boardRows === undefined) reach.boardRows = undefined
  else reach.boardRows?.push(...boardRows)
}

/**
 * Runs `fn` in one write transaction (or in the caller's, when `db` is one already) and bumps the
 * change counter with it, so every write moves the version that cached reads compare with,
 * whichever process or instance made it. On SQLite the transaction begins IMMEDIATE (the write
 * lock at once); on PostgreSQL writes interleave, and what must not (a pipeline's order, the
 * dependency graph) takes a lock (`lockFor`).
 *
 * `repositories`, when given, promises that the write changes nothing a cached read of another
 * repository shows (no pipeline, workspace, user or permission): this process then keeps the other
 * repositories' cached answers (docs/development.md, "Cached reads by repository"). Inside the
 * caller's transaction it adds to what the outer write declared (below), if it declared anything.
 *
 * `boardRows`, when given with `repositories`, promises more: on those repositories' boards the
 * write changes only the rows of these issues (their placements, estimates, epic flags), which `fn`
 * may add to the list until it returns. A board kept in memory then reads those rows again
 * instead of the whole board (db/board-model.ts). An empty list: no board row changed.
 *
 * A transaction made of parts (a delivery from the issue host, a close with its move) gives the
 * reach its caller knows and lets the parts add theirs with `reached`; a `writeTransaction`
 * inside another adds its own the same way (one that says nothing makes the whole write reach
 * anything).
 */
export async function writeTransaction<T> (
  db: Executor, fn: (trx: Executor) => Promise<T>, repositories?: readonly number[], boardRows?: readonly number[]
): Promise<T> {
  if (db.isTransaction) {
    const value = await fn(db)
    if (repositories === undefined) reached(db, undefined)
    for (const repoId of repositories ?? []) reached(db, repoId, boardRows)
    return value
  }
  const fence = fences.get(db)
  let committed: Executor | undefined
  let version = -1
  let listeners: readonly string[] = []
  const reach: Reach | undefined = repositories === undefined ? undefined : { repositories: [], boardRows: [] }
  // What the write reached, once `fn` and its parts have said: undefined, anything (or rows not said).
  let confined: number[] | undefined
  let rows: number[] | undefined
  const value = await db.transaction().execute(async (trx) => {
    committed = trx
    if (reach !== undefined) reaches.set(trx, reach)
    const result = await fn(trx)
    confined = reach?.repositories === undefined ? undefined : [...new Set([...repositories!, ...reach.repositories])]
    rows = confined === undefined || boardRows === undefined || reach?.boardRows === undefined ? undefined : [...boardRows, ...reach.boardRows]
    // Last, so the counter's row is locked only for the moment before the commit; the value it
    // takes orders this write's events after every event already committed.
    if (engineOf(trx) === 'postgres') {
      const bumped = bumpedByStatements.get(trx)
      if (bumped !== undefined) {
        // Committed with that statement, or by Kysely's commit after this returns.
        version = bumped.version
        listeners = bumped.listeners
        return result
      }
      const committing = committingStatement(wroteEvents.has(trx), reachText(confined, rows))
      const { rows: bumpedRows } = await sql<{ value: number, listeners: string[] }>`${sql.raw(committing)}`.execute(trx)
      // Committed by now: nothing may throw after this (-1, not known, if the counter's row were gone).
      version = Number(bumpedRows[0]?.value ?? -1)
      listeners = bumpedRows[0]?.listeners ?? []
      return result
    }
    const { rows: bumpedRows } = await bump(trx, {})
    version = Number(bumpedRows[0].value)
    if (wroteEvents.has(trx)) await stamp(trx, { version })
    return result
  })
  if (version >= 0) commitListeners.get(db)?.(version, confined, rows)
  // Hooks after the fence: what they set off (a webhook, say) may read through any instance.
  await fence?.wait(version, listeners)
  for (const hook of commitHooks.get(committed!) ?? []) hook(version)
  return value
}

/** The change counter: it moves with every committed write, on any connection or instance. */
export async function changeVersion (db: Executor): Promise<number> {
  const { rows } = await version(db, {})
  return Number(rows[0]?.value ?? 0)
}

/** One transaction that leaves the change counter alone (chat and delivery bookkeeping, which no cached read shows). */
export async function atomic<T> (db: Executor, fn: (trx: Executor) => Promise<T>): Promise<T> {
  if (db.isTransaction) return await fn(db)
  return await db.transaction().execute(fn)
}
