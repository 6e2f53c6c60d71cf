/// <reference lib="dom" />
import t from 'tap'
import Fastify from 'fastify'
import { existsSync, mkdirSync } from 'node:fs'
import { chromium, type Browser, type Page } from 'playwright-core'
import { buildApp, planningApi } from '../app.js'
import { build, P, REPO, TOKENS, type App } from './helper.js'

// The board page as a person uses it, in a real browser: Debian's chromium package.
const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium'
const why = existsSync(CHROMIUM) ? undefined : `no Chromium at ${CHROMIUM} (apt-get install chromium, or set CHROMIUM_PATH)`
if (why !== undefined) t.comment(`skipping the board page tests: ${why}`)

let browser: Browser
t.before(async () => {
  if (why === undefined) browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--headless', '--no-sandbox', '--disable-gpu'] })
})
t.teardown(async () => await browser?.close())

async function signIn (page: Page, url: string, token: string) {
  await page.goto(url)
  await page.fill('#token', token)
  await page.click('#sign-in button[type=submit]')
}

const column = (page: Page, pipeline: string) => page.locator(`.column[data-pipeline="${pipeline}"]`)
const cardNumbers = async (page: Page, pipeline: string) =>
  (await column(page, pipeline).locator('.card').evaluateAll((cards) => cards.map((c) => Number((c as HTMLElement).dataset.number))))

async function apiBoard (app: App) {
  const board = (await app.as('alice', { url: `/p1/repositories/${REPO}/board` })).json() as { pipelines: Array<{ id: string, issues: Array<{ issue_number: number, estimate?: { value: number } }> }> }
  return Object.fromEntries(board.pipelines.map((p) => [p.id, p.issues.map((i) => i.issue_number)]))
}

