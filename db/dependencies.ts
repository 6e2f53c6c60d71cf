import { sql, type QueryCreator } from 'kysely'
import type { Static } from '../schemas/common.js'
import type { Dependency as DependencySchema } from '../schemas/dependencies.js'
import { actor, announce, contextOf, type IssueContext } from './announce.js'
import type { DomainEvents } from './domain-events.js'
import type { Database } from './schema.js'
import { engineOf, lockFor } from './engine/engine.js'
import { GraphSnapshot } from './graph.js'
import { touchPlanning } from './repositories.js'
import type { User } from './users.js'
import { Invalid, NotFound } from './errors.js'
import { nowIso } from './ids.js'
import { prepared } from './engine/prepared.js'
import type { IssueRef } from './issue-refs.js'
import { afterCommit, bumpedByStatement, changeVersion, writeTransaction, type Executor } from './engine/transaction.js'
import { namedEventPattern, noteWebhooks } from './webhooks.js'

export type Dependency = Static<typeof DependencySchema>

/** Both sides, and the LIKE pattern of webhooks wanting the write's event (never one of the legacy four). */
interface BothParams { aRepo: number, aNumber: number, bRepo: number, bNumber: number, hooks: string }

interface BothIssues { blocking: number, blocked: number, shared: boolean, version: number, contexts: Map<number, IssueContext> }

// Each insert's statements, compiled once (a dependency insert is a hot path: see README, "Benchmarks").
const bothQuery = prepared<BothParams>()((db, p) => db.selectFrom('issues as i')
  .innerJoin('repositories as r', 'r.id', 'i.repo_id')
  .select(['i.id', 'i.repo_id', 'i.number', 'i.title', 'r.owner', 'r.name', 'r.html_url'])
  .select((eb) => eb.selectFrom('change_counter').select('value').where('id', '=', 1).as('version'))
  .select((eb) => eb.exists(eb.selectFrom('webhooks as w').select('w.id').whereRef('w.repo_id', '=', 'i.repo_id').where('w.events', 'like', p.hooks)).as('hooked'))
  .select((eb) => eb.exists(eb.selectFrom('workspace_repositories as x').innerJoin('workspace_repositories as y', 'x.workspace_id', 'y.workspace_id')
    .select('x.workspace_id').where('x.repo_id', '=', p.aRepo).where('y.repo_id', '=', p.bRepo)).as('shared'))
  .where((eb) => eb.or([
    eb.and([eb('i.repo_id', '=', p.aRepo), eb('i.number', '=', p.aNumber)]),
    eb.and([eb('i.repo_id', '=', p.bRepo), eb('i.number', '=', p.bNumber)])
  ])))
interface PairInsert { blocking: number, blocked: number, at: string }
const insertPair = (db: QueryCreator<Database>, p: PairInsert) => db.insertInto('dependencies')
  .values({ blocking_id: p.blocking, blocked_id: p.blocked, created_at: p.at })
  .onConflict((oc) => oc.columns(['blocking_id', 'blocked_id']).doNothing()).returning('seq')
const insertQuery = prepared<PairInsert>()(insertPair)
/** A row of `bothQuery`; the joined insert adds the new edge's seq. */
type BothRow = Awaited<ReturnType<typeof bothQuery>>['rows'][number] & { seq?: number | null }
/** `bothQuery` as SQL text, the first part of both PostgreSQL insert statements below. */
const bothIssuesSql = (p: BothParams) => sql`SELECT i.id, i.repo_id, i.number, i.title, r.owner, r.name, r.html_url,
      (SELECT value FROM change_counter WHERE id = 1) AS version,
      EXISTS (SELECT w.id FROM webhooks w WHERE w.repo_id = i.repo_id AND w.events LIKE ${p.hooks}) AS hooked,
      EXISTS (SELECT x.workspace_id FROM workspace_repositories x JOIN workspace_repositories y ON x.workspace_id = y.workspace_id
        WHERE x.repo_id = ${p.aRepo} AND y.repo_id = ${p.bRepo}) AS shared
    FROM issues i JOIN repositories r ON r.id = i.repo_id
    WHERE (i.repo_id = ${p.aRepo} AND i.number = ${p.aNumber}) OR (i.repo_id = ${p.bRepo} AND i.number = ${p.bNumber})`
