/// <reference lib="dom" />
import t from 'tap'
import type { SetupLink } from '../app.js'
import { axe, browserSkip, launchBrowser, newContext, signInWithToken } from './browser.js'
import { build, REPO, TOKENS, WS_NEW } from './helper.js'

// Accounts in a real browser: the first-run setup link to a signed-in administrator, sign out, and
// the sign-in form's password sign-in.
const why = browserSkip
if (why !== undefined) t.comment(`skipping the accounts browser test: ${why}`)

t.test('first start in the browser: the setup link makes the administrator, signed in; sign out; sign in with the password', { skip: why, timeout: 90_000 }, async (t) => {
  let link: SetupLink | undefined
  // A workspace to invite into, and nobody yet.
  const fixture = {
    repositories: [{ id: 1001, owner: 'acme', name: 'api' }],
    workspaces: [{ id: 'aaaaaaaaaaaaaaaaaaaaaab1', name: 'Platform', description: null, repositories: [1001], pipelines: [{ id: 'p-todo', name: 'To Do' }] }]
  }
  const app = await build(t, { fixture, onSetupLink: (l) => { link = l } })
  const address = await app.listen({ host: '127.0.0.1', port: 0 })
  const browser = await launchBrowser()
  t.teardown(async () => await browser.close())
  // bypassCSP: axe-core is added to the pages as a script of the test's.
  const context = await newContext(browser, { viewport: { width: 390, height: 844 }, bypassCSP: true })
  const page = await context.newPage()

  await page.goto(`${address}${link!.path}`)
  t.ok(await page.evaluate(() => document.documentElement.scrollWidth <= document.documentElement.clientWidth), 'the setup page at 390 px: nothing scrolls sideways')
  await page.getByLabel('Login').fill('lead')
  await page.getByLabel('Email').fill('lead@example.com')
  await page.getByLabel('Password').fill('too-short')
  await page.getByRole('button', { name: 'Create administrator' }).click()
  const password = page.getByLabel('Password')
  t.equal(await password.getAttribute('aria-invalid'), 'true', 'a short password is refused next to its field')
  t.match(await page.locator(`#${(await password.getAttribute('aria-describedby'))!.split(' ').at(-1)!}`).textContent(), /at least 10 characters/)
  await password.fill('lead-password-1')
  await page.getByRole('button', { name: 'Create administrator' }).click()
  const signOut = page.getByRole('button', { name: 'Sign out' })
  await signOut.waitFor()
  await page.getByRole('navigation', { name: 'Views' }).getByRole('link', { name: 'Administration' }).waitFor()
  t.pass('signed in on the board page, an administrator')
  t.match((await app.admin({ url: '/admin/users' })).json(), [{ login: 'lead', email: 'lead@example.com', administrator: true }])
  t.equal((await app.inject({ url: link!.path })).statusCode, 410, 'the link is used up')

  await signOut.click()
  const login = page.getByRole('textbox', { name: 'Login' })
  await login.waitFor()
  t.equal(await page.getByLabel('API token').isVisible(), false, 'the token field is folded away')
  await login.fill('lead')
  await page.getByLabel('Password').fill('wrong-password-1')
  await page.getByRole('button', { name: 'Sign in', exact: true }).click()
  const field = page.getByLabel('Password')
  await page.waitForFunction(() => document.querySelector('#sign-in-password')?.getAttribute('aria-invalid') === 'true')
  t.equal(await page.locator(`#${(await field.getAttribute('aria-describedby'))!}`).textContent(), 'the login or the password is not right', 'one message, next to the field')
  await field.fill('lead-password-1')
  await page.getByRole('button', { name: 'Sign in', exact: true }).click()
  await signOut.waitFor()
  const session = (await context.cookies()).find((c) => c.name === 'planning_session')
  t.ok(session?.httpOnly, 'a session cookie, no token')

  // Administration → People: an invite made, listed as pending with who made it, then revoked.
  await page.getByRole('link', { name: 'Administration' }).click()
  const people = page.getByRole('region', { name: 'People' })
  await people.getByRole('button', { name: 'Invite' }).click()
  const dialog = page.getByRole('dialog', { name: 'Invite someone' })
  await dialog.getByLabel('Email').fill('new@example.com')
  await dialog.getByLabel('Permission').selectOption('read')
  await dialog.getByRole('button', { name: 'Make the invite link' }).click()
  await dialog.getByRole('button', { name: 'Copy' }).waitFor()
  await dialog.getByRole('button', { name: 'Close' }).click()
  const pending = people.getByRole('table', { name: 'Pending invites' })
  const row = pending.getByRole('row', { name: /Platform read new@example\.com lead/ })
  await row.waitFor()
  const cookie = `planning_session=${session!.value}`
  const listed = async () => (await app.inject({ url: '/invites?workspace_id=aaaaaaaaaaaaaaaaaaaaaab1', headers: { cookie } })).json() as unknown[]
  t.match(await listed(), [{ permission: 'read', email: 'new@example.com', created_by: 'user:lead' }], 'the pending invite, as the API has it')
  await row.getByRole('button', { name: /^Revoke/ }).click()
  await people.getByText('No invite is waiting to be used.').waitFor()
  t.same(await listed(), [], 'revoked in the API at once')

  // An invite opened by someone signed in: one button, "Join as lead", which never lowers lead's admin.
  const inviteUrl = await page.evaluate(async () => {
    const made = await fetch('/invites', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ workspace_id: 'aaaaaaaaaaaaaaaaaaaaaab1', permission: 'read' }) })
    return (await made.json() as { url: string }).url
  })
  await page.goto(`${address}${new URL(inviteUrl).pathname}`)
  const joinAs = page.getByRole('button', { name: 'Join as lead' })
  await joinAs.waitFor()
  t.ok(await page.evaluate(() => document.documentElement.scrollWidth <= document.documentElement.clientWidth), 'the "Join as" page at 390 px: nothing scrolls sideways')
  t.same(await axe(page), [], 'axe-core: no serious or critical violation on the "Join as" page')
  await joinAs.click()
  await page.waitForURL(/\?board=aaaaaaaaaaaaaaaaaaaaaab1$/)
  const leadOn = (await app.admin({ url: '/admin/repositories/1001/permissions' })).json().find((p: { login: string }) => p.login === 'lead')
  t.same(leadOn, { login: 'lead', permission: 'admin' }, 'joined; admin stays admin')
  t.equal((await app.inject({ url: new URL(inviteUrl).pathname })).statusCode, 410, 'the invite is used up')

  // Per person: the last administrator stays one, another is made one, a permission changed, then removed.
  t.equal((await app.admin({ method: 'POST', url: '/admin/users', payload: { login: 'sam' } })).statusCode, 201)
  const samToken = (await app.admin({ method: 'POST', url: '/admin/users/sam/token' })).json().token as string
  await page.goto(`${address}/?view=admin`)
  const person = (login: string) => people.getByRole('row').filter({ has: page.getByRole('rowheader', { name: login, exact: true }) })
  await person('lead').getByRole('button', { name: 'Unmake administrator' }).click()
  await person('lead').getByRole('alert').filter({ hasText: /last administrator/ }).waitFor()
  t.pass('the last administrator cannot be unmade: the refusal shows in their row')
  await person('sam').getByRole('button', { name: 'Make administrator' }).click()
  await person('sam').getByRole('button', { name: 'Unmake administrator' }).waitFor()
  const users = async () => (await app.admin({ url: '/admin/users' })).json() as Array<{ login: string, administrator: boolean }>
  t.match((await users()).find((u) => u.login === 'sam'), { administrator: true }, 'made an administrator: in the API at once')
  await person('sam').getByRole('button', { name: 'Unmake administrator' }).click()
  await person('sam').getByRole('button', { name: 'Make administrator' }).waitFor()
  t.match((await users()).find((u) => u.login === 'sam'), { administrator: false }, 'and unmade')
  await person('sam').getByRole('button', { name: 'Change permission' }).click()
  const permission = person('sam').getByRole('form', { name: 'Permission of sam' })
  await permission.getByLabel('Workspace').selectOption({ label: 'Platform' })
  await permission.getByLabel('Permission').selectOption('write')
  await permission.getByRole('button', { name: 'Save permission' }).click()
  await page.getByText('sam has write on every repository of Platform now.').waitFor()
  t.same((await app.admin({ url: '/admin/repositories/1001/permissions' })).json().find((p: { login: string }) => p.login === 'sam'), { login: 'sam', permission: 'write' }, 'the permission, in the API at once')
  t.equal((await app.inject({ url: '/p1/repositories/1001/board', headers: { 'x-authentication-token': samToken } })).statusCode, 200, 'sam reads the board')
  await person('sam').getByRole('button', { name: 'Remove' }).click()
  await person('sam').getByRole('group', { name: 'Remove sam?' }).getByRole('button', { name: 'Remove sam' }).click()
  await person('sam').waitFor({ state: 'detached' })
  t.notOk((await users()).some((u) => u.login === 'sam'), 'removed: in the API at once')
  t.equal((await app.inject({ url: '/p1/repositories/1001/board', headers: { 'x-authentication-token': samToken } })).statusCode, 401, 'their token ends at once')

  // The audit log of one person and one action, as the server filters it.
  const audit = page.getByRole('region', { name: 'Audit log' })
  await audit.getByLabel('Person').selectOption('user:lead')
  await audit.getByLabel('Action').selectOption('user.updated')
  await audit.locator('caption', { hasText: 'of user:lead, user.updated' }).waitFor()
  const rows = await audit.getByRole('row').allTextContents()
  const expected = (await app.admin({ url: '/admin/audit?actor=user%3Alead&action=user.updated' })).json().entries as unknown[]
  t.equal(rows.length - 1, expected.length, `the ${expected.length} entries the API has of lead making and unmaking an administrator`)
  t.ok(expected.length === 2 && rows.slice(1).every((r) => r.includes('user:lead') && r.includes('user.updated')), 'each of them lead\'s user.updated')
  t.ok(await page.evaluate(() => document.documentElement.scrollWidth <= document.documentElement.clientWidth), 'People and the audit log at 390 px: nothing scrolls sideways')
  t.same(await axe(page), [], 'axe: People and the audit log, filtered')

  // The pages of a reset link and of a used link: the same bar (opened in a page without the session, never submitted).
  const reset = (await app.admin({ method: 'POST', url: '/admin/users/lead/password-reset' })).json().url as string
  const other = await (await newContext(browser, { viewport: { width: 390, height: 844 }, bypassCSP: true })).newPage()
  await other.goto(`${address}${new URL(reset).pathname}`)
  await other.getByRole('button', { name: 'Set password' }).waitFor()
  t.ok(await other.evaluate(() => document.documentElement.scrollWidth <= document.documentElement.clientWidth), 'the reset page at 390 px: nothing scrolls sideways')
  t.same(await axe(other), [], 'axe: the reset page')
  const used = await other.goto(`${address}${link!.path}`)
  t.equal(used?.status(), 410)
  await other.getByRole('heading', { name: 'This link cannot be used any more' }).waitFor()
  t.same(await axe(other), [], 'axe: the page of a used link')
  await other.context().close()
})

