import t from 'tap'
import Fastify from 'fastify'
import type { Browser } from 'playwright-core'
import { buildApp, planningApi } from '../app.js'
import { browserSkip, launchBrowser, newPage } from './browser.js'

// Swagger UI as a person sees it, in a real browser: Debian's chromium package. Once per CI run, as
// the board page's browser tests: not in the PostgreSQL pass nor on the other runtimes.
const why = browserSkip
if (why !== undefined) t.comment(`skipping the browser tests: ${why}`)

t.test('Swagger UI lists the operations at the root, under BASE_PATH and under a host app\'s prefix', { skip: why, timeout: 120_000 }, async (t) => {
  const browser: Browser = await launchBrowser()
  t.teardown(() => browser.close())
  const host = Fastify()
  await host.register(planningApi, { prefix: '/planning' })
  const cases = [
    { name: 'no prefix', app: await buildApp({ documentation: true }), path: '/documentation' },
    { name: 'BASE_PATH=/api', app: await buildApp({ documentation: true, basePath: '/api' }), path: '/api/documentation' },
    { name: 'a host app\'s /planning', app: host, path: '/planning/documentation' }
  ]
  for (const { name, app, path } of cases) {
    t.teardown(() => app.close())
    const address = await app.listen({ host: '127.0.0.1', port: 0 })
    const page = await newPage(browser)
    const failed: string[] = []
    page.on('response', (res) => { if (res.status() >= 400) failed.push(`${res.status()} ${res.url()}`) })
    await page.goto(`${address}${path}`)
    await page.waitForSelector('.opblock', { timeout: 20_000 })
    const operations = await page.locator('.opblock').count()
    t.ok(operations > 50, `${name}: ${operations} operations listed`)
    t.same(failed, [], `${name}: every file loaded`)
    await page.close()
  }
})
