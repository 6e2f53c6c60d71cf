import { existsSync } from 'node:fs'
import { createRequire } from 'node:module'
import { chromium, type Browser, type BrowserContext, type BrowserContextOptions, type Page } from 'playwright-core'

// The browser tests' common ground: Debian's chromium, run once per CI run (not in the PostgreSQL
// pass, where TEST_DATABASE_URL is set, nor on the other runtimes, where scripts/test-runtime.sh
// sets PLANNING_BROWSER_TESTS=skip).
export const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium'

/** Why the browser tests skip here, or undefined where they run. */
export const browserSkip: string | undefined = process.env.TEST_DATABASE_URL !== undefined
  ? 'the browser tests run in the SQLite pass only'
  : process.env.PLANNING_BROWSER_TESTS === 'skip'
    ? 'the browser tests run on the default runtime only'
    : existsSync(CHROMIUM) ? undefined : `no Chromium at ${CHROMIUM} (apt-get install chromium, or set CHROMIUM_PATH)`

export async function launchBrowser (): Promise<Browser> {
  return await chromium.launch({ executablePath: CHROMIUM, args: ['--headless', '--no-sandbox', '--disable-gpu'] })
}

/**
 * A context whose pages have `__name`: the tests are loaded with tsx (esbuild's keepNames), which
 * wraps named functions in `__name(...)`, and a function handed to `page.evaluate` takes the call
 * into the page. Given as text, so the script itself is not rewritten.
 */
export async function newContext (browser: Browser, options: BrowserContextOptions = {}): Promise<BrowserContext> {
  const context = await browser.newContext(options)
  await context.addInitScript({ content: 'globalThis.__name = (fn) => fn' })
  return context
}

/** A page in a context of its own (closed with the page). */
export async function newPage (browser: Browser, options: BrowserContextOptions = {}): Promise<Page> {
  const context = await newContext(browser, options)
  const page = await context.newPage()
  page.on('close', () => { context.close().catch(() => {}) })
  return page
}

/** Signs in on the board page's sign-in form with an API token (folded under "Use an API token"). */
export async function signInWithToken (page: Page, token: string): Promise<void> {
  const fold = page.locator('details', { has: page.getByText('Use an API token') })
  if (await fold.getAttribute('open') === null) await page.getByText('Use an API token').click()
  await page.getByLabel('API token').fill(token)
  await page.getByRole('button', { name: 'Use token' }).click()
}

const AXE = createRequire(import.meta.url).resolve('axe-core/axe.min.js')

/** axe-core's serious and critical violations on the page, as "rule (nodes)". */
export async function axe (page: Page): Promise<string[]> {
  if (await page.evaluate(() => !('axe' in window))) await page.addScriptTag({ path: AXE })
  return await page.evaluate(async () => {
    const result = await (window as unknown as { axe: { run: (o: unknown) => Promise<{ violations: Array<{ id: string, impact: string, nodes: unknown[] }> }> } }).axe.run({ resultTypes: ['violations'] })
    return result.violations.filter((v) => v.impact === 'serious' || v.impact === 'critical').map((v) => `${v.id} (${v.nodes.length})`)
  })
}
