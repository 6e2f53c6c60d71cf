import { sql, type ExpressionBuilder, type RawBuilder, type Selectable } from 'kysely'
import type { Database, IssuesTable } from './schema.js'
import type { Executor } from './engine/transaction.js'
import { engineOf } from './engine/engine.js'
import { CLOSED } from './closed-issues.js'

/**
 * Batched reads for the GraphQL door: each takes the keys of a whole page (issues, pipelines,
 * workspaces…) and answers in one statement, so a page costs a fixed number of queries.
 */
export type IssueNode = Pick<Selectable<IssuesTable>, 'id' | 'repo_id' | 'number' | 'title' | 'state' | 'estimate' | 'is_epic' | 'is_pull_request'
  | 'milestone_number' | 'created_at' | 'host_updated_at' | 'planning_changed_at' | 'creator_id'>
export interface PlacementNode { issue_id: number, workspace_id: string, pipeline_id: string, rank: number }
export interface PipelineNode { id: string, workspace_id: string, name: string, sort_order: number, created_at: string, updated_at: string }
export interface WorkspaceNode { id: string, name: string, description: string | null, created_at: string }
export interface RepositoryNode {
  id: number
  owner: string
  name: string
  html_url: string | null
  created_at: string | null
  host_updated_at: string | null
  is_private: number
  is_archived: number
  owner_platform_id: number | null
  owner_kind: 'User' | 'Organization' | null
}
export interface LabelNode { repo_id: number, name: string, color: string | null, description: string | null }

/** Which issues a search keeps (every list is optional; `labelsMatch` says any or all of `labels`). */
export interface IssueFilter {
  repoIds: number[]
  labels?: string[]
  labelsMatch?: 'any' | 'all'
  notLabels?: string[]
  assignees?: string[]
  notAssignees?: string[]
  /** true: pull requests only; false: issues only */
  pullRequests?: boolean
  sprintIds?: string[]
  milestoneTitles?: string[]
  /** words of the title, or `#n` / `n` for the number */
  query?: string
}

/** Which issues of the filter's repositories a workspace-wide search reads. */
export interface IssueScope { includeClosed: boolean, workspaceId?: string, pipelineIds?: string[] }

/** The orders a list of a workspace's issues can take: the sort value of each. */
const ISSUE_ORDERS = {
  created_at: sql<string>`i.created_at`,
  updated_at: sql<string>`coalesce(i.host_updated_at, i.planning_changed_at, i.created_at)`,
  gh_updated_at: sql<string>`coalesce(i.host_updated_at, i.created_at)`,
  title: sql<string>`i.title`,
  // no estimate sorts below every estimate (they are 0 or more)
  estimate: sql<number>`coalesce(i.estimate, -1)`
}
export interface IssueOrder { field: keyof typeof ISSUE_ORDERS, direction: 'asc' | 'desc' }
export const ISSUE_ORDER_FIELDS = Object.keys(ISSUE_ORDERS) as Array<IssueOrder['field']>

/** A position in a page's order: rank (or time), then issue id. */
export interface IssueKey { k: number | string, id: number }
export interface PageAsked { after?: IssueKey, before?: IssueKey, limit: number, fromEnd: boolean }
export interface IssuePage { rows: Array<IssueNode & { key: IssueKey }>, hasMore: boolean }
export interface IssueCounts { issues: number, pullRequests: number, estimates: number }
export interface IssueLabelRow { issue_id: number, name: string, color: string | null }
export interface IssueAssigneeRow { issue_id: number, login: string, avatar_url: string | null }
/** What a pipeline page can carry of its cards besides the issues: asked for, so the cards need no read after the page. */
export interface PageCarry { labels?: boolean, assignees?: boolean }
/** The page's cards' placements (its own pipeline's), and on PostgreSQL their labels and assignees when carried (as labelsOf and assigneesOf give them). */
export interface PageCards { placements: PlacementNode[], labels?: IssueLabelRow[], assignees?: IssueAssigneeRow[] }

const ISSUE_COLUMNS = ['i.id', 'i.repo_id', 'i.number', 'i.title', 'i.state', 'i.estimate', 'i.is_epic', 'i.is_pull_request',
  'i.milestone_number', 'i.created_at', 'i.host_updated_at', 'i.planning_changed_at', 'i.creator_id'] as const

const toIssue = <T extends Record<string, unknown>>(r: T): T & IssueNode => ({
  ...r,
  id: Number(r.id),
  repo_id: Number(r.repo_id),
  number: Number(r.number),
  estimate: r.estimate === null ? null : Number(r.estimate),
  is_epic: Number(r.is_epic),
  is_pull_request: Number(r.is_pull_request),
  milestone_number: r.milestone_number === null ? null : Number(r.milestone_number),
  creator_id: r.creator_id === null || r.creator_id === undefined ? null : Number(r.creator_id)
}) as T & IssueNode

type IssueEb = ExpressionBuilder<Database & { i: Database['issues'] }, 'i'>

/**
 * Where a search's issue id and repository are read from: the issue's row, or (a pipeline's cards)
 * the placement's copies. On a placement a label is tested as membership in the label's issues
 * (issue_labels_name), and for a count the candidates need no issue row before they match.
 */
