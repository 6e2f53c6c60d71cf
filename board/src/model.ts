/// <reference lib="dom" />
// Decisions of the board page as pure functions: what a card is, how boards of several
// repositories become one, what a filter keeps, where a drop lands. Unit-tested without a browser.

/** html_url null: a repository with no issue host (made on this server) */
export interface Repo { id: number, owner: string, name: string, html_url: string | null }
export interface Pipeline { id: string, name: string, host_label?: string | null }
export interface Workspace { id: string, name: string, description: string | null, repositories: number[], pipelines: Pipeline[] }
export interface BoardIssue { issue_number: number, is_epic: boolean, estimate?: { value: number }, position?: number }
/** A repository's board; a paged read (`?limit=`) adds each pipeline's cursor to its next page. */
export interface RepoBoard { pipelines: Array<Pipeline & { issues: BoardIssue[], next_after?: number | null }> }

export interface Card {
  key: string
  repo: number
  number: number
  title: string
  html_url: string | null
  estimate: number | null
  is_epic: boolean
  closed: boolean
  /** a pull request (the issue host's: they share the issues' numbers) */
  pull_request: boolean
  /** the issue host's labels and assignees (two-way sync); empty when the host has none */
  labels: Label[]
  assignees: Assignee[]
  milestone?: Milestone
}
export interface Label { name: string, color: string | null }
export interface Assignee { login: string, avatar_url: string | null }
export interface Milestone { number: number, title: string, due_on: string | null, state?: string }

/** An issue as the bulk issue read answers it (the fields the page uses). */
export interface BulkIssue {
  issue_number: number
  title: string
  html_url: string | null
  status?: string
  estimate?: { value: number }
  is_epic: boolean
  pull_request?: boolean
  labels?: Label[]
  assignees?: Assignee[]
  milestone?: Milestone
}

/** `estimate` and `is_epic` given: the board's, which win over the issue read's older copy. */
export function cardOf (repo: number, i: BulkIssue, estimate = i.estimate?.value ?? null, isEpic = i.is_epic): Card {
  return {
    key: keyOf(repo, i.issue_number),
    repo,
    number: i.issue_number,
    title: i.title,
    html_url: i.html_url,
    estimate,
    is_epic: isEpic,
    closed: i.status === 'closed',
    pull_request: i.pull_request === true,
    labels: sharedList(i.labels),
    assignees: sharedList(i.assignees),
    ...(i.milestone === undefined ? {} : { milestone: shared(i.milestone) })
  }
}

// Cards share equal lists of labels and assignees, and milestones: a board of 50,000 cards has a
// few hundred different ones. Each held once, the page's heap has a few objects a card, not ten,
// and a garbage collection during a scroll has that much less to mark and move. Never changed
// in place (a card's change is a new card).
const sharedValues = new Map<string, unknown>()
const EMPTY: never[] = []
function shared<T> (value: T): T {
  const id = JSON.stringify(value)
  const known = sharedValues.get(id)
  if (known !== undefined) return known as T
  // Bounded for a page left open for days: past that many, sharing starts over (cards keep theirs).
  if (sharedValues.size >= 20_000) sharedValues.clear()
  sharedValues.set(id, value)
  return value
}
function sharedList<T> (list: T[] | undefined): T[] {
  return list === undefined || list.length === 0 ? EMPTY : shared(list)
}

/** One key per issue across repositories. */
export const keyOf = (repo: number, number: number): string => `${repo}#${number}`

/**
 * The columns of a board of several repositories: each pipeline's issues of every repository,
 * interleaved by their place in their own repository's pipeline (the first of each, then the
 * second of each...), repositories in the workspace's order.
 */
export function mergeColumns (pipelines: Pipeline[], boards: Array<{ repo: number, board: RepoBoard }>): Record<string, string[]> {
  const columns: Record<string, string[]> = {}
  for (const pipeline of pipelines) {
    const lists = boards.map(({ repo, board }) => (board.pipelines.find((p) => p.id === pipeline.id)?.issues ?? []).map((i) => keyOf(repo, i.issue_number)))
    const merged: string[] = []
    const longest = Math.max(0, ...lists.map((l) => l.length))
    for (let i = 0; i < longest; i++) for (const list of lists) if (i < list.length) merged.push(list[i])
    columns[pipeline.id] = merged
  }
  return columns
}

