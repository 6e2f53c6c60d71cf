import t, { type Test } from 'tap'
import { createHmac } from 'node:crypto'
import { createRequire } from 'node:module'
import { deliver, sign, SECRET } from './deliveries.js'
import { formReceiver } from './receiver.js'
import { build, type App } from './helper.js'

// GitHub's published example payloads (@octokit/webhooks-examples). Where an action has no
// example (issues.closed, pull_request.edited, milestone.edited, repository.archived/deleted,
// member.removed), the nearest one is adapted: its action and state changed.
const examples = createRequire(import.meta.url)('@octokit/webhooks-examples') as Array<{ name: string, examples: Array<Record<string, any>> }>
const example = (name: string, action?: string): Record<string, any> => {
  const found = examples.find((e) => e.name === name)!.examples.find((x) => action === undefined || x.action === action)
  if (found === undefined) throw new Error(`no example of ${name}.${action ?? ''}`)
  return structuredClone(found)
}

const HELLO = 186853002 // Codertocat/Hello-World in the examples
/** A connection, and a workspace holding the examples' repository (created on first sight). */
async function connected (t: Test, kind: 'github' | 'gitea' = 'github', web_url?: string, webhooks: object = { worker: false }) {
  const app = await build(t, { webhooks })
  const created = await app.admin({ method: 'POST', url: '/admin/connections', payload: { kind, secret: SECRET, ...(web_url === undefined ? {} : { web_url }) } })
  if (created.statusCode !== 201) throw new Error(created.body)
  return { app, id: created.json().id as string }
}

async function withWorkspace (app: App, repoId: number) {
  const res = await app.admin({ method: 'POST', url: '/admin/workspaces', payload: { name: 'Synced', repositories: [repoId], pipelines: ['Inbox', 'Doing', 'Done'] } })
  if (res.statusCode !== 201) throw new Error(res.body)
  return res.json() as { id: string, pipelines: Array<{ id: string }> }
}

t.test('connections: defaults, the secret shown once, GitHub Enterprise and Gitea addresses', async (t) => {
  const app = await build(t)
  const github = await app.admin({ method: 'POST', url: '/admin/connections', payload: { kind: 'github', token: 'ghp_x' } })
  t.equal(github.statusCode, 201)
  t.match(github.json(), { kind: 'github', web_url: 'https://github.com', api_url: 'https://api.github.com', webhook_path: /^\/integrations\/[0-9a-f]{24}\/webhook$/, secret: String, has_token: true })
  t.ok(github.json().secret.length >= 24, 'a generated secret')
  const ghe = await app.admin({ method: 'POST', url: '/admin/connections', payload: { kind: 'github', web_url: 'https://ghe.example.com/' } })
  t.match(ghe.json(), { web_url: 'https://ghe.example.com', api_url: 'https://ghe.example.com/api/v3' })
  const gitea = await app.admin({ method: 'POST', url: '/admin/connections', payload: { kind: 'gitea', web_url: 'https://git.example.org' } })
  t.match(gitea.json(), { api_url: 'https://git.example.org/api/v1' })
  const noUrl = await app.admin({ method: 'POST', url: '/admin/connections', payload: { kind: 'forgejo' } })
  t.equal(noUrl.statusCode, 400)
  t.match(noUrl.json().message, /body\/web_url is required for forgejo/)
  const listed = await app.admin({ url: '/admin/connections' })
  t.equal(listed.json().length, 3)
  t.notOk(listed.body.includes(github.json().secret), 'the secret is not listed')
  t.notOk(listed.body.includes('ghp_x'), 'nor the token')
  t.equal((await app.admin({ method: 'DELETE', url: `/admin/connections/${gitea.json().id}` })).statusCode, 204)
  t.equal((await app.admin({ method: 'DELETE', url: `/admin/connections/${gitea.json().id}` })).statusCode, 404)
})