interface FilterColumns { issueId: 'i.id' | 'p.issue_id', repoId: 'i.repo_id' | 'p.repo_id', labelsAsList: boolean }
const ON_ISSUES: FilterColumns = { issueId: 'i.id', repoId: 'i.repo_id', labelsAsList: false }
const ON_PLACEMENTS: FilterColumns = { issueId: 'p.issue_id', repoId: 'p.repo_id', labelsAsList: false }
const COUNTED_ON_PLACEMENTS: FilterColumns = { ...ON_PLACEMENTS, labelsAsList: true }

/** Whether `filtered` tests a column of the issue's own row (else, on placements, it needs none). */
const testsIssueRow = (f: IssueFilter) => f.pullRequests !== undefined || (f.milestoneTitles !== undefined && f.milestoneTitles.length > 0) ||
  (f.query !== undefined && f.query.trim() !== '')

function filtered (eb: IssueEb, f: IssueFilter, on: FilterColumns = ON_ISSUES) {
  const parts = [eb(on.repoId as 'i.repo_id', 'in', f.repoIds.length === 0 ? [-1] : f.repoIds)]
  const issueId = on.issueId as 'i.id'
  const labelled = (names: string[]) => on.labelsAsList
    ? eb(issueId, 'in', eb.selectFrom('issue_labels as l').select('l.issue_id').where('l.name', 'in', names))
    : eb.exists(eb.selectFrom('issue_labels as l').select('l.issue_id').whereRef('l.issue_id', '=', issueId).where('l.name', 'in', names))
  if (f.labels !== undefined && f.labels.length > 0) {
    if (f.labelsMatch === 'all') for (const name of f.labels) parts.push(labelled([name]))
    else parts.push(labelled(f.labels))
  }
  if (f.notLabels !== undefined && f.notLabels.length > 0) parts.push(eb.not(labelled(f.notLabels)))
  const assigned = (logins: string[]) => eb.exists(eb.selectFrom('issue_assignees as a').select('a.issue_id').whereRef('a.issue_id', '=', issueId).where('a.login', 'in', logins))
  if (f.assignees !== undefined && f.assignees.length > 0) parts.push(assigned(f.assignees))
  if (f.notAssignees !== undefined && f.notAssignees.length > 0) parts.push(eb.not(assigned(f.notAssignees)))
  if (f.pullRequests !== undefined) parts.push(eb('i.is_pull_request', '=', f.pullRequests ? 1 : 0))
  if (f.sprintIds !== undefined) {
    parts.push(eb.exists(eb.selectFrom('sprint_issues as s').select('s.issue_id').whereRef('s.issue_id', '=', issueId).where('s.sprint_id', 'in', f.sprintIds.length === 0 ? [''] : f.sprintIds)))
  }
  if (f.milestoneTitles !== undefined && f.milestoneTitles.length > 0) {
    parts.push(eb.exists(eb.selectFrom('milestones as m').select('m.number').whereRef('m.repo_id', '=', 'i.repo_id')
      .whereRef('m.number', '=', 'i.milestone_number').where('m.title', 'in', f.milestoneTitles)))
  }
  const query = f.query?.trim()
  if (query !== undefined && query !== '') {
    const number = /^#?([0-9]{1,9})$/.exec(query)
    const words = query.toLowerCase().replaceAll(/[%_\\]/g, (c) => `\\${c}`)
    const title = sql<boolean>`lower(i.title) LIKE ${`%${words}%`} ESCAPE '\\'`
    parts.push(number === null ? eb(title, '=', sql<boolean>`${sql.lit(true)}`) : eb.or([eb('i.number', '=', Number(number[1])), eb(title, '=', sql<boolean>`${sql.lit(true)}`)]))
  }
  return eb.and(parts)
}

