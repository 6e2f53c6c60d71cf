/// <reference lib="dom" />
import t, { type Test } from 'tap'
import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { renderToString } from 'preact-render-to-string'
import { ApiError, type Client } from '../board/src/api.js'
import { AdminSections } from '../board/src/components/admin.js'
import type { AdminContext } from '../board/src/components/admin-data.js'
import { auditPeople, auditUrl } from '../board/src/components/admin-audit.js'
import { AccountView, expiryFrom } from '../board/src/components/account.js'
import { connectionOf, repositoryErrors } from '../board/src/components/admin-repositories.js'
import { pipelineNames, reorder } from '../board/src/components/admin-workspaces.js'
import { Card } from '../board/src/components/card.js'
import { FieldError, fieldOf, invalid } from '../board/src/components/field.js'
import { Column, ROW } from '../board/src/components/column.js'
import { shownColumns } from '../board/src/components/board.js'
import { progress } from '../board/src/components/epics.js'
import { activeFilters, Filters } from '../board/src/components/filters.js'
import { chipsWidth, CHIP, fitLabels, META_ROOM, wholeWords } from '../board/src/chips.js'
import { Help, KEYS } from '../board/src/components/help.js'
import { describeEvent, duration, IssuePanel } from '../board/src/components/issue-panel.js'
import { Description } from '../board/src/components/issue-description.js'
import { Picker } from '../board/src/components/picker.js'
import { maker } from '../board/src/components/admin-invites.js'
import { loginHref, passwordRefusal, SignIn } from '../board/src/components/sign-in.js'
import { burndownChoices, BurndownView, CycleTimeView, NoBurndown, VelocityView } from '../board/src/components/reports.js'
import { burndownChart, cycleTimeChart, dayIn, daysText, FRAME, niceMax, velocityChart, type BurndownReport } from '../board/src/charts.js'
import { html } from '../board/src/html.js'
import {
  cardName, emptyFilter, filterFromQuery, filterToQuery, initials, keyOf, labelColors, labelsAndAssignees, labelsAndAssigneesOf, matches, mergeColumns,
  namesIn, noRelations, nearestFirst, parseEstimate, placeIn, repoHue, repoIndex, serverFilterQuery, columnTitles, titleText, totals, visibleRows,
  type Card as CardData, type Filter
} from '../board/src/model.js'
import { createStore, firstRowsOf, type LiveHandlers } from '../board/src/store.js'

// The board page's parts without a browser: its decisions as functions, its components rendered to
// HTML, its store over a fake client. The browser tests (board-page.test.ts) use them together.

const card = (number: number, more: Partial<CardData> = {}): CardData =>
  ({ key: keyOf(1, number), repo: 1, number, title: `Issue ${number}`, html_url: `https://example.test/${number}`, estimate: null, is_epic: false, closed: false, pull_request: false, labels: [], assignees: [], ...more })

t.test('boards of several repositories become one: interleaved by their own order', async (t) => {
  const pipelines = [{ id: 'a', name: 'A' }, { id: 'b', name: 'B' }]
  const board = (numbers: number[]) => ({ pipelines: [{ id: 'a', name: 'A', issues: numbers.map((n) => ({ issue_number: n, is_epic: false })) }, { id: 'b', name: 'B', issues: [] }] })
  t.same(mergeColumns(pipelines, [{ repo: 1, board: board([3, 1, 2]) }, { repo: 2, board: board([9]) }]), { a: ['1#3', '2#9', '1#1', '1#2'], b: [] })
  t.same(mergeColumns(pipelines, []), { a: [], b: [] })
})

t.test('a drop lands in the card\'s own repository\'s order', async (t) => {
  const repoOf = (key: string) => Number(key.split('#')[0])
  const column = ['1#1', '2#5', '1#2', '2#6', '1#3']
  t.equal(repoIndex(column, column, '1#3', 0, repoOf), 0, 'to the top')
  t.equal(repoIndex(column, column, '1#3', 2, repoOf), 1, 'before 1#2: after 1#1')
  t.equal(repoIndex(column, column, '1#1', 4, repoOf), 2, 'to the end')
  t.equal(repoIndex(column, ['2#5', '1#3'], '1#1', 1, repoOf), 1, 'filtered: before 1#3, after 1#2 which is hidden')
  t.equal(repoIndex(['2#5'], ['2#5'], '1#9', 1, repoOf), 0, 'into a column without the repository')
  t.same(placeIn(column, '1#3', '2#5'), ['1#1', '1#3', '2#5', '1#2', '2#6'])
  t.same(placeIn(column, '1#1', undefined), ['2#5', '1#2', '2#6', '1#3', '1#1'])
})

t.test('filters: kept in the address, and what they keep', async (t) => {
  const filter = { ...emptyFilter(), text: 'login', repos: [2, 3], estimate: '1-5' as const, epics: ['1#4'], blocked: 'blocked' as const }
  const query = filterToQuery(filter, new URLSearchParams('board=w'))
  t.equal(query.toString(), 'board=w&q=login&repo=2%2C3&estimate=1-5&epic=1%234&blocked=blocked')
  t.same(filterFromQuery(query), { ...filter, labels: [], assignees: [] }, 'read back as written')
  t.same(filterFromQuery(new URLSearchParams('repo=x,-1,7&estimate=lots&blocked=maybe')), { ...emptyFilter(), repos: [7] }, 'nonsense in the address is dropped')
  const relations = noRelations()
  relations.blockedBy.set('1#2', ['1#1'])
  relations.epicsOf.set('1#2', ['1#9'])
  const keeps = (f: Partial<Filter>, c: CardData) => matches(c, { ...emptyFilter(), ...f }, relations)
  t.ok(keeps({ text: '#2' }, card(2)))
  t.notOk(keeps({ text: '#2' }, card(12)), '#number is the number, not a part of it')
  t.ok(keeps({ text: 'SUE 1' }, card(12)), 'text: case-insensitive title')
  t.notOk(keeps({ repos: [2] }, card(1)))
  t.ok(keeps({ estimate: 'none' }, card(1)))
  t.notOk(keeps({ estimate: 'none' }, card(1, { estimate: 3 })))
  t.ok(keeps({ estimate: '1-5' }, card(1, { estimate: 3 })))
  t.notOk(keeps({ estimate: '1-5' }, card(1, { estimate: 8 })))
  t.ok(keeps({ blocked: 'blocked' }, card(2)))
  t.notOk(keeps({ blocked: 'blocked' }, card(1)))
  t.ok(keeps({ epics: ['1#9'] }, card(2)))
  const labelled = card(3, { labels: [{ name: 'bug', color: 'd73a4a' }], assignees: [{ login: 'ann-lee', avatar_url: null }] })
  t.notOk(keeps({ labels: ['bug'] }, card(2)), 'a label filter leaves out cards without the label')
  t.ok(keeps({ labels: ['ui', 'bug'] }, labelled), 'any of the chosen labels')
  t.ok(keeps({ assignees: ['ann-lee'] }, labelled))
  t.notOk(keeps({ assignees: ['bob'] }, labelled))
  t.same(labelColors('5319e7'), { background: '#5319e7', text: '#ffffff' }, 'white on a dark label')
  t.same(labelColors('#FBCA04'), { background: '#fbca04', text: '#000000' }, 'black on a light one')
  t.equal(labelColors('url(x)'), undefined, 'anything but a hex colour is not used')
  t.same([initials('ann-lee'), initials('bob'), initials('x')], ['AL', 'BO', 'X'])
  t.same(namesIn(' bug, ui ,, bug'), ['bug', 'ui'])
  t.notOk(keeps({ sprint: 'abc' }, card(2)), 'a sprint filter keeps nothing while the sprint\'s issues are read')
  t.ok(matches(card(2), { ...emptyFilter(), sprint: 'abc' }, relations, new Set(['1#2'])))
  t.notOk(matches(card(3), { ...emptyFilter(), sprint: 'abc' }, relations, new Set(['1#2'])))
  t.equal(filterFromQuery(new URLSearchParams('sprint=6b04a8524b2c961bf6b8f738')).sprint, '6b04a8524b2c961bf6b8f738')
  t.equal(filterFromQuery(new URLSearchParams('sprint=../x')).sprint, '', 'a sprint id is letters and digits')
  t.same(labelsAndAssignees([labelled, card(4, { labels: [{ name: 'a', color: null }] })]), { labels: [{ name: 'a', color: null }, { name: 'bug', color: 'd73a4a' }], assignees: ['ann-lee'] })
})

