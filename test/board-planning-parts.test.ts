/// <reference lib="dom" />
import t, { type Test } from 'tap'
import { renderToString } from 'preact-render-to-string'
import { ApiError, type Client } from '../board/src/api.js'
import { EpicIssues, membersOf } from '../board/src/components/epic-issues.js'
import { IssuePanel } from '../board/src/components/issue-panel.js'
import { MilestoneSettings, milestonesOf, startDateError } from '../board/src/components/settings-milestones.js'
import { mergeReleases, releaseErrors, ReleaseSettings, type Release } from '../board/src/components/settings-releases.js'
import { SprintSettings, sprintSummary } from '../board/src/components/settings-sprints.js'
import { html } from '../board/src/html.js'
import { keyOf, type Card } from '../board/src/model.js'
import { dayStart, issueName, nameRepos, repoName } from '../board/src/names.js'
import { createStore } from '../board/src/store.js'

// The planning set-up's parts without a browser (board-planning.test.ts drives them in one):
// what the forms check before asking, how server messages name repositories, what a reader sees.

const repos = new Map([[1001, { id: 1001, owner: 'acme', name: 'api', html_url: 'h' }], [1002, { id: 1002, owner: 'acme', name: 'web', html_url: 'h' }]])

t.test('repositories by name, in the page\'s text and in the server\'s messages', async (t) => {
  t.equal(repoName(repos, 1001), 'acme/api')
  t.equal(repoName(repos, 7), 'repository 7', 'an unknown one by its id')
  t.equal(issueName(repos, 1002, 3), 'acme/web#3')
  t.equal(nameRepos('add_issues not found (repo_id#issue_number): 1001#999, 1002#3', repos), 'add_issues not found: acme/api#999, acme/web#3')
  t.equal(nameRepos('milestone 4 not found in repository 1001', repos), 'milestone 4 not found in repository acme/api')
  t.equal(nameRepos('issues not in the report\'s repositories: 42#1', repos), 'issues not in the report\'s repositories: 42#1', 'unknown ids stay')
  t.equal(dayStart('2026-11-27'), '2026-11-27T00:00:00.000Z')
})

t.test('a new release report\'s fields are checked before asking; reports listed once, open ones first', async (t) => {
  t.same(releaseErrors({ title: 'v2', start: '2026-11-01', end: '2026-11-30', repositories: [1001] }), {})
  t.same(Object.keys(releaseErrors({ title: ' ', start: '', end: '', repositories: [] })).sort(), ['desired_end_date', 'repositories', 'start_date', 'title'])
  t.match(releaseErrors({ title: 'v2', start: '2026-11-30', end: '2026-11-01', repositories: [1001] }), { desired_end_date: /not be before the start/ })
  t.same(releaseErrors({ title: 'v2', start: '2026-11-01', end: '2026-11-01', repositories: [1001] }), {}, 'one day is a release too')
  const r = (id: string, start: string, state = 'open'): Release => ({ release_id: id, title: id, start_date: start, desired_end_date: start, state })
  t.same(mergeReleases([[r('a', '2026-01-01'), r('c', '2026-03-01', 'closed')], [r('a', '2026-01-01'), r('b', '2026-02-01')]]).map((x) => x.release_id), ['b', 'a', 'c'])
})

t.test('milestones from the board\'s issues; a start date is a day, not after the due date', async (t) => {
  const card = (repo: number, number: number, milestone?: Card['milestone']): Card => ({
    key: keyOf(repo, number), repo, number, title: 't', html_url: 'h', estimate: null, is_epic: false, closed: false, pull_request: false, labels: [], assignees: [], ...(milestone === undefined ? {} : { milestone })
  })
  const v1 = { number: 1, title: 'v1.0', due_on: '2026-12-01T00:00:00Z' }
  t.same(milestonesOf([card(1002, 1, v1), card(1001, 2, v1), card(1001, 3, v1), card(1001, 4), card(9, 1, v1)], [1001, 1002]), [
    { repo: 1001, number: 1, title: 'v1.0', due_on: v1.due_on }, { repo: 1002, number: 1, title: 'v1.0', due_on: v1.due_on }
  ], 'each once, only the board\'s repositories')
  t.equal(startDateError('2026-11-20', v1.due_on), undefined)
  t.match(startDateError('', null), /first day/)
  t.match(startDateError('2026-12-02', v1.due_on), /not be after the due date \(2026-12-01\)/)
  t.equal(sprintSummary({ length_weeks: 2, starts_on: '2026-11-02', time_zone: 'UTC', carry_over: true }), '2-week sprints from 2026-11-02 (UTC); a sprint\'s open issues carry over to the next one.')
})

