/// <reference lib="dom" />
import t, { type Test } from 'tap'
import Fastify from 'fastify'
import { mkdirSync, readFileSync } from 'node:fs'
import { createServer } from 'node:net'
import { gzipSync } from 'node:zlib'
import type { Browser, BrowserContextOptions, Page } from 'playwright-core'
import { buildApp, planningApi } from '../app.js'
import { daysText } from '../board/src/charts.js'
import { axe as seriousViolations, browserSkip, launchBrowser, newContext, signInWithToken } from './browser.js'
import { build, OTHER_REPO, P, REPO, testFixture, TOKENS, WS_OLD, type App } from './helper.js'
import { buildWithHistory, estimate, moved, setState } from './history-helper.js'
import { startHostOAuth } from './host-oauth.js'

// The board page as a person uses it, in a real browser: Debian's chromium package. The page does
// not depend on the database engine or the Node version, so the browser runs once per CI run.
const why = browserSkip
if (why !== undefined) t.comment(`skipping the board page's browser tests: ${why}`)
// Screenshots for the documentation: written to docs/ with UPDATE_SCREENSHOTS=1, else under .tap/.
const SHOTS = process.env.UPDATE_SCREENSHOTS === '1' ? 'docs' : '.tap'

// About 80 s alone; a real browser on a machine the whole suite shares may need more than the
// 120 s a test file gets (package.json), so this file asks for four minutes.
if (why === undefined) t.setTimeout(240_000)

let browser: Browser
t.before(async () => {
  if (why === undefined) browser = await launchBrowser()
})
t.teardown(async () => await browser?.close())

async function open (t: Test, url: string, token: string, options: BrowserContextOptions = {}): Promise<Page> {
  const context = await newContext(browser, { viewport: { width: 1280, height: 800 }, ...options })
  t.teardown(() => context.close())
  const page = await context.newPage()
  await page.goto(url)
  await signInWithToken(page, token)
  return page
}