t.test('filters on a big board: a title index per column and map of cards, made in slices, matches in the column\'s order', async (t) => {
  const cards = new Map([card(1, { title: 'Fix the LOGIN page' }), card(2, { title: 'login' }), card(3, { title: 'Export' }), card(12, { title: 'two\nlines' })].map((c) => [c.key, c]))
  const column = ['1#3', '1#12', '1#99', '1#2', '1#1']
  const index = columnTitles(cards, column)
  t.equal(columnTitles(cards, column), index, 'one index per map and column')
  t.not(columnTitles(cards, [...column]), index, 'a column\'s new list has its own')
  t.not(columnTitles(new Map(cards), column), index, 'and so has a new map of cards')
  const keys = (text: string) => index.search(text).map((c) => c.key)
  t.same(keys('login'), ['1#2', '1#1'], 'every title holding the text, any case, in the column\'s order, the last one too')
  t.same(keys('o'), ['1#3', '1#12', '1#2', '1#1'], 'a key with no card (1#99) is passed over')
  t.same(keys('n page'), ['1#1'])
  t.same(keys('o\nl'), [], 'never across two titles')
  t.same(keys('two lines'), ['1#12'], 'a line break in a title reads as a space')
  t.same(keys('zzz'), [])
  t.same(keys('e'), ['1#3', '1#12', '1#2', '1#1'].filter((k) => cards.get(k)!.title.toLowerCase().includes('e')))
  // Made a slice at a time (while the page is idle), then searched: the same answers.
  const sliced = columnTitles(new Map(cards), column)
  t.notOk(sliced.extend(2), 'two of five keys in')
  t.notOk(sliced.done)
  t.ok(sliced.extend(2) || sliced.extend(2), 'then the rest')
  t.ok(sliced.done)
  t.same(sliced.search('login').map((c) => c.key), ['1#2', '1#1'])
  t.same(columnTitles(new Map(cards), column).search('login').map((c) => c.key), ['1#2', '1#1'], 'and one searched before any slice makes itself whole')
  // A longer board: the index keeps what a scan of each card keeps, in the same order.
  const words = ['fix', 'login', 'slow', 'label', 'export', 'board']
  const many = Array.from({ length: 3000 }, (_, i) => card(i + 1, { title: `${words[i % 6]} ${words[(i * 7) % 6]} ${words[(i * 13 + 1) % 6]} #${i + 1}` }))
  const big = new Map(many.map((c) => [c.key, c]))
  const order = many.map((c) => c.key).reverse()
  for (const text of ['l', 'lo', 'log', 'login', 'n s', 'x', '#30', 'zz']) {
    t.same(columnTitles(big, order).search(text).map((c) => c.key), order.filter((k) => big.get(k)!.title.toLowerCase().includes(text)), `"${text}"`)
  }
  t.equal(titleText({ ...emptyFilter(), text: '  LOG ' }), 'log')
  t.equal(titleText({ ...emptyFilter(), text: '#12' }), '', 'a number is not looked for in titles')
  t.equal(titleText({ ...emptyFilter(), text: '12' }), '')
  const relations = noRelations()
  const plain = (f: Partial<Filter>) => [...cards.values()].filter((c) => matches(c, { ...emptyFilter(), ...f }, relations)).map((c) => c.key)
  t.same(plain({ text: 'LOG' }), ['1#1', '1#2'])
  t.same(plain({ text: '#12' }), ['1#12'])
  t.same(plain({ text: 'login', estimate: 'set' }), [])
  t.equal(labelsAndAssigneesOf(cards), labelsAndAssigneesOf(cards), 'the menus\' names are gathered once per map of cards')
  t.same([firstRowsOf(1), firstRowsOf(2), firstRowsOf(10), firstRowsOf(30)], [40, 20, 4, 4], 'a screen\'s worth of first rows, shared among the repositories')
})

t.test('estimates typed as text: a number, empty to clear, anything else refused', async (t) => {
  t.same(parseEstimate(' 8 '), { value: 8 })
  t.same(parseEstimate('0.5'), { value: 0.5 })
  t.same(parseEstimate(''), { value: null })
  for (const typo of ['1e', '-', '5-3', '-1', '1e3', 'abc', '1,5']) t.match(parseEstimate(typo), { error: /is not an estimate/ }, typo)
})

t.test('small decisions: colours, rows drawn, names, totals', async (t) => {
  t.equal(repoHue({ id: 1, owner: 'acme', name: 'api', html_url: '' }, 1), repoHue({ id: 1, owner: 'acme', name: 'api', html_url: '' }, 1), 'stable')
  t.not(repoHue({ id: 1, owner: 'acme', name: 'api', html_url: '' }, 1), repoHue({ id: 2, owner: 'acme', name: 'web', html_url: '' }, 2))
  t.same(visibleRows(1500, 84, 0, 840), { from: 0, to: 16 })
  t.same(visibleRows(1500, 84, 84 * 1000, 840), { from: 994, to: 1016 })
  t.same(visibleRows(3, 84, 0, 840), { from: 0, to: 3 })
  const relations = noRelations()
  relations.blocking.set('1#2', ['1#3'])
  relations.epicsOf.set('1#2', ['1#9'])
  t.equal(cardName(card(2, { estimate: 1, is_epic: true }), 'api', relations, () => '#9 Login'), '#2 Issue 2, api, 1 pt, epic, in epic #9 Login, blocking 1')
  t.equal(cardName(card(4, { pull_request: true }), undefined, relations, () => ''), '#4 Issue 4, pull request, no estimate', 'a pull request says so')
  t.match(renderToString(html`<${Card} card=${card(4, { pull_request: true })} showRepo=${false} relations=${relations} epicName=${() => ''} top=${0} index=${0} count=${1} />`),
    /<span class="badge pr" title="Pull request">PR<\/span>/, 'and shows a PR mark')
  t.notMatch(renderToString(html`<${Card} card=${card(5)} showRepo=${false} relations=${relations} epicName=${() => ''} top=${0} index=${0} count=${1} />`), /badge pr/)
  t.equal(totals([card(1, { estimate: 2.5 }), card(2), card(3, { estimate: 0.25 })]), '3 issues · 2.75 pts')
  t.equal(describeEvent({ type: 'transferIssue', created_at: '', from_pipeline: { name: 'A' }, to_pipeline: { name: 'B' } }), 'Moved from A to B')
  t.equal(describeEvent({ type: 'estimateIssue', created_at: '', to_estimate: { value: 3 } }), 'Estimate changed from no estimate to 3 pts')
  const moved = { type: 'transferIssue', created_at: '', to_pipeline: { name: 'B' }, workspace_id: 'w2' }
  t.equal(describeEvent(moved, 'w1', (id) => id === 'w2' ? 'Mobile' : undefined), 'Moved from nowhere to B in Mobile', 'a move on another board names it')
  t.equal(describeEvent(moved, 'w2', () => 'Mobile'), 'Moved from nowhere to B', 'this board\'s moves need no name')
  t.equal(describeEvent(moved, 'w1'), 'Moved from nowhere to B in another workspace', 'one the viewer does not have is not named')
  t.equal(duration(90), '2 min')
  t.equal(duration(3 * 86400), '3 days')
})