const WORKSPACE = { id: 'w', name: 'Team', description: null, repositories: [1001], pipelines: [{ id: 'todo', name: 'To Do' }] }
const routes: Record<string, unknown> = {
  '/p2/workspaces/w/repositories/1001/board': { pipelines: [{ id: 'todo', name: 'To Do', issues: [{ issue_number: 1, is_epic: true }, { issue_number: 2, is_epic: false }] }] },
  '/p2/workspaces/w/repositories': [{ id: 1001, owner: 'acme', name: 'api', html_url: 'h' }],
  '/p2/workspaces/w/sprints': [],
  '/p2/workspaces': [WORKSPACE],
  '/p1/repositories/1001/issues?': [
    { issue_number: 1, title: 'Epic', html_url: 'h/1', status: 'open', is_epic: true, milestone: { number: 1, title: 'v1.0', due_on: null } },
    { issue_number: 2, title: 'Two', html_url: 'h/2', status: 'open', is_epic: false }
  ],
  '/p1/repositories/1001/dependencies': { dependencies: [] },
  '/p1/repositories/1001/epics/1': { issues: [{ repo_id: 1001, issue_number: 2 }] },
  '/p1/repositories/1001/epics': { epic_issues: [{ repo_id: 1001, issue_number: 1 }] }
}
function fakeClient (sent: Array<[string, string, unknown]>, refuse?: ApiError): Client {
  const answer = (path: string) => {
    const key = Object.keys(routes).find((k) => path.startsWith(k))
    if (key === undefined) throw new ApiError(`no route ${path}`, 404)
    return structuredClone(routes[key])
  }
  return {
    read: async <T>(path: string) => ({ body: answer(path) as T, etag: '"x"' }),
    get: async <T>(path: string) => answer(path) as T,
    href: (path: string) => path,
    text: async (path: string) => String(answer(path)),
    send: async <T>(method: string, path: string, body: unknown) => {
      sent.push([method, path, body])
      if (refuse !== undefined) throw refuse
      return undefined as T
    }
  }
}
const memory = () => {
  const data = new Map<string, string>()
  return { getItem: (k: string) => data.get(k) ?? null, setItem: (k: string, v: string) => { data.set(k, v) }, removeItem: (k: string) => { data.delete(k) } }
}
async function signedIn (t: Test, sent: Array<[string, string, unknown]>, refuse?: ApiError) {
  const store = createStore({ client: fakeClient(sent, refuse), session: memory(), local: memory(), location: { search: '', pathname: '/board' }, replaceUrl: () => {} })
  t.teardown(() => store.stop())
  await store.signIn('token')
  return store
}

t.test('the store: an epic\'s issues added and removed in one request; a refusal is answered, not thrown', async (t) => {
  const sent: Array<[string, string, unknown]> = []
  const store = await signedIn(t, sent)
  t.same(store.state.epics, ['1001#1'])
  t.same(membersOf(store.state.relations.epicsOf, '1001#1'), ['1001#2'])
  t.equal(await store.changeEpic('1001#1', [{ repo_id: 1001, issue_number: 3 }], [{ repo_id: 1001, issue_number: 2 }]), null)
  t.same(sent.at(-1), ['POST', '/p1/repositories/1001/epics/1/update_issues', { add_issues: [{ repo_id: 1001, issue_number: 3 }], remove_issues: [{ repo_id: 1001, issue_number: 2 }] }])
  t.equal(store.state.status.text, 'Added #3 to epic #1. Removed #2 from epic #1.')
  const refused = await signedIn(t, [], new ApiError('add_issues not found (repo_id#issue_number): 1001#9', 400))
  t.equal(await refused.changeEpic('1001#1', [{ repo_id: 1001, issue_number: 9 }], []), 'add_issues not found (repo_id#issue_number): 1001#9')
})

t.test('who only reads sees the planning views without a control; who writes sees them', async (t) => {
  const store = await signedIn(t, [])
  const as = (level: number) => store.set({ account: { login: 'x', administrator: false, levels: new Map([[1001, level]]), scope: 'write' } })
  const views = () => [
    renderToString(html`<${IssuePanel} store=${store} issueKey="1001#1" onClose=${() => {}} />`),
    renderToString(html`<${EpicIssues} store=${store} epic="1001#1" />`),
    renderToString(html`<${ReleaseSettings} store=${store} />`),
    renderToString(html`<${MilestoneSettings} store=${store} />`),
    renderToString(html`<${SprintSettings} store=${store} />`)
  ].join('\n')
  as(3)
  const writer = views()
  for (const control of ['>Edit</button>', '>Close issue</button>', '>Save estimate</button>', '>Add blocker</button>', 'aria-label="Remove #2 from the epic"', '>Add to the epic</button>', '>New release report</button>', '>Save start date</button>']) {
    t.match(writer, control, `an admin sees ${control}`)
  }
  t.match(writer, /<h3 id="panel-epic-issues">Issues in this epic<\/h3>/)
  as(1)
  const reader = views()
  t.notMatch(reader, /<button(?![^>]*class="(close|link)")[^>]*>(?!Close<)/, 'a reader sees no button but Close and the Burndown links')
  t.notMatch(reader, /<(input|select|textarea|form)\b/, 'nor any field or form')
  t.match(reader, /#2 Two/, 'but the epic\'s issues')
  t.match(reader, /v1\.0 \(acme\/api\): …/, 'and the milestone, named with its repository')
})
