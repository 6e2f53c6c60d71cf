import { prepared } from './engine/prepared.js'
import type { Executor } from './engine/transaction.js'
import type { Board, BoardIssue } from './boards.js'

/**
 * What a board read knows of the writes since a kept board: the change counter it read, and the
 * issues whose rows in the repository's board the writes after `from` up to `to` changed
 * (plugins/core/committed-writes.ts), undefined when that is not known here.
 */
export interface BoardAt {
  version: number
  changed: (from: number, to: number) => ReadonlySet<number> | undefined
}

interface Row { pipeline_id: string, issue_id: number, rank: number, number: number, position: number | null, estimate: number | null, is_epic: number }
interface Card { rank: number, id: number, issue: BoardIssue }
type Pipeline = Board['pipelines'][number]
/** `answer`: this column as the last answer gave it, until its cards change (then made again). */
interface Column { id: string, name: string, cards: Card[], answer?: Pipeline }

/** A board kept in memory exactly as the database held it at change counter `version`. */
interface Model { version: number, columns: Column[], where: Map<number, Column> }

const COLUMNS = ['p.pipeline_id', 'p.issue_id', 'p.rank', 'p.number', 'p.position', 'i.estimate', 'i.is_epic'] as const
const counter = (db: Executor) => db.selectFrom('change_counter').select('value').where('id', '=', 1)

// Each statement reads the counter with its rows: a model is kept only when both saw the same version.
const pipelinesQuery = prepared<{ workspaceId: string }>()((db, p) =>
  db.selectFrom('pipelines').select(['id', 'name']).select((eb) => counter(eb as unknown as Executor).as('version'))
    .where('workspace_id', '=', p.workspaceId).orderBy('sort_order'))
const rowsQuery = prepared<{ workspaceId: string, repoId: number }>()((db, p) =>
  db.selectFrom('placements as p').innerJoin('issues as i', 'i.id', 'p.issue_id').select(COLUMNS)
    .select((eb) => counter(eb as unknown as Executor).as('version'))
    .where('p.workspace_id', '=', p.workspaceId).where('p.repo_id', '=', p.repoId).where('p.is_open', '=', 1))
const versionQuery = prepared<Record<string, never>>()((db) => counter(db))

/** Some issues' rows of the board (none for an issue closed, gone or elsewhere), with the counter: one statement. */
async function someRows (db: Executor, workspaceId: string, repoId: number, ids: number[]): Promise<{ rows: Row[], version: number }> {
  const rows = await db.selectFrom('change_counter as c')
    .leftJoin((eb) => eb.selectFrom('placements as p').innerJoin('issues as i', 'i.id', 'p.issue_id').select(COLUMNS)
      .where('p.workspace_id', '=', workspaceId).where('p.repo_id', '=', repoId).where('p.is_open', '=', 1)
      .where('p.issue_id', 'in', ids).as('r'), (join) => join.onTrue())
    .select(['c.value as version', 'r.pipeline_id', 'r.issue_id', 'r.rank', 'r.number', 'r.position', 'r.estimate', 'r.is_epic'])
    .where('c.id', '=', 1).execute()
  return { rows: rows.filter((r) => r.pipeline_id !== null) as Row[], version: Number(rows[0]?.version ?? -1) }
}

function cardOf (row: Row): Card {
  const issue: BoardIssue = { issue_number: Number(row.number), is_epic: Number(row.is_epic) === 1 }
  if (row.estimate !== null) issue.estimate = { value: row.estimate }
  if (row.position !== null) issue.position = Number(row.position)
  return { rank: Number(row.rank), id: Number(row.issue_id), issue }
}

/** Board order: rank, then issue id. */
const before = (a: Card, rank: number, id: number) => a.rank < rank || (a.rank === rank && a.id < id)

function indexOf (cards: Card[], rank: number, id: number): number {
  let low = 0
  let high = cards.length
  while (low < high) {
    const mid = (low + high) >>> 1
    if (before(cards[mid], rank, id)) low = mid + 1
    else high = mid
  }
  return low
}

/** Boards kept, bounded by their cards in all; the least recently read out first. */
const MAX_CARDS = 200_000

/**
 * Repositories' boards kept in memory, so the first read after a write reads again only the rows
 * the writes since said they changed (an estimate, a move) instead of the whole board, and places
 * them by rank. A write that did not say (another instance's, the CLI's, a pipeline's, a closed
 * issue's...) has the board read whole again, as does a kept board this process no longer knows
 * the writes after. Reads of one board take turns, so each starts from where the last left it.
 */
export class BoardModels {
  private readonly models = new Map<string, Model>()
  private readonly turns = new Map<string, Promise<unknown>>()
  private cards = 0
  /** Boards read whole and boards patched, since start (tests and measurements tell the two apart by them). */
  readonly counts = { whole: 0, patched: 0 }

  constructor (private readonly db: Executor) {}