function fakeClient (routes: Record<string, unknown>, sent: Array<[string, string, unknown]> = []): Client {
  const answer = (path: string) => {
    const key = Object.keys(routes).find((k) => path.startsWith(k))
    if (key === undefined) throw new ApiError(`no route ${path}`, 404)
    const value = routes[key]
    if (value instanceof ApiError) throw value
    return structuredClone(value)
  }
  return {
    read: async <T>(path: string) => ({ body: answer(path) as T, etag: '"x"' }),
    get: async <T>(path: string) => answer(path) as T,
    href: (path: string) => `/base${path}`,
    text: async (path: string) => String(answer(path)),
    send: async <T>(method: string, path: string, body: unknown) => { sent.push([method, path, body]); return undefined as T }
  }
}
const memory = () => {
  const data = new Map<string, string>()
  return { getItem: (k: string) => data.get(k) ?? null, setItem: (k: string, v: string) => { data.set(k, v) }, removeItem: (k: string) => { data.delete(k) } }
}
const WORKSPACE = { id: 'w', name: 'Team', description: null, repositories: [1, 2], pipelines: [{ id: 'todo', name: 'To Do' }, { id: 'done', name: 'Done' }] }
const routes = {
  '/p2/workspaces/w/repositories/1/board': { pipelines: [{ id: 'todo', name: 'To Do', issues: [{ issue_number: 1, is_epic: false }, { issue_number: 2, is_epic: false, estimate: { value: 3 } }] }, { id: 'done', name: 'Done', issues: [] }] },
  '/p2/workspaces/w/repositories/2/board': { pipelines: [{ id: 'todo', name: 'To Do', issues: [{ issue_number: 7, is_epic: false }] }, { id: 'done', name: 'Done', issues: [] }] },
  '/p2/workspaces/w/repositories': [{ id: 1, owner: 'acme', name: 'api', html_url: 'h' }, { id: 2, owner: 'acme', name: 'web', html_url: 'h' }],
  '/p2/workspaces/w/sprints': [],
  '/p2/workspaces': [WORKSPACE],
  '/p1/repositories/1/issues?': [{ issue_number: 1, title: 'One', html_url: 'h/1', status: 'open', is_epic: false }, { issue_number: 2, title: 'Two <b>', html_url: 'h/2', status: 'open', is_epic: false }],
  '/p1/repositories/2/issues?': [{ issue_number: 7, title: 'Seven', html_url: 'h/7', status: 'open', is_epic: false }],
  '/p1/repositories/1/dependencies': { dependencies: [{ blocking: { repo_id: 1, issue_number: 1 }, blocked: { repo_id: 2, issue_number: 7 } }] },
  '/p1/repositories/2/dependencies': { dependencies: [] },
  '/p1/repositories/1/epics': { epic_issues: [] },
  '/p1/repositories/2/epics': { epic_issues: [] }
}

async function signedIn (t: Test, sent: Array<[string, string, unknown]> = [], search = '') {
  const urls: string[] = []
  const store = createStore({ client: fakeClient(routes, sent), session: memory(), local: memory(), location: { search, pathname: '/board' }, replaceUrl: (u) => urls.push(u) })
  t.teardown(() => store.stop())
  await store.signIn('token')
  return { store, urls }
}

t.test('the store: sign-in, the workspace board, a move in the card\'s own repository, the filter in the address', async (t) => {
  const refused = createStore({ client: fakeClient({ '/p2/workspaces': new ApiError('the API token is not valid', 401) }), session: memory(), local: memory(), location: { search: '', pathname: '/' }, replaceUrl: () => {} })
  await refused.signIn('bad')
  t.equal(refused.state.phase, 'signed-out')
  t.equal(refused.state.status.text, 'That token was refused: the API token is not valid')

  const sent: Array<[string, string, unknown]> = []
  const { store, urls } = await signedIn(t, sent)
  t.same(store.state.choice, { workspace: 'w', repo: null }, 'the workspace board first')
  t.same(store.state.columns.todo, ['1#1', '2#7', '1#2'])
  t.equal(store.state.cards.get('1#2')!.estimate, 3, 'estimates from the board')
  t.same(store.state.relations.blockedBy.get('2#7'), ['1#1'], 'dependencies across repositories')
  t.equal(urls.at(-1), '/board?board=w')
  await store.move('1#2', 'todo', 0, store.state.columns.todo)
  t.same(sent.at(-1), ['POST', '/p2/workspaces/w/repositories/1/issues/2/moves', { pipeline_id: 'todo', position: 0 }], 'to the top of its own repository')
  t.same(store.state.columns.todo, ['1#2', '1#1', '2#7'], 'where it was put')
  store.setFilter({ repos: [2] })
  t.equal(urls.at(-1), '/board?repo=2&board=w')
  const again = await signedIn(t, [], '?board=w/2&q=Sev')
  t.same(again.store.state.choice, { workspace: 'w', repo: 2 }, 'the board in the address')
  t.equal(again.store.state.filter.text, 'Sev')
  t.same(Object.values(again.store.state.columns).flat(), ['2#7'], 'one repository only')
})

t.test('the filter a paged board read applies on the server: what fits its bounds, nothing that would drop a match', async (t) => {
  t.equal(serverFilterQuery(emptyFilter()), '')
  t.equal(serverFilterQuery({ ...emptyFilter(), text: ' 100% ', labels: ['bug', 'ui'], assignees: ['octo'], estimate: '1-5', repos: [2], epics: ['1#4'] }),
    '&q=100%25&label=bug%2Cui&assignee=octo&estimate=1-5', 'repositories and epics stay on the page')
  const many = Array.from({ length: 21 }, (_, i) => `l${i}`)
  t.equal(serverFilterQuery({ ...emptyFilter(), labels: many, assignees: ['a,b'], text: 'x'.repeat(201), estimate: '1234567-2' as const }), '', 'out of bounds: left to the page')
})

t.test('the board\'s columns under a text filter: the index\'s matches in order, the rest of the filter on them, titles that come later found', async (t) => {
  const { store } = await signedIn(t)
  const shown = () => shownColumns(store).map((c) => `${c.id}: ${c.cards.map((card) => card.key).join(' ')}`)
  t.same(shown(), ['todo: 1#1 2#7 1#2', 'done: ', 'closed: '])
  store.setFilter({ text: 'O' })
  t.same(shown(), ['todo: 1#1 1#2', 'done: ', 'closed: '], '"One" and "Two", in the column\'s order; "Seven" holds no o')
  t.equal(shownColumns(store), shownColumns(store), 'made once for the same cards and filter')
  store.setFilter({ text: 'o', estimate: 'set' })
  t.same(shown(), ['todo: 1#2', 'done: ', 'closed: '], 'the other parts of the filter test only the matches')
  store.setFilter({ text: '#7', estimate: '' })
  t.same(shown(), ['todo: 2#7', 'done: ', 'closed: '], 'a number is the issue\'s, not a title\'s text')
  store.setFilter({ text: 'o' })
  // A title read later (a rename, or a chunk of titles coming in): a new map of cards, a new index.
  const cards = new Map(store.state.cards)
  cards.set('2#7', { ...cards.get('2#7')!, title: 'Seven o\'clock' })
  store.set({ cards })
  t.same(shown(), ['todo: 1#1 2#7 1#2', 'done: ', 'closed: '], 'the new title is found')
  store.set({ columns: { ...store.state.columns, todo: ['1#2', '2#7'], done: ['1#1'] } })
  t.same(shown(), ['todo: 1#2 2#7', 'done: 1#1', 'closed: '], 'and a column\'s new order')
})

t.test('the store: a large board shows each column\'s first rows (a paged read) while the whole board loads', async (t) => {
  const page = { pipelines: [{ id: 'todo', name: 'To Do', issues: [{ issue_number: 1, is_epic: false }], next_after: 1 }, { id: 'done', name: 'Done', issues: [], next_after: null }] }
  const bugs = { pipelines: [{ id: 'todo', name: 'To Do', issues: [{ issue_number: 2, is_epic: false }], next_after: null }, { id: 'done', name: 'Done', issues: [], next_after: null }] }
  const base = fakeClient({ '/p2/workspaces/w/repositories/1/board?limit=20&label=bug': bugs, '/p2/workspaces/w/repositories/1/board?limit=': page, ...routes })
  let release = () => {}
  const held = new Promise<void>((resolve) => { release = resolve })
  const client: Client = { ...base, read: async <T>(path: string, etag?: string) => { if (path.endsWith('/board')) await held; return await base.read<T>(path, etag) } }
  const store = createStore({ client, session: memory(), local: memory(), location: { search: '', pathname: '/board' }, replaceUrl: () => {} })
  t.teardown(() => store.stop())
  const signing = store.signIn('token')
  for (let turn = 0; turn < 200 && store.state.columns.todo === undefined; turn++) await new Promise((resolve) => setImmediate(resolve))
  t.same(store.state.columns.todo, ['1#1', '2#7'], 'the first rows of each repository, before the whole boards')
  t.equal(store.state.cards.get('1#1')?.title, 'One', 'with their titles')
  t.equal(store.state.status.text, 'Loading the rest of the board…')
  store.setFilter({ labels: ['bug'] })
  for (let turn = 0; turn < 200 && !store.state.columns.todo.includes('1#2'); turn++) await new Promise((resolve) => setImmediate(resolve))
  t.same(store.state.columns.todo, ['1#2', '2#7'], 'a filter while only the first rows are here reads the first matches from the server')
  store.setFilter({ labels: [] })
  release()
  await signing
  t.same(store.state.columns.todo, ['1#1', '2#7', '1#2'], 'then the whole board')
  t.equal(store.state.status.text, '')
})