t.test('a read-only person sees no editing controls: no grip, no estimate button, no New issue; E does nothing', { skip: why, timeout: 60_000 }, async (t) => {
  const app = await build(t)
  t.equal((await app.as('alice', { method: 'PUT', url: `/p1/repositories/${REPO}/issues/1/estimate`, payload: { estimate: 3 } })).statusCode, 200)
  const address = await app.listen({ host: '127.0.0.1', port: 0 })
  const browser = await launchBrowser()
  t.teardown(async () => await browser.close())
  const read = async (token: string) => {
    const page = await (await newContext(browser, { viewport: { width: 1280, height: 800 } })).newPage()
    await page.goto(`${address}/?board=${WS_NEW}`)
    const account = page.waitForResponse((res) => new URL(res.url()).pathname === '/account')
    await signInWithToken(page, token)
    await account
    const board = page.getByRole('region', { name: 'Board' })
    const card = board.getByRole('listitem', { name: /^#1 Issue 1\b/ })
    await card.waitFor()
    // The answer of GET /account is drawn in the next frame.
    await page.evaluate(async () => { await new Promise((resolve) => requestAnimationFrame(() => requestAnimationFrame(resolve))) })
    return { page, board, card }
  }

  const carol = await read(TOKENS.carol)
  t.equal(await carol.board.getByRole('button', { name: 'New issue' }).count(), 0, 'no New issue')
  t.equal(await carol.card.getByRole('button').count(), 0, 'no estimate button on the card')
  t.match(await carol.card.textContent(), /3/, 'the estimate is shown as text')
  t.equal(await carol.card.getByTitle('Drag to move').count(), 0, 'no drag grip')
  await carol.card.focus()
  await carol.page.keyboard.press('e')
  t.equal(await carol.page.getByRole('textbox', { name: /^Estimate of #1/ }).count(), 0, 'E opens no estimate field')

  const bob = await read(TOKENS.bob)
  t.ok(await bob.board.getByRole('button', { name: 'New issue' }).count() > 0, 'a writer has New issue')
  t.equal(await bob.card.getByRole('button', { name: '3' }).count(), 1, 'and the estimate button')
  t.equal(await bob.card.getByTitle('Drag to move').count(), 1, 'and the grip')
})