export interface Filter {
  text: string
  repos: number[]
  estimate: '' | 'none' | 'set' | `${number}-${number}`
  epics: string[]
  blocked: '' | 'blocked' | 'blocking'
  labels: string[]
  assignees: string[]
  /** a sprint's id: only its issues */
  sprint: string
}

export const emptyFilter = (): Filter => ({ text: '', repos: [], estimate: '', epics: [], blocked: '', labels: [], assignees: [], sprint: '' })

const list = (value: string | null): string[] => (value ?? '').split(',').map((s) => s.trim()).filter((s) => s !== '')

/** The filter kept in the page's address, so a filtered board can be shared. */
export function filterFromQuery (params: URLSearchParams): Filter {
  const estimate = params.get('estimate') ?? ''
  const blocked = params.get('blocked') ?? ''
  return {
    text: params.get('q') ?? '',
    repos: list(params.get('repo')).map(Number).filter((n) => Number.isSafeInteger(n) && n > 0),
    estimate: estimate === 'none' || estimate === 'set' || /^\d+(\.\d+)?-\d+(\.\d+)?$/.test(estimate) ? estimate as Filter['estimate'] : '',
    epics: list(params.get('epic')),
    blocked: blocked === 'blocked' || blocked === 'blocking' ? blocked : '',
    labels: list(params.get('label')),
    assignees: list(params.get('assignee')),
    sprint: /^[A-Za-z0-9]{1,100}$/.test(params.get('sprint') ?? '') ? params.get('sprint')! : ''
  }
}

export function filterToQuery (filter: Filter, params: URLSearchParams): URLSearchParams {
  const out = new URLSearchParams(params)
  const set = (name: string, value: string) => { if (value === '') out.delete(name); else out.set(name, value) }
  set('q', filter.text)
  set('repo', filter.repos.join(','))
  set('estimate', filter.estimate)
  set('epic', filter.epics.join(','))
  set('blocked', filter.blocked)
  set('label', filter.labels.join(','))
  set('assignee', filter.assignees.join(','))
  set('sprint', filter.sprint)
  return out
}

/**
 * The part of the filter a paged board read applies on the server (docs/api.md, "Paged boards"),
 * as its query (`&q=…`), for a page holding only the first rows of each column. A value out of the
 * server's bounds is left out: the page then gets more rows than match, never fewer.
 */
export function serverFilterQuery (filter: Filter): string {
  const params = new URLSearchParams()
  const text = filter.text.trim()
  if (text !== '' && text.length <= 200) params.set('q', text)
  const names = (list: string[]) => list.length <= 20 && list.every((n) => n.length <= 100 && !n.includes(',') && n.trim() === n && n !== '')
  if (filter.labels.length > 0 && names(filter.labels)) params.set('label', filter.labels.join(','))
  if (filter.assignees.length > 0 && names(filter.assignees)) params.set('assignee', filter.assignees.join(','))
  if (/^(none|set|\d{1,6}(\.\d{1,3})?-\d{1,6}(\.\d{1,3})?)$/.test(filter.estimate)) params.set('estimate', filter.estimate)
  const query = params.toString()
  return query === '' ? '' : `&${query}`
}

export const isFiltering = (f: Filter): boolean =>
  f.text.trim() !== '' || f.repos.length > 0 || f.estimate !== '' || f.epics.length > 0 || f.blocked !== '' || f.labels.length > 0 || f.assignees.length > 0 || f.sprint !== ''

export interface Relations {
  /** card key -> the keys of the epics holding it */
  epicsOf: Map<string, string[]>
  /** card key -> the keys of the open issues blocking it */
  blockedBy: Map<string, string[]>
  /** card key -> the keys of the issues it blocks */
  blocking: Map<string, string[]>
}

export const noRelations = (): Relations => ({ epicsOf: new Map(), blockedBy: new Map(), blocking: new Map() })

