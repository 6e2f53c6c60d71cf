/// <reference lib="dom" />
// The page's state in one place, and every change to it: components read `store.state` and call
// the actions; each change is one `set`, and subscribers (the page) draw again.
import { ApiError, type Client } from './api.js'
import {
  cardOf, emptyFilter, filterFromQuery, filterToQuery, keyOf, mergeColumns, noRelations, placeIn, repoIndex, serverFilterQuery,
  type BulkIssue, type Card, type Filter, type Pipeline, type Relations, type Repo, type RepoBoard, type Workspace
} from './model.js'
import { nameRepos } from './names.js'

export interface Drag { key: string, pipeline: string | null, slot: number }
export interface State {
  token: string | null
  /** signed in by the browser session's cookie (docs/sign-in.md#sessions) rather than a token */
  viaSession: boolean
  /** the sign-in buttons the server offers (`GET /auth/providers`) */
  providers: Provider[]
  /** `checking`: on load, asking whether the browser has a session */
  phase: 'checking' | 'signed-out' | 'loading' | 'ready'
  status: { text: string, error: boolean }
  workspaces: Workspace[]
  choice: { workspace: string, repo: number | null } | null
  repos: Map<number, Repo>
  pipelines: Pipeline[]
  columns: Record<string, string[]>
  cards: Map<string, Card>
  relations: Relations
  /** keys of the epics among the board's issues */
  epics: string[]
  /** `total`: how many closed issues the board's repositories hold (counted while the column is collapsed), null until read */
  /** `counting`: the collapsed column's count is being read (after the first rows), or will be */
  closed: { keys: string[], next: Map<number, number | null>, loaded: boolean, loading: boolean, total: number | null, counting?: boolean }
  filter: Filter
  collapsed: Set<string>
  view: View
  /** the burndown the Reports view shows: `sprint:<id>`, `milestone:<repo>:<number>` or `release:<id>`; '' for the default */
  burndown: string
  panel: string | null
  focus: string | null
  help: boolean
  drag: Drag | null
  editing: string | null
  /** the workspace's sprints, for the sprint filter */
  sprints: Sprint[]
  /** keys of the issues of the sprint the filter names; null while they are read */
  sprintIssues: Set<string> | null
  /** the pipeline whose "New issue" form is open */
  creating: string | null
  /** counts refreshes that brought other columns (changes made elsewhere): their cards glide into place */
  arrived: number
  /** who is signed in (`GET /account`); `administrator` opens the Administration view */
  account: Account | null
}
export interface Account {
  login: string
  administrator: boolean
  /** each readable repository's level (1 read, 2 write, 3 admin) and the credential's scope; absent: not known (GET /account) */
  levels?: Map<number, number>
  scope?: 'read' | 'write'
}

const LEVEL = { read: 1, write: 2, admin: 3 } as const

/**
 * Whether the person may change the repository's issues (`write`, or `admin` with `level` 3), as
 * `GET /account` says; while that is not known the controls stay (the server decides).
 */
export function mayChange (account: Account | null, repoId: number, level = 2): boolean {
  if (account === null || account.levels === undefined) return true
  return account.scope !== 'read' && (account.levels.get(repoId) ?? 0) >= level
}
export interface Provider { id: string, name: string, login_url: string }
export interface Sprint { id: string, name: string, state: 'active' | 'future' | 'closed', starts_at: string, ends_at: string }
export interface NewIssue { title: string, body?: string, labels?: string[], assignees?: string[], estimate?: number }

export type View = 'board' | 'epics' | 'reports' | 'settings' | 'admin' | 'account'
const VIEWS: View[] = ['board', 'epics', 'reports', 'settings', 'admin', 'account']
export const CLOSED = 'closed'
export const POLL_MS = 3000
/** While the live stream is open the server says when to read again; this slow look is only a safety net. */
export const LIVE_POLL_MS = 60_000
const TOKEN_KEY = 'planning-token'
const BOARD_KEY = 'planning-board'
const COLLAPSED_KEY = 'planning-collapsed'
const CHUNK = 100
/** Rows per column read first on a large board: more than a screen holds. */
const FIRST_ROWS = 40
/**
 * Rows per repository read first when a column interleaves `repos` repositories: a screen's worth
 * in all (10 repositories: 4 each, one title read each rather than a column of 400 to name).
 */
export const firstRowsOf = (repos: number): number => Math.max(4, Math.ceil(FIRST_ROWS / Math.max(1, repos)))

/** The live stream's events (read with fetch in the page, so the token goes in a header, never in an address). */
export interface LiveHandlers { open: () => void, change: () => void, lost: () => void }
export type OpenLive = (url: string, on: LiveHandlers) => { close: () => void }

interface Storage { getItem: (key: string) => string | null, setItem: (key: string, value: string) => void, removeItem: (key: string) => void }
export interface StoreOptions {
  client: Client
  session: Storage
  local: Storage
  location: { search: string, pathname: string }
  replaceUrl: (url: string) => void
  /** the live stream; without it the page polls every POLL_MS */
  openLive?: OpenLive
  /** the first wait before a sign-in's first read is tried again (doubled each time, at most 30 s); tests pass their own */
  retryMs?: number
  /** how long a sign-in's first read may take before it counts as failed */
  signInTimeoutMs?: number
}

export type Store = ReturnType<typeof createStore>

