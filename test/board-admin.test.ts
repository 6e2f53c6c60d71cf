/// <reference lib="dom" />
import t from 'tap'
import { createHmac } from 'node:crypto'
import type { Page } from 'playwright-core'
import { axe, browserSkip, launchBrowser, newContext, signInWithToken } from './browser.js'
import { ADMIN_TOKEN, build, REPO, TOKENS, WS_OLD, type App } from './helper.js'

// The Administration and Account views in a real browser, as a team lead sets up a team: one
// lean flow (the CI's browser budget), axe-core on each view, the phone width, and every change
// read back through the REST API at once.
const why = browserSkip
if (why !== undefined) t.comment(`skipping the administration browser test: ${why}`)
if (why === undefined) t.setTimeout(180_000)

const sideways = async (page: Page) => await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth)
const admin = async (app: App, url: string) => (await app.admin({ url })).json()
const order = async (page: Page, names: string) =>
  await page.waitForFunction((want) => Array.from(document.querySelectorAll('[aria-label="Pipelines of Platform"] > li')).map((li) => li.getAttribute('aria-label')).join() === want, names)

t.test('an administrator sets up repositories, workspaces and pipelines from the page', { skip: why, timeout: 150_000 }, async (t) => {
  const app = await build(t)
  const address = await app.listen({ host: '127.0.0.1', port: 0 })
  const browser = await launchBrowser()
  t.teardown(async () => await browser.close())
  const context = await newContext(browser, { viewport: { width: 390, height: 844 }, bypassCSP: true })
  const page = await context.newPage()
  // Until an administrator's own token opens the admin API, the test's requests to it carry the admin token.
  await page.route('**/admin/**', async (route) => await route.continue({ headers: { ...route.request().headers(), authorization: `Bearer ${ADMIN_TOKEN}` } }))
  await page.goto(`${address}/?view=admin`)
  await signInWithToken(page, TOKENS.alice)
  const view = page.getByRole('region', { name: 'Administration' })
  await view.getByRole('heading', { name: 'Workspaces' }).waitFor()

  // Repositories: a refusal next to its field, then one that lives here only.
  const repos = view.getByRole('region', { name: 'Repositories' })
  await repos.getByRole('button', { name: 'New repository' }).click()
  await repos.getByLabel('Owner').fill('team')
  await repos.getByLabel('Name').fill('bad name')
  await repos.getByRole('button', { name: 'Create repository' }).click()
  const name = repos.getByRole('textbox', { name: 'Name' })
  t.equal(await name.getAttribute('aria-invalid'), 'true', 'the wrong field is marked')
  t.match(await page.locator(`#${await name.getAttribute('aria-describedby') as string}`).textContent(), /letters, digits/, 'and says why')
  await name.fill('planning')
  await repos.getByRole('button', { name: 'Create repository' }).click()
  await repos.getByRole('rowheader', { name: 'team/planning' }).waitFor()
  const made = (await admin(app, '/admin/repositories') as Array<{ id: number, owner: string, name: string }>).find((r) => r.name === 'planning')
  t.equal(made?.id, 2 ** 40, 'in the API at once, with a local id')

  // Workspaces: a new one with that repository, then its pipelines.
  const spaces = view.getByRole('region', { name: 'Workspaces' })
  await spaces.getByRole('button', { name: 'New workspace' }).click()
  await spaces.getByLabel('Name', { exact: true }).fill('Platform')
  await spaces.getByRole('group', { name: 'Repositories' }).getByLabel('team/planning').check()
  await spaces.getByLabel('Pipelines (separated by commas)').fill('Inbox, Doing, Done')
  await spaces.getByRole('button', { name: 'Create workspace' }).click()
  const ws = spaces.getByRole('region', { name: 'Platform' })
  const pipes = ws.getByRole('list', { name: 'Pipelines of Platform' })
  await pipes.waitFor()
  t.equal(await sideways(page), 0, 'no sideways scroll at 390 px')
  t.same(await axe(page), [], 'axe: no serious or critical violation in the Administration view')

  await ws.getByLabel('Pipeline name').fill('Review')
  await ws.getByRole('button', { name: 'Add pipeline' }).click()
  await pipes.getByRole('listitem', { name: 'Review' }).waitFor()
  await pipes.getByRole('listitem', { name: 'Review' }).getByRole('button', { name: 'Move left' }).click()
  await order(page, 'Inbox,Doing,Review,Done')
  await pipes.getByRole('listitem', { name: 'Inbox' }).getByRole('button', { name: 'Rename' }).click()
  await pipes.getByLabel('New name for Inbox').fill('Backlog')
  await pipes.getByRole('button', { name: 'Save' }).click()
  await pipes.getByRole('listitem', { name: 'Backlog' }).waitFor()
  await pipes.getByRole('listitem', { name: 'Done' }).dragTo(pipes.getByRole('listitem', { name: 'Backlog' }))
  await order(page, 'Done,Backlog,Doing,Review')
  const platform = (await admin(app, '/admin/workspaces') as Array<{ name: string, repositories: number[], pipelines: Array<{ name: string }> }>).find((w) => w.name === 'Platform')
  t.same(platform?.repositories, [2 ** 40])
  t.same(platform?.pipelines.map((p) => p.name), ['Done', 'Backlog', 'Doing', 'Review'], 'added, moved, renamed and dragged: in the API at once')
  await pipes.getByRole('listitem', { name: 'Review' }).getByRole('button', { name: 'Delete' }).click()
  const ask = page.getByRole('dialog', { name: 'Delete the pipeline Review' })
  await ask.getByLabel('Move its issues to').selectOption({ label: 'Doing' })
  await ask.getByRole('button', { name: 'Delete pipeline' }).click()
  await order(page, 'Done,Backlog,Doing')
  const after = (await admin(app, '/admin/workspaces') as Array<{ name: string, pipelines: Array<{ name: string }> }>).find((w) => w.name === 'Platform')
  t.same(after?.pipelines.map((p) => p.name), ['Done', 'Backlog', 'Doing'], 'deleted, its issues moved: in the API at once')

  // Connections: a Gitea connected, its webhook shown once, a signed delivery in its log, an import with its progress.
  const conns = view.getByRole('region', { name: 'Connections' })
  await conns.getByRole('button', { name: 'Connect an issue host' }).click()
  await conns.getByLabel('Kind').selectOption({ label: 'Gitea' })
  await conns.getByRole('button', { name: 'Connect', exact: true }).click()
  t.equal(await conns.getByLabel('Web address').getAttribute('aria-invalid'), 'true', 'Gitea needs its web address, said at the field')
  await conns.getByLabel('Web address').fill('http://127.0.0.1:9')
  await conns.getByLabel('Token').fill('gitea-token')
  await conns.getByRole('button', { name: 'Connect', exact: true }).click()
  const hook = conns.getByRole('group', { name: 'The new connection\'s webhook' })
  const url = await hook.getByLabel('Payload URL').inputValue()
  const secret = await hook.getByLabel('Secret').inputValue()
  t.equal(await hook.getByRole('button', { name: 'Copy' }).count(), 2, 'each with a Copy button')
  const listed = await admin(app, '/admin/connections') as Array<{ id: string, kind: string, has_token: boolean }>
  t.match(listed, [{ kind: 'gitea', has_token: true }], 'in the API at once')
  t.equal(url, `${address}/integrations/${listed[0].id}/webhook`, 'the absolute payload URL')
  const body = JSON.stringify({ zen: 'hi' })
  const ping = await app.inject({ method: 'POST', url: new URL(url).pathname, headers: { 'content-type': 'application/json', 'x-gitea-event': 'ping', 'x-gitea-signature': createHmac('sha256', secret).update(body).digest('hex') }, payload: body })
  t.equal(ping.statusCode, 200, 'the secret shown signs deliveries')
  const conn = conns.getByRole('region', { name: 'Gitea http://127.0.0.1:9' })
  await conn.getByRole('button', { name: 'Refresh the deliveries of http://127.0.0.1:9' }).click()
  await conn.getByRole('cell', { name: 'pong' }).waitFor()
  await conn.getByLabel('Repository to import').fill('team/planning')
  await conn.getByRole('button', { name: 'Import' }).click()
  const bar = conn.getByRole('progressbar', { name: 'Import of team/planning' })
  await bar.waitFor()
  // A private address is refused by the host policy: the import fails at once and says so.
  await conn.getByText(/team\/planning: failed/).waitFor()
  t.equal(await bar.getAttribute('value'), '1', 'the bar ends full')
  t.equal(await sideways(page), 0, 'Connections: no sideways scroll at 390 px')
  t.same(await axe(page), [], 'axe: no serious or critical violation with the connection shown')

  // The token changed, then removed, then the connection ended: each in the API at once, the token never shown back.
  const hasToken = async () => (await admin(app, '/admin/connections') as Array<{ has_token: boolean }>).map((c) => c.has_token)
  await conn.getByRole('button', { name: 'Change the token' }).click()
  const tokenForm = conn.getByRole('form', { name: 'Token of http://127.0.0.1:9' })
  await tokenForm.getByRole('button', { name: 'Save the token' }).click()
  t.equal(await tokenForm.getByLabel('New token').getAttribute('aria-invalid'), 'true', 'an empty token is refused at its field')
  await tokenForm.getByLabel('New token').fill('gitea-token-2')
  await tokenForm.getByRole('button', { name: 'Save the token' }).click()
  await page.getByText('Changed the token of http://127.0.0.1:9.').waitFor()
  t.equal(await tokenForm.count(), 0, 'the form closes')
  t.notOk((await page.content()).includes('gitea-token-2'), 'the token is not shown back')
  t.same(await hasToken(), [true])
  await conn.getByRole('button', { name: 'Change the token' }).click()
  await tokenForm.getByRole('button', { name: 'Remove the token' }).click()
  await conn.getByText(/no token: imports need one/).waitFor()
  t.same(await hasToken(), [false], 'removed: in the API at once')
  await conn.getByRole('button', { name: 'Disconnect' }).click()
  await conn.getByRole('group', { name: 'Disconnect http://127.0.0.1:9?' }).getByRole('button', { name: 'Disconnect http://127.0.0.1:9' }).click()
  await conns.getByText('No issue host connected.').waitFor()
  t.same(await hasToken(), [], 'disconnected: in the API at once')
  t.equal((await app.inject({ method: 'POST', url: new URL(url).pathname, headers: { 'content-type': 'application/json', 'x-gitea-event': 'ping', 'x-gitea-signature': createHmac('sha256', secret).update(body).digest('hex') }, payload: body })).statusCode, 404, 'its deliveries are refused')

  // The Account view: a password too short is refused next to its field; a token shown once, then revoked.
  await page.getByRole('link', { name: 'Account' }).click()
  const account = page.getByRole('region', { name: 'Account' })
  await account.getByLabel('New password').fill('short')
  await account.getByRole('button', { name: 'Change password' }).click()
  t.equal(await account.getByLabel('New password').getAttribute('aria-invalid'), 'true', 'a short password is refused at its field')
  await account.getByRole('button', { name: 'New token' }).click()
  await account.getByLabel('Name').fill('laptop')
  await account.getByLabel('Scope').selectOption('read')
  await account.getByRole('button', { name: 'Make the token' }).click()
  const value = await account.getByLabel('Your new token').inputValue()
  t.equal((await app.inject({ url: '/account', headers: { 'x-authentication-token': value } })).json().signed_in_with.scope, 'read', 'the token shown works, with its scope')
  await account.getByRole('rowheader', { name: 'laptop' }).waitFor()
  t.equal(await sideways(page), 0, 'the Account view: no sideways scroll at 390 px')
  t.same(await axe(page), [], 'axe: no serious or critical violation in the Account view')
  await account.getByRole('button', { name: 'Revoke laptop' }).click()
  await account.getByRole('rowheader', { name: 'laptop' }).waitFor({ state: 'detached' })
  t.equal((await app.inject({ url: '/account', headers: { 'x-authentication-token': value } })).statusCode, 401, 'revoked: refused at once')

  // Planning set-up from the workspace's Settings: sprints starting today make the current sprint active at once.
  // The page follows the workspace's live stream once its first reads are done: a write after that is read at once.
  const following = page.waitForResponse((r) => r.url().includes(`/p2/workspaces/${WS_OLD}/live`))
  await page.goto(`${address}/?board=${WS_OLD}&view=settings`)
  const sprints = page.getByRole('region', { name: 'Sprints' })
  await sprints.getByLabel('Length in weeks').selectOption('1')
  await sprints.getByLabel('Time zone').fill('Nowhere/Land')
  await following
  // A write from elsewhere redraws the page while the field holds what was typed: it keeps it.
  const reread = page.waitForResponse((r) => r.url().includes(`/repositories/${REPO}/board`) && r.status() === 200)
  await app.as('alice', { method: 'PUT', url: `/p1/repositories/${REPO}/issues/1/estimate`, payload: { estimate: 13 } })
  await reread
  await page.evaluate(async () => await new Promise((resolve) => requestAnimationFrame(() => setTimeout(resolve, 50))))
  t.equal(await sprints.getByLabel('Time zone').inputValue(), 'Nowhere/Land', 'what was typed outlasts a redraw')
  await sprints.getByRole('button', { name: 'Save sprint settings' }).click()
  // The zone is checked by the server: wait for its answer to reach the field.
  await sprints.locator('[aria-invalid="true"]').first().waitFor()
  t.equal(await sprints.getByLabel('Time zone').getAttribute('aria-invalid'), 'true', 'an unknown time zone is refused at its field')
  await sprints.getByLabel('Time zone').fill('UTC')
  await sprints.getByRole('button', { name: 'Save sprint settings' }).click()
  await page.getByText(/Saved the sprint settings/).waitFor()
  const active = (await app.as('alice', { url: `/p2/workspaces/${WS_OLD}/sprints?state=active` })).json() as Array<{ name: string }>
  t.equal(active.length, 1, 'the current sprint is active at once')
  t.equal(await sideways(page), 0, 'Settings: no sideways scroll at 390 px')
  t.same(await axe(page), [], 'axe: no serious or critical violation in Settings')
  await page.getByRole('link', { name: 'Board', exact: true }).click()
  t.match(await page.locator('label.select', { hasText: 'Sprint' }).locator('option').nth(1).textContent(), /\(current\)$/, 'first in the board\'s sprint filter')

  // The board's rough edges: a real loading state, an estimate pill on unestimated cards, the collapsed Closed column's count.
  let release = () => {}
  const held = new Promise<void>((resolve) => { release = resolve })
  // Every board read is held (the first rows and the whole boards go out together).
  const boardRead = (url: URL) => /^\/p2\/workspaces\/[^/]+\/repositories\/\d+\/board$/.test(url.pathname)
  await page.route(boardRead, async (route) => { await held; await route.continue() })
  await page.goto(`${address}/?board=${WS_OLD}`)
  const board = page.getByRole('region', { name: 'Board' })
  await board.getByText('Loading the issues…').first().waitFor()
  t.equal(await board.getByText(/No issues here/).count(), 0, 'no "No issues here" while the first read is out')
  t.equal(await board.getByText(/^0 issues/).count(), 0, 'nor "0 issues"')
  release()
  await page.unroute(boardRead)
  const unestimated = board.getByRole('button', { name: /^Estimate #\d+$/ }).first()
  await unestimated.waitFor()
  t.equal(await unestimated.textContent(), '–', 'an estimate pill on a card without one')
  const workspace = (await admin(app, '/admin/workspaces') as Array<{ id: string, repositories: number[] }>).find((w) => w.id === WS_OLD)!
  let closed = 0
  for (const repo of workspace.repositories) closed += (await app.as('alice', { url: `/p1/repositories/${repo}/issues/closed?limit=1` })).json().total ?? 0
  await board.getByRole('button', { name: new RegExp(`^Closed ${closed} issues?$`) }).waitFor()
  t.pass(`the collapsed Closed column counts its ${closed} issues`)
  await unestimated.click()
  await page.getByRole('textbox', { name: /^Estimate of #\d+/ }).fill('3')
  await page.keyboard.press('Enter')
  await board.getByRole('button', { name: '3' }).first().waitFor()

  // An unknown board says so instead of showing another.
  await page.goto(`${address}/?board=ffffffffffffffffffffffff`)
  await page.getByText(/There is no board "ffffffffffffffffffffffff" here/).waitFor()
  t.equal(await page.getByRole('region', { name: 'Board' }).count(), 0, 'and shows no other board')

  // A new epic from the Epics view: an issue made, then an epic holding the issues named.
  await page.goto(`${address}/?board=${WS_OLD}&view=epics`)
  const epics = page.getByRole('region', { name: 'Epics' })
  await epics.getByRole('button', { name: 'New epic' }).click()
  await epics.getByLabel('Issues to add (numbers, e.g. 12, 15)').fill('1, x')
  await epics.getByRole('button', { name: 'Create epic' }).click()
  t.equal(await epics.getByLabel('Title').getAttribute('aria-invalid'), 'true', 'a title is needed')
  t.equal(await epics.getByLabel('Issues to add (numbers, e.g. 12, 15)').getAttribute('aria-invalid'), 'true', 'and numbers')
  await epics.getByLabel('Title').fill('Payments')
  await epics.getByLabel('Repository').selectOption({ label: 'acme/api' })
  await epics.getByLabel('Issues to add (numbers, e.g. 12, 15)').fill('1, #2')
  await epics.getByRole('button', { name: 'Create epic' }).click()
  await epics.getByRole('button', { name: /^#\d+ Payments$/ }).waitFor()
  const listedEpics = (await app.as('alice', { url: `/p1/repositories/${REPO}/epics` })).json() as { epic_issues: Array<{ issue_number: number }> }
  const epic = listedEpics.epic_issues.at(-1)!
  const children = (await app.as('alice', { url: `/p1/repositories/${REPO}/epics/${epic.issue_number}` })).json() as { issues: Array<{ issue_number: number }> }
  t.same(children.issues.map((i) => i.issue_number).sort(), [1, 2], 'the epic holds the issues named, in the API at once')
  t.same(await axe(page), [], 'axe: no serious or critical violation in the Epics view')
})