export function createGraphReads (db: Executor) {
  const counts = async (base: () => ReturnType<typeof openInPipeline>): Promise<IssueCounts> => {
    const row = await base().select([
      sql<number>`count(*)`.as('n'),
      sql<number>`coalesce(sum(i.is_pull_request), 0)`.as('prs'),
      sql<number>`coalesce(sum(i.estimate), 0)`.as('points')
    ]).executeTakeFirst()
    return { issues: Number(row?.n ?? 0), pullRequests: Number(row?.prs ?? 0), estimates: Number(row?.points ?? 0) }
  }
  // Tested on the placement (placements_ranked holds its issue and repository): the page walks the
  // pipeline in board order and stops at its end, reading the issue rows of its cards only.
  const openInPipeline = (pipelineId: string, f: IssueFilter, on = ON_PLACEMENTS) =>
    db.selectFrom('placements as p').innerJoin('issues as i', 'i.id', 'p.issue_id')
      .where('p.pipeline_id', '=', pipelineId).where('p.is_open', '=', 1).where((eb) => filtered(eb as unknown as IssueEb, f, on))
  const pipelineCounts = async (pipelineId: string, f: IssueFilter) => await counts(() => openInPipeline(pipelineId, f, COUNTED_ON_PLACEMENTS))
  const closedIn = (workspaceId: string, f: IssueFilter) =>
    db.selectFrom('issues as i')
      .where('i.state', '=', CLOSED).where((eb) => filtered(eb as unknown as IssueEb, f))
      .where('i.repo_id', 'in', (eb) => eb.selectFrom('workspace_repositories').select('repo_id').where('workspace_id', '=', workspaceId))
  const inSprint = (sprintId: string, f: IssueFilter) =>
    db.selectFrom('issues as i').where((eb) => filtered(eb as unknown as IssueEb, f))
      .where('i.id', 'in', (eb) => eb.selectFrom('sprint_issues').select('issue_id').where('sprint_id', '=', sprintId))
  /** Issues of the filter's repositories, open or also closed, optionally only those placed in a workspace's pipelines. */
  const inRepos = (f: IssueFilter, scope: IssueScope) => {
    let q = db.selectFrom('issues as i').where((eb) => filtered(eb as unknown as IssueEb, f))
    if (!scope.includeClosed) q = q.where('i.state', '=', 'open')
    if (scope.pipelineIds !== undefined && scope.pipelineIds.length > 0) {
      const ids = scope.pipelineIds
      q = q.where('i.id', 'in', (eb) => eb.selectFrom('placements').select('issue_id').where('workspace_id', '=', scope.workspaceId ?? '').where('pipeline_id', 'in', ids))
    }
    return q
  }
  /** A page in one of ISSUE_ORDERS, the key after the sort value being the issue id. */
  const orderedPage = async (from: ReturnType<typeof inRepos>, page: PageAsked, order: IssueOrder): Promise<IssuePage> => {
    const sortKey: RawBuilder<string | number> = ISSUE_ORDERS[order.field]
    const value = (k: number | string) => order.field === 'estimate' ? Number(k) : String(k)
    const down = order.direction === 'desc'
    // Past a key: further along the order going forward (after), back along it going backward (before).
    const past = (key: IssueKey, forward: boolean) => {
      const op = forward !== down ? '>' : '<'
      return (eb: IssueEb) => eb.or([eb(sortKey, op, value(key.k)), eb.and([eb(sortKey, '=', value(key.k)), eb('i.id', op, key.id)])])
    }
    let q = from.select([...ISSUE_COLUMNS, sortKey.as('k')])
    if (page.after !== undefined) q = q.where(past(page.after, true))
    if (page.before !== undefined) q = q.where(past(page.before, false))
    const dir = down !== page.fromEnd ? 'desc' : 'asc'
    const rows = await q.orderBy(sortKey, dir).orderBy('i.id', dir).limit(page.limit + 1).execute()
    const kept = rows.slice(0, page.limit).map((r) => ({ ...toIssue(r), key: { k: value(r.k as number | string), id: Number(r.id) } }))
    return { rows: page.fromEnd ? kept.reverse() : kept, hasMore: rows.length > page.limit }
  }
  // A pipeline an older instance made after 029 ran has no times: its workspace's creation.
  const pipelineRows = () => db.selectFrom('pipelines as p').innerJoin('workspaces as w', 'w.id', 'p.workspace_id')
    .select(['p.id', 'p.workspace_id', 'p.name', 'p.sort_order', sql<string>`coalesce(p.created_at, w.created_at)`.as('created_at'), sql<string>`coalesce(p.updated_at, p.created_at, w.created_at)`.as('updated_at')])
  const toPipeline = (r: PipelineNode): PipelineNode => ({ ...r, sort_order: Number(r.sort_order) })
  const closedAt = sql<string>`coalesce((SELECT max(st.at) FROM issue_states st WHERE st.issue_id = i.id AND st.state = 'closed'), i.created_at)`

  return {
    /**
     * Open issues of a pipeline in board order (rank, then id), after or before a key, with their
     * placements; on PostgreSQL also the labels and assignees `carry` asks for, each card's as
     * one JSON list in the page's statement (a round trip less after the page; SQLite has none).
     */
    async pipelinePage (pipelineId: string, f: IssueFilter, page: PageAsked, carry: PageCarry = {}): Promise<IssuePage & { cards: PageCards }> {
      const lists = engineOf(db) === 'postgres'
      const withLabels = lists && carry.labels === true
      const withAssignees = lists && carry.assignees === true
      let q = openInPipeline(pipelineId, f).select([...ISSUE_COLUMNS, 'p.rank as k', 'p.workspace_id as placed_in'])
        .$if(withLabels, (b) => b.select(sql<Array<[string, string | null]>>`(SELECT coalesce(json_agg(json_build_array(l.name, l.color) ORDER BY l.name), '[]'::json)
          FROM issue_labels l WHERE l.issue_id = p.issue_id)`.as('labels_carried')))
        .$if(withAssignees, (b) => b.select(sql<Array<[string, string | null]>>`(SELECT coalesce(json_agg(json_build_array(a.login, a.avatar_url) ORDER BY a.login), '[]'::json)
          FROM issue_assignees a WHERE a.issue_id = p.issue_id)`.as('assignees_carried')))
      if (page.after !== undefined) { const a = page.after; q = q.where((eb) => eb.or([eb('p.rank', '>', Number(a.k)), eb.and([eb('p.rank', '=', Number(a.k)), eb('p.issue_id', '>', a.id)])])) }
      if (page.before !== undefined) { const b = page.before; q = q.where((eb) => eb.or([eb('p.rank', '<', Number(b.k)), eb.and([eb('p.rank', '=', Number(b.k)), eb('p.issue_id', '<', b.id)])])) }
      const dir = page.fromEnd ? 'desc' : 'asc'
      // the placement's issue id (the issue's own): the order placements_ranked is kept in
      const rows = await q.orderBy('p.rank', dir).orderBy('p.issue_id', dir).limit(page.limit + 1).execute()
      const hasMore = rows.length > page.limit
      const cards: PageCards = { placements: [], ...(withLabels ? { labels: [] } : {}), ...(withAssignees ? { assignees: [] } : {}) }
      const kept = rows.slice(0, page.limit).map((r) => {
        type Carried = typeof r & { labels_carried?: Array<[string, string | null]>, assignees_carried?: Array<[string, string | null]> }
        const { placed_in: workspaceId, labels_carried: labels, assignees_carried: assignees, ...issue } = r as Carried
        const id = Number(r.id)
        cards.placements.push({ issue_id: id, workspace_id: workspaceId, pipeline_id: pipelineId, rank: Number(r.k) })
        for (const [name, color] of labels ?? []) cards.labels!.push({ issue_id: id, name, color })
        for (const [login, avatarUrl] of assignees ?? []) cards.assignees!.push({ issue_id: id, login, avatar_url: avatarUrl })
        return { ...toIssue(issue), key: { k: Number(r.k), id } }
      })
      return { rows: page.fromEnd ? kept.reverse() : kept, hasMore, cards }
    },
    pipelineCounts,
    /** The number pipelineCounts counts: on the placements alone when the filter tests nothing of the issue's own row. */
    async pipelineCount (pipelineId: string, f: IssueFilter): Promise<number> {
      if (testsIssueRow(f)) return (await pipelineCounts(pipelineId, f)).issues
      const row = await db.selectFrom('placements as p').where('p.pipeline_id', '=', pipelineId).where('p.is_open', '=', 1)
        .where((eb) => filtered(eb as unknown as IssueEb, f, COUNTED_ON_PLACEMENTS)).select(sql<number>`count(*)`.as('n')).executeTakeFirst()
      return Number(row?.n ?? 0)
    },

    /** pipelineCount of several pipelines with one filter: one grouped statement when it tests nothing of the issue's own row. */
    async pipelineCountsOf (pipelineIds: readonly string[], f: IssueFilter): Promise<Map<string, number>> {
      if (pipelineIds.length === 0) return new Map()
      if (testsIssueRow(f)) return new Map(await Promise.all(pipelineIds.map(async (id) => [id, (await pipelineCounts(id, f)).issues] as const)))
      const rows = await db.selectFrom('placements as p').where('p.pipeline_id', 'in', [...pipelineIds]).where('p.is_open', '=', 1)
        .where((eb) => filtered(eb as unknown as IssueEb, f, COUNTED_ON_PLACEMENTS))
        .select(['p.pipeline_id', sql<number>`count(*)`.as('n')]).groupBy('p.pipeline_id').execute()
      const counted = new Map(rows.map((r) => [r.pipeline_id, Number(r.n)]))
      return new Map(pipelineIds.map((id) => [id, counted.get(id) ?? 0]))
    },

    /** Closed issues of a workspace's repositories, most recently closed first. */
    async closedPage (workspaceId: string, f: IssueFilter, page: PageAsked): Promise<IssuePage> {
      let q = closedIn(workspaceId, f).select([...ISSUE_COLUMNS, closedAt.as('k')])
      if (page.after !== undefined) { const a = page.after; q = q.where((eb) => eb.or([eb(closedAt, '<', String(a.k)), eb.and([eb(closedAt, '=', String(a.k)), eb('i.id', '<', a.id)])])) }
      if (page.before !== undefined) { const b = page.before; q = q.where((eb) => eb.or([eb(closedAt, '>', String(b.k)), eb.and([eb(closedAt, '=', String(b.k)), eb('i.id', '>', b.id)])])) }
      const dir = page.fromEnd ? 'asc' : 'desc'
      const rows = await q.orderBy(closedAt, dir).orderBy('i.id', dir).limit(page.limit + 1).execute()
      const hasMore = rows.length > page.limit
      const kept = rows.slice(0, page.limit).map((r) => ({ ...toIssue(r), key: { k: String(r.k), id: Number(r.id) } }))
      return { rows: page.fromEnd ? kept.reverse() : kept, hasMore }
    },
    /** Issues of a sprint, by id. */
    async sprintPage (sprintId: string, f: IssueFilter, page: PageAsked): Promise<IssuePage> {
      let q = inSprint(sprintId, f).select(ISSUE_COLUMNS)
      if (page.after !== undefined) q = q.where('i.id', '>', page.after.id)
      if (page.before !== undefined) q = q.where('i.id', '<', page.before.id)
      const rows = await q.orderBy('i.id', page.fromEnd ? 'desc' : 'asc').limit(page.limit + 1).execute()
      const kept = rows.slice(0, page.limit).map((r) => ({ ...toIssue(r), key: { k: 0, id: Number(r.id) } }))
      return { rows: page.fromEnd ? kept.reverse() : kept, hasMore: rows.length > page.limit }
    },
    /** Issues of repositories, newest first (by id), or in `order` (then by id the same way). */
    async issuesPage (f: IssueFilter, scope: IssueScope, page: PageAsked, order?: IssueOrder): Promise<IssuePage> {
      if (order !== undefined) return await orderedPage(inRepos(f, scope), page, order)
      let q = inRepos(f, scope).select(ISSUE_COLUMNS)
      if (page.after !== undefined) q = q.where('i.id', '<', page.after.id)
      if (page.before !== undefined) q = q.where('i.id', '>', page.before.id)
      const rows = await q.orderBy('i.id', page.fromEnd ? 'asc' : 'desc').limit(page.limit + 1).execute()
      const kept = rows.slice(0, page.limit).map((r) => ({ ...toIssue(r), key: { k: 0, id: Number(r.id) } }))
      return { rows: page.fromEnd ? kept.reverse() : kept, hasMore: rows.length > page.limit }
    },
    issuesCounts: async (f: IssueFilter, scope: IssueScope) => await counts(() => inRepos(f, scope) as unknown as ReturnType<typeof openInPipeline>),
    /** Epics (issues that are epics) of the repositories, by id. */
    async epicsIn (repoIds: readonly number[]): Promise<IssueNode[]> {
      if (repoIds.length === 0) return []
      return (await db.selectFrom('issues as i').select(ISSUE_COLUMNS).where('i.repo_id', 'in', [...repoIds]).where('i.is_epic', '=', 1).orderBy('i.id').execute()).map(toIssue)
    },
    /** The repositories' labels (in use on their issues, or made here), one row per repository and name, by name. */
    async labelsIn (repoIds: readonly number[]): Promise<LabelNode[]> {
      if (repoIds.length === 0) return []
      const [worn, made] = await Promise.all([
        db.selectFrom('issue_labels as l').innerJoin('issues as i', 'i.id', 'l.issue_id')
          .select(['i.repo_id', 'l.name', sql<string | null>`max(l.color)`.as('color')]).where('i.repo_id', 'in', [...repoIds])
          .groupBy(['i.repo_id', 'l.name']).execute(),
        db.selectFrom('repository_labels').select(['repo_id', 'name', 'color', 'description']).where('repo_id', 'in', [...repoIds]).execute()
      ])
      const out = new Map<string, LabelNode>()
      for (const r of made) out.set(`${r.repo_id}:${r.name}`, { ...r, repo_id: Number(r.repo_id) })
      for (const r of worn) {
        const key = `${r.repo_id}:${r.name}`
        const mine = out.get(key)
        out.set(key, { repo_id: Number(r.repo_id), name: r.name, color: r.color ?? mine?.color ?? null, description: mine?.description ?? null })
      }
      return [...out.values()].sort((a, b) => a.name < b.name ? -1 : a.name > b.name ? 1 : a.repo_id - b.repo_id)
    },
    /** The organization's labels (the hosted service's ZenhubLabel), by name. */
    async organizationLabels () {
      return await db.selectFrom('zenhub_labels').select(['name', 'color', 'description']).orderBy('name').execute()
    },
    /** Users holding a permission (at least `level`) on the repositories, one row per repository and user. */
    async usersOn (repoIds: readonly number[], level: number) {
      if (repoIds.length === 0) return []
      return (await db.selectFrom('permissions as p').innerJoin('users as u', 'u.id', 'p.user_id')
        .select(['p.repo_id', 'u.id', 'u.login', 'u.created_at']).where('p.repo_id', 'in', [...repoIds]).where('p.level', '>=', level)
        .orderBy('u.login').execute()).map((r) => ({ ...r, repo_id: Number(r.repo_id), id: Number(r.id) }))
    },
    /** Logins assigned to issues of the repositories, one row per repository and login. */
    async assigneesIn (repoIds: readonly number[]) {
      if (repoIds.length === 0) return []
      return (await db.selectFrom('issue_assignees as a').innerJoin('issues as i', 'i.id', 'a.issue_id')
        .select(['i.repo_id', 'a.login', sql<string | null>`max(a.avatar_url)`.as('avatar_url')]).where('i.repo_id', 'in', [...repoIds])
        .groupBy(['i.repo_id', 'a.login']).orderBy('a.login').execute()).map((r) => ({ ...r, repo_id: Number(r.repo_id) }))
    },
    async milestonesIn (repoIds: readonly number[]) {
      if (repoIds.length === 0) return []
      return (await db.selectFrom('milestones').select(['repo_id', 'number', 'title', 'description', 'state', 'due_on', 'start_date'])
        .where('repo_id', 'in', [...repoIds]).orderBy('repo_id').orderBy('number').execute()).map((r) => ({ ...r, repo_id: Number(r.repo_id), number: Number(r.number) }))
    },
    /** The release reports holding the issues. */
    async releasesOf (ids: readonly number[]) {
      if (ids.length === 0) return []
      return (await db.selectFrom('release_report_issues as ri').innerJoin('release_reports as r', 'r.id', 'ri.release_id')
        .select(['ri.issue_id', 'r.id', 'r.title', 'r.description', 'r.start_date', 'r.desired_end_date', 'r.created_at', 'r.closed_at', 'r.state'])
        .where('ri.issue_id', 'in', [...ids]).orderBy('r.created_at').orderBy('r.seq').execute()).map((r) => ({ ...r, issue_id: Number(r.issue_id) }))
    },
    /** When each issue joined each of the sprints. */
    async sprintMembership (sprintIds: readonly string[], issueIds: readonly number[]) {
      if (sprintIds.length === 0 || issueIds.length === 0) return []
      return (await db.selectFrom('sprint_issues').select(['sprint_id', 'issue_id', 'added_at']).where('sprint_id', 'in', [...sprintIds]).where('issue_id', 'in', [...issueIds]).execute())
        .map((r) => ({ ...r, issue_id: Number(r.issue_id) }))
    },
    sprintCounts: async (sprintId: string, f: IssueFilter) => await counts(() => inSprint(sprintId, f) as unknown as ReturnType<typeof openInPipeline>),
    closedCounts: async (workspaceId: string, f: IssueFilter) => await counts(() => closedIn(workspaceId, f) as unknown as ReturnType<typeof openInPipeline>),

    async issuesByIds (ids: readonly number[]): Promise<IssueNode[]> {
      if (ids.length === 0) return []
      return (await db.selectFrom('issues as i').select(ISSUE_COLUMNS).where('i.id', 'in', [...ids]).execute()).map(toIssue)
    },
    async issueByNumber (repoId: number, number: number): Promise<IssueNode | undefined> {
      const row = await db.selectFrom('issues as i').select(ISSUE_COLUMNS).where('i.repo_id', '=', repoId).where('i.number', '=', number).executeTakeFirst()
      return row === undefined ? undefined : toIssue(row)
    },
    /** Issues by repository and number, one statement per repository named. */
    async issuesByNumbers (repoId: number, numbers: readonly number[]): Promise<IssueNode[]> {
      if (numbers.length === 0) return []
      return (await db.selectFrom('issues as i').select(ISSUE_COLUMNS).where('i.repo_id', '=', repoId).where('i.number', 'in', [...new Set(numbers)]).execute()).map(toIssue)
    },
    async labelsOf (ids: readonly number[]) {
      if (ids.length === 0) return []
      return await db.selectFrom('issue_labels').select(['issue_id', 'name', 'color']).where('issue_id', 'in', [...ids]).orderBy('issue_id').orderBy('name').execute()
    },
    async assigneesOf (ids: readonly number[]) {
      if (ids.length === 0) return []
      return await db.selectFrom('issue_assignees').select(['issue_id', 'login', 'avatar_url']).where('issue_id', 'in', [...ids]).orderBy('issue_id').orderBy('login').execute()
    },
    /** The issues' placements in one workspace. */
    async placementsIn (workspaceId: string, ids: readonly number[]): Promise<PlacementNode[]> {
      if (ids.length === 0) return []
      return (await db.selectFrom('placements').select(['issue_id', 'workspace_id', 'pipeline_id', 'rank'])
        .where('workspace_id', '=', workspaceId).where('issue_id', 'in', [...ids]).execute())
        .map((r) => ({ ...r, issue_id: Number(r.issue_id), rank: Number(r.rank) }))
    },
    async placementsOf (ids: readonly number[]): Promise<PlacementNode[]> {
      if (ids.length === 0) return []
      return (await db.selectFrom('placements as p').innerJoin('workspaces as w', 'w.id', 'p.workspace_id')
        .select(['p.issue_id', 'p.workspace_id', 'p.pipeline_id', 'p.rank']).where('p.issue_id', 'in', [...ids])
        .orderBy('w.created_at').orderBy('w.seq').execute()).map((r) => ({ ...r, issue_id: Number(r.issue_id), rank: Number(r.rank) }))
    },
    async pipelinesByIds (ids: readonly string[]): Promise<PipelineNode[]> {
      if (ids.length === 0) return []
      return (await pipelineRows().where('p.id', 'in', [...ids]).execute()).map(toPipeline)
    },
    /** A pipeline and its workspace's repositories (by id), in one statement. */
    async pipelineWithRepositories (id: string): Promise<{ pipeline: PipelineNode, repoIds: number[] } | undefined> {
      const rows = await pipelineRows().leftJoin('workspace_repositories as wr', 'wr.workspace_id', 'p.workspace_id')
        .select('wr.repo_id').where('p.id', '=', id).orderBy('wr.repo_id').execute()
      if (rows.length === 0) return undefined
      const { repo_id: _, ...pipeline } = rows[0]
      return { pipeline: toPipeline(pipeline), repoIds: rows.flatMap((r) => r.repo_id === null ? [] : [Number(r.repo_id)]) }
    },
    async pipelinesOf (workspaceIds: readonly string[]): Promise<PipelineNode[]> {
      if (workspaceIds.length === 0) return []
      return (await pipelineRows().where('p.workspace_id', 'in', [...workspaceIds]).orderBy('p.sort_order').orderBy('p.id').execute()).map(toPipeline)
    },
    async workspacesByIds (ids: readonly string[]): Promise<WorkspaceNode[]> {
      if (ids.length === 0) return []
      return await db.selectFrom('workspaces').select(['id', 'name', 'description', 'created_at']).where('id', 'in', [...ids]).execute()
    },
    /** Workspaces holding any of the repositories, oldest first. */
    async workspacesHolding (repoIds: readonly number[]): Promise<WorkspaceNode[]> {
      if (repoIds.length === 0) return []
      return await db.selectFrom('workspaces as w').select(['w.id', 'w.name', 'w.description', 'w.created_at'])
        .where('w.id', 'in', (eb) => eb.selectFrom('workspace_repositories').select('workspace_id').where('repo_id', 'in', [...repoIds]))
        .orderBy('w.created_at').orderBy('w.seq').execute()
    },
    /** The oldest workspace holding each of the repositories (none: left out). */
    async firstWorkspacesOf (repoIds: readonly number[]): Promise<Map<number, string>> {
      if (repoIds.length === 0) return new Map()
      const rows = await db.selectFrom('workspace_repositories as wr').innerJoin('workspaces as w', 'w.id', 'wr.workspace_id')
        .select(['wr.repo_id', 'w.id']).where('wr.repo_id', 'in', [...repoIds]).orderBy('w.created_at', 'desc').orderBy('w.seq', 'desc').execute()
      return new Map(rows.map((r) => [Number(r.repo_id), r.id]))
    },
    async repositoriesOf (workspaceIds: readonly string[]): Promise<Array<{ workspace_id: string, repo_id: number }>> {
      if (workspaceIds.length === 0) return []
      return (await db.selectFrom('workspace_repositories').select(['workspace_id', 'repo_id']).where('workspace_id', 'in', [...workspaceIds]).orderBy('repo_id').execute())
        .map((r) => ({ ...r, repo_id: Number(r.repo_id) }))
    },
    async repositoriesByIds (ids: readonly number[]): Promise<RepositoryNode[]> {
      if (ids.length === 0) return []
      // A row an older instance made after 029 ran has no time: its oldest issue's, else the host's last change.
      const made = sql<string | null>`coalesce(r.created_at, (SELECT min(i.created_at) FROM issues i WHERE i.repo_id = r.id), r.host_updated_at)`
      return (await db.selectFrom('repositories as r')
        .select(['r.id', 'r.owner', 'r.name', 'r.html_url', made.as('created_at'), 'r.host_updated_at', 'r.is_private', 'r.is_archived', 'r.owner_platform_id', 'r.owner_kind'])
        .where('r.id', 'in', [...ids]).execute())
        .map((r) => ({
          ...r,
          id: Number(r.id),
          is_private: Number(r.is_private),
          is_archived: Number(r.is_archived),
          owner_platform_id: r.owner_platform_id === null ? null : Number(r.owner_platform_id)
        }))
    },
    async milestonesOf (keys: ReadonlyArray<{ repo_id: number, number: number }>) {
      if (keys.length === 0) return []
      const rows = await db.selectFrom('milestones').select(['repo_id', 'number', 'title', 'description', 'state', 'due_on', 'start_date'])
        .where('repo_id', 'in', [...new Set(keys.map((k) => k.repo_id))]).where('number', 'in', [...new Set(keys.map((k) => k.number))]).execute()
      return rows.map((r) => ({ ...r, repo_id: Number(r.repo_id), number: Number(r.number) }))
    },
    /** Dependencies touching the issues, oldest first. */
    async dependenciesOf (ids: readonly number[]) {
      if (ids.length === 0) return []
      return (await db.selectFrom('dependencies').select(['blocking_id', 'blocked_id'])
        .where((eb) => eb.or([eb('blocking_id', 'in', [...ids]), eb('blocked_id', 'in', [...ids])])).orderBy('seq').execute())
        .map((r) => ({ blocking_id: Number(r.blocking_id), blocked_id: Number(r.blocked_id) }))
    },
    async sprintIdsOf (ids: readonly number[]) {
      if (ids.length === 0) return []
      return (await db.selectFrom('sprint_issues as si').innerJoin('sprints as s', 's.id', 'si.sprint_id')
        .select(['si.issue_id', 'si.sprint_id', 'si.workspace_id']).where('si.issue_id', 'in', [...ids]).orderBy('s.starts_at').execute())
        .map((r) => ({ ...r, issue_id: Number(r.issue_id) }))
    },
    /** The issues of the epics, by id. */
    async childrenOf (epicIds: readonly number[]): Promise<Array<IssueNode & { epic_id: number }>> {
      if (epicIds.length === 0) return []
      return (await db.selectFrom('epic_issues as e').innerJoin('issues as i', 'i.id', 'e.issue_id').select([...ISSUE_COLUMNS, 'e.epic_id'])
        .where('e.epic_id', 'in', [...epicIds]).orderBy('i.id').execute()).map((r) => ({ ...toIssue(r), epic_id: Number(r.epic_id) }))
    },
    async epicsOf (ids: readonly number[]) {
      if (ids.length === 0) return []
      return (await db.selectFrom('epic_issues').select(['epic_id', 'issue_id']).where('issue_id', 'in', [...ids]).orderBy('epic_id').execute())
        .map((r) => ({ epic_id: Number(r.epic_id), issue_id: Number(r.issue_id) }))
    },
    /** Descriptions, read only when a query asks for them (never with the issues' other columns). */
    async bodiesOf (ids: readonly number[]) {
      if (ids.length === 0) return []
      return await db.selectFrom('issues').select(['id', 'body']).where('id', 'in', [...ids]).where('body', 'is not', null).execute()
    },
    async closedAtOf (ids: readonly number[]) {
      if (ids.length === 0) return []
      return await db.selectFrom('issue_states').select(['issue_id', sql<string>`max(at)`.as('at')]).where('issue_id', 'in', [...ids]).where('state', '=', 'closed').groupBy('issue_id').execute()
    },
    async sprintRowsByIds (ids: readonly string[]) {
      if (ids.length === 0) return []
      return await db.selectFrom('sprints').select(['id', 'workspace_id']).where('id', 'in', [...ids]).execute()
    },
    /** Whether an issue of the repositories has an estimate. */
    async anyEstimated (repoIds: readonly number[]): Promise<boolean> {
      if (repoIds.length === 0) return false
      return await db.selectFrom('issues').select('id').where('repo_id', 'in', [...repoIds]).where('estimate', 'is not', null).limit(1).executeTakeFirst() !== undefined
    },
    /** Users of this server behind issue-host logins: linked through a host identity, or of the same login. */
    async usersBehind (logins: readonly string[]) {
      if (logins.length === 0) return []
      const [linked, named] = await Promise.all([
        db.selectFrom('host_identities as h').innerJoin('users as u', 'u.id', 'h.user_id')
          .select(['h.login as behind', 'u.id', 'u.login', 'u.created_at']).where('h.login', 'in', [...logins]).orderBy('h.created_at').execute(),
        db.selectFrom('users').select(['login as behind', 'id', 'login', 'created_at']).where('login', 'in', [...logins]).execute()
      ])
      const row = (linkedHere: boolean) => (r: { behind: string | null, id: number, login: string, created_at: string }) =>
        ({ behind: r.behind ?? '', linked: linkedHere, id: Number(r.id), login: r.login, created_at: r.created_at })
      return [...linked.map(row(true)), ...named.map(row(false))]
    },
    /** Repositories by their owner: its login (any case) or its id on the issue host. */
    async ownedBy (owner: { login: string } | { platformId: number }) {
      let q = db.selectFrom('repositories').select(['id', 'owner', 'owner_platform_id', 'owner_kind'])
      q = 'login' in owner ? q.where(sql<string>`lower(owner)`, '=', owner.login.toLowerCase()) : q.where('owner_platform_id', '=', owner.platformId)
      return (await q.orderBy('id').execute()).map((r) => ({ ...r, id: Number(r.id), owner_platform_id: r.owner_platform_id === null ? null : Number(r.owner_platform_id) }))
    },
    async usersByIds (ids: readonly number[]) {
      if (ids.length === 0) return []
      return (await db.selectFrom('users').select(['id', 'login', 'email', 'created_at']).where('id', 'in', [...ids]).execute()).map((r) => ({ ...r, id: Number(r.id) }))
    },
    /**
     * Each pipeline's issue-host label, and whether it is written anywhere: its workspace holds a
     * repository bound to a connection with a token (the outbox's condition, db/issue-host/host-writes.ts).
     */
    async sprintIssuesClosedAfter (sprintId: string, at: string): Promise<IssueNode[]> {
      return (await db.selectFrom('sprint_issues as si').innerJoin('issues as i', 'i.id', 'si.issue_id')
        .innerJoin(db.selectFrom('issue_states').select(['issue_id', sql<string>`max(at)`.as('closed_at')]).where('state', '=', 'closed').groupBy('issue_id').as('c'), 'c.issue_id', 'i.id')
        .select(ISSUE_COLUMNS).where('si.sprint_id', '=', sprintId).where('i.state', '=', 'closed').where('c.closed_at', '>', at)
        .orderBy('c.closed_at').orderBy('i.id').execute()).map(toIssue)
    },
    /** Pipelines' host labels, and whether one of `readable` in their workspace writes labels back. */
    async pipelineLabelsOf (ids: readonly string[], readable: readonly number[]) {
      if (ids.length === 0) return []
      return (await db.selectFrom('pipelines as p').innerJoin('workspaces as w', 'w.id', 'p.workspace_id')
        .select(['p.id', 'p.host_label', 'w.created_at'])
        .select((eb) => eb.exists(eb.selectFrom('workspace_repositories as wr').innerJoin('repositories as r', 'r.id', 'wr.repo_id')
          .innerJoin('connections as c', 'c.id', 'r.connection_id').select('wr.repo_id')
          .whereRef('wr.workspace_id', '=', 'p.workspace_id').where('c.token', 'is not', null)
          .where('wr.repo_id', 'in', readable.length === 0 ? [-1] : [...readable])).as('writes_back'))
        .where('p.id', 'in', [...ids]).execute()).map((r) => ({ ...r, writes_back: Boolean(r.writes_back) }))
    }
  }
}

export type GraphReads = ReturnType<typeof createGraphReads>
