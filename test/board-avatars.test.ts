/// <reference lib="dom" />
import t from 'tap'
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { avatarOrigins } from '../plugins/board-page.js'
import { browserSkip, launchBrowser, newPage, signInWithToken } from './browser.js'
import { build, REPO, testFixture, TOKENS, WS_OLD } from './helper.js'

const why = browserSkip
if (why !== undefined) t.comment(`skipping the avatar browser test: ${why}`)

// A 1×1 PNG.
const PNG = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg==', 'base64')

async function imageServer (): Promise<{ origin: string, server: Server }> {
  const server = createServer((_req, res) => { res.writeHead(200, { 'content-type': 'image/png' }).end(PNG) })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  return { origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, server }
}

t.test('the page may load avatars from the connected hosts only', async (t) => {
  t.same(avatarOrigins([
    { kind: 'github', web_url: 'https://github.com' },
    { kind: 'github', web_url: 'https://ghe.example.com/' },
    { kind: 'gitea', web_url: 'https://git.example.org:3000/sub' },
    { kind: 'forgejo', web_url: 'not a url' },
    { kind: 'gitea', web_url: 'javascript:alert(1)' }
  ]), ['https://avatars.ghe.example.com', 'https://avatars.githubusercontent.com', 'https://ghe.example.com', 'https://git.example.org:3000'])
  const app = await build(t, { hosts: { allowPrivate: true } })
  const before = String((await app.inject({ url: '/' })).headers['content-security-policy'])
  t.match(before, /img-src 'self';/, 'no connection: the page\'s own images only')
  t.equal((await app.admin({ method: 'POST', url: '/admin/connections', payload: { kind: 'github', secret: 'a-webhook-secret-for-tests' } })).statusCode, 201)
  const after = String((await app.inject({ url: '/' })).headers['content-security-policy'])
  t.match(after, /img-src 'self' https:\/\/avatars\.githubusercontent\.com;/, 'a github.com connection: its avatar server')
  t.match(after, /script-src 'self';/, 'the rest of the policy unchanged')
})

t.test('cards show the host\'s avatars, and initials where one cannot load', { skip: why, timeout: 60_000 }, async (t) => {
  const allowed = await imageServer()
  const other = await imageServer()
  t.teardown(() => { allowed.server.close(); other.server.close() })
  const fixture = testFixture()
  const issue = fixture.issues.find((i) => i.repo_id === REPO && i.number === 1)! as Record<string, unknown>
  issue.assignees = [{ login: 'ann', avatar_url: `${allowed.origin}/avatars/ann.png` }, { login: 'bo-b', avatar_url: `${other.origin}/bob.png` }, { login: 'cy', avatar_url: null }]
  const app = await build(t, { hosts: { allowPrivate: true }, fixture })
  const made = await app.admin({ method: 'POST', url: '/admin/connections', payload: { kind: 'gitea', web_url: allowed.origin, secret: 'a-webhook-secret-for-tests' } })
  t.equal(made.statusCode, 201, made.body)
  const address = await app.listen({ host: '127.0.0.1', port: 0 })

  const browser = await launchBrowser()
  t.teardown(() => browser.close())
  const page = await newPage(browser)
  await page.goto(`${address}/?board=${WS_OLD}/${REPO}`)
  await signInWithToken(page, TOKENS.alice)
  const card = page.getByRole('region', { name: 'Board' }).getByRole('listitem', { name: /^#1 Issue 1\b/ })
  await card.waitFor()
  const avatar = card.locator('img.avatar')
  await page.waitForFunction(() => document.querySelectorAll('img.avatar').length === 1, undefined, { timeout: 10_000 })
  t.equal(await avatar.getAttribute('src'), `${allowed.origin}/avatars/ann.png`, 'the connected host\'s avatar')
  t.equal(await avatar.evaluate((img: HTMLImageElement) => img.naturalWidth), 1, 'and it loaded')
  t.same(await card.locator('span.assignee').allTextContents(), ['BB', 'CY'], 'an avatar from elsewhere (refused by the policy) and none at all: initials')
})