t.test('the store: the Closed column\'s count and the sprints are read after the first rows, not alongside them', async (t) => {
  const page = { pipelines: [{ id: 'todo', name: 'To Do', issues: [{ issue_number: 1, is_epic: false }], next_after: 1 }, { id: 'done', name: 'Done', issues: [], next_after: null }] }
  const base = fakeClient({ '/p2/workspaces/w/repositories/1/board?limit=': page, '/p1/repositories/1/issues/closed': { data: [], total: 2, next_before: null }, '/p1/repositories/2/issues/closed': { data: [], total: 1, next_before: null }, ...routes })
  const asked: string[] = []
  let release = () => {}
  const held = new Promise<void>((resolve) => { release = resolve })
  const client: Client = {
    ...base,
    get: async <T>(path: string) => {
      asked.push(path)
      if (path.includes('/board?limit=')) await held
      return await base.get<T>(path)
    }
  }
  const store = createStore({ client, session: memory(), local: memory(), location: { search: '', pathname: '/board' }, replaceUrl: () => {} })
  t.teardown(() => store.stop())
  const signing = store.signIn('token')
  for (let turn = 0; turn < 200 && !asked.some((p) => p.includes('/board?limit=')); turn++) await new Promise((resolve) => setImmediate(resolve))
  for (let turn = 0; turn < 20; turn++) await new Promise((resolve) => setImmediate(resolve))
  t.ok(asked.some((p) => p.includes('/board?limit=')), 'the first rows are being read')
  t.same(asked.filter((p) => p.includes('/closed') || p.endsWith('/sprints')), [], 'nothing else of the board meanwhile')
  t.equal(store.state.closed.counting, true, 'the collapsed Closed column\'s count is still to come (its header says so, not "0 issues")')
  release()
  await signing
  for (const later of ['/p1/repositories/1/issues/closed?limit=1', '/p1/repositories/2/issues/closed?limit=1', '/p2/workspaces/w/sprints']) {
    t.ok(asked.includes(later), `${later} once they came`)
  }
  t.equal(store.state.closed.total, 3, 'the count is there once signed in')
  t.equal(store.state.closed.counting, false)
})

t.test('the store: a browser session signs in without a token, the providers\' buttons come back here, sign-out ends the session', async (t) => {
  const sent: Array<[string, string, unknown]> = []
  const providers = { providers: [{ id: 'host:c1', name: 'Sign in with GitHub', login_url: '/base/auth/host/c1/login' }], token: true }
  const store = createStore({
    client: fakeClient({
      ...routes,
      '/auth/session': { signed_in: true, user: { id: 1, login: 'alice' }, signed_in_with: { kind: 'session', scope: 'write' } },
      '/account': { login: 'alice', signed_in_with: { kind: 'session' } },
      '/auth/providers': providers
    }, sent),
    session: memory(),
    local: memory(),
    location: { search: '?board=w/2&q=a b', pathname: '/board' },
    replaceUrl: () => {}
  })
  t.teardown(() => store.stop())
  await store.start()
  t.equal(store.state.phase, 'ready')
  t.same([store.state.token, store.state.viaSession], [null, true], 'signed in by the session')
  t.same(store.state.account, { login: 'alice', administrator: false }, 'who: no Administration link for a non-administrator')
  t.same(store.state.choice, { workspace: 'w', repo: 2 })
  t.equal(store.state.providers.length, 1)
  await store.signOut()
  t.equal(store.state.phase, 'signed-out')
  t.same(sent.at(-1), ['POST', '/auth/logout', undefined], 'the session ends at the server')
  const form = renderToString(html`<${SignIn} store=${store} />`)
  t.match(form, 'href="/base/auth/host/c1/login?return_to=%2Fboard%3Fboard%3Dw%2F2%26q%3Da%20b"', 'back to this page, its query kept')
  t.ok(form.indexOf('Sign in with GitHub') < form.indexOf('API token'), 'the buttons above the token field')
  for (const text of ['<label for="sign-in-login">Login</label>', '<label for="sign-in-password">Password</label>', '>Sign in</button>', '<summary>Use an API token</summary>']) t.match(form, text)
  t.ok(form.indexOf('>Sign in</button>') < form.indexOf('Use an API token'), 'the password form first, the token folded away')
  t.equal(passwordRefusal(new ApiError('the login or the password is not right', 401)), 'the login or the password is not right', 'one message, whether or not the login exists')
  t.match(passwordRefusal(new ApiError('too many failed sign-ins for this login: try again in 10 minutes', 429)), /try again in 10 minutes/, 'a lock-out names the wait')
  await store.passwordSignIn('alice', 'alice-password-1')
  t.same(sent.at(-1), ['POST', '/auth/password', { login: 'alice', password: 'alice-password-1' }])
  t.same([store.state.phase, store.state.viaSession], ['ready', true], 'then signed in by the session cookie')
  t.equal(loginHref('/auth/oidc/login', `/board?q=${'x'.repeat(600)}`), '/auth/oidc/login?return_to=%2Fboard', 'too long an address comes back without its query')

  const none = createStore({
    client: fakeClient({ '/auth/session': { signed_in: false }, '/account': new ApiError('no token', 401), '/p2/workspaces': new ApiError('the API token is not valid', 401), '/auth/providers': { providers: [], token: true } }, sent),
    session: memory(),
    local: memory(),
    location: { search: '', pathname: '/' },
    replaceUrl: () => {}
  })
  t.teardown(() => none.stop())
  const before = sent.length
  await none.start()
  t.same([none.state.phase, none.state.status.text], ['signed-out', ''], 'no session: the form, quietly')
  t.notMatch(renderToString(html`<${SignIn} store=${none} />`), '<a', 'no provider, no button')
  await none.signIn('token-that-fails')
  t.equal(sent.length, before, 'a refused token calls no /auth/logout')
})