t.test('signatures: good, wrong, missing, sha1 only, a body changed after signing', async (t) => {
  const { app, id } = await connected(t)
  const payload = JSON.stringify(example('issues', 'opened'))
  const post = async (headers: Record<string, string>, body = payload) =>
    await app.inject({ method: 'POST', url: `/integrations/${id}/webhook`, headers: { 'content-type': 'application/json', 'x-github-event': 'issues', ...headers }, payload: body })
  t.equal((await post({ 'x-hub-signature-256': sign(payload, 'wrong-secret-value') })).statusCode, 401, 'wrong secret')
  const missing = await post({})
  t.equal(missing.statusCode, 401)
  t.match(missing.json().message, /not signed/)
  const sha1 = `sha1=${createHmac('sha1', SECRET).update(payload).digest('hex')}`
  t.equal((await post({ 'x-hub-signature': sha1 })).statusCode, 401, 'sha1 alone is not accepted')
  t.equal((await post({ 'x-hub-signature-256': sign(payload) }, payload.replace('Spelling', 'Spellin'))).statusCode, 401, 'a changed body')
  t.same((await app.admin({ url: '/admin/repositories' })).json().filter((r: { id: number }) => r.id === HELLO), [], 'nothing changed')
  t.equal((await post({ 'x-hub-signature-256': sign(payload) })).statusCode, 200, 'the right signature')
  const logged = await app.admin({ url: `/admin/connections/${id}/deliveries` })
  t.match(logged.json(), [{ event: 'issues', action: 'opened', result: 'handled', detail: null, received_at: /^\d{4}-/ }], 'the log shows the signed delivery only')
  t.equal(logged.json().length, 1)
  t.equal((await post({ 'x-hub-signature-256': sign('[]') }, '[]')).statusCode, 400)
  t.match((await app.admin({ url: `/admin/connections/${id}/deliveries` })).json()[0], { event: 'issues', action: null, result: 'failed', detail: /^400: body must be/ }, 'a refused one too, with why')
  await Promise.all(Array.from({ length: 20 }, async () => await deliver(app, id, 'ping', {})))
  const kept = (await app.admin({ url: `/admin/connections/${id}/deliveries` })).json()
  t.equal(kept.length, 20, 'the newest 20 are kept')
  t.ok(kept.every((d: { result: string }) => d.result === 'pong'))
  t.equal((await app.admin({ url: '/admin/connections/ffffffffffffffffffffffff/deliveries' })).statusCode, 404)
  const unknown = await app.inject({ method: 'POST', url: '/integrations/ffffffffffffffffffffffff/webhook', headers: { 'x-github-event': 'ping', 'content-type': 'application/json' }, payload: '{}' })
  t.equal(unknown.statusCode, 404)
})