/** Whether the filter keeps the card; `sprint` holds the keys of the chosen sprint's issues (null while they are read). */
export function matches (card: Card, filter: Filter, relations: Relations, sprint: Set<string> | null = null): boolean {
  return matcher(filter, relations, sprint)(card)
}

/**
 * The titles of a column's cards in lower case, in the column's order, in one string: a text filter
 * is then a few native `indexOf` calls, one per match, that give the matching cards in order,
 * instead of a lower-casing and a test of each of 50,000 cards at the first keystroke. One per map
 * of cards and column list (the store replaces the map when a card changes, and a column's list when
 * its order does), made a slice at a time while the page is idle (`extend`), the rest at a search.
 */
export class ColumnTitles {
  private readonly cards: Card[] = []
  private readonly starts: number[] = []
  private parts: string[] = []
  private text = ''
  private length = 0
  private next = 0
  private joined = false

  constructor (private readonly keys: readonly string[], private readonly map: Map<string, Card>) {}

  /** Whether every title is in. */
  get done (): boolean { return this.joined }

  /** Takes in up to `count` more titles; true once every title is in. */
  extend (count: number): boolean {
    const end = Math.min(this.keys.length, this.next + count)
    for (; this.next < end; this.next++) {
      const card = this.map.get(this.keys[this.next])
      if (card === undefined) continue
      const title = card.title.toLowerCase().replaceAll('\n', ' ')
      this.cards.push(card)
      this.starts.push(this.length)
      this.parts.push(title)
      this.length += title.length + 1
    }
    if (this.next >= this.keys.length && !this.joined) {
      this.text = this.parts.join('\n')
      this.parts = []
      this.joined = true
    }
    return this.joined
  }

  /** The column's cards whose title holds `wanted` (in lower case), in the column's order. */
  search (wanted: string): Card[] {
    this.extend(Infinity)
    const found: Card[] = []
    if (wanted.includes('\n')) return found
    const { starts, text } = this
    let n = 0
    for (let i = text.indexOf(wanted); i >= 0;) {
      // The title holding position i: the last start at or before it, after the previous match's.
      let high = starts.length - 1
      while (n < high) {
        const mid = (n + high + 1) >> 1
        if (starts[mid] <= i) n = mid; else high = mid - 1
      }
      found.push(this.cards[n])
      const next = starts[++n]
      if (next === undefined) break
      i = text.indexOf(wanted, next)
    }
    return found
  }
}

const columnIndexes = new WeakMap<Map<string, Card>, WeakMap<readonly string[], ColumnTitles>>()
/** The title index of a column's list of keys over a map of cards, made once for the pair. */
export function columnTitles (cards: Map<string, Card>, keys: readonly string[]): ColumnTitles {
  let ofCards = columnIndexes.get(cards)
  if (ofCards === undefined) columnIndexes.set(cards, ofCards = new WeakMap())
  let index = ofCards.get(keys)
  if (index === undefined) ofCards.set(keys, index = new ColumnTitles(keys, cards))
  return index
}

/** The text a filter looks for in titles, in lower case: '' when there is none or it names an issue's number. */
export function titleText (filter: Filter): string {
  const text = filter.text.trim().toLowerCase()
  return /^#?\d+$/.test(text) ? '' : text
}

/**
 * The filter as one test per card, its text and ranges read once rather than for each card:
 * a keystroke on a board of 50,000 cards tests every card it holds.
 */