export function createStore ({ client, session, local, location, replaceUrl, openLive, retryMs = 1000, signInTimeoutMs = 15_000 }: StoreOptions) {
  const listeners = new Set<() => void>()
  const params = new URLSearchParams(location.search)
  const state: State = {
    token: session.getItem(TOKEN_KEY),
    viaSession: false,
    providers: [],
    phase: 'signed-out',
    status: { text: '', error: false },
    workspaces: [],
    choice: null,
    repos: new Map(),
    pipelines: [],
    columns: {},
    cards: new Map(),
    relations: noRelations(),
    epics: [],
    closed: { keys: [], next: new Map(), loaded: false, loading: false, total: null },
    filter: filterFromQuery(params),
    collapsed: new Set(),
    view: VIEWS.find((v) => v === params.get('view')) ?? 'board',
    burndown: /^(sprint:[0-9a-f]{1,40}|milestone:\d{1,15}:\d{1,15}|release:[0-9a-f]{1,40})$/.test(params.get('burndown') ?? '') ? params.get('burndown')! : '',
    panel: null,
    focus: null,
    help: false,
    drag: null,
    editing: null,
    creating: null,
    sprints: [],
    sprintIssues: null,
    arrived: 0,
    account: null
  }
  // Tags of the last answers: unchanged boards and titles cost a 304.
  const etags = new Map<string, string>()
  let timer: ReturnType<typeof setTimeout> | undefined
  let generation = 0
  let live: { close: () => void } | undefined
  let liveOpen = false

  /** Follows the workspace's live stream: a change reads the board again at once, and polling rests. */
  function follow (workspace: string | null) {
    live?.close()
    live = undefined
    liveOpen = false
    if (workspace === null || openLive === undefined) return
    const mine = generation
    // A stream being opened counts as open: its first look on the server can take longer than a
    // poll's wait, and a poll then would read every title again for nothing. Lost, polling resumes.
    liveOpen = true
    live = openLive(client.href(`/p2/workspaces/${encodeURIComponent(workspace)}/live`), {
      open: () => { liveOpen = true },
      change: () => { if (mine === generation && state.drag === null) refresh() },
      lost: () => {
        liveOpen = false
        if (mine === generation) poll()
      }
    })
    poll()
  }

  function set (patch: Partial<State>) {
    Object.assign(state, patch)
    for (const listener of listeners) listener()
  }
  const say = (text: string, error = false) => set({ status: { text, error } })

  function writeUrl () {
    const query = filterToQuery(state.filter, new URLSearchParams(location.search))
    if (state.choice !== null) query.set('board', state.choice.repo === null ? state.choice.workspace : `${state.choice.workspace}/${state.choice.repo}`)
    if (state.view === 'board') query.delete('view'); else query.set('view', state.view)
    if (state.view === 'reports' && state.burndown !== '') query.set('burndown', state.burndown); else query.delete('burndown')
    const text = query.toString()
    replaceUrl(`${location.pathname}${text === '' ? '' : `?${text}`}`)
  }

  function failed (err: unknown, what: string) {
    if (err instanceof ApiError && err.status === 401) {
      signOut(`Signed out: ${err.message}`, false).catch(() => {})
      return
    }
    say(`${what}: ${err instanceof Error ? err.message : String(err)}`, true)
  }

  const repoIds = (): number[] => {
    const workspace = state.workspaces.find((w) => w.id === state.choice?.workspace)
    if (workspace === undefined) return []
    return state.choice?.repo == null ? workspace.repositories : workspace.repositories.filter((id) => id === state.choice!.repo)
  }

  /**
   * On load: the token this tab kept, else the browser's session if it has one (asked of
   * `GET /auth/session`, which answers 200 signed in or not), else the sign-in form and its buttons.
   */
  async function start () {
    providers().catch(() => {})
    if (state.token !== null) return await signIn(state.token)
    set({ phase: 'checking' })
    let probe: { signed_in?: boolean }
    try {
      probe = await client.get<{ signed_in?: boolean }>('/auth/session')
    } catch (err) {
      if (state.phase !== 'checking') return
      set({ phase: 'signed-out' })
      say(`Could not ask the server whether you are signed in: ${(err as Error).message}`, true)
      return
    }
    if (state.phase !== 'checking') return
    if (probe.signed_in === true) await signIn(null)
    else set({ phase: 'signed-out' })
  }

  /** Who is signed in, and whether an administrator (the Administration view's link). */
  async function account () {
    const me = await client.get<{
      login: string, administrator?: boolean, permissions?: Array<{ repo_id: number, permission: keyof typeof LEVEL }>, signed_in_with?: { scope?: 'read' | 'write' }
    }>('/account')
    const levels = Array.isArray(me.permissions) ? new Map(me.permissions.map((p) => [p.repo_id, LEVEL[p.permission] ?? 0])) : undefined
    set({ account: { login: me.login, administrator: me.administrator === true, ...(levels === undefined ? {} : { levels, scope: me.signed_in_with?.scope ?? 'write' }) } })
  }

  async function providers () {
    const answer = await client.get<{ providers?: Provider[] }>('/auth/providers')
    set({ providers: Array.isArray(answer.providers) ? answer.providers : [] })
  }

  /** The first read of a sign-in, or a failure after `signInTimeoutMs`. */
  const firstRead = async (): Promise<Workspace[]> => {
    let timeout: ReturnType<typeof setTimeout> | undefined
    const late = new Promise<never>((_resolve, reject) => {
      timeout = setTimeout(() => reject(new Error(`no answer in ${signInTimeoutMs < 1000 ? `${signInTimeoutMs} ms` : `${Math.round(signInTimeoutMs / 1000)} s`}`)), signInTimeoutMs)
    })
    try {
      return await Promise.race([client.get<Workspace[]>('/p2/workspaces'), late])
    } finally {
      clearTimeout(timeout)
    }
  }
  let signInRun = 0
  let retryTimer: ReturnType<typeof setTimeout> | undefined

  /**
   * Signs in with a token, or with the browser's session when `token` is null. Only a 401 ends the
   * sign-in: any other failure of the first read (an aborted read, a 503 while the database restarts,
   * no answer) keeps the token, says so and tries again after 1, 2, 4 … (at most 30) seconds.
   */
  async function signIn (token: string | null, attempt = 0) {
    clearTimeout(retryTimer)
    const run = ++signInRun
    set({ token, viaSession: token === null, phase: 'loading' })
    if (attempt === 0) say('Signing in…')
    let workspaces: Workspace[]
    try {
      workspaces = await firstRead()
    } catch (err) {
      if (run !== signInRun) return
      if (err instanceof ApiError && err.status === 401) {
        session.removeItem(TOKEN_KEY)
        set({ token: null, viaSession: false, phase: 'signed-out' })
        say(`${token === null ? 'The sign-in has ended' : 'That token was refused'}: ${err.message}`, true)
        return
      }
      if (token !== null) session.setItem(TOKEN_KEY, token)
      const wait = Math.min(30_000, retryMs * 2 ** attempt)
      say(`Could not reach the server (${(err as Error).message}). Still signed in; trying again in ${Math.max(1, Math.round(wait / 1000))} s.`, true)
      retryTimer = setTimeout(() => { if (run === signInRun) signIn(token, attempt + 1).catch(() => {}) }, wait)
      return
    }
    if (run !== signInRun) return
    if (token !== null) session.setItem(TOKEN_KEY, token)
    account().catch(() => {})
    const collapsed = local.getItem(COLLAPSED_KEY)
    set({ workspaces, collapsed: new Set(collapsed === null ? [CLOSED] : JSON.parse(collapsed) as string[]) })
    if (workspaces.length === 0) {
      set({ phase: 'ready' })
      say(`${token === null ? 'You' : 'This token'} can read no repository that is on a board. Ask an administrator for access, or sign in with another token.`, true)
      return
    }
    const asked = new URLSearchParams(location.search).get('board')
    const wanted = asked ?? session.getItem(BOARD_KEY) ?? ''
    const known = workspaces.some((w) => w.id === wanted.split('/')[0])
    if (asked !== null && !known) {
      // An address naming a board that is not there (or not readable) says so instead of showing another.
      set({ phase: 'ready', choice: null })
      say(`There is no board "${asked}" here, or you cannot read it. Choose a board above.`, true)
      await Promise.all(workspaces.map(async (w) => await names(w.id)))
      return
    }
    await Promise.all([choose(known ? wanted : workspaces[0].id), ...workspaces.filter((w) => w.id !== wanted.split('/')[0]).map(async (w) => await names(w.id))])
  }

  /** Signs in with a login and password (`POST /auth/password` sets the session cookie); a refusal is thrown for the form to show. */
  async function passwordSignIn (login: string, password: string) {
    await client.send('POST', '/auth/password', { login, password })
    await signIn(null)
  }

  /** Back to the sign-in form; a browser session is ended at the server too (`POST /auth/logout`) unless it already has. */
  async function signOut (message = 'Signed out.', endSession = true) {
    clearTimeout(timer)
    clearTimeout(retryTimer)
    signInRun++
    generation++
    follow(null)
    const wasSession = state.viaSession
    session.removeItem(TOKEN_KEY)
    set({ token: null, viaSession: false, phase: 'signed-out', choice: null, panel: null, cards: new Map(), columns: {}, account: null })
    say(message, message !== 'Signed out.')
    if (!wasSession || !endSession) return
    try {
      await client.send('POST', '/auth/logout', undefined)
    } catch (err) {
      say(`Could not end the session: ${(err as Error).message}`, true)
    }
  }

  async function choose (value: string) {
    const [workspace, repo] = value.split('/')
    clearTimeout(timer)
    generation++
    etags.clear()
    session.setItem(BOARD_KEY, value)
    const ws = state.workspaces.find((w) => w.id === workspace)
    set({
      choice: { workspace, repo: repo === undefined ? null : Number(repo) },
      phase: 'loading',
      pipelines: ws?.pipelines ?? [],
      columns: {},
      cards: new Map(),
      relations: noRelations(),
      epics: [],
      closed: { keys: [], next: new Map(), loaded: false, loading: false, total: null, counting: state.collapsed.has(CLOSED) },
      panel: null,
      sprints: []
    })
    writeUrl()
    say('Loading the board…')
    follow(null)
    const mine = generation
    // The Closed column's reads and the sprints once the first rows are read, not alongside them:
    // on a board of thousands those dozen reads shared the server and the browser's six connections
    // with the first rows' (the first thing the person waits for) and need not come before them.
    let rest: Promise<unknown> | undefined
    const later = () => {
      if (rest === undefined && mine === generation) rest = Promise.all([state.collapsed.has(CLOSED) ? countClosed() : loadClosed(), sprints(workspace)])
    }
    await Promise.all([names(workspace), refresh(true, later)])
    later()
    await rest
    // After the board's first read, not before it: the stream's first look reads the same boards and
    // titles on the server, which on a board of 50,000 issues held the first rows back for seconds;
    // after the page's own read it finds them kept. Until then the page polls.
    if (mine === generation) follow(workspace)
  }

  /** The workspace's sprints (none before a sprint configuration), and the issues of the one the filter names. */
  async function sprints (workspace: string) {
    try {
      const list = await client.get<Sprint[]>(`/p2/workspaces/${workspace}/sprints`)
      if (state.choice?.workspace === workspace) set({ sprints: list })
    } catch (err) {
      failed(err, 'Could not read the sprints')
    }
    await sprintIssues()
  }
  async function sprintIssues () {
    const id = state.filter.sprint
    if (id === '') return
    try {
      const { issues } = await client.get<{ issues: Array<{ repo_id: number, issue_number: number }> }>(`/p2/sprints/${id}/issues`)
      if (state.filter.sprint === id) set({ sprintIssues: new Set(issues.map((i) => keyOf(i.repo_id, i.issue_number))) })
    } catch (err) {
      failed(err, 'Could not read the sprint\'s issues')
    }
  }

  async function names (workspace: string) {
    try {
      const repos = await client.get<Repo[]>(`/p2/workspaces/${workspace}/repositories`)
      const known = new Map(state.repos)
      for (const repo of repos) known.set(repo.id, repo)
      set({ repos: known })
    } catch (err) {
      failed(err, 'Could not read the repositories\' names')
    }
  }

  /** Boards of every repository shown, titles of their issues, dependencies and epics: in parallel, each conditional. */
  async function refresh (first = false, firstRowsRead?: () => void) {
    clearTimeout(timer)
    const mine = generation
    const choice = state.choice
    if (choice === null) return
    // Before the whole read, not alongside it: on a board of 50,000 issues the whole boards and
    // their titles (hundreds of reads) would queue ahead of the first rows' few. A board that fits
    // in a page costs one paged read more.
    if (first) await firstRows(choice.workspace, mine).catch(() => {})
    firstRowsRead?.()
    if (mine !== generation) return
    try {
      const repos = repoIds()
      const reads = await Promise.all(repos.map(async (repo) => {
        const path = `/p2/workspaces/${choice.workspace}/repositories/${repo}/board`
        const { body, etag } = await client.read<RepoBoard>(path, etags.get(path))
        return { repo, path, body, etag }
      }))
      if (mine !== generation) return
      const changed = reads.some((r) => r.body !== undefined)
      if (changed || first) {
        for (const r of reads) if (r.etag !== undefined) etags.set(r.path, r.etag)
        boards.clear()
        for (const r of reads) if (r.body !== undefined) lastBoards.set(r.repo, r.body)
        const present = reads.map((r) => ({ repo: r.repo, board: lastBoards.get(r.repo)! })).filter((b) => b.board !== undefined)
        for (const { repo, board } of present) boards.set(repo, board)
      }
      const [cards] = await Promise.all([titles(), changed || first ? relations() : Promise.resolve()])
      if (mine !== generation) return
      // Only now, with every title here, is the whole board drawn: the first rows stay until then.
      wholeRead = mine
      // A card being dragged or an estimate being typed is not redrawn under the person's hand.
      if (state.drag === null && (changed || first || cards)) {
        const columns = mergeColumns(state.pipelines, [...boards].map(([repo, board]) => ({ repo, board })))
        const moved = !first && Object.keys(columns).some((id) => (state.columns[id] ?? []).join() !== columns[id].join())
        set({ columns, phase: 'ready', ...(moved ? { arrived: state.arrived + 1 } : {}) })
      }
      if (first) say(state.cards.size === 0 ? 'No issues on this board yet: open one with a column\'s New issue, or on the repository\'s issue host.' : '')
    } catch (err) {
      if (mine !== generation) return
      failed(err, 'Could not read the board')
    }
    if (mine === generation && (state.phase === 'loading' || state.phase === 'ready')) poll()
  }
  /** The next look at the board: every 3 s, or once a minute while the live stream is open. */
  function poll () {
    clearTimeout(timer)
    const wait = liveOpen ? LIVE_POLL_MS : POLL_MS
    timer = setTimeout(() => { if (isHidden()) timer = setTimeout(() => { refresh() }, wait); else refresh() }, wait)
  }
  /**
   * A large board's first rows of every column (a paged read, docs/api.md "Paged boards") with
   * their titles, shown when they come before the whole board; a board that fits in the page waits for that.
   */
  async function firstRows (workspace: string, mine: number) {
    // Filtered on the server: the first rows of each column are then the first matches.
    const filter = serverFilterQuery(state.filter)
    const read = ++firstRowsRead
    const repos = repoIds()
    try {
      const pages = await Promise.all(repos.map(async (repo) => ({
        repo, board: await client.get<RepoBoard>(`/p2/workspaces/${workspace}/repositories/${repo}/board?limit=${firstRowsOf(repos.length)}${filter}`)
      })))
      const late = () => mine !== generation || wholeRead === mine || read !== firstRowsRead
      if (late() || (filter === '' && pages.every(({ board }) => board.pipelines.every((p) => (p.next_after ?? null) === null)))) return
      // Its own boards: the whole read, still out, keeps its own for the titles it reads next.
      await titles(new Map(pages.map(({ repo, board }) => [repo, board])))
      if (late() || state.drag !== null) return
      set({ columns: mergeColumns(state.pipelines, pages), phase: 'ready' })
      say('Loading the rest of the board…')
    } catch {
      // The whole read that follows says what went wrong.
    }
  }
  /** The generation whose whole boards have come: its first rows are no longer wanted. */
  let wholeRead = -1
  /** The latest first-rows read: an earlier filter's answer coming after it is dropped. */
  let firstRowsRead = 0
  const boards = new Map<number, RepoBoard>()
  const lastBoards = new Map<number, RepoBoard>()
  let isHidden = () => false

  /** Titles, pages and states of the board's issues, 100 at a time, each chunk conditional: a renamed issue shows at the next refresh. */
  async function titles (of: Map<number, RepoBoard> = boards): Promise<boolean> {
    const wanted = new Map<number, number[]>()
    for (const [repo, board] of of) wanted.set(repo, board.pipelines.flatMap((p) => p.issues.map((i) => i.issue_number)).sort((a, b) => a - b))
    const chunks: Array<{ repo: number, numbers: number[] }> = []
    for (const [repo, numbers] of wanted) for (let i = 0; i < numbers.length; i += CHUNK) chunks.push({ repo, numbers: numbers.slice(i, i + CHUNK) })
    const answers = await Promise.all(chunks.map(async ({ repo, numbers }) => {
      const path = `/p1/repositories/${repo}/issues?issue_numbers=${numbers.join(',')}`
      const { body, etag } = await client.read<BulkIssue[]>(path, etags.get(path))
      if (etag !== undefined) etags.set(path, etag)
      return { repo, body }
    }))
    // Estimates and epic flags come with the board; they win over the titles' older copy.
    const estimates = new Map<number, Map<number, BoardIssueLite>>()
    for (const [repo, board] of of) {
      const ofRepo = new Map<number, BoardIssueLite>()
      for (const p of board.pipelines) for (const i of p.issues) ofRepo.set(i.issue_number, i)
      estimates.set(repo, ofRepo)
    }
    // Copied only when something changed: a look that found nothing new copies no 50,000 cards.
    let cards: Map<string, Card> | undefined
    const answered = new Map<number, Set<number>>()
    for (const { repo, body } of answers) {
      if (body === undefined) continue
      const numbers = answered.get(repo) ?? new Set()
      answered.set(repo, numbers)
      for (const issue of body) {
        const onBoard = estimates.get(repo)?.get(issue.issue_number)
        cards ??= new Map(state.cards)
        const card = cardOf(repo, issue, onBoard?.estimate?.value ?? null, onBoard?.is_epic ?? false)
        // On the board, so open, whatever the title read's older copy said.
        cards.set(card.key, card.closed && onBoard !== undefined ? { ...card, closed: false } : card)
        numbers.add(issue.issue_number)
      }
    }
    for (const [repo, ofRepo] of estimates) {
      const fresh = answered.get(repo)
      for (const [number, issue] of ofRepo) {
        if (fresh?.has(number) === true) continue
        const key = keyOf(repo, number)
        const card = (cards ?? state.cards).get(key)
        if (card === undefined) continue
        const estimate = issue.estimate?.value ?? null
        if (card.estimate !== estimate || card.is_epic !== issue.is_epic || card.closed) {
          cards ??= new Map(state.cards)
          cards.set(key, { ...card, estimate, is_epic: issue.is_epic, closed: false })
        }
      }
    }
    if (cards !== undefined) set({ cards })
    return cards !== undefined
  }

  /** Blocked and blocking issues, and which epics hold which issues. */
  async function relations () {
    const repos = [...boards.keys()]
    const [deps, epicLists] = await Promise.all([
      Promise.all(repos.map(async (repo) => await client.get<{ dependencies: Array<{ blocking: Ref, blocked: Ref }> }>(`/p1/repositories/${repo}/dependencies`))),
      Promise.all(repos.map(async (repo) => await client.get<{ epic_issues: Array<{ issue_number: number, repo_id: number }> }>(`/p1/repositories/${repo}/epics`)))
    ])
    const epics = epicLists.flatMap((l) => l.epic_issues)
    const details = await Promise.all(epics.map(async (e) => ({
      key: keyOf(e.repo_id, e.issue_number),
      data: await client.get<{ issues: Array<{ issue_number: number, repo_id: number }> }>(`/p1/repositories/${e.repo_id}/epics/${e.issue_number}`)
    })))
    const next = noRelations()
    const add = (map: Map<string, string[]>, key: string, value: string) => {
      const list = map.get(key) ?? []
      if (!list.includes(value)) list.push(value)
      map.set(key, list)
    }
    for (const { dependencies } of deps) {
      for (const d of dependencies) {
        add(next.blockedBy, keyOf(d.blocked.repo_id, d.blocked.issue_number), keyOf(d.blocking.repo_id, d.blocking.issue_number))
        add(next.blocking, keyOf(d.blocking.repo_id, d.blocking.issue_number), keyOf(d.blocked.repo_id, d.blocked.issue_number))
      }
    }
    for (const { key, data } of details) for (const i of data.issues) add(next.epicsOf, keyOf(i.repo_id, i.issue_number), key)
    set({ relations: next, epics: details.map((d) => d.key) })
    await sprintIssues()
    await learn(details.flatMap((d) => [d.key, ...d.data.issues.map((i) => keyOf(i.repo_id, i.issue_number))]))
  }

  /** Titles of issues named somewhere (epics, dependencies, closed) but not on the board. */
  async function learn (keys: string[]) {
    const missing = new Map<number, number[]>()
    for (const key of new Set(keys)) {
      if (state.cards.has(key)) continue
      const [repo, number] = key.split('#').map(Number)
      if (!state.repos.has(repo) && !state.workspaces.some((w) => w.repositories.includes(repo))) continue
      missing.set(repo, [...(missing.get(repo) ?? []), number])
    }
    const answers = await Promise.all([...missing].flatMap(([repo, numbers]) => {
      const out = []
      for (let i = 0; i < numbers.length; i += CHUNK) out.push({ repo, numbers: numbers.slice(i, i + CHUNK) })
      return out
    }).map(async ({ repo, numbers }) => ({ repo, body: await client.get<BulkIssue[]>(`/p1/repositories/${repo}/issues?issue_numbers=${numbers.join(',')}`) })))
    if (answers.length === 0) return
    const cards = new Map(state.cards)
    for (const { repo, body } of answers) {
      for (const i of body) {
        const key = keyOf(repo, i.issue_number)
        cards.set(key, cardOf(repo, i))
      }
    }
    set({ cards })
  }

  /** The newest closed issues of each repository shown, 50 at a time, interleaved. */
  /** How many closed issues the board's repositories hold, for the collapsed Closed column's header. */
  async function countClosed () {
    const run = generation
    try {
      const pages = await Promise.all(repoIds().map(async (repo) => await client.get<{ total: number }>(`/p1/repositories/${repo}/issues/closed?limit=1`)))
      if (run === generation) set({ closed: { ...state.closed, total: pages.reduce((sum, p) => sum + p.total, 0), counting: false } })
    } catch {
      // The count is a nicety: the column still opens and reads its issues.
      if (run === generation) set({ closed: { ...state.closed, counting: false } })
    }
  }

  async function loadClosed () {
    if (state.closed.loading) return
    set({ closed: { ...state.closed, loading: true } })
    try {
      const repos = repoIds().filter((r) => !state.closed.loaded || state.closed.next.get(r) != null)
      const pages = await Promise.all(repos.map(async (repo) => {
        const before = state.closed.next.get(repo)
        const page = await client.get<{ data: BulkIssue[], next_before: number | null }>(
          `/p1/repositories/${repo}/issues/closed?limit=50${before == null ? '' : `&before=${before}`}`)
        return { repo, page }
      }))
      const cards = new Map(state.cards)
      const next = new Map(state.closed.next)
      const lists = pages.map(({ repo, page }) => {
        next.set(repo, page.next_before)
        return page.data.map((i) => {
          const key = keyOf(repo, i.issue_number)
          cards.set(key, { ...cardOf(repo, i), closed: true })
          return key
        })
      })
      const keys = [...state.closed.keys]
      const longest = Math.max(0, ...lists.map((l) => l.length))
      for (let i = 0; i < longest; i++) for (const list of lists) if (i < list.length) keys.push(list[i])
      set({ cards, closed: { keys, next, loaded: true, loading: false, total: state.closed.total } })
    } catch (err) {
      set({ closed: { ...state.closed, loading: false } })
      failed(err, 'Could not read the closed issues')
    }
  }

  function setFilter (patch: Partial<Filter>) {
    const sprintChanged = patch.sprint !== undefined && patch.sprint !== state.filter.sprint
    set({ filter: { ...state.filter, ...patch }, ...(sprintChanged ? { sprintIssues: null } : {}) })
    writeUrl()
    if (sprintChanged) sprintIssues()
    // Only the first rows are here yet: read those the filter keeps, so a match further down shows.
    const choice = state.choice
    if (choice !== null && wholeRead !== generation && state.phase === 'ready') firstRows(choice.workspace, generation).catch(() => {})
  }

  function toggleCollapsed (pipeline: string) {
    const collapsed = new Set(state.collapsed)
    if (collapsed.has(pipeline)) collapsed.delete(pipeline); else collapsed.add(pipeline)
    local.setItem(COLLAPSED_KEY, JSON.stringify([...collapsed]))
    set({ collapsed })
    if (pipeline === CLOSED && !collapsed.has(CLOSED) && !state.closed.loaded) loadClosed()
  }

  function setView (view: State['view']) {
    set({ view })
    writeUrl()
    // Boards made in the Administration view since the sign-in: a board view opens the first one.
    if (state.choice === null && state.workspaces.length > 0 && view !== 'admin' && view !== 'account') choose(state.workspaces[0].id).catch(() => {})
  }

  /** Reads the readable boards and one's permissions again (the Administration view changed them): new ones join the chooser. */
  async function reloadWorkspaces () {
    const [workspaces] = await Promise.all([client.get<Workspace[]>('/p2/workspaces'), account()])
    set({ workspaces })
  }

  /** Names the issue-host label a pipeline writes (two-way sync); empty clears it. True when saved. */
  async function setHostLabel (pipelineId: string, text: string): Promise<boolean> {
    const workspace = state.choice?.workspace
    const pipeline = state.pipelines.find((p) => p.id === pipelineId)
    if (workspace === undefined || pipeline === undefined) return false
    const label = text.trim() === '' ? null : text.trim()
    try {
      await client.send('PATCH', `/p2/workspaces/${encodeURIComponent(workspace)}/pipelines/${encodeURIComponent(pipelineId)}`, { host_label: label })
    } catch (err) {
      say(`Not saved: ${err instanceof Error ? err.message : String(err)}`, true)
      return false
    }
    const relabel = (p: Pipeline) => p.id === pipelineId ? { ...p, host_label: label } : p
    set({
      pipelines: state.pipelines.map(relabel),
      workspaces: state.workspaces.map((w) => w.id === workspace ? { ...w, pipelines: w.pipelines.map(relabel) } : w)
    })
    say(label === null ? `${pipeline.name} writes no label to the issue host now.` : `${pipeline.name} writes the label "${label}" to the issue host now.`)
    return true
  }

  /** One click from a milestone's or a release report's name: the Reports view with its burndown. */
  function showBurndown (burndown: string) {
    set({ view: 'reports', burndown, panel: null })
    writeUrl()
  }

  function setBurndown (burndown: string) {
    set({ burndown })
    writeUrl()
  }

  /** A report as CSV, saved as a file: read with the token in its header (never in an address), then handed to the browser. */
  async function download (path: string, filename: string, save: (text: string, filename: string) => void) {
    try {
      save(await client.text(`${path}${path.includes('?') ? '&' : '?'}format=csv`), filename)
      say(`Downloaded ${filename}.`)
    } catch (err) {
      failed(err, `Could not download ${filename}`)
    }
  }

  /**
   * Opens an issue on the repository's issue host (or here, for a repository without a connection)
   * and places it at the top of the pipeline. Answers the server's message when it refuses.
   */
  async function createIssue (repo: number, pipeline: string, input: NewIssue): Promise<string | null> {
    let made: BulkIssue | undefined
    try {
      made = await client.send<BulkIssue>('POST', `/p1/repositories/${repo}/issues`, { ...input, pipeline_id: pipeline, position: 'top' })
    } catch (err) {
      failed(err, 'Could not open the issue')
      return err instanceof Error ? err.message : String(err)
    }
    if (made !== undefined) {
      const cards = new Map(state.cards)
      const key = keyOf(repo, made.issue_number)
      cards.set(key, cardOf(repo, made))
      set({ cards, creating: null, focus: key })
      say(`Opened #${made.issue_number} ${made.title}.`)
    }
    await refresh()
    return null
  }

  /** Closes or reopens the issue on its host, then here: a closed issue leaves the board for the Closed column. */
  async function setIssueState (key: string, verb: 'close' | 'reopen') {
    const card = state.cards.get(key)
    if (card === undefined) return
    let answer: BulkIssue | undefined
    try {
      answer = await client.send<BulkIssue>('POST', `/p1/repositories/${card.repo}/issues/${card.number}/${verb}`, {})
    } catch (err) {
      failed(err, `Could not ${verb} #${card.number}`)
      return
    }
    const cards = new Map(state.cards)
    cards.set(key, { ...card, ...(answer === undefined ? {} : cardOf(card.repo, answer)), closed: verb === 'close' })
    const keys = state.closed.keys.filter((k) => k !== key)
    if (verb === 'close' && state.closed.loaded) keys.unshift(key)
    set({ cards, closed: { ...state.closed, keys } })
    say(verb === 'close' ? `Closed #${card.number}.` : `Reopened #${card.number}.`)
    await refresh()
  }

  /** Edits the issue's title, labels or assignees (on the issue host first, when it is connected). True when saved. */
  async function editIssue (key: string, change: { title?: string, labels?: string[], assignees?: string[] }): Promise<boolean> {
    const card = state.cards.get(key)
    if (card === undefined) return false
    let answer: BulkIssue | undefined
    try {
      answer = await client.send<BulkIssue>('PATCH', `/p1/repositories/${card.repo}/issues/${card.number}`, change)
    } catch (err) {
      if (err instanceof ApiError && err.status === 401) failed(err, 'Not saved')
      else say(`Not saved: ${nameRepos(err instanceof Error ? err.message : String(err), state.repos)}. #${card.number} keeps what it had.`, true)
      return false
    }
    const cards = new Map(state.cards)
    const latest = state.cards.get(key) ?? card
    // Estimates, epic flags and states come with the board; the answer carries the edited fields.
    const { estimate, is_epic: isEpic, closed } = latest
    cards.set(key, { ...latest, ...(answer === undefined ? {} : cardOf(card.repo, answer)), estimate, is_epic: isEpic, closed })
    set({ cards })
    say(`Saved #${card.number}.`)
    return true
  }

  const repoOf = (key: string): number => Number(key.split('#')[0])

  /** Moves a card to `slot` among the cards shown in a pipeline; one request; the card stays where it was put. */
  async function move (key: string, pipeline: string, slot: number, shown: string[]) {
    const card = state.cards.get(key)
    const choice = state.choice
    if (card === undefined || choice === null) return
    const from = Object.keys(state.columns).find((id) => state.columns[id].includes(key))
    const column = state.columns[pipeline] ?? []
    const others = shown.filter((k) => k !== key)
    const position = repoIndex(column, shown, key, slot, repoOf)
    const current = from === undefined ? -1 : state.columns[from].filter((k) => repoOf(k) === card.repo).indexOf(key)
    if (from === pipeline && current === position) {
      set({ focus: key })
      return
    }
    const target = state.pipelines.find((p) => p.id === pipeline)
    try {
      await client.send('POST', `/p2/workspaces/${choice.workspace}/repositories/${card.repo}/issues/${card.number}/moves`, { pipeline_id: pipeline, position })
    } catch (err) {
      set({ columns: { ...state.columns }, focus: key })
      failed(err, `Could not move #${card.number}`)
      return
    }
    const columns = { ...state.columns }
    if (from !== undefined) columns[from] = columns[from].filter((k) => k !== key)
    columns[pipeline] = placeIn(columns[pipeline].filter((k) => k !== key), key, others[slot])
    set({ columns, focus: key })
    say(`Moved #${card.number} to ${target?.name ?? pipeline}, position ${position + 1}.`)
    refresh()
  }

  async function setEstimate (key: string, value: number | null) {
    const card = state.cards.get(key)
    if (card === undefined) return false
    try {
      await client.send('PUT', `/p1/repositories/${card.repo}/issues/${card.number}/estimate`, { estimate: value })
    } catch (err) {
      failed(err, `Could not set the estimate of #${card.number}`)
      return false
    }
    const cards = new Map(state.cards)
    cards.set(key, { ...card, estimate: value })
    set({ cards })
    say(value === null ? `Cleared the estimate of #${card.number}.` : `#${card.number} is estimated at ${value}.`)
    refresh()
    return true
  }

  /** Adds or removes the issue's membership of an epic. */
  async function setEpic (key: string, epic: string, member: boolean) {
    const card = state.cards.get(key)
    const [epicRepo, epicNumber] = epic.split('#').map(Number)
    if (card === undefined) return
    const ref = [{ repo_id: card.repo, issue_number: card.number }]
    try {
      await client.send('POST', `/p1/repositories/${epicRepo}/epics/${epicNumber}/update_issues`, member ? { add_issues: ref, remove_issues: [] } : { add_issues: [], remove_issues: ref })
    } catch (err) {
      failed(err, `Could not change the epics of #${card.number}`)
      return
    }
    say(member ? `Added #${card.number} to epic #${epicNumber}.` : `Removed #${card.number} from epic #${epicNumber}.`)
    await relations().catch((err: unknown) => failed(err, 'Could not read the epics'))
  }

  /** Adds issues to and removes issues from an epic (its panel); the server's refusal is answered, null when done. */
  async function changeEpic (epic: string, add: Ref[], remove: Ref[]): Promise<string | null> {
    const [epicRepo, epicNumber] = epic.split('#').map(Number)
    try {
      await client.send('POST', `/p1/repositories/${epicRepo}/epics/${epicNumber}/update_issues`, { add_issues: add, remove_issues: remove })
    } catch (err) {
      if (err instanceof ApiError && err.status === 401) failed(err, 'Not saved')
      return err instanceof Error ? err.message : String(err)
    }
    const list = (refs: Ref[]) => refs.map((r) => `#${r.issue_number}`).join(', ')
    say([add.length > 0 ? `Added ${list(add)} to epic #${epicNumber}.` : '', remove.length > 0 ? `Removed ${list(remove)} from epic #${epicNumber}.` : ''].filter((s) => s !== '').join(' '))
    await relations().catch((err: unknown) => failed(err, 'Could not read the epics'))
    return null
  }

  /** Adds or removes a dependency: `blocking` blocks `blocked`. */
  async function setDependency (blocking: string, blocked: string, present: boolean) {
    const ref = (key: string) => { const [repo_id, issue_number] = key.split('#').map(Number); return { repo_id, issue_number } }
    try {
      await client.send(present ? 'POST' : 'DELETE', '/p1/dependencies', { blocking: ref(blocking), blocked: ref(blocked) })
    } catch (err) {
      failed(err, 'Could not change the dependency')
      return
    }
    say(present ? `#${ref(blocking).issue_number} now blocks #${ref(blocked).issue_number}.` : `#${ref(blocking).issue_number} no longer blocks #${ref(blocked).issue_number}.`)
    await relations().catch((err: unknown) => failed(err, 'Could not read the dependencies'))
  }

  return {
    state,
    client,
    subscribe (listener: () => void) { listeners.add(listener); return () => listeners.delete(listener) },
    set,
    say,
    /** The page's own address (path and query), where a provider's sign-in comes back to. */
    here: () => `${location.pathname}${location.search}`,
    start,
    signIn,
    passwordSignIn,
    signOut,
    choose,
    refresh,
    loadClosed,
    learn,
    setFilter,
    toggleCollapsed,
    setView,
    reloadWorkspaces,
    setHostLabel,
    /** Reads the workspace's sprints again (after its sprint settings changed). */
    reloadSprints: async () => { if (state.choice !== null) await sprints(state.choice.workspace) },
    setBurndown,
    showBurndown,
    createIssue,
    setIssueState,
    editIssue,
    download,
    /** The repositories the board shows. */
    repoIds,
    move,
    setEstimate,
    setEpic,
    changeEpic,
    setDependency,
    /** The page tells whether it is hidden: polling rests while it is. */
    watchVisibility (hidden: () => boolean) { isHidden = hidden },
    resetFilter () { setFilter(emptyFilter()) },
    stop () { clearTimeout(timer); clearTimeout(retryTimer); signInRun++; generation++; follow(null) }
  }
}

interface Ref { repo_id: number, issue_number: number }
interface BoardIssueLite { issue_number: number, is_epic: boolean, estimate?: { value: number } }