t.test('issues and pull requests: open, edit, close, reopen, delete, transfer, milestones; redelivery and stale', async (t) => {
  const { app, id } = await connected(t)
  t.same((await deliver(app, id, 'ping', { zen: 'Keep it logically awesome.', hook_id: 1 })).json(), { result: 'pong' })
  const opened = example('issues', 'opened')
  t.same((await deliver(app, id, 'issues', opened)).json(), { result: 'handled' })
  const repos = (await app.admin({ url: '/admin/repositories' })).json()
  t.match(repos.find((r: { id: number }) => r.id === HELLO), { owner: 'Codertocat', name: 'Hello-World', html_url: 'https://github.com/Codertocat/Hello-World' }, 'the repository was created on first sight')
  const ws = await withWorkspace(app, HELLO)
  await app.admin({ method: 'PUT', url: `/admin/repositories/${HELLO}/permissions/alice`, payload: { permission: 'admin' } })
  const boardOf = async () => ((await app.as('alice', { url: `/p1/repositories/${HELLO}/board` })).json() as { pipelines: Array<{ id: string, issues: Array<{ issue_number: number }> }> })
  const numbers = (b: Awaited<ReturnType<typeof boardOf>>, i: number) => b.pipelines[i].issues.map((x) => x.issue_number)
  t.same(numbers(await boardOf(), 0), [1], 'the opened issue is on the board')

  const pr = example('pull_request', 'opened')
  pr.repository = opened.repository
  t.same((await deliver(app, id, 'pull_request', pr)).json(), { result: 'handled' })
  t.same(numbers(await boardOf(), 0), [1, pr.pull_request.number], 'a pull request is an issue on the board')
  const marks = async () => (await app.as('alice', { url: `/p1/repositories/${HELLO}/issues?issue_numbers=1,${String(pr.pull_request.number)}` })).json()
    .map((i: { issue_number: number, pull_request: boolean }) => [i.issue_number, i.pull_request])
  t.same(await marks(), [[1, false], [pr.pull_request.number, true]], 'marked as a pull request; the issue is not')
  const merged = example('pull_request', 'closed')
  merged.repository = opened.repository
  merged.pull_request.number = pr.pull_request.number
  merged.pull_request.updated_at = '2030-01-01T00:00:00Z'
  t.same((await deliver(app, id, 'pull_request', merged)).json(), { result: 'handled' })
  t.same(numbers(await boardOf(), 0), [1], 'a closed (merged) pull request leaves the board')
  const reopenedPr = example('pull_request', 'reopened')
  reopenedPr.repository = opened.repository
  reopenedPr.pull_request.number = pr.pull_request.number
  reopenedPr.pull_request.updated_at = '2030-01-02T00:00:00Z'
  t.same((await deliver(app, id, 'pull_request', reopenedPr)).json(), { result: 'handled' })
  t.same(numbers(await boardOf(), 0), [1, pr.pull_request.number], 'and comes back when reopened')

  const edited = example('issues', 'edited')
  edited.repository = opened.repository
  edited.issue.title = 'A new title'
  edited.issue.updated_at = '2030-01-01T00:00:00Z'
  t.same((await deliver(app, id, 'issues', edited)).json(), { result: 'handled' })
  const stale = example('issues', 'edited')
  stale.repository = opened.repository
  stale.issue.title = 'An older title'
  stale.issue.updated_at = '2019-01-01T00:00:00Z'
  t.same((await deliver(app, id, 'issues', stale)).json(), { result: 'stale' }, 'an older delivery does not undo newer state')
  const current = (await app.admin({ url: `/admin/repositories/${HELLO}/issues/1`, method: 'PATCH', payload: { state: 'open' } })).json()
  t.equal(current.title, 'A new title', 'the newer title stands')

  // Move it, then close (adapted from reopened) and reopen: it comes back where it was.
  await app.as('alice', { method: 'POST', url: `/p1/repositories/${HELLO}/issues/1/moves`, payload: { pipeline_id: ws.pipelines[1].id, position: 'top' } })
  const closed = example('issues', 'reopened')
  closed.action = 'closed'
  closed.issue.state = 'closed'
  closed.issue.updated_at = '2030-01-02T00:00:00Z'
  closed.repository = opened.repository
  t.same((await deliver(app, id, 'issues', closed, { id: 'closing-1' })).json(), { result: 'handled' })
  t.same(numbers(await boardOf(), 1), [], 'closed: off the board')
  const redelivered = await deliver(app, id, 'issues', { ...closed, action: 'reopened', issue: { ...closed.issue, state: 'open', updated_at: '2030-01-03T00:00:00Z' } }, { id: 'closing-1' })
  t.same(redelivered.json(), { result: 'duplicate' }, 'a delivery id seen before changes nothing')
  t.same(numbers(await boardOf(), 1), [])
  const reopened = example('issues', 'reopened')
  reopened.issue.updated_at = '2030-01-03T00:00:00Z'
  reopened.repository = opened.repository
  t.same((await deliver(app, id, 'issues', reopened)).json(), { result: 'handled' })
  t.same(numbers(await boardOf(), 1), [1], 'reopened: back in the pipeline it left, at once')

  const milestoned = example('issues', 'milestoned')
  milestoned.repository = opened.repository
  milestoned.issue.updated_at = '2030-01-04T00:00:00Z'
  t.same((await deliver(app, id, 'issues', milestoned)).json(), { result: 'handled' })
  t.equal((await app.as('alice', { url: `/p1/repositories/${HELLO}/milestones/${milestoned.milestone.number}/start_date` })).statusCode, 404, 'the milestone exists (no start date yet)')
  t.match((await app.as('alice', { url: `/p1/repositories/${HELLO}/milestones/${milestoned.milestone.number}/start_date` })).json().message, /has no start date/)
  const withMilestone = await app.as('alice', { url: `/p1/repositories/${HELLO}/issues?issue_numbers=${milestoned.issue.number}` })
  t.match(withMilestone.json()[0].milestone, { number: milestoned.milestone.number, state: milestoned.milestone.state }, 'the issue keeps its milestone')
  const demilestoned = example('issues', 'demilestoned')
  demilestoned.repository = opened.repository
  demilestoned.issue.updated_at = '2030-01-05T00:00:00Z'
  t.same((await deliver(app, id, 'issues', demilestoned)).json(), { result: 'handled' })
  const without = await app.as('alice', { url: `/p1/repositories/${HELLO}/issues?issue_numbers=${demilestoned.issue.number}` })
  t.equal(without.json()[0].milestone, undefined, 'demilestoned: none')

  const transferred = example('issues', 'transferred')
  transferred.repository = opened.repository
  transferred.issue.number = pr.pull_request.number
  transferred.issue.updated_at = '2030-01-06T00:00:00Z'
  t.same((await deliver(app, id, 'issues', transferred)).json(), { result: 'handled' })
  t.same(numbers(await boardOf(), 0), [], 'transferred: it leaves this repository')
  const deleted = example('issues', 'deleted')
  deleted.repository = opened.repository
  deleted.issue.updated_at = '2030-01-07T00:00:00Z'
  t.same((await deliver(app, id, 'issues', deleted)).json(), { result: 'handled' })
  t.equal((await app.as('alice', { url: `/p1/repositories/${HELLO}/issues/1` })).statusCode, 404, 'deleted')

  const labeled = example('issues', 'labeled')
  labeled.repository = opened.repository
  t.equal((await deliver(app, id, 'issues', labeled)).statusCode, 200, 'a label is kept (two-way sync)')
  t.equal((await deliver(app, id, 'issues', { ...labeled, action: 'locked' })).statusCode, 202, 'actions that change no planning data are accepted and ignored')
  t.equal((await deliver(app, id, 'star', { action: 'created', repository: opened.repository })).statusCode, 202)
})