t.test('the store: only a 401 ends a sign-in; an aborted read, a 503 or no answer keeps the token, says so and tries again', async (t) => {
  const until = async (ok: () => boolean) => { for (let i = 0; i < 500 && !ok(); i++) await new Promise((resolve) => setTimeout(resolve, 10)) }
  const base = fakeClient(routes)
  const failures: Error[] = [new ApiError('the database is not answering', 503), new TypeError('Failed to fetch')]
  const flaky: Client = { ...base, get: async <T>(path: string) => { const failure = path === '/p2/workspaces' ? failures.shift() : undefined; if (failure !== undefined) throw failure; return await base.get<T>(path) } }
  const session = memory()
  const store = createStore({ client: flaky, session, local: memory(), location: { search: '', pathname: '/board' }, replaceUrl: () => {}, retryMs: 20 })
  t.teardown(() => store.stop())
  await store.signIn('kept')
  t.equal(store.state.phase, 'loading', 'not sent back to the sign-in form')
  t.equal(session.getItem('planning-token'), 'kept', 'the token is kept for a reload')
  t.match(store.state.status, { text: /^Could not reach the server \(the database is not answering\)\. Still signed in; trying again in 1 s\.$/, error: true }, 'says what happened')
  await until(() => store.state.phase === 'ready')
  t.equal(failures.length, 0, 'tried again after each failure')
  t.same([store.state.phase, store.state.token, session.getItem('planning-token')], ['ready', 'kept', 'kept'])
  t.same(store.state.choice, { workspace: 'w', repo: null })

  // No answer at all: a timeout, then the same.
  const silent: Client = { ...base, get: async <T>(path: string) => path === '/p2/workspaces' ? await new Promise<T>(() => {}) : await base.get<T>(path) }
  const waiting = createStore({ client: silent, session: memory(), local: memory(), location: { search: '', pathname: '/board' }, replaceUrl: () => {}, retryMs: 20_000, signInTimeoutMs: 20 })
  t.teardown(() => waiting.stop())
  await waiting.signIn('slow')
  t.match(waiting.state.status.text, /^Could not reach the server \(no answer in 20 ms\)\. Still signed in; trying again in 20 s\.$/)
  t.equal(waiting.state.token, 'slow')
  await waiting.signOut()
  t.equal(waiting.state.phase, 'signed-out', 'signing out stops the retries')

  // A 401 still ends it.
  const refusing: Client = { ...base, get: async <T>(path: string) => { if (path === '/p2/workspaces') throw new ApiError('the API token is not valid', 401); return await base.get<T>(path) } }
  const kept = memory()
  kept.setItem('planning-token', 'revoked')
  const refused = createStore({ client: refusing, session: kept, local: memory(), location: { search: '', pathname: '/board' }, replaceUrl: () => {}, retryMs: 20 })
  t.teardown(() => refused.stop())
  await refused.start()
  t.same([refused.state.phase, kept.getItem('planning-token')], ['signed-out', null], 'a 401: signed out, the token forgotten')
})

