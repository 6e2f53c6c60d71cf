import t, { type Test } from 'tap'
import { once } from 'node:events'
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import { join } from 'node:path'
import { build } from './helper.js'

/**
 * A GitHub-shaped REST API on 127.0.0.1: the repository, a page of milestones, three pages of
 * issues and pull requests (Link headers), collaborators with permissions. `gate` can hold or
 * refuse a request (rate limits, a hang for the crash test).
 */
async function fakeHost (t: Test, gate: (req: IncomingMessage, res: ServerResponse) => boolean = () => true) {
  const requests: string[] = []
  const issues = Array.from({ length: 6 }, (_, i) => ({
    number: i + 1,
    title: `Imported ${i + 1}`,
    state: i === 5 ? 'closed' : 'open',
    updated_at: '2026-03-01T00:00:00Z',
    ...(i % 3 === 2 ? { pull_request: { url: 'x' } } : {})
  }))
  const server = createServer((req, res) => {
    requests.push(req.url!)
    if (!gate(req, res)) return
    const url = new URL(req.url!, 'http://x')
    const page = Number(url.searchParams.get('page') ?? 1)
    const base = `http://${req.headers.host}${url.pathname}`
    const send = (body: unknown, next?: number) => {
      res.setHeader('content-type', 'application/json')
      res.setHeader('x-ratelimit-remaining', '4999')
      if (next !== undefined) res.setHeader('link', `<${base}?page=${next}>; rel="next", <${base}?page=3>; rel="last"`)
      res.end(JSON.stringify(body))
    }
    if (url.pathname === '/repos/acme/imported') return send({ id: 5151, name: 'imported', full_name: 'acme/imported', html_url: 'https://github.com/acme/imported', owner: { login: 'acme' } })
    if (url.pathname.endsWith('/milestones')) return send([{ number: 1, title: 'v1' }])
    if (url.pathname.endsWith('/issues')) return send(issues.slice((page - 1) * 2, page * 2), page < 3 ? page + 1 : undefined)
    if (url.pathname.endsWith('/collaborators')) return send([{ id: 501, login: 'imp-user', permissions: { admin: false, maintain: false, push: true, triage: true, pull: true } }])
    res.statusCode = 404
    res.end('{}')
  })
  server.listen(0, '127.0.0.1')
  await once(server, 'listening')
  t.teardown(() => { server.closeAllConnections(); server.close() })
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, requests }
}

async function waitFor (check: () => Promise<boolean>, ms = 15_000): Promise<void> {
  const deadline = Date.now() + ms
  while (!await check()) {
    if (Date.now() > deadline) throw new Error('timed out')
    await new Promise((resolve) => setTimeout(resolve, 50))
  }
}

t.test('an import pages through the host, waits out a rate limit, and is idempotent', async (t) => {
  let limited = 0
  const host = await fakeHost(t, (req, res) => {
    // The second issues page first meets an exhausted rate limit, then a secondary limit.
    if (req.url!.includes('/issues') && req.url!.includes('page=2') && limited < 2) {
      limited++
      res.statusCode = limited === 1 ? 403 : 429
      res.setHeader('content-type', 'application/json')
      if (limited === 1) {
        res.setHeader('x-ratelimit-remaining', '0')
        res.setHeader('x-ratelimit-reset', String(Math.ceil(Date.now() / 1000)))
      } else {
        res.setHeader('retry-after', '1')
      }
      res.end(JSON.stringify({ message: 'API rate limit exceeded' }))
      return false
    }
    return true
  })
  const app = await build(t)
  const connection = (await app.admin({ method: 'POST', url: '/admin/connections', payload: { kind: 'github', web_url: 'https://github.com', api_url: host.url, token: 'ghp_test' } })).json()
  await app.admin({ method: 'POST', url: '/admin/workspaces', payload: { name: 'Imported', repositories: [], pipelines: ['Inbox', 'Done'] } })
  const started = await app.admin({ method: 'POST', url: `/admin/connections/${connection.id}/imports`, payload: { repository: 'acme/imported' } })
  t.equal(started.statusCode, 202)
  t.match(started.json(), { id: /^[0-9a-f]{24}$/, state: 'queued' })
  const status = async () => (await app.admin({ url: `/admin/imports/${started.json().id}` })).json()
  t.equal((await app.as('alice', { url: '/p1/repositories/1001/board' })).statusCode, 200, 'the API answers while the import runs')
  await waitFor(async () => (await status()).state === 'done')
  t.match(await status(), { state: 'done', repo_id: 5151, issues: 4, pull_requests: 2, milestones: 1, collaborators: 1, error: null })
  t.equal(limited, 2, 'the limited page was asked again after waiting')
  t.ok(host.requests.every((r) => !r.includes('access_token')), 'the token travels in a header')

  const repos = (await app.admin({ url: '/admin/repositories' })).json()
  t.match(repos.find((r: { id: number }) => r.id === 5151), { owner: 'acme', name: 'imported', html_url: 'https://github.com/acme/imported' })
  const token = (await app.admin({ method: 'POST', url: '/admin/users/imp-user/token' })).json().token
  const issue = await app.inject({ url: '/p1/repositories/5151/issues/3', headers: { 'x-authentication-token': token } })
  t.equal(issue.statusCode, 200, 'the collaborator reads (push → write) and the pull request is an issue')
  t.equal(issue.json().status, 'open')
  const closed = await app.inject({ url: '/p1/repositories/5151/issues/6', headers: { 'x-authentication-token': token } })
  t.equal(closed.json().status, 'closed', 'closed issues come too')

  const again = await app.admin({ method: 'POST', url: `/admin/connections/${connection.id}/imports`, payload: { repository: 'acme/imported' } })
  await waitFor(async () => (await app.admin({ url: `/admin/imports/${again.json().id}` })).json().state === 'done')
  const workspaces = await app.admin({ method: 'POST', url: '/admin/workspaces', payload: { name: 'Check', repositories: [5151], pipelines: ['All'] } })
  t.equal(workspaces.statusCode, 201)
  const board = await app.inject({ url: `/p2/workspaces/${workspaces.json().id}/repositories/5151/board`, headers: { 'x-authentication-token': token } })
  t.same(board.json().pipelines[0].issues.map((i: { issue_number: number }) => i.issue_number), [1, 2, 3, 4, 5], 'run twice: nothing doubled (the closed one is off the board)')
})