t.test('milestones, repositories, members and app installations', async (t) => {
  const { app, id } = await connected(t)
  const created = example('milestone', 'created')
  t.same((await deliver(app, id, 'milestone', created)).json(), { result: 'handled' })
  const edited = { ...created, action: 'edited', milestone: { ...created.milestone, title: 'v1.0 final' } }
  t.same((await deliver(app, id, 'milestone', edited)).json(), { result: 'handled' })
  const dup = await app.admin({ method: 'POST', url: `/admin/repositories/${HELLO}/milestones`, payload: { number: 1, title: 'x' } })
  t.equal(dup.statusCode, 409, 'the milestone exists')
  t.same((await deliver(app, id, 'milestone', { ...created, action: 'deleted' })).json(), { result: 'handled' })
  t.equal((await app.admin({ method: 'POST', url: `/admin/repositories/${HELLO}/milestones`, payload: { number: 1, title: 'x' } })).statusCode, 201, 'deleted')

  const added = example('member', 'added')
  added.repository = created.repository
  t.same((await deliver(app, id, 'member', added)).json(), { result: 'handled' })
  t.notOk((await app.admin({ url: '/admin/users' })).json().some((u: { login: string }) => u.login === 'hacktocat'), 'a host user is not a local user')
  t.same((await app.admin({ url: `/admin/connections/${id}/identities` })).json(), [{ connection_id: id, platform_user_id: 39652351, login: 'hacktocat', user: null }], 'but an identity of the connection')
  await app.admin({ method: 'POST', url: '/admin/users', payload: { login: 'octo-here' } })
  const token = (await app.admin({ method: 'POST', url: '/admin/users/octo-here/token' })).json().token as string
  const read = async () => await app.inject({ url: `/p1/repositories/${HELLO}/epics`, headers: { 'x-authentication-token': token } })
  t.equal((await read()).statusCode, 404, 'unlinked: the host\'s permission reaches nobody')
  const linked = await app.admin({ method: 'PUT', url: '/admin/users/octo-here/identities', payload: { connection_id: id, platform_user_id: 39652351 } })
  t.same(linked.json(), { connection_id: id, platform_user_id: 39652351, login: 'hacktocat', user: 'octo-here' })
  t.equal((await read()).statusCode, 200, 'linked: the permission the host gave applies')
  const toRead = { ...added, action: 'edited', changes: { permission: { from: 'write', to: 'triage' } } }
  t.same((await deliver(app, id, 'member', toRead)).json(), { result: 'handled' })
  const estimate = await app.inject({ method: 'PUT', url: `/p1/repositories/${HELLO}/issues/1/estimate`, headers: { 'x-authentication-token': token }, payload: { estimate: 1 } })
  t.equal(estimate.statusCode, 403, 'triage maps to read')
  t.same((await deliver(app, id, 'member', { ...added, action: 'removed' })).json(), { result: 'handled' })
  t.equal((await read()).statusCode, 404, 'removed: no access')

  const renamed = example('repository', 'renamed')
  renamed.repository.id = HELLO
  renamed.repository.name = 'Hello-Planet'
  renamed.repository.html_url = 'https://github.com/Codertocat/Hello-Planet'
  t.same((await deliver(app, id, 'repository', renamed)).json(), { result: 'handled' })
  t.match((await app.admin({ url: '/admin/repositories' })).json().find((r: { id: number }) => r.id === HELLO), { name: 'Hello-Planet', html_url: 'https://github.com/Codertocat/Hello-Planet' }, 'a renamed repository follows')
  t.same((await deliver(app, id, 'repository', { ...renamed, action: 'archived' })).json(), { result: 'handled' })
  t.same((await deliver(app, id, 'repository', { ...renamed, action: 'deleted' })).json(), { result: 'handled' })
  t.notOk((await app.admin({ url: '/admin/repositories' })).json().some((r: { id: number }) => r.id === HELLO), 'deleted with its issues')

  const installed = example('installation_repositories', 'added')
  t.same((await deliver(app, id, 'installation_repositories', installed)).json(), { result: 'handled' })
  t.match((await app.admin({ url: '/admin/repositories' })).json().find((r: { id: number }) => r.id === 186853007), { owner: 'Codertocat', name: 'Space' })
})