  /** The board as of `at.version` or later; without `at`, read whole. */
  async board (workspaceId: string, repoId: number, at?: BoardAt): Promise<Board> {
    if (at === undefined) return boardOf((await this.read(workspaceId, repoId)).model)
    const key = `${workspaceId}:${repoId}`
    const turn = (this.turns.get(key) ?? Promise.resolve()).then(async () => await this.current(key, workspaceId, repoId, at))
    const settled = turn.catch(() => {})
    this.turns.set(key, settled)
    settled.then(() => { if (this.turns.get(key) === settled) this.turns.delete(key) }, () => {})
    return boardOf(await turn)
  }

  private async current (key: string, workspaceId: string, repoId: number, at: BoardAt): Promise<Model> {
    const kept = this.models.get(key)
    if (kept !== undefined) {
      this.models.delete(key)
      this.models.set(key, kept)
      if (kept.version >= at.version) return kept
      const cards = kept.where.size
      let patched = false
      try {
        patched = await this.patch(kept, workspaceId, repoId, at)
      } finally {
        if (!patched) this.forget(key)
      }
      if (patched) {
        this.counts.patched++
        // Counted only while it is kept: another board's keep may have let it go meanwhile.
        if (this.models.get(key) === kept) this.cards += kept.where.size - cards
        return kept
      }
    }
    const { model, consistent } = await this.read(workspaceId, repoId)
    if (consistent) this.keep(key, model)
    return model
  }

  /** Reads again the rows the writes since changed and places them; false when the board must be read whole. */
  private async patch (model: Model, workspaceId: string, repoId: number, at: BoardAt): Promise<boolean> {
    const ids = at.changed(model.version, at.version)
    // Past this many rows, reading the board whole costs less than finding and placing each one.
    const most = Math.max(500, model.where.size / 8)
    if (ids === undefined || ids.size > most) return false
    let to = at.version
    const wanted = new Set(ids)
    // The rows come with the version they were read at; writes after `to` they saw must be read too.
    for (let tries = 0; wanted.size > 0 && tries < 3; tries++) {
      const { rows, version } = await someRows(this.db, workspaceId, repoId, [...wanted])
      if (version < to) return false
      const more = version === to ? new Set<number>() : at.changed(to, version)
      if (more === undefined) return false
      if ([...more].every((id) => wanted.has(id))) {
        for (const id of wanted) this.take(model, id)
        for (const row of rows) this.place(model, cardOf(row), row.pipeline_id)
        model.version = version
        return true
      }
      for (const id of more) wanted.add(id)
      if (wanted.size > most) return false
      to = version
    }
    if (wanted.size > 0) return false
    model.version = to
    return true
  }

  private take (model: Model, id: number): void {
    const column = model.where.get(id)
    if (column === undefined) return
    const card = column.cards.find((c) => c.id === id)!
    column.cards.splice(indexOf(column.cards, card.rank, card.id), 1)
    column.answer = undefined
    model.where.delete(id)
  }

  private place (model: Model, card: Card, pipelineId: string): void {
    const column = model.columns.find((c) => c.id === pipelineId)
    if (column === undefined) return
    column.cards.splice(indexOf(column.cards, card.rank, card.id), 0, card)
    column.answer = undefined
    model.where.set(card.id, column)
  }

  /** The whole board in two statements; consistent when both saw the same version. */
  private async read (workspaceId: string, repoId: number): Promise<{ model: Model, consistent: boolean }> {
    this.counts.whole++
    const pipelines = (await pipelinesQuery(this.db, { workspaceId })).rows
    const { rows } = await rowsQuery(this.db, { workspaceId, repoId })
    const columns = pipelines.map((p): Column => ({ id: p.id, name: p.name, cards: [] }))
    const byId = new Map(columns.map((c) => [c.id, c]))
    const where = new Map<number, Column>()
    for (const row of rows) {
      const column = byId.get(row.pipeline_id)
      if (column === undefined) continue
      const card = cardOf(row)
      column.cards.push(card)
      where.set(card.id, column)
    }
    for (const column of columns) column.cards.sort((a, b) => a.rank - b.rank || a.id - b.id)
    const version = pipelines.length === 0 ? -1 : Number(pipelines[0].version)
    // Without rows the statement saw no counter: ask for it after (the same value: nothing changed in between).
    const rowsVersion = rows.length > 0 ? Number(rows[0].version) : Number((await versionQuery(this.db, {})).rows[0]?.value ?? -2)
    return { model: { version, columns, where }, consistent: pipelines.length > 0 && version === rowsVersion }
  }

  private keep (key: string, model: Model): void {
    this.models.set(key, model)
    this.cards += model.where.size
    while (this.cards > MAX_CARDS && this.models.size > 1) this.forget(this.models.keys().next().value!)
  }

  private forget (key: string): void {
    const model = this.models.get(key)
    if (model === undefined) return
    this.models.delete(key)
    this.cards -= model.where.size
  }
}

/**
 * The answer. A pipeline whose cards did not change since the last answer is the same object as
 * in it (so what was made of it, such as its JSON, can be kept: plugins/board-bytes.ts); one
 * that changed is a new object. Neither is changed after: a later patch never alters a board
 * being sent.
 */
function boardOf (model: Model): Board {
  return { pipelines: model.columns.map((c) => (c.answer ??= { id: c.id, name: c.name, issues: c.cards.map((card) => card.issue) })) }
}