t.test('sign in, see the board, move cards by dragging and by keys, set an estimate, see others\' changes live', { skip: why, timeout: 120_000 }, async (t) => {
  const app = await build(t)
  const address = await app.listen({ host: '127.0.0.1', port: 0 })
  const page = await browser.newPage()
  const failed: string[] = []
  page.on('response', (res) => { if (res.status() >= 500) failed.push(`${res.status()} ${res.url()}`) })

  await signIn(page, `${address}/`, 'not-a-token')
  await page.waitForSelector('#status.error')
  t.match(await page.textContent('#status'), /token was refused: the API token is not valid/, 'a wrong token says so')

  await signIn(page, `${address}/`, TOKENS.alice)
  await page.waitForSelector(`.column[data-pipeline="${P.todo}"] .card`)
  t.notOk(await page.locator('#sign-in').isVisible(), 'the sign-in form is gone')
  await page.waitForFunction(() => document.title === 'acme/api · Planning board')
  t.equal(await page.locator('#boards option:checked').textContent(), 'Engineering · acme/api', 'the picker names the repository')
  t.equal(await page.locator('#boards option').count(), 4, 'every readable workspace and repository: 3 in Engineering, 1 in Roadmap')
  t.same(await page.locator('.column h3 span').allTextContents(), ['To Do', 'Doing', 'Done'], 'pipelines in workspace order')
  t.same(await cardNumbers(page, P.todo), [1, 2, 3, 4, 5, 6], 'cards in board order; the closed issue is not shown')
  t.match(await column(page, P.todo).locator('h3 small').textContent(), /6 issues · 0 pts/)
  t.equal(await page.locator('.card[data-number="2"] .title').textContent(), 'Issue 2', 'titles from the bulk issue extension')
  t.equal(await page.locator('.card[data-number="2"] a').getAttribute('href'), 'https://github.com/acme/api/issues/2', 'a link to the issue on its host')

  await page.locator('.card[data-number="2"]').dragTo(column(page, P.doing).locator('.cards'))
  await page.waitForFunction(() => /Moved #2/.test(document.getElementById('status')!.textContent!))
  t.same((await apiBoard(app))[P.doing], [2], 'the drag made one move, seen through the API')
  t.same(await cardNumbers(page, P.doing), [2], 'the card stays where it was dropped')

  await page.locator('.card[data-number="1"]').dragTo(page.locator('.card[data-number="5"]'), { targetPosition: { x: 20, y: 2 } })
  await page.waitForFunction(() => /Moved #1/.test(document.getElementById('status')!.textContent!))
  t.same((await apiBoard(app))[P.todo], [3, 4, 1, 5, 6], 'dropped above #5: index 2 within the column')

  await page.locator('.card[data-number="3"] .estimate').click()
  await page.fill('.card[data-number="3"] input', '5')
  await page.press('.card[data-number="3"] input', 'Enter')
  await page.waitForFunction(() => /#3 is estimated at 5/.test(document.getElementById('status')!.textContent!))
  t.same((await app.as('alice', { url: `/p1/repositories/${REPO}/issues/3` })).json().estimate, { value: 5 }, 'the estimate was set')
  await page.waitForFunction(() => /5 pts/.test(document.querySelector('.column h3 small')!.textContent!))
  t.pass('the column sums estimates')

  await page.locator('.card[data-number="5"]').focus()
  await page.keyboard.press('Shift+ArrowRight')
  await page.waitForFunction(() => /Moved #5/.test(document.getElementById('status')!.textContent!))
  t.same((await apiBoard(app))[P.doing], [2, 5], 'Shift+ArrowRight moved the focused card to the next pipeline, at its index or the end')

  t.equal((await app.as('bob', { method: 'POST', url: `/p1/repositories/${REPO}/issues/6/moves`, payload: { pipeline_id: P.done, position: 'top' } })).statusCode, 200)
  await page.waitForFunction(() => document.querySelector('.column[data-pipeline="pipe-done"] .card[data-number="6"]') !== null, undefined, { timeout: 10_000 })
  t.pass('a move made through the API appears without a reload')

  await page.setViewportSize({ width: 390, height: 800 })
  t.ok(await page.locator('.column').first().isVisible(), 'readable at phone width')
  t.same(failed, [], 'no request failed')
  await page.close()
})

t.test('a read-only user\'s drag is refused and the card goes back', { skip: why, timeout: 60_000 }, async (t) => {
  const app = await build(t)
  const address = await app.listen({ host: '127.0.0.1', port: 0 })
  const page = await browser.newPage()
  await signIn(page, `${address}/board`, TOKENS.carol)
  await page.waitForSelector(`.column[data-pipeline="${P.todo}"] .card`)
  await page.locator('.card[data-number="1"]').dragTo(column(page, P.done).locator('.cards'))
  await page.waitForSelector('#status.error')
  t.match(await page.textContent('#status'), /Could not move #1: write permission on repository 1001 is required/)
  t.same(await cardNumbers(page, P.todo), [1, 2, 3, 4, 5, 6], 'the card is back where it was')
  t.same(await cardNumbers(page, P.done), [])
  t.same((await apiBoard(app))[P.todo], [1, 2, 3, 4, 5, 6], 'nothing moved')
  await page.close()
})

t.test('the page under BASE_PATH and under a host app\'s prefix; the demo board\'s screenshot', { skip: why, timeout: 60_000 }, async (t) => {
  const adminToken = 'host-admin-token-0123456789'
  const based = await buildApp({ basePath: '/api', demo: true, adminToken })
  const host = Fastify()
  await host.register(planningApi, { prefix: '/planning', demo: true, adminToken })
  const cases = [['BASE_PATH=/api', based, '/api/board', '/api'], ['a host app\'s /planning', host, '/planning', '/planning']] as const
  for (const [name, app, path, prefix] of cases) {
    t.teardown(() => app.close())
    const address = await app.listen({ host: '127.0.0.1', port: 0 })
    const page = await browser.newPage({ viewport: { width: 1100, height: 640 } })
    // The demo's token is logged, not returned: the admin API makes one for the demo's alice.
    const token = (await app.inject({ method: 'POST', url: `${prefix}/admin/users/alice/token`, headers: { authorization: `Bearer ${adminToken}` } })).json().token
    await signIn(page, `${address}${path}`, token)
    await page.waitForSelector('.card .title:not(:empty)')
    t.ok(await page.locator('.card').count() > 5, `${name}: the demo board is shown`)
    if (name === 'BASE_PATH=/api') {
      mkdirSync('.tap', { recursive: true })
      await page.screenshot({ path: '.tap/board-page.png' })
      t.comment('screenshot of the demo board: .tap/board-page.png')
    }
    await page.close()
  }
})

t.test('the page\'s files: small, served with their types and a policy, under any prefix', async (t) => {
  const app = await build(t, { basePath: '/api' })
  let total = 0
  for (const [path, type] of [['/api/', /text\/html/], ['/api/board', /text\/html/], ['/api/board-assets/board.js', /text\/javascript/], ['/api/board-assets/board.css', /text\/css/]] as const) {
    const res = await app.inject({ url: path })
    t.equal(res.statusCode, 200, path)
    t.match(res.headers['content-type'], type)
    t.match(res.headers['content-security-policy'], /default-src 'none'; script-src 'self'/)
    t.ok(res.headers.etag, 'a reload that changed nothing is a 304')
    if (path !== '/api/board') total += res.rawPayload.length
  }
  t.ok(total < 100 * 1024, `the page's own HTML, JavaScript and CSS: ${total} bytes, under 100 KB`)
  const bare = await app.inject({ url: '/api' })
  t.equal(bare.statusCode, 301, 'the prefix without its slash is sent to it, so relative links hold')
  t.equal(bare.headers.location, 'api/')
  const off = await build(t, { boardPage: false })
  t.equal((await off.inject({ url: '/' })).statusCode, 404, 'boardPage: false leaves it out')
})