t.test('Gitea and Forgejo deliveries: their headers, bare-hex signatures and payload shapes', async (t) => {
  const { app, id } = await connected(t, 'gitea', 'https://git.example.org')
  // Written from Gitea's documented issue payload: the owner has `username` as well as `login`.
  const repository = { id: 7, name: 'tools', full_name: 'ops/tools', html_url: 'https://git.example.org/ops/tools', owner: { id: 3, login: 'ops', username: 'ops' } }
  const issue = { id: 90, number: 4, title: 'Rotate keys', state: 'open', html_url: 'https://git.example.org/ops/tools/issues/4', updated_at: '2026-05-01T10:00:00Z', pull_request: null }
  t.same((await deliver(app, id, 'issues', { action: 'opened', number: 4, issue, repository, sender: repository.owner }, { kind: 'gitea' })).json(), { result: 'handled' })
  const label = await deliver(app, id, 'issues', { action: 'label_updated', number: 4, issue, repository }, { kind: 'gitea' })
  t.equal(label.statusCode, 202, 'Gitea\'s extra actions are accepted and ignored')
  const forgejo = await app.inject({
    method: 'POST',
    url: `/integrations/${id}/webhook`,
    headers: { 'content-type': 'application/json', 'x-forgejo-event': 'issues', 'x-forgejo-delivery': 'f-1', 'x-forgejo-signature': sign(JSON.stringify({ action: 'closed', issue: { ...issue, state: 'closed', updated_at: '2026-05-02T00:00:00Z' }, repository })).slice(7) },
    payload: JSON.stringify({ action: 'closed', issue: { ...issue, state: 'closed', updated_at: '2026-05-02T00:00:00Z' }, repository })
  })
  t.same(forgejo.json(), { result: 'handled' }, 'Forgejo\'s headers')
  const form = `payload=${encodeURIComponent(JSON.stringify({ action: 'reopened', issue: { ...issue, updated_at: '2026-05-03T00:00:00Z' }, repository }))}`
  const formed = await app.inject({
    method: 'POST',
    url: `/integrations/${id}/webhook`,
    headers: { 'content-type': 'application/x-www-form-urlencoded', 'x-gitea-event': 'issues', 'x-gitea-delivery': 'g-9', 'x-hub-signature-256': sign(form) },
    payload: form
  })
  t.same(formed.json(), { result: 'handled' }, 'form-encoded payloads, signed on the raw body')
  const tools = (await app.admin({ url: '/admin/repositories' })).json().find((r: { name: string }) => r.name === 'tools')
  t.match(tools, { owner: 'ops', name: 'tools', html_url: 'https://git.example.org/ops/tools' })
  t.not(tools.id, 7, 'Gitea numbers repositories from 1 as this server does: the id is allocated here')
  t.same((await app.admin({ url: `/admin/connections/${id}/repositories` })).json(), [{ repo_id: tools.id, platform_repo_id: 7, owner: 'ops', name: 'tools', html_url: 'https://git.example.org/ops/tools' }], 'the binding')
})