/**
 * On PostgreSQL the query for both issues, the insert and the planning stamp are one statement
 * (one round trip): the same rows as `bothQuery`, with the new edge's seq (null when the pair was
 * there already, or a side is missing or the same issue). What refuses the edge runs after it and
 * rolls the transaction back.
 */
const bothAndInsertQuery = prepared<BothParams & { at: string }>()((db, p) => ({
  compile: () => sql<BothRow>`WITH both_issues AS (
    ${bothIssuesSql(p)}
  ), inserted AS (
    INSERT INTO dependencies (blocking_id, blocked_id, created_at)
    SELECT a.id, b.id, CAST(${p.at} AS TEXT) FROM both_issues a JOIN both_issues b ON a.id <> b.id
    WHERE a.repo_id = ${p.aRepo} AND a.number = ${p.aNumber} AND b.repo_id = ${p.bRepo} AND b.number = ${p.bNumber}
    ON CONFLICT (blocking_id, blocked_id) DO NOTHING RETURNING seq
  ), stamped AS (
    UPDATE issues SET planning_changed_at = CAST(${p.at} AS TEXT)
    WHERE id IN (SELECT id FROM both_issues) AND EXISTS (SELECT 1 FROM inserted) RETURNING id
  )
  SELECT both_issues.*, (SELECT seq FROM inserted) AS seq FROM both_issues`.compile(db)
}))

/** A row of `checkedInsertQuery`: `bothQuery`'s, with what became of the edge and the counter. */
type CheckedRow = BothRow & { existed: boolean | null, cyclic: boolean | null, bumped: number | string | null, listeners: string[] | null }
/**
 * On PostgreSQL, the whole insert as the transaction's last statement, for one round trip with its
 * lock and commit: `bothAndInsertQuery`, with the cycle check in SQL (what the blocked issue reaches,
 * read after the lock, so it holds what the lock's last holder committed) and the counter bump. The
 * edge is made only when nothing refuses it and no webhook wants the event (their deliveries are
 * written in the transaction, after this: such an insert goes the way with the graph kept here);
 * otherwise nothing is written and the counter stays.
 */
const checkedInsertQuery = prepared<BothParams & { at: string }>()((db, p) => ({
  compile: () => sql<CheckedRow>`WITH RECURSIVE both_issues AS (
    ${bothIssuesSql(p)}
  ), pair AS (
    SELECT a.id AS blocking, b.id AS blocked, a.shared, a.hooked OR b.hooked AS hooked,
      EXISTS (SELECT 1 FROM dependencies d WHERE d.blocking_id = a.id AND d.blocked_id = b.id) AS existed
    FROM both_issues a JOIN both_issues b ON a.id <> b.id
    WHERE a.repo_id = ${p.aRepo} AND a.number = ${p.aNumber} AND b.repo_id = ${p.bRepo} AND b.number = ${p.bNumber}
  ), reach (id) AS (
    SELECT blocked FROM pair WHERE NOT existed
    UNION SELECT d.blocked_id FROM dependencies d JOIN reach ON d.blocking_id = reach.id
  ), verdict AS (
    SELECT pair.*, EXISTS (SELECT 1 FROM reach WHERE reach.id = pair.blocking) AS cyclic FROM pair
  ), inserted AS (
    INSERT INTO dependencies (blocking_id, blocked_id, created_at)
    SELECT blocking, blocked, CAST(${p.at} AS TEXT) FROM verdict WHERE shared AND NOT hooked AND NOT existed AND NOT cyclic
    ON CONFLICT (blocking_id, blocked_id) DO NOTHING RETURNING seq
  ), stamped AS (
    UPDATE issues SET planning_changed_at = CAST(${p.at} AS TEXT)
    WHERE id IN (SELECT id FROM both_issues) AND EXISTS (SELECT 1 FROM inserted) RETURNING id
  ), bumped AS (
    UPDATE change_counter SET value = value + 1 WHERE id = 1 AND EXISTS (SELECT 1 FROM inserted) RETURNING value, listeners
  )
  SELECT both_issues.*, (SELECT seq FROM inserted) AS seq, (SELECT existed FROM verdict) AS existed, (SELECT cyclic FROM verdict) AS cyclic,
    (SELECT value FROM bumped) AS bumped, (SELECT listeners FROM bumped) AS listeners
  FROM both_issues`.compile(db)
}))

