/// <reference lib="dom" />
import t from 'tap'
import { mkdirSync } from 'node:fs'
import { PassThrough } from 'node:stream'
import type { Page } from 'playwright-core'
import { axe, browserSkip, launchBrowser, newContext } from './browser.js'
import { build } from './helper.js'

// A team set up from the browser alone, as docs/board-page.md "Setting up a team" tells it: a
// server with nobody prints the setup link; the administrator it makes adds a repository, a
// workspace and a pipeline, invites a teammate who joins and sees the board, then starts the
// sprints and finds the burndown in Reports. axe-core on each view; the screenshots of that
// section are taken here (written to docs/ with UPDATE_SCREENSHOTS=1, else under .tap/).
const why = browserSkip
if (why !== undefined) t.comment(`skipping the team set-up browser test: ${why}`)
const SHOTS = process.env.UPDATE_SCREENSHOTS === '1' ? 'docs' : '.tap'
if (why === undefined) t.setTimeout(150_000)

const shot = async (page: Page, name: string) => {
  // Let the last change settle (a status line, a focus ring) before the picture.
  await page.evaluate(async () => { await new Promise((resolve) => requestAnimationFrame(() => requestAnimationFrame(resolve))) })
  await page.screenshot({ path: `${SHOTS}/${name}.png` })
}