t.test('the whole story: a connection, a signed issue, the board, a move, closed and reopened, outgoing webhooks with the host\'s URL', async (t) => {
  const { url: hookUrl, received } = await formReceiver(t)
  const { app, id } = await connected(t, 'github', 'https://ghe.example.com', { allowPrivate: true, retryBaseMs: 20 })
  const repository = { id: 4242, name: 'gateway', full_name: 'acme/gateway', html_url: 'https://ghe.example.com/acme/gateway', owner: { login: 'acme', id: 1 }, updated_at: '2026-01-01T00:00:00Z' }
  t.same((await deliver(app, id, 'repository', { action: 'created', repository })).json(), { result: 'handled' })
  const ws = await withWorkspace(app, 4242)
  await app.admin({ method: 'PUT', url: '/admin/repositories/4242/permissions/alice', payload: { permission: 'admin' } })
  const hook = await app.as('alice', { method: 'POST', url: '/p1/repositories/4242/webhooks', payload: { url: hookUrl } })
  t.equal(hook.statusCode, 201)
  const issue = { number: 12, title: 'Sync me', state: 'open', updated_at: '2026-06-01T00:00:00Z', html_url: 'https://ghe.example.com/acme/gateway/issues/12' }
  t.same((await deliver(app, id, 'issues', { action: 'opened', issue, repository })).json(), { result: 'handled' })
  const board = async () => (await app.as('alice', { url: '/p1/repositories/4242/board' })).json() as { pipelines: Array<{ issues: Array<{ issue_number: number, estimate?: { value: number } }> }> }
  t.same((await board()).pipelines[0].issues, [{ issue_number: 12, is_epic: false }], 'on the board, unprioritized, in the first pipeline')
  t.equal((await app.as('alice', { method: 'POST', url: '/p1/repositories/4242/issues/12/moves', payload: { pipeline_id: ws.pipelines[2].id, position: 'top' } })).statusCode, 200)
  t.equal((await app.as('alice', { method: 'PUT', url: '/p1/repositories/4242/issues/12/estimate', payload: { estimate: 3 } })).statusCode, 200)
  await deliver(app, id, 'issues', { action: 'closed', issue: { ...issue, state: 'closed', updated_at: '2026-06-02T00:00:00Z' }, repository })
  t.same((await board()).pipelines[2].issues, [], 'closed: off the board')
  await deliver(app, id, 'issues', { action: 'reopened', issue: { ...issue, updated_at: '2026-06-03T00:00:00Z' }, repository })
  t.match((await board()).pipelines[2].issues, [{ issue_number: 12, estimate: { value: 3 } }], 'reopened: back in the same pipeline, estimate kept')
  const deadline = Date.now() + 5000
  while (received.length < 2 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20))
  t.same(received.map((r) => r.type), ['issue_transfer', 'estimate_set'], 'the move and the estimate were announced')
  t.same(received.map((r) => r.github_url), Array(2).fill('https://ghe.example.com/acme/gateway/issues/12'), 'github_url is the host\'s page')
  const epics = await app.as('alice', { method: 'POST', url: '/p1/repositories/4242/issues/12/convert_to_epic', payload: { issues: [] } })
  t.equal(epics.statusCode, 200)
  t.same((await app.as('alice', { url: '/p1/repositories/4242/epics' })).json().epic_issues[0].issue_url, 'https://ghe.example.com/acme/gateway/issues/12', 'issue URLs are the host\'s')
})