type DependencyEvent = 'dependency_created' | 'dependency_removed'
const paramsOf = ({ blocking: a, blocked: b }: Dependency, type: DependencyEvent): BothParams =>
  ({ aRepo: a.repo_id, aNumber: a.issue_number, bRepo: b.repo_id, bNumber: b.issue_number, hooks: namedEventPattern(type) })

/** A dependency shows on no board (db/board-model.ts): it changes no board row. */
const NO_BOARD_ROWS: readonly number[] = []

/** Blocking dependencies between issues: no cycles, only between repositories sharing a workspace. */
export function createDependenciesRepository (db: Executor, events?: DomainEvents) {
  const graph = new GraphSnapshot()

  /**
   * The dependency graph as of `version`: kept from the last change made here if nothing was
   * written since, read otherwise (without `written`, an edge this transaction has inserted).
   */
  const graphAt = async (trx: Executor, version: number, written?: { from: number, to: number }): Promise<GraphSnapshot> => {
    if (graph.version !== version) {
      const edges = await trx.selectFrom('dependencies as d').innerJoin('issues as i', 'i.id', 'd.blocked_id')
        .select(['d.blocking_id as from', 'd.blocked_id as to', 'i.repo_id']).execute()
      const committed = edges.map((e) => ({ from: Number(e.from), to: Number(e.to), toRepo: Number(e.repo_id) }))
      graph.load(version, written === undefined ? committed : committed.filter((e) => e.from !== written.from || e.to !== written.to))
    }
    return graph
  }

  /** Notes the planning change on both sides and announces it in each side's repository. */
  const changed = async (trx: Executor, type: DependencyEvent, dependency: Dependency, both: BothIssues, user?: User, stamped = false) => {
    if (!stamped) await touchPlanning(trx, [both.blocking, both.blocked])
    const sides = [both.contexts.get(both.blocked)!, ...(dependency.blocking.repo_id === dependency.blocked.repo_id ? [] : [both.contexts.get(both.blocking)!])]
    for (const side of sides) await announce(trx, events, { ...side, user: actor(user), type, blocking: dependency.blocking, blocked: dependency.blocked })
  }

  /**
   * Both sides' ids (NotFound naming the first missing side), what their events name (issue and
   * repository), whether their repositories share a workspace, and the change counter as this
   * transaction sees it: one query.
   */
  const bothIssues = async (trx: Executor, dependency: Dependency, type: DependencyEvent): Promise<BothIssues> =>
    bothOf(trx, type, dependency, (await bothQuery(trx, paramsOf(dependency, type))).rows)

  const bothOf = (trx: Executor, type: DependencyEvent, dependency: Dependency, rows: BothRow[]): BothIssues => {
    const { blocking: a, blocked: b } = dependency
    const idOf = (ref: IssueRef, side: string): number => {
      const row = rows.find((r) => Number(r.repo_id) === ref.repo_id && Number(r.number) === ref.issue_number)
      if (row === undefined) throw new NotFound(`${side} issue ${ref.issue_number} not found in repository ${ref.repo_id}`)
      return row.id
    }
    // The webhooks to tell were read with both issues: announcing asks no more.
    for (const row of rows) noteWebhooks(trx, Number(row.repo_id), type, Boolean(row.hooked))
    const contexts = new Map(rows.map((r) => [r.id, contextOf(r)]))
    return { blocking: idOf(a, 'blocking'), blocked: idOf(b, 'blocked'), shared: rows.some((r) => Boolean(r.shared)), version: Number(rows[0].version), contexts }
  }

  /** The insert with the cycle check against the graph kept here (SQLite; on PostgreSQL, when a webhook wants the event). */
  const createWithKeptGraph = async (dependency: Dependency, canRead: (repoId: number) => boolean, user?: User): Promise<Dependency> =>
    await writeTransaction(db, async (trx) => {
      const stamping = engineOf(trx) === 'postgres'
      const at = nowIso()
      // The graph changes one edge at a time, so two edges that together close a cycle cannot both
      // pass the check. On PostgreSQL the lock goes with the statement after it (one round trip):
      // that statement runs after the lock is granted, so it reads what the previous holder committed.
      await lockFor(trx, 'dependencies', { beforeNextStatement: true })
      // On PostgreSQL the insert rides in the query for both issues; on SQLite it follows the checks.
      const joined = stamping ? (await bothAndInsertQuery(trx, { ...paramsOf(dependency, 'dependency_created'), at })).rows : undefined
      const both = joined === undefined ? await bothIssues(trx, dependency, 'dependency_created') : bothOf(trx, 'dependency_created', dependency, joined)
      const { blocking, blocked, shared, version } = both
      if (blocking === blocked) throw new Invalid('an issue cannot block itself')
      const seq = joined?.[0]?.seq
      // The kept graph never holds an edge that may yet be rolled back: read before the insert, or without it.
      const known = await graphAt(trx, version, seq == null ? undefined : { from: blocking, to: blocked })
      const inserted = joined === undefined ? (await insertQuery(trx, { blocking, blocked, at })).rows[0] : seq == null ? undefined : { seq }
      if (inserted === undefined) {
        // The pair exists: nothing written, but the transaction still moves the counter; the kept graph stays good.
        afterCommit(trx, (committed) => graph.committed(version, committed, () => {}))
        return dependency
      }
      if (!shared) throw new Invalid(`repositories ${dependency.blocking.repo_id} and ${dependency.blocked.repo_id} are not in the same workspace`)
      if (known.reaches(blocked, blocking)) {
        // Say why only when the caller can see the path; otherwise only that it is refused.
        if (known.reaches(blocked, blocking, canRead)) {
          throw new Invalid('this dependency would create a cycle: the blocked issue already blocks the blocking issue, directly or through other issues')
        }
        throw new Invalid('this dependency is refused')
      }
      afterCommit(trx, (committed) => graph.committed(version, committed, () => graph.add(blocking, blocked, dependency.blocked.repo_id)))
      await changed(trx, 'dependency_created', dependency, both, user, stamping)
      return dependency
    }, [dependency.blocking.repo_id, dependency.blocked.repo_id], NO_BOARD_ROWS)

  type OneStatement = { made: 'made' | 'existed' | 'hooked' } | { made: 'cyclic', blocking: number, blocked: number }

  /**
   * PostgreSQL: begin, lock, the checked insert and commit in one round trip (`checkedInsertQuery`).
   * What refuses the edge is said after the commit, which wrote nothing then; 'hooked': nothing
   * written, a webhook wants the event.
   */
  const createInOneStatement = async (dependency: Dependency, user?: User): Promise<OneStatement> =>
    await writeTransaction(db, async (trx): Promise<OneStatement> => {
      await lockFor(trx, 'dependencies', { beforeLastStatement: true })
      const rows = (await checkedInsertQuery(trx, { ...paramsOf(dependency, 'dependency_created'), at: nowIso() })).rows
      const row = rows[0] as CheckedRow | undefined
      bumpedByStatement(trx, row?.bumped == null ? -1 : Number(row.bumped), row?.listeners ?? [])
      const both = bothOf(trx, 'dependency_created', dependency, rows)
      const { blocking, blocked, shared, version } = both
      if (blocking === blocked) throw new Invalid('an issue cannot block itself')
      if (row?.seq != null) {
        afterCommit(trx, (committed) => graph.committed(version, committed, () => graph.add(blocking, blocked, dependency.blocked.repo_id)))
        // The webhooks were read with both issues (none wants the event): announcing sends nothing.
        await changed(trx, 'dependency_created', dependency, both, user, true)
        return { made: 'made' }
      }
      if (row?.existed === true) return { made: 'existed' }
      if (!shared) throw new Invalid(`repositories ${dependency.blocking.repo_id} and ${dependency.blocked.repo_id} are not in the same workspace`)
      if (row?.cyclic === true) return { made: 'cyclic', blocking, blocked }
      return { made: 'hooked' }
    }, [dependency.blocking.repo_id, dependency.blocked.repo_id], NO_BOARD_ROWS)

  /** Refuses an edge from `blocking` to `blocked` that would close a cycle, saying why only to a caller who can see the path. */
  const refuseCycle = async (blocking: number, blocked: number, canRead: (repoId: number) => boolean): Promise<never> => {
    const known = await graphAt(db, await changeVersion(db))
    if (known.reaches(blocked, blocking, canRead)) {
      throw new Invalid('this dependency would create a cycle: the blocked issue already blocks the blocking issue, directly or through other issues')
    }
    throw new Invalid('this dependency is refused')
  }

  return {
    /** Dependencies with either side in the repository, keeping pairs readable on both sides. */
    async list (repoId: number, canRead: (repoId: number) => boolean): Promise<Dependency[]> {
      const rows = await db.selectFrom('dependencies as d')
        .innerJoin('issues as a', 'a.id', 'd.blocking_id').innerJoin('issues as b', 'b.id', 'd.blocked_id')
        .select(['a.repo_id as blocking_repo', 'a.number as blocking_number', 'b.repo_id as blocked_repo', 'b.number as blocked_number'])
        .where((eb) => eb.or([eb('a.repo_id', '=', repoId), eb('b.repo_id', '=', repoId)])).orderBy('d.seq').execute()
      return rows.filter((row) => canRead(Number(row.blocking_repo)) && canRead(Number(row.blocked_repo))).map((row) => ({
        blocking: { repo_id: Number(row.blocking_repo), issue_number: Number(row.blocking_number) },
        blocked: { repo_id: Number(row.blocked_repo), issue_number: Number(row.blocked_number) }
      }))
    },

    /** Creates the dependency; an existing pair is returned as it is (never duplicated). */
    async create (dependency: Dependency, canRead: (repoId: number) => boolean, user?: User): Promise<Dependency> {
      if (engineOf(db) === 'postgres' && !db.isTransaction) {
        const outcome = await createInOneStatement(dependency, user)
        if (outcome.made === 'cyclic') return await refuseCycle(outcome.blocking, outcome.blocked, canRead)
        if (outcome.made !== 'hooked') return dependency
      }
      return await createWithKeptGraph(dependency, canRead, user)
    },

    async remove (dependency: Dependency, user?: User): Promise<void> {
      await writeTransaction(db, async (trx) => {
        const both = await bothIssues(trx, dependency, 'dependency_removed')
        const { blocking, blocked, version } = both
        const removed = await trx.deleteFrom('dependencies').where('blocking_id', '=', blocking).where('blocked_id', '=', blocked).executeTakeFirst()
        if (Number(removed.numDeletedRows) === 0) throw new NotFound('no such dependency')
        afterCommit(trx, (committed) => graph.committed(version, committed, () => graph.remove(blocking, blocked)))
        await changed(trx, 'dependency_removed', dependency, both, user)
      }, [dependency.blocking.repo_id, dependency.blocked.repo_id], NO_BOARD_ROWS)
    }
  }
}

export type DependenciesRepository = ReturnType<typeof createDependenciesRepository>