export function matcher (filter: Filter, relations: Relations, sprint: Set<string> | null = null): (card: Card) => boolean {
  const tests: Array<(card: Card) => boolean> = []
  if (filter.sprint !== '') tests.push((c) => sprint?.has(c.key) ?? false)
  const text = filter.text.trim().toLowerCase()
  if (text !== '') {
    const number = /^#?(\d+)$/.exec(text)
    if (number !== null) {
      const wanted = Number(number[1])
      tests.push((c) => c.number === wanted)
    } else tests.push((c) => c.title.toLowerCase().includes(text))
  }
  if (filter.repos.length > 0) tests.push((c) => filter.repos.includes(c.repo))
  if (filter.estimate === 'none') tests.push((c) => c.estimate === null)
  if (filter.estimate === 'set') tests.push((c) => c.estimate !== null)
  if (filter.estimate.includes('-')) {
    const [low, high] = filter.estimate.split('-').map(Number)
    tests.push((c) => c.estimate !== null && c.estimate >= low && c.estimate <= high)
  }
  if (filter.epics.length > 0) tests.push((c) => (relations.epicsOf.get(c.key) ?? []).some((e) => filter.epics.includes(e)))
  if (filter.blocked === 'blocked') tests.push((c) => (relations.blockedBy.get(c.key) ?? []).length > 0)
  if (filter.blocked === 'blocking') tests.push((c) => (relations.blocking.get(c.key) ?? []).length > 0)
  // A card with any of the chosen labels (assignees) is kept.
  if (filter.labels.length > 0) tests.push((c) => c.labels.some((l) => filter.labels.includes(l.name)))
  if (filter.assignees.length > 0) tests.push((c) => c.assignees.some((a) => filter.assignees.includes(a.login)))
  if (tests.length === 0) return () => true
  if (tests.length === 1) return tests[0]
  return (c) => tests.every((test) => test(c))
}

/** Sprints nearest today first: the current one, those to come from the soonest, then the ended ones from the latest. */
export function nearestFirst<T extends { state: 'active' | 'future' | 'closed', starts_at: string }> (sprints: T[]): T[] {
  const rank = { active: 0, future: 1, closed: 2 }
  return [...sprints].sort((a, b) => rank[a.state] - rank[b.state] ||
    (a.state === 'closed' ? b.starts_at.localeCompare(a.starts_at) : a.starts_at.localeCompare(b.starts_at)))
}

const round = (n: number): number => Math.round(n * 100) / 100
export const points = (n: number): string => `${round(n)} ${round(n) === 1 ? 'pt' : 'pts'}`
export const issues = (n: number): string => `${n} ${n === 1 ? 'issue' : 'issues'}`

/** Issues and points of the cards shown. */
export function totals (cards: Card[]): string {
  return `${issues(cards.length)} · ${points(cards.reduce((sum, c) => sum + (c.estimate ?? 0), 0))}`
}

/**
 * What was typed into an estimate field: a number of 0 or more, null for empty (clear it), or an
 * error. A number input would report "1e" or "5-3" as empty, and so clear the estimate: text is read here.
 */
export function parseEstimate (text: string): { value: number | null } | { error: string } {
  const trimmed = text.trim()
  if (trimmed === '') return { value: null }
  if (!/^\d{1,9}(\.\d{1,4})?$/.test(trimmed)) return { error: `"${trimmed.slice(0, 20)}" is not an estimate: type a number of 0 or more, or nothing to clear it` }
  return { value: Number(trimmed) }
}

/** A stable colour for a repository: the same hue on every load and for every user. */
export function repoHue (repo: Repo | undefined, id: number): number {
  const text = repo === undefined ? String(id) : `${repo.owner}/${repo.name}`
  let hash = 0
  for (let i = 0; i < text.length; i++) hash = (hash * 31 + text.charCodeAt(i)) >>> 0
  return hash % 360
}

/**
 * Where a card dropped at `slot` of the shown cards (the dragged one left out) goes in its own
 * repository's pipeline: before the same repository's card that follows the slot in the whole column.
 */
export function repoIndex (column: string[], shown: string[], dragged: string, slot: number, repoOf: (key: string) => number): number {
  const repo = repoOf(dragged)
  const others = shown.filter((k) => k !== dragged)
  const rest = column.filter((k) => k !== dragged)
  const sameRepo = rest.filter((k) => repoOf(k) === repo)
  // The first card at or after the slot, in the whole column, of the dragged card's repository.
  const next = others[slot]
  if (next === undefined) {
    // After the last shown card: after the same repository's cards up to it.
    const last = others[others.length - 1]
    if (last === undefined) return sameRepo.length
    const upTo = rest.indexOf(last)
    return rest.slice(0, upTo + 1).filter((k) => repoOf(k) === repo).length
  }
  const at = rest.indexOf(next)
  return rest.slice(0, at).filter((k) => repoOf(k) === repo).length
}