t.test('components render roles and names, text escaped', async (t) => {
  const { store } = await signedIn(t)
  const relations = store.state.relations
  const place = { top: 0, index: 0, count: 3, focused: false, editing: false, dragging: false }
  const handlers = { onEdit: () => {}, onEstimate: async () => true, onSay: () => {}, onFocus: () => {} }
  const props = { repo: store.state.repos.get(1), showRepo: true, relations, epicName: (k: string) => k, ...place, ...handlers }
  const two = renderToString(html`<${Card} card=${store.state.cards.get('1#2')} ...${props} />`)
  t.match(two, /aria-label="#2 Two &lt;b>, api, 3 pts"/, 'the name starts with #number title; the title is text')
  t.match(two, /<span class="title">Two &lt;b><\/span>/)
  t.match(two, />3 pts<\/button>/, 'the estimate when set')
  const one = renderToString(html`<${Card} card=${store.state.cards.get('1#1')} ...${props} />`)
  t.notMatch(one, /no estimate<\/|class="estimate"/, 'no estimate pill when none is set')
  t.match(one, /Blocking 1/)
  const seven = renderToString(html`<${Card} card=${store.state.cards.get('2#7')} ...${props} repo=${store.state.repos.get(2)} />`)
  t.match(seven, /aria-label="#7 Seven, web, no estimate, blocked by 1"/)
  t.match(seven, /class="badge blocked">Blocked/)

  const cards = Array.from({ length: 1500 }, (_, i) => card(i + 1))
  const column = renderToString(html`<${Column} id="todo" name="To Do" cards=${cards} collapsed=${false} filtering=${false} dropSlot=${null} focusIndex=${-1}
    onToggle=${() => {}} renderCard=${(c: CardData) => html`<li key=${c.key}>${c.title}</li>`} />`)
  t.match(column, /role="list" aria-label="To Do"/)
  t.match(column, /1500 issues · 0 pts/)
  t.match(column, new RegExp(`height: ?${1500 * ROW}px`))
  t.ok((column.match(/<li/g) ?? []).length < 40, 'a long column draws a window of rows')
  const across = renderToString(html`<${Column} id="todo" name="To Do" cards=${cards} collapsed=${false} filtering=${false} dropSlot=${null} focusIndex=${-1} spare=${0}
    onToggle=${() => {}} renderCard=${(c: CardData) => html`<li key=${c.key}>${c.title}</li>`} />`)
  t.equal((across.match(/<li/g) ?? []).length, (column.match(/<li/g) ?? []).length - 6, 'out of view across the board: the rows of its view, no spare ones')
  t.match(renderToString(html`<${Column} id="x" name="Done" cards=${[]} collapsed=${false} filtering=${true} dropSlot=${null} focusIndex=${-1} onToggle=${() => {}} renderCard=${() => null} />`),
    /No card here matches the filter/, 'an empty column says why')
  t.match(renderToString(html`<${Column} id="x" name="Done" cards=${[]} collapsed=${true} filtering=${false} dropSlot=${null} focusIndex=${-1} onToggle=${() => {}} renderCard=${() => null} />`),
    /aria-expanded="false"/)

  const filters = renderToString(html`<${Filters} store=${store} inputRef=${{ current: null }} />`)
  t.match(filters, /type="search" aria-label="Filter"/)
  for (const name of ['Repository', 'Labels', 'Assignees', 'Epics', 'Estimate']) t.match(filters, new RegExp(`aria-expanded="false"[^>]*>${name}</button>`), name)
  // The labels and assignees are gathered from every card only for an open menu, not at each new map of cards.
  const cardsBefore = store.state.cards
  let walked = 0
  const counted = new Map(cardsBefore)
  const values = counted.values.bind(counted)
  counted.values = () => { walked++; return values() }
  store.state.cards = counted
  renderToString(html`<${Filters} store=${store} inputRef=${{ current: null }} />`)
  t.equal(walked, 0, 'closed menus read no card')
  store.state.cards = cardsBefore
  const picker = renderToString(html`<${Picker} store=${store} />`)
  t.match(picker, /<optgroup label="Team"><option selected value="w">Team: all repositories<\/option><option value="w\/1">Team: acme\/api<\/option>/)
  t.notMatch(picker, /Choose a board/, 'no placeholder once a board is chosen')
  const chosen = store.state.choice
  store.state.choice = null
  t.match(renderToString(html`<${Picker} store=${store} />`), /<option selected value disabled>Choose a board<\/option>/, 'none chosen yet (a board made since the sign-in): the picker says so')
  store.state.choice = chosen
  const panel = renderToString(html`<${IssuePanel} store=${store} issueKey="1#2" onClose=${() => {}} />`)
  t.match(panel, /<dialog[^>]*aria-labelledby="panel-title"/)
  t.match(panel, /<h2 id="panel-title">#2 Two &lt;b><\/h2>/)
  t.match(panel, />Close<\/button>/)
  t.match(renderToString(html`<${Help} onClose=${() => {}} />`), /Keyboard help/)
  t.equal(KEYS.length, 8)
  t.same(progress(store, '1#9'), { closed: 0, total: 0, donePoints: 0, totalPoints: 0 })
})

const BURNDOWN: BurndownReport = {
  time_zone: 'Europe/Berlin',
  starts_at: '2026-03-22T23:00:00.000Z',
  ends_at: '2026-03-25T23:00:00.000Z',
  days: [{ date: '2026-03-23', remaining_points: 10, remaining_issues: 3, closed_points: 0 }, { date: '2026-03-24', remaining_points: 4, remaining_issues: 1, closed_points: 6 }],
  ideal: [{ date: '2026-03-23', remaining_points: 10 }, { date: '2026-03-24', remaining_points: 5 }, { date: '2026-03-25', remaining_points: 0 }],
  scope_changes: [{ at: '2026-03-23T23:30:00.000Z', repo_id: 1, issue_number: 5, change: 'estimate', points: -2 }]
}

t.test('charts: axes, lines, bars and dots where the numbers say', async (t) => {
  t.same([niceMax(0), niceMax(0.4), niceMax(3), niceMax(10), niceMax(11), niceMax(260)], [1, 0.5, 5, 10, 20, 500])
  t.equal(dayIn('2026-03-23T23:30:00.000Z', 'Europe/Berlin'), '2026-03-24', 'a scope change falls on its day in the report\'s zone')
  const chart = burndownChart(BURNDOWN)
  const bottom = FRAME.height - FRAME.bottom
  t.same(chart.dates, ['2026-03-23', '2026-03-24', '2026-03-25'])
  const middle = FRAME.left + (FRAME.width - FRAME.left - FRAME.right) / 2
  t.same(chart.actual.map((p) => [p.x, p.y]), [[FRAME.left, FRAME.top], [middle, FRAME.top + (bottom - FRAME.top) * 0.6]])
  t.equal(chart.ideal.at(-1)!.y, bottom, 'the ideal line ends at 0')
  t.equal(chart.ideal.at(-1)!.x, FRAME.width - FRAME.right, 'on the last day')
  t.same(chart.scope, [{ x: chart.actual[1].x, label: '2026-03-24: #5 re-estimated (-2 pts)' }])
  t.equal(chart.actual[0].label, '2026-03-23: 10 pts remaining, 3 open')
  const sprint = { starts_at: '', ends_at: '' }
  const sprints = [{ ...sprint, id: 'a', name: 'Sprint 1', points_closed: 5, issues_closed: 1 }, { ...sprint, id: 'b', name: 'Sprint 2', points_closed: 2.5, issues_closed: 2 }]
  const velocity = velocityChart({ sprints, average_points: 3.75, average_issues: 1.5 })
  t.same(velocity.bars.map((b) => [b.height, b.label]), [[bottom - FRAME.top, 'Sprint 1: 5 pts, 1 issue closed'], [(bottom - FRAME.top) / 2, 'Sprint 2: 2.5 pts, 2 issues closed']])
  t.equal(velocity.average, FRAME.top + (bottom - FRAME.top) / 4)
  const cycle = cycleTimeChart({
    from: '2026-03-01T00:00:00.000Z',
    to: '2026-03-11T00:00:00.000Z',
    start_pipeline_id: 'x',
    count: 1,
    p50: 2,
    p85: 2,
    p95: null,
    issues: [{ repo_id: 1, issue_number: 3, title: 'T', started_at: '2026-03-04T00:00:00.000Z', closed_at: '2026-03-06T00:00:00.000Z', days: 2 }]
  })
  t.same(cycle.dots.map((d) => [d.x, d.y, d.label]), [[FRAME.left + (FRAME.width - FRAME.left - FRAME.right) / 2, FRAME.top, '#3 T: 2 days']])
  t.same(cycle.lines.map((l) => l.label), ['p50, p85 2 days'], 'equal percentiles share a line; a null one draws none')
})

t.test('reports render a chart with a summary, a table, and say when there is nothing to draw', async (t) => {
  const burndown = renderToString(html`<${BurndownView} report=${BURNDOWN} name="Sprint <1>" />`)
  t.match(burndown, /<svg[^>]*role="img" aria-label="Burndown of Sprint &lt;1>: 4 points remaining on 2026-03-24, ideal from 10 to 0, 1 scope change"/)
  t.equal((burndown.match(/<circle/g) ?? []).length, 2, 'one dot per measured day')
  t.match(burndown, /<caption>Burndown of Sprint &lt;1>, by day \(Europe\/Berlin\): points remaining/)
  t.match(burndown, /<th scope="row">2026-03-25<\/th><td><\/td><td><\/td>\s*<td><\/td><td>0<\/td>/, 'a day to come: only the ideal')
  const open = renderToString(html`<${BurndownView} report=${{ ...BURNDOWN, ideal: null }} name="v1" />`)
  t.match(open, /aria-label="Burndown of v1: 4 points remaining on 2026-03-24, no ideal line \(no due date\), 1 scope change"/, 'a milestone without a due date')
  t.notMatch(open, /class="ideal"|class="key ideal"/, 'no ideal line drawn')
  t.same(burndownChart({ ...BURNDOWN, ideal: null }).dates, ['2026-03-23', '2026-03-24'], 'the days measured')
  t.match(renderToString(html`<${VelocityView} report=${{ sprints: [], average_points: 0, average_issues: 0 }} />`), /No closed sprint yet/)
  t.match(renderToString(html`<${CycleTimeView} report=${{ from: '2026-01-01T00:00:00Z', to: '2026-03-01T00:00:00Z', start_pipeline_id: null, issues: [], count: 0, p50: null, p85: null, p95: null }} />`),
    /No issue closed from 2026-01-01 to 2026-03-01/)
  const choices = burndownChoices([
    { id: 'a1', name: 'Sprint 1', starts_at: '', ends_at: '', state: 'closed' }, { id: 'b2', name: 'Sprint 2', starts_at: '', ends_at: '', state: 'active' },
    { id: 'c3', name: 'Sprint 3', starts_at: '', ends_at: '', state: 'future' }
  ], [{ repo: 7, number: 2, title: 'v1', repoName: 'api' }], [{ release_id: 'ff', title: 'Launch' }])
  t.same(choices.map((c) => [c.value, c.label, c.path]), [
    ['sprint:b2', 'Sprint 2 (current)', '/p2/sprints/b2/burndown'], ['sprint:c3', 'Sprint 3 (to come)', '/p2/sprints/c3/burndown'], ['sprint:a1', 'Sprint 1', '/p2/sprints/a1/burndown'],
    ['milestone:7:2', 'v1 (api)', '/p1/repositories/7/milestones/2/burndown'], ['release:ff', 'Launch', '/p1/reports/release/ff/burndown']
  ], 'the current sprint first, then those to come, the closed ones, milestones and release reports')
  const future = burndownChoices([{ id: 'c3', name: 'Sprint 1', starts_at: '2026-12-07', ends_at: '', state: 'future' }], [], [])
  t.same(future.map((c) => c.label), ['Sprint 1 (to come)'], 'sprints that have not started yet have a burndown to pick')
  t.match(renderToString(html`<${NoBurndown} sprints=${{ data: [] }} />`), /set up sprints/)
  t.notMatch(renderToString(html`<${NoBurndown} sprints=${null} />`), /set up sprints/, 'not while the sprints are read')
  t.notMatch(renderToString(html`<${NoBurndown} sprints=${{ error: 'gone' }} />`), /set up sprints/, 'nor when they could not be read')
})

t.test('sprints nearest today first; cycle times under a day in hours', async (t) => {
  const sprint = (id: string, state: 'active' | 'future' | 'closed', starts_at: string) => ({ id, name: id, state, starts_at, ends_at: '' })
  const list = [sprint('s1', 'closed', '2026-11-02'), sprint('s2', 'closed', '2026-11-09'), sprint('s3', 'active', '2026-11-16'),
    sprint('s4', 'future', '2026-11-23'), sprint('s5', 'future', '2026-11-30')]
  t.same(nearestFirst(list).map((s) => s.id), ['s3', 's4', 's5', 's2', 's1'])
  const store = createStore({ client: fakeClient(routes), session: memory(), local: memory(), location: { search: '', pathname: '/board' }, replaceUrl: () => {} })
  store.state.sprints = list
  const filters = renderToString(html`<${Filters} store=${store} inputRef=${{ current: null }} />`)
  t.match(filters, /Any<\/option><option value="s3">s3 \(current\)<\/option><option value="s4">s4 \(to come\)<\/option><option value="s5">s5 \(to come\)<\/option><option value="s2">s2<\/option><option value="s1">s1<\/option>/,
    'the sprint filter lists the current sprint, then the nearest to come, then the latest ended')
  t.same([daysText(0.005), daysText(0.0001), daysText(0.5), daysText(1 / 24), daysText(1), daysText(2.25)], ['7 minutes', '1 minute', '12 hours', '1 hour', '1 day', '2.25 days'])
  const report = {
    from: '2026-03-01T00:00:00.000Z',
    to: '2026-03-11T00:00:00.000Z',
    start_pipeline_id: 'x',
    count: 1,
    p50: 0.25,
    p85: 0.25,
    p95: 0.25,
    issues: [{ repo_id: 1, issue_number: 3, title: 'T', started_at: '2026-03-04T00:00:00.000Z', closed_at: '2026-03-04T06:00:00.000Z', days: 0.25 }]
  }
  const chart = cycleTimeChart(report)
  t.equal(chart.unit, 'hours', 'an axis of hours when every issue took less than a day')
  t.same(chart.ticks.map((k) => k.label), ['0', '2.5', '5', '7.5', '10'])
  t.equal(chart.dots[0].label, '#3 T: 6 hours')
  const view = renderToString(html`<${CycleTimeView} report=${report} />`)
  t.match(view, /p50 6 hours, p85 6 hours, p95 6 hours/)
  t.notMatch(view, /0\.25 days/)
})

t.test('a description: Markdown as elements, raw HTML as text, links that leave with rel and target', async (t) => {
  const shown = renderToString(html`<${Description} text=${'# Plan\n\n**Bold** and `code` <script>alert(1)</script> <b onclick="x()">b</b>\n\n' +
    '- [site](https://example.com/a)\n- [here](/admin) [js](javascript:alert(1)) https://bare.example.org\n\n![shot](https://img.example.com/s.png)\n\n<div>block</div>'} />`)
  t.match(shown, /<h1>Plan<\/h1>/)
  t.match(shown, /<strong>Bold<\/strong> and <code>code<\/code>/)
  t.match(shown, /&lt;script>alert\(1\)&lt;\/script>/, 'a script tag is text')
  t.match(shown, /&lt;b onclick=&quot;x\(\)&quot;>b&lt;\/b>/, 'raw inline HTML is text')
  t.match(shown, /&lt;div>block&lt;\/div>/, 'raw block HTML is text')
  t.notMatch(shown, /<script|<b |<div>|<[a-z]+ [^>]*onclick|<img/, 'no raw tag, handler or image reaches the page')
  t.match(shown, /<li><a href="https:\/\/example.com\/a" target="_blank" rel="noopener nofollow">site<\/a><\/li>/, 'a tight list holds its links, each with rel and target')
  t.match(shown, /<a href="https:\/\/bare.example.org" target="_blank" rel="noopener nofollow">/, 'a bare address is a link too')
  t.notMatch(shown, /href="\/admin"|href="javascript/i, 'no link into this server, none that runs script')
  t.match(shown, /here/)
  t.match(shown, /<a href="https:\/\/img.example.com\/s.png" target="_blank" rel="noopener nofollow">shot<\/a>/, 'an image is a link to it, never loaded')
  t.match(renderToString(html`<${Description} text=${null} />`), /No description/)
  t.match(renderToString(html`<${Description} text=${'  \n'} />`), /No description/)
  const had = Object.getOwnPropertyDescriptor(globalThis, 'location')
  Object.defineProperty(globalThis, 'location', { value: { origin: 'https://plan.example.com' }, configurable: true })
  try {
    const own = renderToString(html`<${Description} text=${'[reset](https://plan.example.com/admin/x) [out](https://other.example.com/)'} />`)
    t.notMatch(own, /href="https:\/\/plan.example.com/, 'an absolute link to this server is text too')
    t.match(own, /href="https:\/\/other.example.com\/"/)
  } finally {
    if (had === undefined) delete (globalThis as { location?: unknown }).location
    else Object.defineProperty(globalThis, 'location', had)
  }
})

t.test('the page\'s sources never write HTML from strings', async (t) => {
  const dir = new URL('../board/src/', import.meta.url)
  const files = [...readdirSync(dir), ...readdirSync(new URL('components/', dir)).map((f) => join('components', f))].filter((f) => f.endsWith('.ts'))
  t.ok(files.length >= 10)
  for (const file of files) t.notMatch(readFileSync(new URL(file, dir), 'utf8'), /innerHTML|dangerouslySetInnerHTML|insertAdjacentHTML|document\.write/, file)
})

t.test('the store: the live stream reads the board again on a change, and follows the chosen workspace', async (t) => {
  const opened: Array<{ url: string, on: LiveHandlers, closed: boolean }> = []
  const reads: string[] = []
  const client = fakeClient(routes)
  const counted: Client = { ...client, read: async (path, etag) => { reads.push(path); return await client.read(path, etag) } }
  const store = createStore({
    client: counted,
    session: memory(),
    local: memory(),
    location: { search: '', pathname: '/board' },
    replaceUrl: () => {},
    openLive: (url, on) => {
      const live = { url, on, closed: false }
      opened.push(live)
      return { close: () => { live.closed = true } }
    }
  })
  t.teardown(() => store.stop())
  await store.signIn('a token/+')
  t.equal(opened.length, 1)
  t.equal(opened[0].url, '/base/p2/workspaces/w/live', 'no token in the address')
  opened[0].on.open()
  const before = reads.filter((p) => p.endsWith('/board')).length
  opened[0].on.change()
  await new Promise((resolve) => setTimeout(resolve, 20))
  t.equal(reads.filter((p) => p.endsWith('/board')).length, before + 2, 'both boards read again at once')
  await store.signOut()
  t.ok(opened[0].closed, 'signing out closes the stream')
})

t.test('the store: a pipeline\'s host label is saved trimmed, an empty one cleared, and the Settings view is in the address', async (t) => {
  const sent: Array<[string, string, unknown]> = []
  const { store, urls } = await signedIn(t, sent)
  store.setView('settings')
  t.equal(urls.at(-1), '/board?board=w&view=settings')
  t.equal(await store.setHostLabel('todo', '  status: todo '), true)
  t.same(sent.at(-1), ['PATCH', '/p2/workspaces/w/pipelines/todo', { host_label: 'status: todo' }])
  t.equal(store.state.pipelines.find((p) => p.id === 'todo')!.host_label, 'status: todo')
  t.equal(store.state.workspaces[0].pipelines.find((p) => p.id === 'todo')!.host_label, 'status: todo', 'the workspace list follows')
  t.equal(store.state.status.text, 'To Do writes the label "status: todo" to the issue host now.')
  await store.setHostLabel('todo', '')
  t.same(sent.at(-1), ['PATCH', '/p2/workspaces/w/pipelines/todo', { host_label: null }])
  t.equal(await store.setHostLabel('no-such-pipeline', 'x'), false, 'nothing sent for a pipeline the board does not have')
  t.equal(sent.length, 2)
})

t.test('the store: an edit sends what changed and keeps the board\'s estimate on the card', async (t) => {
  const sent: Array<[string, string, unknown]> = []
  const { store } = await signedIn(t, sent)
  const client = store.client as Client & { send: Client['send'] }
  const before = store.state.cards.get('1#2')!
  client.send = async <T>(method: string, path: string, body: unknown) => {
    sent.push([method, path, body])
    return { issue_number: 2, title: 'New', html_url: 'h/2', status: 'open', is_epic: false, labels: [{ name: 'bug', color: null }], assignees: [] } as T
  }
  t.equal(await store.editIssue('1#2', { title: 'New', labels: ['bug'] }), true)
  t.same(sent.at(-1), ['PATCH', '/p1/repositories/1/issues/2', { title: 'New', labels: ['bug'] }])
  const after = store.state.cards.get('1#2')!
  t.match(after, { title: 'New', labels: [{ name: 'bug' }], estimate: before.estimate })
  t.equal(store.state.status.text, 'Saved #2.')
  client.send = async () => { throw new ApiError('write permission on repository 1 is required', 403) }
  t.equal(await store.editIssue('1#2', { title: 'Other' }), false)
  t.equal(store.state.cards.get('1#2')!.title, 'New', 'a refusal keeps the card')
  t.equal(store.state.status.text, 'Not saved: write permission on repository acme/api is required. #2 keeps what it had.')
})

t.test('administration: sections, their controls by name, and what the forms check before asking', async (t) => {
  t.same(reorder(['a', 'b', 'c'], 2, 0), ['c', 'a', 'b'])
  t.same(reorder(['a', 'b', 'c'], 0, 1), ['b', 'a', 'c'])
  t.same(reorder(['a', 'b'], 1, 2), ['a', 'b'], 'past the end: unchanged')
  t.same(pipelineNames(' To Do, ,Done ,'), ['To Do', 'Done'])
  t.same(repositoryErrors('acme', 'api'), {})
  t.same(Object.keys(repositoryErrors('-x', 'a b')), ['owner', 'name'])
  t.equal(fieldOf('body/name must NOT have fewer than 1 characters', ['owner', 'name']), 'name')
  t.equal(fieldOf('repository acme/api already exists', ['owner', 'name']), 'owner', 'no field named: the first')
  t.same(invalid('f', 'Too short'), { id: 'f', 'aria-invalid': 'true', 'aria-describedby': 'f-error' })
  t.same(invalid('f', ''), { id: 'f' })
  t.match(renderToString(html`<${FieldError} id="f" error="Too <short>" />`), '<p class="field-error" id="f-error">Too &lt;short></p>')

  const data = {
    repositories: [{ id: 1, owner: 'acme', name: 'api' }, { id: 2, owner: 'acme', name: 'web<b>' }],
    workspaces: [{ id: 'w', name: 'Team', description: null, repositories: [1, 2], pipelines: [{ id: 'p1', name: 'To Do' }, { id: 'p2', name: 'Done' }] }],
    users: [{ id: 1, login: 'ann', email: 'ann@example.test', administrator: true, last_sign_in_at: null }, { id: 2, login: 'bob', email: null }]
  }
  const context: AdminContext = { client: fakeClient({}), say: () => {}, reload: async () => {} }
  const page = renderToString(html`<${AdminSections} data=${data} context=${context} />`)
  for (const text of ['>People</h3>', '>Invite</button>', '>Audit log</h3>', '<th scope="row">ann</th><td>ann@example.test</td><td>administrator</td><td>never</td>',
    '>Unmake administrator</button>', '>Make administrator</button>', '>Remove</button>', '>Change permission</button>', '>Person <select', '>Action <select', '>Pending invites</h4>']) t.match(page, text)
  t.same([maker('user:ann'), maker('admin')], ['ann', 'admin'], 'who made an invite, by login')
  t.equal(auditUrl('', '', null), '/admin/audit?limit=200', 'anyone, any action: the newest')
  t.equal(auditUrl('user:ann', 'token.created', '41'), '/admin/audit?limit=200&actor=user%3Aann&action=token.created&cursor=41', 'the server filters the whole log, page by page')
  t.same(auditPeople([{ login: 'ann' }, { login: 'bob' }], ['anonymous', 'user:ann']), ['admin', 'anonymous', 'user:ann', 'user:bob'], 'everyone with an account can be chosen, seen in the log or not')
  for (const text of ['>Repositories</h3>', '>Workspaces</h3>', '>New repository</button>', '>New workspace</button>', '>Add pipeline</button>', '>Pipeline name</label>', 'aria-label="Pipelines of Team"', '<li class="pipeline" aria-label="To Do"']) t.match(page, text)
  t.match(page, 'acme/web&lt;b>', 'names as text')
  t.match(page, '<th scope="col">Connection</th>', 'the repositories with their connection')
  const gitea = { id: 'c1', kind: 'gitea' as const, web_url: 'https://gitea.example' }
  t.same([connectionOf({ id: 1, owner: 'a', name: 'b', connection_id: 'c1' }, [gitea]), connectionOf({ id: 1, owner: 'a', name: 'b', connection_id: null }, [gitea]), connectionOf({ id: 1, owner: 'a', name: 'b', connection_id: 'gone' }, [])],
    ['Gitea https://gitea.example', 'none', 'a connection'], 'named as the Connections section names it; none when it lives here')
  t.match(page, /<button type="button" disabled>Move left<\/button>/, 'the first pipeline cannot move left')
  t.match(page, /<button type="button" disabled>Move right<\/button>/, 'the last cannot move right')
})

t.test('the Account view: its sections by name; a token\'s expiry from the choice', async (t) => {
  const { store } = await signedIn(t)
  store.set({ account: { login: 'ann', administrator: false } })
  const page = renderToString(html`<${AccountView} store=${store} />`)
  for (const text of ['>Account</h2>', '<strong>ann</strong>', '>Change password</h3>', '>Current password</label>', '>New password</label>', '>Change password</button>', '>API tokens</h3>', '>New token</button>']) t.match(page, text)
  t.equal(expiryFrom(0, new Date('2026-01-01T00:00:00Z')), null, 'never')
  t.equal(expiryFrom(30, new Date('2026-01-01T00:00:00Z')), '2026-01-31T00:00:00.000Z')
  t.equal(fieldOf('current password is wrong', ['current_password', 'new_password']), 'current_password', 'a field named with spaces or underscores')
})

t.test('a card\'s chips are whole or counted in "+N"; a long epic name ends at a word; the folded filters count what is chosen', async (t) => {
  t.same(fitLabels(['bug', 'ui'], 20), { shown: ['bug', 'ui'], more: [] }, 'all that fit are shown')
  t.same(fitLabels(['backend', 'bug', 'good first issue', 'needs-design-review-from-the-platform-team'], 30),
    { shown: ['backend', 'bug'], more: ['good first issue', 'needs-design-review-from-the-platform-team'] }, 'the first that fit beside a "+2"')
  t.same(fitLabels(['a-label-longer-than-the-line-of-chips-is', 'bug'], 20), { shown: ['bug'], more: ['a-label-longer-than-the-line-of-chips-is'] }, 'a later short one still shows')
  t.same(fitLabels(['one', 'two'], 2), { shown: [], more: ['one', 'two'] }, 'no room: all in "+2"')
  t.same(fitLabels([], 0), { shown: [], more: [] })
  const shown = fitLabels(['aaaa', 'bbbb', 'cccc', 'dddd'], 20)
  t.ok(shown.shown.reduce((n, l) => n + l.length + CHIP, 0) + `+${shown.more.length}`.length + CHIP <= 20, 'the "+N" chip has its room')
  t.equal(chipsWidth(['3 pts', 'PR'], 2), 5 + 2 + 2 * CHIP + CHIP + 4, 'texts, chips and avatars')
  t.equal(chipsWidth([], 0), 0)
  t.equal(wholeWords('#12 Faster sign-in', 20), '#12 Faster sign-in', 'short enough: whole')
  t.equal(wholeWords('#12 Make the sign-in page faster for everyone', 20), '#12 Make the…', 'cut between words')
  t.equal(wholeWords('#12 Internationalization', 10), '#12…')
  t.equal(wholeWords('Internationalization', 10), 'Internationalization…', 'a first word longer than the room stays whole')

  const labels = ['needs-design-review-from-the-platform-team', 'bug', 'good first issue', 'backend'].map((name) => ({ name, color: null }))
  const relations = noRelations()
  const page = renderToString(html`<${Card} card=${card(5, { labels, estimate: 3 })} showRepo=${false} relations=${relations} epicName=${() => ''} top=${0} index=${0} count=${1} />`)
  const fit = fitLabels(labels.map((l) => l.name), META_ROOM - chipsWidth(['3 pts'], 0))
  t.ok(fit.more.length > 0, 'these labels do not all fit')
  for (const name of fit.shown) t.match(page, `<span class="label">${name}</span>`, `${name} shown whole`)
  t.match(page, `<span class="label plus" title="${fit.more.join(', ')}">+${fit.more.length}</span>`, 'the others counted, named in its title')
  t.notMatch(page, '>needs-design-review', 'the long one is not drawn, so not cut')
  relations.epicsOf.set('1#5', ['1#9'])
  t.match(renderToString(html`<${Card} card=${card(5)} showRepo=${false} relations=${relations} epicName=${() => '#9 Make the sign-in page faster for everyone'} top=${0} index=${0} count=${1} />`),
    '<span class="badge in-epic" title="In epic #9 Make the sign-in page faster for everyone">#9 Make the sign-in…</span>', 'the epic badge ends at a word, its whole name in the title')

  const f = { text: 'x', repos: [1], estimate: '', epics: [], blocked: 'blocked', labels: [], assignees: [], sprint: '' } as Filter
  t.equal(activeFilters(f), 2, 'the text is not counted: it stays in sight')
  const { store } = await signedIn(t)
  const bar = renderToString(html`<${Filters} store=${store} inputRef=${{ current: null }} />`)
  t.match(bar, /<button type="button" class="fold" aria-expanded="false" aria-controls="filter-choices">\s*Filters<\/button><div class="filter-choices" id="filter-choices">/, 'the button that folds the menus on a phone')
  store.setFilter({ labels: ['bug'] })
  t.match(renderToString(html`<${Filters} store=${store} inputRef=${{ current: null }} />`), /class="fold active"[^>]*>\s*Filters \(1\)<\/button>/, 'and how many are chosen')
})
