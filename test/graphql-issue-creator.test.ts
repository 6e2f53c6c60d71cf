import t from 'tap'
import { build, REPO } from './helper.js'
import { encodeId } from '../plugins/graphql/ids.js'
import { gql } from './gql.js'

// Issue.creator: who made a native issue here; the issue host's issues have none.
const app = await build(t)
const CREATOR = 'query ($id: ID!) { node(id: $id) { ... on Issue { number creator { id name } } } }'

t.test('an issue made here names its creator; the others name none; export and import keep it', async (t) => {
  const made = await gql(app, 'bob', 'mutation ($i: CreateIssueInput!) { createIssue(input: $i) { issue { id number creator { id name } } } }',
    { i: { repositoryId: encodeId('Repository', REPO), title: 'Made here' } })
  t.equal(made.errors, undefined)
  const issue = made.data.createIssue.issue
  t.same(issue.creator, { id: encodeId('ZenhubUser', 2), name: 'bob' }, 'bob made it')
  const old = (await gql(app, 'alice', `{ issueByInfo(repositoryGhId: ${REPO}, issueNumber: 1) { id creator { name } } }`)).data.issueByInfo
  t.equal(old.creator, null, 'an issue from the fixture has no creator')
  t.same((await gql(app, 'carol', CREATOR, { id: issue.id })).data.node.creator, { id: encodeId('ZenhubUser', 2), name: 'bob' }, 'a reader sees it too')

  const backup = (await app.admin({ url: '/admin/export' })).json()
  const exported = backup.issues.find((i: { repo_id: number, number: number }) => i.repo_id === REPO && i.number === issue.number)
  t.equal(exported.creator, 'bob', 'exported by login')
  t.notOk('creator' in backup.issues.find((i: { repo_id: number, number: number }) => i.repo_id === REPO && i.number === 1), 'no creator, no field')
  const copy = await build(t, { fixture: backup })
  const again = (await copy.admin({ url: '/admin/export' })).json()
  t.equal(again.issues.find((i: { repo_id: number, number: number }) => i.repo_id === REPO && i.number === issue.number).creator, 'bob', 'imported, exported again')

  const unknown = structuredClone(backup)
  unknown.issues.find((i: { creator?: string }) => i.creator === 'bob').creator = 'nobody-here'
  const refused = await (await build(t, { fixture: null })).admin({ method: 'POST', url: '/admin/import', payload: unknown })
  t.equal(refused.statusCode, 400)
  t.match(refused.json().message, /creator/)
})