t.test('a team set up from the browser: setup link, administrator, repository, workspace, invite, teammate, sprint, burndown', { skip: why, timeout: 120_000 }, async (t) => {
  mkdirSync(SHOTS, { recursive: true })
  // A server with no users (no demo, no fixture), started as the server starts: the setup link in its log.
  const log = new PassThrough()
  let lines = ''
  log.on('data', (d) => { lines += String(d) })
  const app = await build(t, { fixture: null, setupLink: true, logLevel: 'info', logStream: log })
  await app.listen({ host: '127.0.0.1', port: 0 })
  const printed = /Set up the first administrator: (http:\/\/127\.0\.0\.1:\d+\/setup\/[\w-]+)/.exec(lines)
  t.ok(printed !== null, 'the start prints the setup link')
  const setupUrl = printed![1]
  const address = new URL(setupUrl).origin

  const browser = await launchBrowser()
  t.teardown(async () => await browser.close())
  // bypassCSP: axe-core is added to the pages as a script of the test's.
  const viewport = { viewport: { width: 1000, height: 700 }, bypassCSP: true }
  const lead = await newContext(browser, viewport)
  const page = await lead.newPage()

  // 1. The setup link: the first administrator, signed in.
  await page.goto(setupUrl)
  await page.getByLabel('Login').fill('lead')
  await page.getByLabel('Email').fill('lead@example.com')
  await page.getByLabel('Password').fill('lead-password-1')
  t.same(await axe(page), [], 'axe: the setup page')
  await shot(page, 'team-setup')
  await page.getByRole('button', { name: 'Create administrator' }).click()
  await page.getByRole('button', { name: 'Sign out' }).waitFor()
  const cookie = (await lead.cookies()).find((c) => c.name === 'planning_session')
  t.ok(cookie?.httpOnly, 'signed in with a session cookie')
  const asLead = async (url: string) => (await app.inject({ url, headers: { cookie: `planning_session=${cookie!.value}` } })).json()

  // 2. Administration: a repository that lives here, a workspace holding it, one more pipeline.
  await page.getByRole('navigation', { name: 'Views' }).getByRole('link', { name: 'Administration' }).click()
  const view = page.getByRole('region', { name: 'Administration' })
  const repos = view.getByRole('region', { name: 'Repositories' })
  await repos.getByRole('button', { name: 'New repository' }).click()
  await repos.getByLabel('Owner').fill('team')
  await repos.getByLabel('Name').fill('planning')
  await repos.getByRole('button', { name: 'Create repository' }).click()
  await repos.getByRole('rowheader', { name: 'team/planning' }).waitFor()
  t.same(await axe(page), [], 'axe: Administration with a repository')

  const spaces = view.getByRole('region', { name: 'Workspaces' })
  await spaces.getByRole('button', { name: 'New workspace' }).click()
  await spaces.getByLabel('Name', { exact: true }).fill('Platform')
  await spaces.getByLabel('Description').fill('The platform team')
  await spaces.getByRole('group', { name: 'Repositories' }).getByLabel('team/planning').check()
  await spaces.getByRole('button', { name: 'Create workspace' }).click()
  const ws = spaces.getByRole('region', { name: 'Platform' })
  const pipes = ws.getByRole('list', { name: 'Pipelines of Platform' })
  await pipes.waitFor()
  await ws.getByLabel('Pipeline name').fill('Review')
  await ws.getByRole('button', { name: 'Add pipeline' }).click()
  await pipes.getByRole('listitem', { name: 'Review' }).waitFor()
  const workspaces = await asLead('/admin/workspaces') as Array<{ id: string, name: string, description: string | null, pipelines: Array<{ name: string }> }>
  const platform = workspaces.find((w) => w.name === 'Platform')!
  t.match(platform, { description: 'The platform team' }, 'the workspace, in the API at once')
  t.equal(platform.pipelines.at(-1)?.name, 'Review', 'with its new pipeline last')
  t.same(await axe(page), [], 'axe: Administration with a workspace')
  await ws.scrollIntoViewIfNeeded()
  await shot(page, 'team-workspace')

  // 3. People: an invite with write permission into Platform, its link shown once.
  const people = view.getByRole('region', { name: 'People' })
  await people.getByRole('button', { name: 'Invite' }).click()
  const dialog = page.getByRole('dialog', { name: 'Invite someone' })
  await dialog.getByLabel('Workspace').selectOption({ label: 'Platform' })
  await dialog.getByLabel('Permission').selectOption('write')
  await dialog.getByRole('button', { name: 'Make the invite link' }).click()
  const link = dialog.getByLabel('Invite link')
  await dialog.getByRole('button', { name: 'Copy' }).waitFor()
  const inviteUrl = await link.inputValue()
  t.match(inviteUrl, new RegExp(`^${address}/invite/`), 'an absolute invite link')
  t.same(await axe(page), [], 'axe: the invite dialog')
  await shot(page, 'team-invite')
  await dialog.getByRole('button', { name: 'Close' }).click()

  // 4. The teammate, in a browser of their own: Join, and the workspace's board.
  const mate = await (await newContext(browser, viewport)).newPage()
  await mate.goto(inviteUrl)
  await mate.getByLabel('Login').fill('sam')
  await mate.getByLabel('Password').fill('sam-password-12')
  t.same(await axe(mate), [], 'axe: the invite page')
  await mate.getByRole('button', { name: 'Join' }).click()
  const board = mate.getByRole('region', { name: 'Board' })
  await board.getByRole('heading', { name: 'Review' }).waitFor()
  t.match(new URL(mate.url()).searchParams.get('board'), platform.id, 'on Platform\'s board')
  // Write permission: the teammate opens the first issue, estimated.
  await board.getByRole('button', { name: 'New issue', exact: true }).first().click()
  const newIssue = mate.getByRole('dialog', { name: /^New issue in / })
  await newIssue.getByLabel('Title').fill('Write the team handbook')
  await newIssue.getByLabel('Estimate').fill('3')
  await newIssue.getByRole('button', { name: 'Open the issue' }).click()
  await board.getByRole('listitem', { name: /Write the team handbook/ }).waitFor()
  t.same(await axe(mate), [], 'axe: the teammate\'s board')
  await shot(mate, 'team-teammate-board')
  const users = await asLead('/admin/users') as Array<{ login: string, administrator: boolean }>
  t.match(users.find((u) => u.login === 'sam'), { administrator: false }, 'the teammate is a user, not an administrator')
  const mateCookie = (await mate.context().cookies()).find((c) => c.name === 'planning_session')!
  const account = (await app.inject({ url: '/account', headers: { cookie: `planning_session=${mateCookie.value}` } })).json()
  t.match(account, { administrator: false, permissions: [{ permission: 'write' }] }, 'write on the workspace\'s repository, as invited')
  t.equal(account.permissions.length, 1, 'and nothing else')

  // 5. Sprints from the workspace's Settings, starting today: the current sprint is active at once.
  // The board chooser knows the workspace made since the sign-in: Settings opens it.
  await page.getByRole('navigation', { name: 'Views' }).getByRole('link', { name: 'Settings' }).click()
  const sprints = page.getByRole('region', { name: 'Sprints' })
  await sprints.getByLabel('Length in weeks').selectOption('2')
  await sprints.getByLabel('Start date').fill(new Date().toLocaleDateString('en-CA'))
  await sprints.getByRole('button', { name: 'Save sprint settings' }).click()
  await page.getByText(/Saved the sprint settings/).waitFor()
  const active = await asLead(`/p2/workspaces/${platform.id}/sprints?state=active`) as Array<{ id: string, name: string }>
  t.equal(active.length, 1, 'the current sprint is active at once')
  t.same(await axe(page), [], 'axe: Settings')

  // 6. Its burndown in Reports.
  await page.getByRole('link', { name: 'Reports' }).click()
  const reports = page.getByRole('region', { name: 'Reports' })
  const burndown = reports.getByRole('region', { name: 'Burndown' })
  await burndown.getByRole('img').first().waitFor()
  t.match(await burndown.getByLabel('Burndown of').locator('option:checked').textContent(), active[0].name, 'the active sprint\'s burndown is shown')
  t.same(await axe(page), [], 'axe: Reports')
  await shot(page, 'team-reports')
  t.comment(`screenshots under ${SHOTS}/team-*.png`)
})
