import t, { type Test } from 'tap'
import { once } from 'node:events'
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { deliver, SECRET } from './deliveries.js'
import { build, type App } from './helper.js'

// Gitea and Forgejo take label ids where GitHub takes names, and edit labels apart from the issue.
const LABELS = [
  ...Array.from({ length: 60 }, (_, i) => ({ id: 100 + i, name: `area ${i}`, color: 'cccccc' })),
  { id: 11, name: 'status: doing', color: 'fbca04' },
  { id: 12, name: 'status: done', color: '0e8a16' },
  { id: 13, name: 'bug', color: 'd73a4a' }
]

/** A Gitea-shaped host: label writes by id only (a name is a 422, as on a Gitea without name support). */
async function giteaHost (t: Test) {
  const writes: string[] = []
  const onIssue = new Map<number, Set<number>>([[1, new Set()]])
  const slow = { ms: 0 }
  const described = (number: number, title = 'Sync me') => ({
    number,
    title,
    state: 'open',
    updated_at: new Date().toISOString(),
    labels: LABELS.filter((l) => onIssue.get(number)?.has(l.id)),
    assignees: []
  })
  const server = createServer((req, res) => {
    let body = ''
    req.on('data', (d) => { body += String(d) })
    req.on('end', () => setTimeout(() => {
      res.setHeader('content-type', 'application/json')
      const url = new URL(req.url!, 'http://x')
      if (url.pathname === '/user') return res.end(JSON.stringify({ id: 7, login: 'planning-bot' }))
      if (req.method === 'GET' && url.pathname === '/repos/ops/tools/labels') {
        const page = Number(url.searchParams.get('page')); const limit = Number(url.searchParams.get('limit'))
        return res.end(JSON.stringify(LABELS.slice((page - 1) * limit, page * limit)))
      }
      writes.push(`${req.method} ${url.pathname}${body === '' ? '' : ` ${body}`}`)
      const sent = body === '' ? {} : JSON.parse(body) as { labels?: unknown[], title?: string }
      if (sent.labels !== undefined && !sent.labels.every((l) => typeof l === 'number')) {
        res.writeHead(422)
        return res.end(JSON.stringify({ message: '[]: cannot unmarshal string into Go value of type int64' }))
      }
      const labelsOf = /^\/repos\/ops\/tools\/issues\/(\d+)\/labels(?:\/(\d+))?$/.exec(url.pathname)
      if (labelsOf !== null) {
        const set = onIssue.get(Number(labelsOf[1])) ?? new Set()
        onIssue.set(Number(labelsOf[1]), set)
        if (req.method === 'PUT') set.clear()
        if (req.method === 'DELETE') set.delete(Number(labelsOf[2]))
        else for (const id of sent.labels as number[]) set.add(id)
        return res.end(req.method === 'DELETE' ? '' : JSON.stringify(LABELS.filter((l) => set.has(l.id))))
      }
      if (req.method === 'POST' && url.pathname === '/repos/ops/tools/issues') {
        onIssue.set(2, new Set(sent.labels as number[] ?? []))
        return res.end(JSON.stringify(described(2, sent.title)))
      }
      const edited = /^\/repos\/ops\/tools\/issues\/(\d+)$/.exec(url.pathname)
      if (req.method === 'PATCH' && edited !== null) return res.end(JSON.stringify(described(Number(edited[1]), sent.title)))
      res.writeHead(404)
      res.end('{"message":"not found"}')
    }, slow.ms))
  })
  server.listen(0, '127.0.0.1')
  await once(server, 'listening')
  t.teardown(() => { server.closeAllConnections(); server.close() })
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, writes, onIssue, slow }
}

const tools = { id: 1, name: 'tools', full_name: 'ops/tools', owner: { id: 1, login: 'ops', username: 'ops' }, html_url: 'https://git.example.org/ops/tools', updated_at: '2026-01-01T00:00:00Z' }

async function waitFor (check: () => boolean, ms = 8000): Promise<void> {
  const deadline = Date.now() + ms
  while (!check()) {
    if (Date.now() > deadline) throw new Error('timed out')
    await new Promise((resolve) => setTimeout(resolve, 25))
  }
}

