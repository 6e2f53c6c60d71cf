import t, { type Test } from 'tap'
import { createRequire } from 'node:module'
import { deliver, SECRET } from './deliveries.js'
import { build, REPO } from './helper.js'

// The issue's description: kept from the issue host, answered by one issue's read and GraphQL only.

const examples = createRequire(import.meta.url)('@octokit/webhooks-examples') as Array<{ name: string, examples: Array<Record<string, any>> }>
const example = (action: string): Record<string, any> =>
  structuredClone(examples.find((e) => e.name === 'issues')!.examples.find((x) => x.action === action)!)
const HELLO = 186853002 // Codertocat/Hello-World in the examples

async function connected (t: Test, kind: 'github' | 'gitea') {
  const app = await build(t, { webhooks: { worker: false } })
  const payload = { kind, secret: SECRET, ...(kind === 'gitea' ? { web_url: 'https://git.example.org' } : {}) }
  const id = (await app.admin({ method: 'POST', url: '/admin/connections', payload })).json().id as string
  return { app, id }
}

t.test('a delivered issue keeps its description: opened, edited, cut when too long, emptied; never in list reads', async (t) => {
  const { app, id } = await connected(t, 'github')
  const opened = example('opened')
  opened.issue.body = 'Steps:\n\n1. **open** it\n2. <script>alert(1)</script>'
  t.same((await deliver(app, id, 'issues', opened)).json(), { result: 'handled' })
  const ws = (await app.admin({ method: 'POST', url: '/admin/workspaces', payload: { name: 'Synced', repositories: [HELLO], pipelines: ['Inbox'] } })).json()
  await app.admin({ method: 'PUT', url: `/admin/repositories/${HELLO}/permissions/alice`, payload: { permission: 'read' } })
  const read = async () => (await app.as('alice', { url: `/p1/repositories/${HELLO}/issues/1` })).json()
  t.equal((await read()).body, opened.issue.body, 'kept as the host sent it')

  const lists = [
    `/p1/repositories/${HELLO}/issues?issue_numbers=1`, `/p1/repositories/${HELLO}/board`, `/p2/workspaces/${ws.id as string}/repositories/${HELLO}/board`
  ]
  for (const url of lists) {
    const res = await app.as('alice', { url })
    t.equal(res.statusCode, 200, url)
    t.notOk(res.body.includes('Steps:'), `${url} carries no description`)
  }

  let at = Date.parse('2030-01-01T00:00:00Z')
  const edit = async (body: unknown, updatedAt = new Date(at += 60_000).toISOString()) => {
    const edited = example('edited')
    edited.repository = opened.repository
    edited.issue.body = body
    edited.issue.updated_at = updatedAt
    return (await deliver(app, id, 'issues', edited)).json()
  }
  t.same(await edit('Edited on the host'), { result: 'handled' })
  t.equal((await read()).body, 'Edited on the host')
  t.same(await edit('An older edit', '2019-01-01T00:00:00Z'), { result: 'stale' })
  t.equal((await read()).body, 'Edited on the host', 'an older delivery does not undo a newer description')

  await edit('é'.repeat(70_000))
  t.equal((await read()).body, 'é'.repeat(65_536), 'a description over 65,536 characters is cut there, the rest of the delivery applied')
  await edit('a'.repeat(65_535) + '😀'.repeat(10))
  t.equal((await read()).body, 'a'.repeat(65_535), 'never inside a surrogate pair')
  await edit('before\u0000after')
  t.equal((await read()).body, 'before\uFFFDafter', 'a NUL is replaced, not a reason to refuse the delivery')

  const wrong = await edit(42)
  t.match(wrong, { message: /issue\/body/ }, 'a description that is not text is refused like any invalid field')
  t.equal((await read()).body, 'before\uFFFDafter')

  const gql = await app.as('alice', {
    method: 'POST',
    url: '/public/graphql',
    payload: { query: `{ issueByInfo(repositoryGhId: ${HELLO}, issueNumber: 1) { number body } }` }
  })
  t.same(gql.json().data.issueByInfo, { number: 1, body: 'before\uFFFDafter' }, 'GraphQL Issue.body')

  await edit(null)
  t.notOk('body' in await read(), 'no description: no body key, the hosted shape')
  await edit('Back')
  await edit('')
  t.notOk('body' in await read(), 'an empty description is none')
  const none = await app.as('alice', { method: 'POST', url: '/public/graphql', payload: { query: `{ issueByInfo(repositoryGhId: ${HELLO}, issueNumber: 1) { body } }` } })
  t.same(none.json().data.issueByInfo, { body: null })
})

t.test('a Gitea delivery keeps the description too', async (t) => {
  const { app, id } = await connected(t, 'gitea')
  const opened = example('opened')
  opened.repository.owner = { id: 1, username: 'Codertocat' }
  opened.issue.body = 'From Gitea'
  t.same((await deliver(app, id, 'issues', opened, { kind: 'gitea' })).json(), { result: 'handled' })
  // Only github.com's repository ids are taken as ours: this one got an id here.
  const repo = ((await app.admin({ url: '/admin/repositories' })).json() as Array<{ id: number, name: string }>).find((r) => r.name === 'Hello-World')!
  await app.admin({ method: 'PUT', url: `/admin/repositories/${repo.id}/permissions/alice`, payload: { permission: 'read' } })
  t.equal((await app.as('alice', { url: `/p1/repositories/${repo.id}/issues/1` })).json().body, 'From Gitea')
})

t.test('issues opened and edited here keep the description given; too long is 400', async (t) => {
  const app = await build(t)
  const made = await app.as('bob', { method: 'POST', url: `/p1/repositories/${REPO}/issues`, payload: { title: 'Described', body: 'Made *here*' } })
  t.equal(made.statusCode, 201)
  t.notOk('body' in made.json(), 'the answer is the list shape, without the description')
  const url = `/p1/repositories/${REPO}/issues/${made.json().issue_number as number}`
  t.equal((await app.as('bob', { url })).json().body, 'Made *here*')
  t.equal((await app.as('bob', { method: 'PATCH', url, payload: { body: 'Changed' } })).statusCode, 200)
  t.equal((await app.as('bob', { url })).json().body, 'Changed')
  t.equal((await app.as('bob', { method: 'PATCH', url, payload: { title: 'Renamed' } })).statusCode, 200)
  t.equal((await app.as('bob', { url })).json().body, 'Changed', 'an edit that does not name it leaves it')
  await app.as('bob', { method: 'PATCH', url, payload: { body: '' } })
  t.notOk('body' in (await app.as('bob', { url })).json(), 'emptied')
  const long = await app.as('bob', { method: 'POST', url: `/p1/repositories/${REPO}/issues`, payload: { title: 'Long', body: 'x'.repeat(65_537) } })
  t.equal(long.statusCode, 400)
  t.match(long.json().message, /body\/body/)
})