t.test('an import cut short by a crash goes on from the page it reached', async (t) => {
  let hold = true
  const held: ServerResponse[] = []
  const host = await fakeHost(t, (req, res) => {
    if (hold && req.url!.includes('/issues') && req.url!.includes('page=3')) {
      held.push(res)
      return false
    }
    return true
  })
  t.teardown(() => held.forEach((res) => res.destroy()))
  const database = join(t.testdir({}), 'planning.db')
  const first = await build(t, { database })
  const connection = (await first.admin({ method: 'POST', url: '/admin/connections', payload: { kind: 'github', api_url: host.url } })).json()
  const started = (await first.admin({ method: 'POST', url: `/admin/connections/${connection.id}/imports`, payload: { repository: 'acme/imported' } })).json()
  await waitFor(async () => held.length > 0)
  t.match((await first.admin({ url: `/admin/imports/${started.id}` })).json(), { state: 'running', issues: 3, pull_requests: 1 }, 'two pages in when it stops')
  await first.close()
  hold = false
  const asked = host.requests.length
  const second = await build(t, { database, fixture: null })
  await waitFor(async () => (await second.admin({ url: `/admin/imports/${started.id}` })).json().state === 'done')
  t.match((await second.admin({ url: `/admin/imports/${started.id}` })).json(), { state: 'done', issues: 4, pull_requests: 2 }, 'every issue counted once')
  const after = host.requests.slice(asked)
  t.notOk(after.some((r) => r.includes('/issues') && !r.includes('page=3')), `resumed at page 3, not from the start (${after.join(', ')})`)
})

t.test('the admin CLI connects a host and imports a repository with a progress line', async (t) => {
  const host = await fakeHost(t)
  const { runAdminCommand } = await import('../cli/admin.js')
  const database = join(t.testdir({}), 'planning.db')
  const made = await runAdminCommand(database, ['connect', 'github', '--api-url', host.url, '--token', 'ghp_cli']) as { id: string, secret: string, webhook_path: string }
  t.match(made, { id: /^[0-9a-f]{24}$/, secret: String, webhook_path: `/integrations/${made.id}/webhook` })
  t.match(await runAdminCommand(database, ['connections']), [{ id: made.id, kind: 'github', api_url: host.url, has_token: true }])
  t.notOk(JSON.stringify(await runAdminCommand(database, ['connections'])).includes('ghp_cli'), 'the token is not shown')
  const lines: string[] = []
  const done = await runAdminCommand(database, ['import-repo', made.id, 'acme/imported'], (line) => lines.push(line))
  t.match(done, { state: 'done', issues: 4, pull_requests: 2, milestones: 1, collaborators: 1 })
  t.match(lines.at(-1), /acme\/imported: done, 4 issues, 2 pull requests, 1 milestones, 1 collaborators/)
  await t.rejects(runAdminCommand(database, ['connect', 'gitlab']), /unknown kind 'gitlab'/)
  t.same(await runAdminCommand(database, ['disconnect', made.id]), { removed: made.id })
})