const board = (page: Page) => page.getByRole('region', { name: 'Board' })
const column = (page: Page, name: string) => board(page).getByRole('list', { name, exact: true })
const card = (page: Page, number: number, title = `Issue ${number}`) => board(page).getByRole('listitem', { name: new RegExp(`^#${number} ${title}\\b`) })
const cardNumbers = async (page: Page, name: string) =>
  await column(page, name).getByRole('listitem').evaluateAll((items) => items.map((i) => Number(/^#(\d+)/.exec(i.getAttribute('aria-label')!)![1])))
const status = (page: Page) => page.getByRole('status')
const waitStatus = async (page: Page, pattern: RegExp) => await page.waitForFunction((source) => new RegExp(source).test(document.querySelector('[role=status]')!.textContent!), pattern.source)

async function apiBoard (app: App, repo = REPO) {
  const data = (await app.as('alice', { url: `/p2/workspaces/${WS_OLD}/repositories/${repo}/board` })).json() as { pipelines: Array<{ id: string, issues: Array<{ issue_number: number }> }> }
  return Object.fromEntries(data.pipelines.map((p) => [p.id, p.issues.map((i) => i.issue_number)]))
}
const estimateOf = async (app: App, n: number) => (await app.as('alice', { url: `/p1/repositories/${REPO}/issues/${n}` })).json().estimate

async function axe (page: Page, what: string) {
  return { violations: await seriousViolations(page), what }
}

t.test('one repository\'s board: sign in, drag, keys, estimates, live changes', { skip: why, timeout: 90_000 }, async (t) => {
  const app = await build(t)
  const address = await app.listen({ host: '127.0.0.1', port: 0 })
  const failed: string[] = []
  const page = await open(t, `${address}/?board=${WS_OLD}/${REPO}`, 'not-a-token')
  page.on('response', (res) => { if (res.status() >= 400 && !res.url().includes('/p2/workspaces?')) failed.push(`${res.status()} ${res.url()}`) })
  const requested: string[] = []
  page.on('request', (req) => { requested.push(new URL(req.url()).pathname) })
  await waitStatus(page, /token was refused/)
  t.match(await status(page).textContent(), /token was refused: the API token is not valid/, 'a wrong token says so')
  failed.length = 0

  await signInWithToken(page, TOKENS.alice)
  await card(page, 6).waitFor()
  t.equal(await page.getByRole('combobox', { name: 'Board' }).inputValue(), `${WS_OLD}/${REPO}`, 'the board in the address is chosen')
  t.same(await page.getByRole('combobox', { name: 'Board' }).locator('option').allTextContents(), [
    'Engineering: all repositories', 'Engineering: acme/api', 'Engineering: acme/web', 'Engineering: acme/secret', 'Roadmap: all repositories', 'Roadmap: acme/api'
  ], 'workspaces and repositories by name, opened or not')
  t.same(await board(page).getByRole('heading').allTextContents(), ['To Do6 issues · 0 pts', 'Doing0 issues · 0 pts', 'Done0 issues · 0 pts', 'Closed1 issue'], 'the collapsed Closed column counts its issues')
  t.same(await cardNumbers(page, 'To Do'), [1, 2, 3, 4, 5, 6], 'cards in board order; the closed issue is not in a pipeline')
  t.equal(await card(page, 2).getByRole('link').count(), 0, 'a repository with no issue host: its number, no link (never a guessed github.com address)')
  t.equal(await card(page, 2).getByText('#2', { exact: true }).count(), 1)
  t.equal(await board(page).getByText('no estimate').count(), 0, 'no "no estimate" pill on unestimated cards')

  await card(page, 2).dragTo(column(page, 'Doing'))
  await waitStatus(page, /Moved #2/)
  t.same((await apiBoard(app))[P.doing], [2], 'the drag made one move, seen through the API')
  t.same(await cardNumbers(page, 'Doing'), [2], 'the card stays where it was dropped')
  await card(page, 1).dragTo(card(page, 5), { targetPosition: { x: 40, y: 3 } })
  await waitStatus(page, /Moved #1/)
  t.same((await apiBoard(app))[P.todo], [3, 4, 1, 5, 6], 'dropped above #5: index 2 within the column')
  t.equal(await page.evaluate(() => document.activeElement?.getAttribute('aria-label')?.slice(0, 10)), '#1 Issue 1', 'focus stays on the moved card')

  await card(page, 5).focus()
  await page.keyboard.press('Shift+ArrowRight')
  await waitStatus(page, /Moved #5/)
  t.same((await apiBoard(app))[P.doing], [2, 5], 'Shift+ArrowRight moved the focused card to the next pipeline')
  await page.keyboard.press('ArrowUp')
  t.match(await page.evaluate(() => document.activeElement?.getAttribute('aria-label')), /^#2 Issue 2/, 'ArrowUp moves the focus')

  // Defect: re-estimating appended to the old value.
  t.equal((await app.as('alice', { method: 'PUT', url: `/p1/repositories/${REPO}/issues/3/estimate`, payload: { estimate: 5 } })).statusCode, 200)
  await card(page, 3).getByRole('button', { name: '5 pts' }).waitFor()
  await card(page, 3).getByRole('button', { name: '5 pts' }).click()
  await page.keyboard.type('8')
  await page.keyboard.press('Enter')
  await waitStatus(page, /#3 is estimated at 8\./)
  t.same(await estimateOf(app, 3), { value: 8 }, 're-estimating replaces the old value (8, not 58)')

  // Defect: a mistyped estimate cleared the old one.
  for (const typo of ['1e', '-', '5-3']) {
    await card(page, 3).focus()
    await page.keyboard.press('e')
    await page.keyboard.type(typo)
    await page.keyboard.press('Enter')
    await waitStatus(page, /Not saved/)
    t.match(await status(page).textContent(), /is not an estimate.*#3 keeps 8 pts/, `"${typo}" is refused, saying so`)
    t.same(await estimateOf(app, 3), { value: 8 }, `"${typo}" keeps the old estimate`)
    await page.keyboard.press('Escape')
  }

  // Defect: clicking away threw the typed value away.
  await card(page, 4).focus()
  await page.keyboard.press('e')
  await page.keyboard.type('3')
  await page.getByRole('heading', { name: 'Planning board' }).click()
  await waitStatus(page, /#4 is estimated at 3\./)
  t.same(await estimateOf(app, 4), { value: 3 }, 'a value typed and left is saved, and the status says so')
  await page.waitForFunction(() => /To Do.*4 issues · 11 pts/.test(document.querySelector('[aria-label=Board] h2')!.textContent!))
  t.pass('the column sums estimates')

  // Live: with the stream open the page does not poll; others' changes come through it.
  t.ok(requested.includes(`/p2/workspaces/${WS_OLD}/live`), 'the page opened the workspace\'s live stream')
  // The page's own last write comes back as a change once: let it pass, then watch.
  await page.waitForTimeout(2000)
  requested.length = 0
  await page.waitForTimeout(4000)
  t.same(requested.filter((path) => path.endsWith('/board')), [], 'no board read in 4 s while nothing changed (it polled every 3 s)')
  // Others' changes: a move and a renamed title show without a reload; the moved card glides into place.
  const glided = page.waitForFunction(([pipeline, key]) => {
    const moved = document.querySelector(`ul[data-pipeline="${pipeline}"] li[data-key="${key}"]`)
    return moved !== null && moved.getAnimations().length > 0
  }, [P.done, `${REPO}#6`], { polling: 'raf', timeout: 8000 })
  t.equal((await app.as('bob', { method: 'POST', url: `/p1/repositories/${REPO}/issues/6/moves`, payload: { pipeline_id: P.done, position: 'top' } })).statusCode, 200)
  await glided
  t.pass('a card moved by someone else glides into its new place')
  t.equal((await app.admin({ method: 'PATCH', url: `/admin/repositories/${REPO}/issues/6`, payload: { title: 'Renamed on the host' } })).statusCode, 200)
  await card(page, 6, 'Renamed on the host').waitFor({ timeout: 8000 })
  t.same(await cardNumbers(page, 'Done'), [6], 'a move and a new title made elsewhere appear within the refresh interval')
  t.same(failed, [], 'no request failed, the icon included')
})

t.test('the workspace board: every readable repository, a repository filter in the address, the closed column, the issue panel', { skip: why, timeout: 90_000 }, async (t) => {
  const app = await build(t)
  const address = await app.listen({ host: '127.0.0.1', port: 0 })
  const page = await open(t, `${address}/board`, TOKENS.bob)
  await card(page, 3, 'Web 3').waitFor()
  t.equal(await page.getByRole('combobox', { name: 'Board' }).inputValue(), WS_OLD, 'the oldest workspace\'s whole board first')
  t.same(await cardNumbers(page, 'To Do'), [1, 1, 2, 2, 3, 3, 4, 5, 6], 'both readable repositories, interleaved by their own order; not acme/secret')
  t.match(await card(page, 1, 'Web 1').getAttribute('aria-label'), /^#1 Web 1, web, no estimate/, 'a card names its repository')
  const hue = async (n: number, title: string) => await card(page, n, title).locator('.repo').evaluate((el) => getComputedStyle(el).getPropertyValue('--hue'))
  t.equal(await hue(1, 'Web 1'), await hue(2, 'Web 2'), 'one colour per repository')
  t.not(await hue(1, 'Web 1'), await hue(1, 'Issue 1'), 'another for the next')

  await page.getByRole('button', { name: 'Repository' }).click()
  await page.getByRole('checkbox', { name: 'acme/web' }).check()
  await page.keyboard.press('Escape')
  t.same(await cardNumbers(page, 'To Do'), [1, 2, 3], 'the repository filter keeps acme/web')
  t.match(await board(page).getByRole('heading').first().textContent(), /3 issues/, 'counts follow the filter')
  t.match(page.url(), new RegExp(`repo=${OTHER_REPO}`), 'the filter is in the address')
  await page.reload()
  await card(page, 3, 'Web 3').waitFor()
  t.same(await cardNumbers(page, 'To Do'), [1, 2, 3], 'a reload keeps the filter (the token stays in the tab)')
  await page.getByRole('searchbox', { name: 'Filter' }).fill('#2')
  t.same(await cardNumbers(page, 'To Do'), [2], 'text filter by #number')
  await page.getByRole('button', { name: 'Clear filters' }).click()
  t.same((await cardNumbers(page, 'To Do')).length, 9)

  // A drag on the workspace board moves within the card's own repository.
  await card(page, 4).dragTo(column(page, 'Doing'))
  await waitStatus(page, /Moved #4 to Doing/)
  t.same((await apiBoard(app))[P.doing], [4])
  // acme/web is read-only here: its cards have no grip, and the keys move nothing (absent, not refused).
  t.equal(await card(page, 3, 'Web 3').getByTitle('Drag to move').count(), 0, 'no grip on a card of a read-only repository')
  t.equal(await card(page, 4).getByTitle('Drag to move').count(), 1, 'a grip on one of a writable repository')
  await card(page, 3, 'Web 3').focus()
  await page.keyboard.press('Shift+ArrowRight')
  t.same(await cardNumbers(page, 'Doing'), [4], 'Shift+arrow does not move it')

  // The closed column: collapsed at first, the newest closed issues when opened, remembered.
  t.equal(await page.getByRole('button', { name: /^Closed/ }).getAttribute('aria-expanded'), 'false', 'Closed is collapsed by default')
  await page.getByRole('button', { name: /^Closed/ }).click()
  await card(page, 7, 'Closed one').waitFor()
  await page.reload()
  await card(page, 7, 'Closed one').waitFor()
  t.pass('the open Closed column is remembered')

  // The issue panel: Enter opens it, Esc closes it and the focus returns to the card.
  await card(page, 2).focus()
  await page.keyboard.press('Enter')
  const panel = page.getByRole('dialog', { name: '#2 Issue 2' })
  await panel.waitFor()
  t.equal(await panel.getByRole('link', { name: 'Open on the issue host' }).count(), 0, 'no issue host, no link to one')
  await panel.getByLabel('Blocked by issue').fill('#1')
  await panel.getByRole('button', { name: 'Add blocker' }).click()
  await panel.getByText('Blocked by #1 Issue 1').waitFor()
  t.same((await app.as('bob', { url: `/p1/repositories/${REPO}/dependencies` })).json().dependencies, [{ blocking: { repo_id: REPO, issue_number: 1 }, blocked: { repo_id: REPO, issue_number: 2 } }], 'the panel added the dependency')
  await panel.getByRole('button', { name: 'Close', exact: true }).click()
  await panel.waitFor({ state: 'detached' })
  t.match(await card(page, 2).getAttribute('aria-label'), /blocked by 1/, 'the card\'s name says it is blocked')
  t.equal(await page.evaluate(() => document.activeElement?.getAttribute('aria-label')?.slice(0, 10)), '#2 Issue 2', 'focus back on the card')
  await page.keyboard.press('Enter')
  await panel.waitFor()
  await page.keyboard.press('Escape')
  await panel.waitFor({ state: 'detached' })
  await page.getByRole('combobox', { name: 'Dependencies' }).selectOption('blocked')
  t.same(await cardNumbers(page, 'To Do'), [2], 'the blocked filter')
})

const LONG_LABEL = 'needs-design-review-from-the-platform-team'
/** Whether the page is no wider than the screen (only the board's columns scroll, inside the board). */
const sideways = () => document.documentElement.scrollWidth <= document.documentElement.clientWidth
/** What shows at a pointer during a drag: the copy of the dragged card, under the pointer, on top of all else, opaque, hidden from assistive technology. */
const draggedAt = async ({ x, y }: { x: number, y: number }) => {
  // A touch's last move reaches the page with the next frame.
  await new Promise((resolve) => requestAnimationFrame(() => requestAnimationFrame(resolve)))
  const ghost = document.querySelector<HTMLElement>('.drag-ghost')
  if (ghost === null) return 'no card follows the pointer'
  const box = ghost.getBoundingClientRect()
  // It lets the pointer through to the columns beneath; made to catch it for a moment, it must be what is at the point.
  ghost.style.pointerEvents = 'auto'
  const onTop = ghost.contains(document.elementFromPoint(x, y))
  ghost.style.pointerEvents = ''
  const style = getComputedStyle(ghost)
  return {
    title: ghost.querySelector('.title')?.textContent,
    underThePointer: x >= Math.max(box.left, 0) && x <= Math.min(box.right, innerWidth) && y >= Math.max(box.top, 0) && y <= Math.min(box.bottom, innerHeight),
    onTop,
    opaque: Number(style.opacity) > 0.5 && style.visibility === 'visible',
    hidden: ghost.getAttribute('aria-hidden') === 'true'
  }
}

t.test('keys, help, epics view, axe-core, touch drag, dark mode, the phone layout', { skip: why, timeout: 90_000 }, async (t) => {
  // Issue 5 has more labels than a card's line holds, one longer than the line itself.
  const fixture = testFixture()
  ;(fixture.issues[4] as { labels?: Array<{ name: string, color: string | null }> }).labels = [LONG_LABEL, 'bug', 'good first issue', 'backend'].map((name) => ({ name, color: null }))
  const app = await build(t, { fixture })
  // alice administers the server (the Administration view) and the workspace has a current sprint (a burndown table in Reports).
  t.equal((await app.admin({ method: 'PATCH', url: '/admin/users/alice', payload: { administrator: true } })).statusCode, 200)
  const sprints = { length_weeks: 2, starts_on: new Date().toISOString().slice(0, 10), time_zone: 'UTC', carry_over: true }
  t.equal((await app.as('alice', { method: 'PUT', url: `/p2/workspaces/${WS_OLD}/sprint_config`, payload: sprints })).statusCode, 200)
  t.equal((await app.as('alice', { method: 'POST', url: `/p1/repositories/${REPO}/issues/1/convert_to_epic`, payload: { issues: [{ repo_id: REPO, issue_number: 2 }, { repo_id: REPO, issue_number: 7 }] } })).statusCode, 200)
  t.equal((await app.as('alice', { method: 'PUT', url: `/p1/repositories/${REPO}/issues/7/estimate`, payload: { estimate: 2 } })).statusCode, 200)
  const address = await app.listen({ host: '127.0.0.1', port: 0 })
  const page = await open(t, `${address}/`, TOKENS.alice, { colorScheme: 'dark', bypassCSP: true })
  await card(page, 2).waitFor()
  const report = [await axe(page, 'the board')]
  t.match(await card(page, 2).getAttribute('aria-label'), /in epic #1 Issue 1/, 'a card\'s name names its epic')
  t.match(await card(page, 1).getAttribute('aria-label'), /, epic/)
  t.not(await page.evaluate(() => getComputedStyle(document.body).backgroundColor), 'rgb(244, 245, 247)', 'dark mode follows prefers-color-scheme')

  await page.keyboard.press('/')
  t.equal(await page.evaluate(() => document.activeElement?.getAttribute('aria-label')), 'Filter', '/ goes to the filter')
  await page.keyboard.press('Tab')
  await page.getByRole('button', { name: 'Repository' }).click()
  report.push(await axe(page, 'the filter bar, a menu open'))
  await page.keyboard.press('Escape')
  await card(page, 3).focus()
  await page.keyboard.press('?')
  const help = page.getByRole('dialog', { name: 'Keyboard help' })
  await help.waitFor()
  t.ok(await help.getByText('Shift + arrow keys').isVisible(), '? shows the keyboard help')
  await page.keyboard.press('Escape')
  await help.waitFor({ state: 'detached' })
  await page.keyboard.press('Enter')
  await page.getByRole('dialog', { name: '#3 Issue 3' }).waitFor()
  report.push(await axe(page, 'the issue panel'))
  await page.keyboard.press('Escape')

  await page.getByRole('link', { name: 'Epics' }).click()
  const epics = page.getByRole('region', { name: 'Epics' })
  await epics.waitFor()
  t.match(await epics.getByRole('row', { name: /#1 Issue 1/ }).textContent(), /1 of 2.*2 pts of 2 pts/, 'an epic\'s progress: closed of total, points')
  report.push(await axe(page, 'the epics view'))
  await page.getByRole('link', { name: 'Board', exact: true }).click()

  // The mouse drags a card over another column: the card stays in sight under the pointer (no column's box clips it).
  const three = (await card(page, 3).boundingBox())!
  const doing = (await column(page, 'Doing').boundingBox())!
  const start = { x: three.x + three.width / 2, y: three.y + 20 }
  const over = { x: doing.x + doing.width / 2, y: doing.y + 40 }
  await page.mouse.move(start.x, start.y)
  await page.mouse.down()
  for (let i = 1; i <= 6; i++) await page.mouse.move(start.x + (over.x - start.x) * i / 6, start.y + (over.y - start.y) * i / 6)
  t.same(await page.evaluate(draggedAt, over), { title: 'Issue 3', underThePointer: true, onTop: true, opaque: true, hidden: true }, 'the dragged card is under the mouse pointer, over another column')
  // Let go over the header: nothing moves.
  await page.mouse.move(over.x, 10)
  await page.mouse.up()
  t.equal(await page.locator('.drag-ghost').count(), 0, 'let go, the copy under the pointer is gone')
  t.same((await apiBoard(app))[P.todo], [1, 2, 3, 4, 5, 6], 'and nothing moved')

  // Touch: a finger drags a card by its grip.
  const touch = await open(t, `${address}/?board=${WS_OLD}/${REPO}`, TOKENS.alice, { hasTouch: true, isMobile: true, viewport: { width: 390, height: 844 }, bypassCSP: true })
  await card(touch, 4).waitFor()
  t.ok(await touch.evaluate(sideways), 'nothing overflows at 390 px, the board picker included')
  // The phone: the header and the filters take at most a fifth of the 844 px; the menus fold under Filters.
  const above = (await board(touch).boundingBox())!.y
  t.ok(above <= 844 / 5, `the header and the filters take ${Math.round(above)} px of 844`)
  const fold = touch.getByRole('button', { name: /^Filters/ })
  const labelsMenu = touch.getByRole('button', { name: 'Labels', exact: true })
  t.equal(await fold.getAttribute('aria-expanded'), 'false', 'the filters are folded')
  t.notOk(await labelsMenu.isVisible(), 'their menus out of sight')
  await fold.click()
  t.equal(await fold.getAttribute('aria-expanded'), 'true')
  await labelsMenu.click()
  const longInMenu = touch.getByRole('group', { name: 'Labels' }).getByText(LONG_LABEL, { exact: true })
  const longWhole = await longInMenu.evaluate((el) => {
    const box = el.getBoundingClientRect()
    return el.scrollWidth <= el.clientWidth && box.left >= 0 && box.right <= innerWidth
  })
  t.ok(longWhole, 'a long label in the menu wraps, whole and on the screen')
  t.ok(await touch.evaluate(sideways), 'the menu open, nothing scrolls sideways')
  report.push(await axe(touch, 'the board at 390 px, the filters unfolded and a menu open'))
  await touch.keyboard.press('Escape')
  await fold.click()
  t.equal(await fold.getAttribute('aria-expanded'), 'false', 'folded again')
  t.notOk(await labelsMenu.isVisible())
  // The card's chips: each label whole, the ones that do not fit counted in "+N", named in its title.
  const chips = await card(touch, 5).evaluate((li) => {
    const line = li.querySelector('.meta')!.getBoundingClientRect()
    return Array.from(li.querySelectorAll<HTMLElement>('.meta > *')).map((chip) => {
      const box = chip.getBoundingClientRect()
      const inLine = box.left >= line.left - 0.5 && box.right <= line.right + 0.5
      return { text: chip.textContent!, title: chip.title, whole: chip.scrollWidth <= chip.clientWidth && inLine }
    })
  })
  t.ok(chips.every((c) => c.whole), `no chip of #5 cut: ${chips.map((c) => c.text).join(' | ')}`)
  const plus = chips.find((c) => /^\+\d+$/.test(c.text))
  t.ok(plus !== undefined && plus.title.split(', ').includes(LONG_LABEL), 'the long label is counted in "+N"')
  const labelNames = [...chips.filter((c) => c !== plus && c.text !== '–').map((c) => c.text), ...plus!.title.split(', ')]
  t.same(labelNames.sort(), [LONG_LABEL, 'backend', 'bug', 'good first issue'].sort(), 'every label is there, whole, shown or named')
  t.equal(plus!.text, `+${plus!.title.split(', ').length}`)
  const grip = await card(touch, 4).locator('.grip').boundingBox()
  const target = await card(touch, 1).boundingBox()
  const cdp = await touch.context().newCDPSession(touch)
  const at = (x: number, y: number) => [{ x, y, id: 1, radiusX: 1, radiusY: 1, force: 1 }]
  const from = { x: grip!.x + grip!.width / 2, y: grip!.y + 10 }
  await cdp.send('Input.dispatchTouchEvent', { type: 'touchStart', touchPoints: at(from.x, from.y) })
  for (let i = 1; i <= 8; i++) await cdp.send('Input.dispatchTouchEvent', { type: 'touchMove', touchPoints: at(from.x, from.y + (target!.y + 3 - from.y) * i / 8) })
  t.same(await touch.evaluate(draggedAt, { x: from.x, y: target!.y + 3 }), { title: 'Issue 4', underThePointer: true, onTop: true, opaque: true, hidden: true }, 'the dragged card is under the finger')
  await cdp.send('Input.dispatchTouchEvent', { type: 'touchEnd', touchPoints: [] })
  await waitStatus(touch, /Moved #4 to To Do, position 1/)
  t.same((await apiBoard(app))[P.todo], [4, 1, 2, 3, 5, 6], 'a finger dragged the card by its grip to the top')

  // Every view at 390 px: only the board's columns scroll sideways; Reports' tables scroll inside themselves.
  const views = touch.getByRole('navigation', { name: 'Views' })
  const shown = {
    Epics: touch.getByRole('region', { name: 'Epics' }).getByRole('row', { name: /#1 Issue 1/ }),
    Reports: touch.getByRole('group', { name: 'Burndown table' }),
    Settings: touch.getByRole('region', { name: 'Settings' }).getByRole('heading').first(),
    Administration: touch.getByRole('region', { name: 'Administration' }).getByRole('rowheader', { name: 'alice' }),
    Account: touch.getByRole('region', { name: 'Account' }).getByRole('rowheader', { name: 'legacy' })
  }
  for (const [name, ready] of Object.entries(shown)) {
    await views.getByRole('link', { name, exact: true }).click()
    await ready.waitFor()
    t.ok(await touch.evaluate(sideways), `${name} at 390 px: nothing scrolls sideways`)
    if (name !== 'Epics') report.push(await axe(touch, `${name} at 390 px`))
  }
  await views.getByRole('link', { name: 'Reports', exact: true }).click()
  t.same(await shown.Reports.evaluate((box) => [getComputedStyle(box).overflowX, box.getBoundingClientRect().right <= innerWidth]), ['auto', true], 'a report\'s table scrolls inside its box')

  const signIn = await newContext(browser, { bypassCSP: true, viewport: { width: 390, height: 844 } })
  t.teardown(() => signIn.close())
  const signInPage = await signIn.newPage()
  await signInPage.goto(`${address}/`)
  await signInPage.getByRole('textbox', { name: 'Login' }).waitFor()
  t.ok(await signInPage.evaluate(sideways), 'the sign-in view at 390 px: nothing scrolls sideways')
  report.push(await axe(signInPage, 'the sign-in view'))
  const invite = (await app.as('alice', { method: 'POST', url: '/invites', payload: { workspace_id: WS_OLD, permission: 'read' } })).json() as { url: string }
  await signInPage.goto(`${address}${new URL(invite.url).pathname}`)
  await signInPage.getByRole('button', { name: 'Join' }).waitFor()
  t.ok(await signInPage.evaluate(sideways), 'the invite page at 390 px: nothing scrolls sideways')
  report.push(await axe(signInPage, 'the invite page'))
  for (const { violations, what } of report) t.same(violations, [], `axe-core: no serious or critical violation on ${what}`)
})

t.test('a wide board hints that it scrolls; the help stays in reach; a 1,500-card column draws what is visible', { skip: why, timeout: 90_000 }, async (t) => {
  const fixture = testFixture()
  ;(fixture.workspaces[0].pipelines as Array<{ id: string, name: string }>).push({ id: 'pipe-review', name: 'Review' }, { id: 'pipe-qa', name: 'QA' })
  ;(fixture.issues as Array<{ repo_id: number, number: number, title: string }>).push(...Array.from({ length: 1500 }, (_, i) => ({ repo_id: REPO, number: 100 + i, title: `Bulk ${100 + i}`, author: 'alice' })))
  const app = await build(t, { fixture })
  const address = await app.listen({ host: '127.0.0.1', port: 0 })
  const page = await open(t, `${address}/?board=${WS_OLD}/${REPO}`, TOKENS.alice)
  await card(page, 100, 'Bulk 100').waitFor({ timeout: 20_000 })
  t.ok(await page.getByRole('button', { name: 'More columns →' }).isVisible(), 'at 1280 px the cut-off columns are hinted at')
  const helpBox = await page.getByRole('button', { name: 'Keyboard help' }).boundingBox()
  t.ok(helpBox !== null && helpBox.y < 100, 'the help is at the top, not under the board')
  // The first rows (a paged read) may draw the card before the whole board is read; the count comes with the whole board.
  await page.waitForFunction(() => /1506 issues/.test(document.querySelector('[aria-label=Board] h2')?.textContent ?? ''), undefined, { timeout: 20_000 })
  t.match(await board(page).getByRole('heading').first().textContent(), /1506 issues/)
  const drawn = await column(page, 'To Do').getByRole('listitem').count()
  t.ok(drawn < 60, `${drawn} of 1,506 cards drawn`)
  t.equal(await column(page, 'To Do').getByRole('listitem').first().getAttribute('aria-setsize'), '1506', 'the list still says how long it is')
  await column(page, 'To Do').evaluate((list) => { list.parentElement!.scrollTop = list.scrollHeight })
  await card(page, 1599, 'Bulk 1599').waitFor()
  t.pass('scrolling the column draws its last cards')
  const scroll = async () => await page.evaluate(async () => await new Promise<number>((resolve) => {
    let longest = 0
    const observer = new PerformanceObserver((list) => { for (const e of list.getEntries()) longest = Math.max(longest, e.duration) })
    observer.observe({ type: 'longtask' })
    const scroller = document.querySelector('[aria-label="To Do"]')!.parentElement!
    let step = 0
    const tick = () => {
      scroller.scrollTop = step * 1700
      if (++step < 60) requestAnimationFrame(tick); else setTimeout(() => { observer.disconnect(); resolve(longest) }, 50)
    }
    scroller.scrollTop = 0
    requestAnimationFrame(tick)
  }))
  // The machine is shared: the better of two runs is taken, so one stall elsewhere does not decide.
  const long = Math.min(await scroll(), await scroll())
  t.ok(long < 100, `no long task over 100 ms while scrolling (longest ${Math.round(long)} ms)`)
  const filter = page.getByRole('searchbox', { name: 'Filter' })
  await filter.fill('Bulk 15')
  await column(page, 'To Do').getByRole('listitem').first().waitFor({ timeout: 2000 })
  t.match(await column(page, 'To Do').getByRole('listitem').first().getAttribute('aria-label'), /^#15\d* Bulk 15/, 'a filter keystroke over 1,506 cards, scrolled far down: the matches are drawn')
  t.match(await board(page).getByRole('heading').first().textContent(), /^To Do\s*110 issues/, 'every match counted (#150-#159, #1500-#1599)')
  // The list made whole again keeps the place the shorter one moved back to: the rows there are drawn.
  await filter.fill('')
  const drawnAt = async () => await column(page, 'To Do').evaluate((list) => {
    const top = list.parentElement!.scrollTop
    const rows = Array.from(list.querySelectorAll('li')).map((li) => Number(li.getAttribute('aria-posinset')))
    return { top, first: Math.min(...rows), last: Math.max(...rows), view: list.parentElement!.clientHeight }
  })
  await page.waitForFunction(() => /1506 issues/.test(document.querySelector('[aria-label=Board] h2')!.textContent!))
  const at = await drawnAt()
  t.ok(at.top > 0 && at.first <= Math.floor(at.top / 84) + 1 && at.last >= Math.ceil((at.top + at.view) / 84), `the rows in view are drawn (${JSON.stringify(at)})`)
  // A title that changes after the titles' index was made is found by its new words.
  t.equal((await app.admin({ method: 'PATCH', url: `/admin/repositories/${REPO}/issues/1234`, payload: { title: 'Zebra crossing' } })).statusCode, 200)
  await filter.fill('zebra cross')
  await card(page, 1234, 'Zebra crossing').waitFor({ timeout: 8000 })
  t.same(await cardNumbers(page, 'To Do'), [1234], 'a renamed card is found by its new title, and only it')
  await filter.fill('bulk 1234')
  await page.waitForFunction(() => /No card here matches/.test(document.querySelector('[aria-label="To Do"]')!.parentElement!.textContent!))
  t.pass('nor by its old one')
})

t.test('under BASE_PATH and a host app\'s prefix; screenshots of the workspace board and the issue panel', { skip: why, timeout: 60_000 }, async (t) => {
  const adminToken = 'host-admin-token-0123456789'
  const based = await buildApp({ basePath: '/api', demo: true, adminToken })
  const host = Fastify()
  await host.register(planningApi, { prefix: '/planning', demo: true, adminToken })
  const cases = [['BASE_PATH=/api', based, '/api/board', '/api'], ['a host app\'s /planning', host, '/planning', '/planning']] as const
  for (const [name, app, path, prefix] of cases) {
    t.teardown(() => app.close())
    const address = await app.listen({ host: '127.0.0.1', port: 0 })
    // The demo's token is logged, not returned: the admin API makes one for the demo's alice.
    const token = (await app.inject({ method: 'POST', url: `${prefix}/admin/users/alice/token`, headers: { authorization: `Bearer ${adminToken}` } })).json().token
    const page = await open(t, `${address}${path}`, token, { viewport: { width: 1280, height: 720 } })
    await board(page).getByRole('listitem').first().waitFor()
    t.ok(await board(page).getByRole('listitem').count() > 5, `${name}: the demo's workspace board is shown`)
    if (name === 'BASE_PATH=/api') {
      mkdirSync(SHOTS, { recursive: true })
      await page.waitForTimeout(300)
      await page.screenshot({ path: `${SHOTS}/board-page.png` })
      await board(page).getByRole('listitem').nth(1).click()
      await page.getByRole('dialog').waitFor()
      await page.waitForTimeout(300)
      await page.screenshot({ path: `${SHOTS}/board-page-panel.png` })
      t.comment(`screenshots: ${SHOTS}/board-page.png, ${SHOTS}/board-page-panel.png`)
    }
  }
})

t.test('the page\'s files: small, served with their types and a policy, under any prefix', async (t) => {
  const app = await build(t, { basePath: '/api' })
  const files = [['/api/', /text\/html/], ['/api/board', /text\/html/], ['/api/board-assets/board.js', /text\/javascript/], ['/api/board-assets/board.css', /text\/css/],
    ['/api/board-assets/icon.svg', /image\/svg\+xml/], ['/api/favicon.ico', /image\/svg\+xml/]] as const
  for (const [path, type] of files) {
    const res = await app.inject({ url: path })
    t.equal(res.statusCode, 200, path)
    t.match(res.headers['content-type'], type)
    t.match(res.headers['content-security-policy'], /default-src 'none'; script-src 'self'; style-src 'self'/, 'no inline script or style')
    t.equal(res.headers['referrer-policy'], 'no-referrer', 'no address (a token in a link) leaves by the Referer header')
    t.equal(res.headers['x-frame-options'], 'DENY', 'never framed, for browsers without frame-ancestors too')
    t.ok(res.headers.etag, 'a reload that changed nothing is a 304')
    if (path.endsWith('board.js')) {
      const gzipped = gzipSync(res.rawPayload).length
      t.ok(gzipped < 100 * 1024, `the page's script: ${res.rawPayload.length} bytes, ${gzipped} gzipped, under 100 KB`)
    }
  }
  t.match((await app.inject({ url: '/api/' })).body, /<link rel="icon" href="board-assets\/icon.svg"/, 'the page declares its icon')
  const bare = await app.inject({ url: '/api' })
  t.equal(bare.statusCode, 301, 'the prefix without its slash is sent to it, so relative links hold')
  t.equal(bare.headers.location, 'api/')
  const off = await build(t, { boardPage: false })
  t.equal((await off.inject({ url: '/' })).statusCode, 404, 'boardPage: false leaves it out')
})

t.test('new issue, close and reopen from the page; labels and assignees on cards; a refused write shows the API\'s message', { skip: why, timeout: 60_000 }, async (t) => {
  const app = await build(t)
  t.equal((await app.admin({ method: 'POST', url: `/admin/repositories/${OTHER_REPO}/issues`, payload: { number: 40, title: 'Faster sign-in', pull_request: true } })).statusCode, 201)
  const address = await app.listen({ host: '127.0.0.1', port: 0 })
  const page = await open(t, `${address}/?board=${WS_OLD}`, TOKENS.bob)
  await card(page, 2).waitFor()
  const pull = card(page, 40, 'Faster sign-in')
  t.match(await pull.getAttribute('aria-label'), /^#40 Faster sign-in, pull request, /, 'a pull request says so in its name')
  t.equal(await pull.getByText('PR', { exact: true }).count(), 1, 'and shows a PR mark')
  t.equal(await card(page, 2).getByText('PR', { exact: true }).count(), 0, 'an issue shows none')
  await board(page).getByRole('region', { name: /^To Do/ }).getByRole('button', { name: 'New issue' }).click()
  const form = page.getByRole('dialog', { name: 'New issue in To Do' })
  await form.getByLabel('Repository').selectOption({ label: 'acme/web' })
  await form.getByLabel('Title').fill('Written on the board')
  await form.getByRole('button', { name: 'Open the issue' }).click()
  await form.getByRole('alert').waitFor()
  t.match(await form.getByRole('alert').textContent(), /Not opened: write permission on repository 1002 is required/, 'a refused write: the API\'s message, in the form')
  t.equal((await app.as('alice', { url: `/p1/repositories/${OTHER_REPO}/issues?issue_numbers=4` })).json().length, 0, 'nothing was opened')

  await form.getByLabel('Repository').selectOption({ label: 'acme/api' })
  await form.getByLabel('Labels').fill('bug, needs design')
  await form.getByLabel('Assignees').fill('bob')
  await form.getByLabel('Estimate').fill('3')
  await form.getByRole('button', { name: 'Open the issue' }).click()
  await form.waitFor({ state: 'detached' })
  const made = card(page, 8, 'Written on the board')
  await made.waitFor()
  t.match(await made.getAttribute('aria-label'), /^#8 Written on the board, api, 3 pts, labels bug, needs design, assigned to bob$/, 'labels and assignees on the card, in its name too')
  const labelChips = await made.locator('.label').evaluateAll((chips) => chips.flatMap((c) => /^\+\d+$/.test(c.textContent!) ? c.getAttribute('title')!.split(', ') : [c.textContent!]))
  t.same(labelChips, ['bug', 'needs design'], 'its labels, each whole: shown, or named in the "+N" that counts those left out')
  t.equal(await made.locator('.assignee').textContent(), 'BO', 'an assignee by initials')
  t.same((await apiBoard(app))[P.todo][0], 8, 'opened at the top of the pipeline')
  t.match((await app.as('bob', { url: `/p1/repositories/${REPO}/issues?issue_numbers=8` })).json()[0], { title: 'Written on the board', labels: [{ name: 'bug' }, { name: 'needs design' }], estimate: { value: 3 } })

  await page.getByRole('button', { name: 'Labels' }).click()
  await page.getByRole('checkbox', { name: 'needs design' }).check()
  await page.keyboard.press('Escape')
  t.same(await cardNumbers(page, 'To Do'), [8], 'the label filter keeps the labelled card')
  await page.getByRole('button', { name: 'Clear filters' }).click()

  await made.click()
  const panel = page.getByRole('dialog', { name: '#8 Written on the board' })
  await panel.getByRole('button', { name: 'Close issue' }).click()
  await waitStatus(page, /Closed #8\./)
  t.equal((await app.as('bob', { url: `/p1/repositories/${REPO}/issues?issue_numbers=8` })).json()[0].status, 'closed', 'closed through the API')
  await page.waitForFunction(() => !document.querySelector('[aria-label="To Do"]')!.textContent!.includes('Written on the board'))
  t.pass('a closed issue leaves its pipeline')
  await panel.getByRole('button', { name: 'Reopen issue' }).click()
  await waitStatus(page, /Reopened #8\./)
  await made.waitFor()
  t.equal((await app.as('bob', { url: `/p1/repositories/${REPO}/issues?issue_numbers=8` })).json()[0].status, 'open', 'reopened, back on the board')

  // A release report's burndown is one click from its name in the panel.
  const day = 86_400_000
  const release = await app.as('alice', {
    method: 'POST', url: `/p1/repositories/${REPO}/reports/release`, payload: { title: 'Spring launch', start_date: new Date(Date.now() - 2 * day).toISOString(), desired_end_date: new Date(Date.now() + 5 * day).toISOString() }
  })
  const releaseId = release.json().release_id
  t.equal((await app.as('alice', { method: 'PATCH', url: `/p1/reports/release/${releaseId}/issues`, payload: { add_issues: [{ repo_id: REPO, issue_number: 2 }], remove_issues: [] } })).statusCode, 200)
  await panel.getByRole('button', { name: 'Close', exact: true }).click()
  await card(page, 2).click()
  const two = page.getByRole('dialog', { name: '#2 Issue 2' })
  await two.getByRole('button', { name: 'Burndown of Spring launch' }).click()
  await page.getByRole('region', { name: 'Reports' }).getByRole('img', { name: /^Burndown of Spring launch:/ }).waitFor()
  t.match(page.url(), new RegExp(`view=reports&burndown=release%3A${releaseId}`), 'the panel leads to the release report\'s burndown')
})

t.test('the Reports view: burndown, velocity and cycle time as charts and tables that match the API, a CSV download', { skip: why, timeout: 90_000 }, async (t) => {
  // The fixture records its issues as opened now: the history made here comes after that.
  const DAY = 86_400_000
  let monday = Math.ceil(Date.now() / DAY) * DAY + DAY
  while (new Date(monday).getUTCDay() !== 1) monday += DAY
  const day = (n: number) => new Date(monday + n * DAY + 10 * 3_600_000).toISOString()
  const clock = { now: Date.now() }
  const { app, db } = await buildWithHistory(t, { clock: () => clock.now, sprintTickMs: 0 })
  const config = { length_weeks: 1, starts_on: new Date(monday).toISOString().slice(0, 10), time_zone: 'UTC', carry_over: true }
  t.equal((await app.as('alice', { method: 'PUT', url: `/p2/workspaces/${WS_OLD}/sprint_config`, payload: config })).statusCode, 200)
  const [s1] = (await app.as('alice', { url: `/p2/workspaces/${WS_OLD}/sprints` })).json()
  for (const [n, points] of [[1, 3], [3, 5], [4, 2]]) await estimate(db, REPO, n, points, day(-1))
  t.equal((await app.as('alice', { method: 'POST', url: `/p2/sprints/${s1.id}/issues`, payload: { issues: [1, 3, 4].map((n) => ({ repo_id: REPO, issue_number: n })) } })).statusCode, 200)
  for (const n of [1, 3]) await moved(db, REPO, n, WS_OLD, 'Doing', day(0))
  await setState(db, REPO, 1, 'closed', day(2))
  await setState(db, REPO, 3, 'closed', day(5))
  await estimate(db, REPO, 4, 4, day(3))
  clock.now = Date.parse(day(8))
  const api = async (path: string) => (await app.as('alice', { url: path })).json()
  const burndown = await api(`/p2/sprints/${s1.id}/burndown`)
  const velocity = await api(`/p2/workspaces/${WS_OLD}/velocity?sprints=6`)
  const cycle = await api(`/p2/workspaces/${WS_OLD}/cycle_time`)
  t.equal(cycle.count, 2, 'the seeded history has two cycle times')

  const address = await app.listen({ host: '127.0.0.1', port: 0 })
  const page = await open(t, `${address}/?board=${WS_OLD}`, TOKENS.alice, { bypassCSP: true })
  await card(page, 2).waitFor()
  await page.getByRole('link', { name: 'Reports' }).click()
  const reports = page.getByRole('region', { name: 'Reports' })
  await reports.waitFor()
  await reports.getByRole('combobox', { name: 'Burndown of' }).selectOption({ label: 'Sprint 1' })
  t.match(page.url(), new RegExp(`view=reports&burndown=sprint%3A${s1.id}`), 'the view and the burndown shown are in the address')

  const chart = reports.getByRole('img', { name: /^Burndown of Sprint 1:/ })
  await chart.waitFor()
  const last = burndown.days.at(-1)
  t.match(await chart.getAttribute('aria-label'), `${last.remaining_points} points remaining on ${last.date}`, 'the chart\'s summary says where it ends')
  t.same(await chart.locator('circle > title').allTextContents(),
    burndown.days.map((d: { date: string, remaining_points: number, remaining_issues: number }) => `${d.date}: ${d.remaining_points} pts remaining, ${d.remaining_issues} open`),
    'one dot per day, as the API counts it')
  t.equal(await chart.locator('line.scope').count(), burndown.scope_changes.length, 'a mark per scope change')
  const rows = await reports.getByRole('table', { name: /^Burndown of Sprint 1/ }).locator('tbody tr').evaluateAll((trs) => trs.map((tr) => Array.from(tr.children).map((c) => c.textContent)))
  t.same(rows, burndown.ideal.map((i: { date: string, remaining_points: number }) => {
    const day = burndown.days.find((d: { date: string }) => d.date === i.date)
    return [i.date, day === undefined ? '' : String(day.remaining_points), day === undefined ? '' : String(day.remaining_issues), day === undefined ? '' : String(day.closed_points),
      String(i.remaining_points)]
  }), 'the table holds every day of the API\'s answer')

  const bars = reports.getByRole('img', { name: /^Velocity of the last/ })
  t.same(await bars.locator('rect > title').allTextContents(),
    velocity.sprints.map((s: { name: string, points_closed: number, issues_closed: number }) => `${s.name}: ${s.points_closed} pts, ${s.issues_closed} ${s.issues_closed === 1 ? 'issue' : 'issues'} closed`))
  t.same(await reports.getByRole('table', { name: 'Points and issues closed per sprint' }).locator('tbody tr').evaluateAll((trs) => trs.map((tr) => tr.children[3].textContent)),
    velocity.sprints.map((s: { points_closed: number }) => String(s.points_closed)), 'velocity: the bars and the table match the API')

  const dots = reports.getByRole('img', { name: /^Cycle time of 2 closed issues/ })
  t.match(await dots.getAttribute('aria-label'), `p50 ${daysText(cycle.p50)}, p85 ${daysText(cycle.p85)}, p95 ${daysText(cycle.p95)}`)
  t.equal(await dots.locator('circle').count(), cycle.count, 'one dot per closed issue')
  t.same(await reports.getByRole('table', { name: /^Time from entering/ }).locator('tbody tr td:last-child').allTextContents(), cycle.issues.map((i: { days: number }) => daysText(i.days)))

  mkdirSync(SHOTS, { recursive: true })
  await page.screenshot({ path: `${SHOTS}/board-page-reports.png`, fullPage: true })
  const [download] = await Promise.all([page.waitForEvent('download'), reports.getByRole('link', { name: 'Download the burndown as CSV' }).click()])
  t.equal(download.suggestedFilename(), `sprint-${s1.id}-burndown.csv`)
  t.equal(readFileSync((await download.path())!, 'utf8'), (await app.as('alice', { url: `/p2/sprints/${s1.id}/burndown?format=csv` })).body, 'the CSV download is the API\'s CSV')
  const { violations } = await axe(page, 'the reports view')
  t.same(violations, [], 'axe-core: no serious or critical violation on the reports view')

  // The board's sprint filter: only the sprint's issues, kept in the address.
  await page.getByRole('link', { name: 'Board', exact: true }).click()
  await page.getByRole('combobox', { name: 'Sprint' }).selectOption({ label: 'Sprint 1' })
  await page.waitForFunction(() => document.querySelectorAll('[aria-label="To Do"] li').length === 1)
  t.same(await cardNumbers(page, 'To Do'), [4], 'the sprint filter keeps the sprint\'s open issue')
  t.match(page.url(), new RegExp(`sprint=${s1.id}`))
})

t.test('the first load without a session makes no failing request; a failed first read keeps the token, says so and tries again', { skip: why, timeout: 60_000 }, async (t) => {
  const app = await build(t)
  const address = await app.listen({ host: '127.0.0.1', port: 0 })
  const context = await newContext(browser, { viewport: { width: 1280, height: 800 } })
  t.teardown(() => context.close())
  const page = await context.newPage()
  const problems: string[] = []
  page.on('console', (m) => { if (m.type() === 'error') problems.push(m.text()) })
  page.on('response', (res) => { if (res.status() >= 400) problems.push(`${res.status()} ${res.url()}`) })
  const probe = page.waitForResponse((res) => new URL(res.url()).pathname === '/auth/session')
  await page.goto(`${address}/?board=${WS_OLD}`)
  t.equal((await probe).status(), 200, 'the session probe answers 200')
  await page.getByRole('textbox', { name: 'Login' }).waitFor()
  await page.waitForLoadState('networkidle')
  t.same(problems, [], 'no failed request and no error in the console')

  // The first read answers 503 twice (the database restarting): the token stays, the page says so and tries again.
  let refusals = 0
  const workspaces = (url: URL) => url.pathname === '/p2/workspaces'
  await page.route(workspaces, async (route) => {
    if (refusals++ < 2) return await route.fulfill({ status: 503, contentType: 'application/json', body: JSON.stringify({ statusCode: 503, error: 'Service Unavailable', message: 'the database is not answering' }) })
    await route.fallback()
  })
  await signInWithToken(page, TOKENS.alice)
  await waitStatus(page, /Could not reach the server \(the database is not answering\)/)
  t.equal(await page.evaluate(() => sessionStorage.getItem('planning-token')), TOKENS.alice, 'the token is kept')
  t.equal(await page.getByLabel('API token').count(), 0, 'not sent back to the sign-in form')
  await card(page, 2).waitFor()
  t.equal(refusals, 3, 'tried again until it answered')
  await page.unroute(workspaces)

  // A reload whose first read is aborted keeps the token too.
  let aborted = false
  await page.route(workspaces, async (route) => {
    if (aborted) return await route.fallback()
    aborted = true
    await route.abort('failed')
  })
  await page.reload()
  await card(page, 2).waitFor()
  t.ok(aborted, 'the first read after the reload failed')
  t.equal(await page.evaluate(() => sessionStorage.getItem('planning-token')), TOKENS.alice, 'still signed in')
})

/** A port nobody listens on, so PUBLIC_URL can name the server's address before it starts. */
async function freePort (): Promise<number> {
  const server = createServer()
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as { port: number }
  await new Promise<void>((resolve) => server.close(() => resolve()))
  return port
}

t.test('sign-in through the issue host: the provider\'s button, back on the board by the session, sign-out ends it', { skip: why, timeout: 60_000 }, async (t) => {
  const client = { id: 'Iv1.board-page', secret: 'board-page-oauth-secret-0123456789' }
  const host = await startHostOAuth('github', client)
  t.teardown(() => host.close())
  const port = await freePort()
  const address = `http://127.0.0.1:${port}`
  const app = await build(t, { hosts: { allowPrivate: true }, signIn: { publicUrl: address } })
  const connection = await app.admin({ method: 'POST', url: '/admin/connections', payload: { kind: 'github', web_url: host.webUrl, oauth_client_id: client.id, oauth_client_secret: client.secret } })
  const id = connection.json().id as string
  t.equal((await app.admin({ method: 'PUT', url: '/admin/users/alice/identities', payload: { connection_id: id, platform_user_id: 501 } })).statusCode, 200)
  await app.listen({ host: '127.0.0.1', port })

  const context = await newContext(browser, { viewport: { width: 1280, height: 800 } })
  t.teardown(() => context.close())
  // The host's consent page: alice approves at once, and the host sends the browser back with a code.
  host.approveAs({ id: 501, login: 'octo-alice' })
  const page = await context.newPage()
  await page.goto(`${address}/?board=${WS_OLD}/${REPO}`)
  const button = page.getByRole('link', { name: /^Sign in with GitHub/ })
  t.equal(await button.getAttribute('href'), `/auth/host/${id}/login?return_to=${encodeURIComponent(`/?board=${WS_OLD}/${REPO}`)}`, 'back to this page')
  await page.getByRole('textbox', { name: 'Login' }).waitFor()
  await button.click()
  await card(page, 6).waitFor()
  t.equal(new URL(page.url()).origin, address, 'back on the board')
  t.equal(await page.getByRole('combobox', { name: 'Board' }).inputValue(), `${WS_OLD}/${REPO}`, 'the board it was asked for')
  t.equal(await page.evaluate(() => sessionStorage.getItem('planning-token')), null, 'no token: the session cookie')
  const cookie = (await context.cookies()).find((c) => c.name === 'planning_session')
  t.ok(cookie?.httpOnly, 'an HttpOnly session cookie')
  await page.reload()
  await card(page, 6).waitFor()
  t.pass('a reload stays signed in')

  const logout = page.waitForResponse((res) => res.url().endsWith('/auth/logout'))
  await page.getByRole('button', { name: 'Sign out' }).click()
  t.equal((await logout).status(), 204, 'the session ends at the server (a same-origin write)')
  await button.waitFor()
  t.equal((await app.inject({ url: '/account', headers: { cookie: `planning_session=${cookie!.value}` } })).statusCode, 401, 'its cookie no longer works')
  await page.reload()
  await page.getByRole('textbox', { name: 'Login' }).waitFor()
  t.equal(await card(page, 6).count(), 0, 'after a reload: the sign-in form, not the board')
})

t.test('the Settings view: an admin names the host label a pipeline writes; anyone else reads the labels, with no field', { skip: why, timeout: 60_000 }, async (t) => {
  const app = await build(t)
  const address = await app.listen({ host: '127.0.0.1', port: 0 })
  const labels = async () => ((await app.as('alice', { url: '/p2/workspaces' })).json() as Array<{ id: string, pipelines: Array<{ id: string, host_label: string | null }> }>)
    .find((w) => w.id === WS_OLD)!.pipelines.map((p) => p.host_label)
  const page = await open(t, `${address}/?board=${WS_OLD}`, TOKENS.alice, { bypassCSP: true })
  await card(page, 2).waitFor()
  await page.getByRole('link', { name: 'Settings' }).click()
  const doing = page.getByRole('group', { name: 'Doing' })
  await doing.getByLabel('Host label for Doing').fill('status: doing')
  await doing.getByRole('button', { name: 'Save' }).click()
  await waitStatus(page, /Doing writes the label "status: doing"/)
  t.same(await labels(), [null, 'status: doing', null], 'saved through the API')
  t.match(page.url(), /view=settings/, 'the view is in the address')
  t.same((await axe(page, 'settings')).violations, [], 'axe-core: no serious or critical violation in the Settings view')

  // Two pipelines cannot name one label: the API's 409, in the status line.
  const done = page.getByRole('group', { name: 'Done' })
  await done.getByLabel('Host label for Done').fill('status: doing')
  await done.getByRole('button', { name: 'Save' }).click()
  await waitStatus(page, /Not saved/)
  t.same(await labels(), [null, 'status: doing', null], 'nothing changed')
  await doing.getByLabel('Host label for Doing').fill('')
  await doing.getByRole('button', { name: 'Save' }).click()
  await waitStatus(page, /Doing writes no label/)
  t.same(await labels(), [null, null, null], 'an empty field clears it')

  // bob writes to acme/api but is no admin of the workspace's repositories: the labels to read, no field to change them.
  const bob = await open(t, `${address}/?board=${WS_OLD}&view=settings`, TOKENS.bob)
  await bob.getByRole('list', { name: 'Pipeline labels' }).getByText('To Do: no label').waitFor()
  t.equal(await bob.getByLabel('Host label for To Do').count(), 0, 'no editable setting (absent, not refused)')
  t.same(await labels(), [null, null, null], 'nothing changed')
})

t.test('editing an issue from its panel: its description shown, title, labels and assignees saved through the API; a reader sees the description and no Edit', { skip: why, timeout: 60_000 }, async (t) => {
  const app = await build(t)
  const address = await app.listen({ host: '127.0.0.1', port: 0 })
  const issue3 = async () => (await app.as('alice', { url: `/p1/repositories/${REPO}/issues?issue_numbers=3` })).json()[0] as { title: string, labels: Array<{ name: string }>, assignees: Array<{ login: string }> }
  const described = { body: '**Steps** <script>window.ran = 1</script>\n\n[the log](https://logs.example.com/3)' }
  t.equal((await app.as('alice', { method: 'PATCH', url: `/p1/repositories/${REPO}/issues/3`, payload: described })).statusCode, 200)
  const page = await open(t, `${address}/?board=${WS_OLD}/${REPO}`, TOKENS.alice, { bypassCSP: true })
  await card(page, 3).click()
  const panel = page.getByRole('dialog', { name: '#3 Issue 3' })
  const description = panel.getByRole('region', { name: 'Description' })
  await description.getByRole('link', { name: 'the log' }).waitFor()
  t.equal(await description.locator('strong').textContent(), 'Steps', 'the description rendered as Markdown')
  t.match(await description.textContent(), /<script>window\.ran = 1<\/script>/, 'raw HTML shown as text')
  t.equal(await page.evaluate(() => (window as unknown as { ran?: number }).ran), undefined, 'and never run')
  t.equal(await description.getByRole('link', { name: 'the log' }).getAttribute('rel'), 'noopener nofollow')
  await panel.getByRole('button', { name: 'Edit' }).click()
  const form = panel.getByRole('form', { name: 'Edit #3' })
  await form.getByLabel('Title').fill('Sharper title')
  await form.getByLabel('Labels').fill('bug, ui')
  await form.getByLabel('Assignees').fill('bob')
  t.same((await axe(page, 'the panel in edit mode')).violations, [], 'axe-core: no serious or critical violation while editing')
  await form.getByRole('button', { name: 'Save' }).click()
  await waitStatus(page, /Saved #3/)
  t.match(await issue3(), { title: 'Sharper title', labels: [{ name: 'bug' }, { name: 'ui' }], assignees: [{ login: 'bob' }] }, 'saved through the API')
  await page.getByRole('dialog', { name: '#3 Sharper title' }).waitFor()
  await card(page, 3, 'Sharper title').waitFor()
  t.same(await card(page, 3, 'Sharper title').locator('.label').allTextContents(), ['bug', 'ui'], 'the card shows the new labels at once')
  // Esc leaves the edit, not the panel.
  await page.getByRole('dialog', { name: '#3 Sharper title' }).getByRole('button', { name: 'Edit' }).click()
  await page.keyboard.press('Escape')
  t.equal(await page.getByRole('form', { name: 'Edit #3' }).count(), 0, 'Esc cancels the edit')
  t.equal(await page.getByRole('dialog', { name: '#3 Sharper title' }).count(), 1, 'and the panel stays open')

  // A refusal (the permission taken away meanwhile) keeps the old values and says why, naming the repository.
  await page.route(`**/p1/repositories/${REPO}/issues/3`, async (route) => route.request().method() === 'PATCH'
    ? await route.fulfill({ status: 403, contentType: 'application/json', body: JSON.stringify({ statusCode: 403, error: 'Forbidden', message: `write permission on repository ${REPO} is required` }) })
    : await route.continue())
  await page.getByRole('dialog', { name: '#3 Sharper title' }).getByRole('button', { name: 'Edit' }).click()
  await page.getByRole('form', { name: 'Edit #3' }).getByLabel('Title').fill('Not mine to change')
  await page.getByRole('form', { name: 'Edit #3' }).getByRole('button', { name: 'Save' }).click()
  await waitStatus(page, /Not saved/)
  t.match(await status(page).textContent(), /Not saved: write permission on repository acme\/api is required\. #3 keeps what it had\./, 'the API\'s refusal, said')
  t.equal((await issue3()).title, 'Sharper title', 'nothing changed')
  t.equal(await page.getByRole('form', { name: 'Edit #3' }).count(), 1, 'the form stays, with what was typed')

  // carol only reads acme/api: she reads the description, and has no Edit (since the read-only views; the store's refusal path is in board-components).
  const carol = await open(t, `${address}/?board=${WS_OLD}/${REPO}`, TOKENS.carol)
  await card(carol, 3, 'Sharper title').click()
  const hers = carol.getByRole('dialog', { name: '#3 Sharper title' })
  await hers.getByRole('region', { name: 'Description' }).getByRole('link', { name: 'the log' }).waitFor()
  await hers.getByRole('button', { name: 'Edit' }).waitFor({ state: 'detached' })
  t.equal(await hers.getByRole('button', { name: 'Edit' }).count(), 0, 'a reader has no Edit')
  t.equal(await hers.getByRole('button', { name: 'Close issue' }).count(), 0, 'nor Close issue')
})