async function setUp (t: Test, app: App, hostUrl: string) {
  const connection = (await app.admin({ method: 'POST', url: '/admin/connections', payload: { kind: 'gitea', web_url: 'https://git.example.org', secret: SECRET, api_url: hostUrl, token: 'gitea-writer' } })).json().id as string
  const opened = await deliver(app, connection, 'issues', { action: 'opened', repository: tools, issue: { number: 1, title: 'Sync me', state: 'open', updated_at: '2026-01-02T00:00:00Z', labels: [], assignees: [] }, sender: { id: 42, login: 'someone' } }, { kind: 'gitea' })
  t.equal(opened.statusCode, 200, opened.body)
  const repoId = ((await app.admin({ url: `/admin/connections/${connection}/repositories` })).json() as Array<{ repo_id: number }>)[0].repo_id
  const made = await app.admin({ method: 'POST', url: '/admin/workspaces', payload: { name: 'Ops', repositories: [repoId], pipelines: ['Inbox', 'Doing', 'Done'] } })
  t.equal(made.statusCode, 201, made.body)
  const ws = made.json()
  await app.admin({ method: 'PUT', url: `/admin/repositories/${repoId}/permissions/alice`, payload: { permission: 'admin' } })
  const [, doing, done] = (ws.pipelines as Array<{ id: string }>).map((p) => p.id)
  for (const [pipeline, label] of [[doing, 'status: doing'], [done, 'status: done']]) {
    const mapped = await app.as('alice', { method: 'PATCH', url: `/p2/workspaces/${ws.id}/pipelines/${pipeline}`, payload: { host_label: label } })
    t.equal(mapped.statusCode, 204, mapped.body)
  }
  return { repoId, doing, done }
}

t.test('Gitea: pipeline labels, new issues and label edits are written by label id', async (t) => {
  const host = await giteaHost(t)
  const app = await build(t, { webhooks: { worker: false }, hosts: { allowPrivate: true }, sync: { retryBaseMs: 20, pollMs: 50 } })
  const s = await setUp(t, app, host.url)
  const move = async (pipeline: string) => await app.as('alice', { method: 'POST', url: `/p1/repositories/${s.repoId}/issues/1/moves`, payload: { pipeline_id: pipeline, position: 'top' } })

  t.equal((await move(s.doing)).statusCode, 200)
  await waitFor(() => host.onIssue.get(1)!.has(11))
  t.same([...host.onIssue.get(1)!], [11], 'the label found on the second page of the repository\'s labels, written by id')
  t.equal((await move(s.done)).statusCode, 200)
  await waitFor(() => host.onIssue.get(1)!.has(12) && !host.onIssue.get(1)!.has(11))
  t.ok(host.writes.includes('DELETE /repos/ops/tools/issues/1/labels/11'), 'the other pipeline\'s label taken off by id')

  const created = await app.as('alice', { method: 'POST', url: `/p1/repositories/${s.repoId}/issues`, payload: { title: 'From the board', labels: ['bug'] } })
  t.equal(created.statusCode, 201, created.body)
  t.match(created.json(), { issue_number: 2, labels: [{ name: 'bug' }] })
  t.ok(host.writes.some((w) => w.startsWith('POST /repos/ops/tools/issues {"title":"From the board","labels":[13]')), 'created with the label\'s id')

  const edited = await app.as('alice', { method: 'PATCH', url: `/p1/repositories/${s.repoId}/issues/2`, payload: { title: 'Renamed', labels: ['status: done', 'bug'] } })
  t.equal(edited.statusCode, 200, edited.body)
  t.match(edited.json(), { title: 'Renamed', labels: [{ name: 'bug' }, { name: 'status: done' }] })
  t.ok(host.writes.includes('PUT /repos/ops/tools/issues/2/labels {"labels":[12,13]}'), 'labels replaced by id apart from the issue')

  const unknown = await app.as('alice', { method: 'POST', url: `/p1/repositories/${s.repoId}/issues`, payload: { title: 'Nope', labels: ['no such label'] } })
  t.equal(unknown.statusCode, 400)
  t.equal(unknown.json().message, 'the issue host\'s repository has no label "no such label" (create it there first)')
  t.notOk(host.writes.some((w) => w.includes('Nope')), 'nothing written to the host')
})

t.test('Gitea: an edit needing several host calls (labels read, labels, issue) has one deadline for them all', async (t) => {
  const host = await giteaHost(t)
  const app = await build(t, { webhooks: { worker: false }, hosts: { allowPrivate: true }, sync: { worker: false, timeoutMs: 600 } })
  const s = await setUp(t, app, host.url)
  // Each answer within the timeout, four of them (two label pages, labels, issue) well past it.
  host.slow.ms = 250
  const started = Date.now()
  const edited = await app.as('alice', { method: 'PATCH', url: `/p1/repositories/${s.repoId}/issues/1`, payload: { title: 'Too slow', labels: ['bug'] } })
  t.equal(edited.statusCode, 504, edited.body)
  t.ok(Date.now() - started < 1200, `answered once the one deadline passed (${Date.now() - started} ms)`)
  host.slow.ms = 0
  t.match((await app.as('alice', { url: `/p1/repositories/${s.repoId}/issues?issue_numbers=1` })).json()[0], { title: 'Sync me' }, 'nothing changed here')
})