/** The whole column after moving `dragged` to just before `next` (or to the end). */
export function placeIn (column: string[], dragged: string, next: string | undefined): string[] {
  const rest = column.filter((k) => k !== dragged)
  const at = next === undefined ? rest.length : rest.indexOf(next)
  rest.splice(at < 0 ? rest.length : at, 0, dragged)
  return rest
}

/** Which rows of a column of `count` fixed-height rows to draw for a viewport: a few more each side. */
export function visibleRows (count: number, rowHeight: number, scrollTop: number, height: number, spare = 6): { from: number, to: number } {
  const from = Math.max(0, Math.floor(scrollTop / rowHeight) - spare)
  const to = Math.min(count, Math.ceil((scrollTop + height) / rowHeight) + spare)
  return { from, to }
}

/** The accessible name of a card: number and title first, then what a sighted person sees on it. */
export function cardName (card: Card, repoName: string | undefined, relations: Relations, epicNames: (key: string) => string): string {
  const parts = [`#${card.number} ${card.title}`]
  if (card.pull_request) parts.push('pull request')
  if (repoName !== undefined) parts.push(repoName)
  parts.push(card.estimate === null ? 'no estimate' : points(card.estimate))
  if (card.is_epic) parts.push('epic')
  for (const epic of relations.epicsOf.get(card.key) ?? []) parts.push(`in epic ${epicNames(epic)}`)
  const blockers = relations.blockedBy.get(card.key) ?? []
  if (blockers.length > 0) parts.push(`blocked by ${blockers.length}`)
  const blocks = relations.blocking.get(card.key) ?? []
  if (blocks.length > 0) parts.push(`blocking ${blocks.length}`)
  if (card.labels.length > 0) parts.push(`${card.labels.length === 1 ? 'label' : 'labels'} ${card.labels.map((l) => l.name).join(', ')}`)
  if (card.assignees.length > 0) parts.push(`assigned to ${card.assignees.map((a) => a.login).join(', ')}`)
  return parts.join(', ')
}

/** A label's colours from the host's hex colour ("d73a4a"): its background, and black or white text, whichever reads better. */
export function labelColors (color: string | null): { background: string, text: string } | undefined {
  if (color === null || !/^#?[0-9a-f]{6}$/i.test(color)) return undefined
  const hex = color.replace('#', '')
  const [r, g, b] = [0, 2, 4].map((i) => parseInt(hex.slice(i, i + 2), 16) / 255).map((c) => c <= 0.03928 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4)
  const luminance = 0.2126 * r + 0.7152 * g + 0.0722 * b
  return { background: `#${hex.toLowerCase()}`, text: luminance > 0.179 ? '#000000' : '#ffffff' }
}

/** Up to two letters of a login, for an assignee shown without an avatar. */
export function initials (login: string): string {
  const parts = login.split(/[-_.]+/).filter((p) => p !== '')
  return (parts.length > 1 ? parts[0][0] + parts[1][0] : login.slice(0, 2)).toUpperCase()
}

/** Names in a comma-separated field ("bug, ui"), trimmed, without repeats. */
export const namesIn = (text: string): string[] => [...new Set(text.split(',').map((s) => s.trim()).filter((s) => s !== ''))]

const knownOf = new WeakMap<object, { labels: Label[], assignees: string[] }>()
/** `labelsAndAssignees` of a map of cards, made once per map (the store replaces the map when a card changes). */
export function labelsAndAssigneesOf (cards: Map<string, Card>): { labels: Label[], assignees: string[] } {
  let known = knownOf.get(cards)
  if (known === undefined) knownOf.set(cards, known = labelsAndAssignees(cards.values()))
  return known
}

/** Every label (by name) and assignee (by login) on the cards, sorted, for the filter menus. */
export function labelsAndAssignees (cards: Iterable<Card>): { labels: Label[], assignees: string[] } {
  const labels = new Map<string, Label>()
  const assignees = new Set<string>()
  for (const card of cards) {
    for (const l of card.labels) if (!labels.has(l.name)) labels.set(l.name, l)
    for (const a of card.assignees) assignees.add(a.login)
  }
  return { labels: [...labels.values()].sort((a, b) => a.name.localeCompare(b.name)), assignees: [...assignees].sort((a, b) => a.localeCompare(b)) }
}
