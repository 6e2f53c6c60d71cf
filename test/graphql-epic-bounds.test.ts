import t from 'tap'
import { build, PRIVATE_REPO, REPO, testFixture, WS_OLD } from './helper.js'
import { encodeId } from '../plugins/graphql/ids.js'
import { gql, type Gql } from './gql.js'

// What an epic's writer may learn and pile up: assignees among the users of what they read only,
// at most 100 labels and key dates per epic; a child moved between parents is never left with none.
const base = testFixture()
const fixture = {
  ...base,
  // dave reads only the repository of WS_OLD that bob cannot read
  repositories: base.repositories.map((r) => r.id === PRIVATE_REPO ? { ...r, permissions: { ...r.permissions, dave: 'read' } } : r),
  // 6 holds 5, 7 holds 6
  epics: [
    { repo_id: REPO, issue_number: 6, issues: [{ repo_id: REPO, issue_number: 5 }] },
    { repo_id: REPO, issue_number: 7, issues: [{ repo_id: REPO, issue_number: 6 }] }
  ]
}
const app = await build(t, { fixture })
const ORG = encodeId('ZenhubOrganization', 1)
const code = (r: Gql) => r.errors?.[0]?.extensions.code
let epic: string

t.before(async () => {
  const own = (await gql(app, 'bob', `{ workspace(id: "${WS_OLD}") { zenhubRepository { id } } }`)).data.workspace.zenhubRepository
  const made = await gql(app, 'bob', 'mutation($i: CreateZenhubEpicInput!) { createZenhubEpic(input: $i) { zenhubEpic { id } } }',
    { i: { zenhubOrganizationId: ORG, zenhubRepositoryId: own.id, zenhubEpic: { title: 'Launch' } } })
  epic = made.data.createZenhubEpic.zenhubEpic.id
})

t.test('an assignee must read a repository of the workspace the writer reads: who reads the others is not told', async (t) => {
  const add = 'mutation($input: AddAssigneesToZenhubEpicsInput!) { addAssigneesToZenhubEpics(input: $input) { zenhubEpics { id } } }'
  const dave = await gql(app, 'bob', add, { input: { zenhubEpicIds: [epic], assigneeIds: [encodeId('ZenhubUser', 4)] } })
  t.equal(code(dave), 'NOT_FOUND', 'dave reads only a repository bob cannot read')
  t.equal((await gql(app, 'bob', add, { input: { zenhubEpicIds: [epic], assigneeIds: [encodeId('ZenhubUser', 3)] } })).errors, undefined, 'carol reads REPO')
})

t.test('an epic has at most 100 labels and 100 key dates', async (t) => {
  const add = 'mutation($input: AddZenhubLabelsToZenhubEpicsInput!) { addZenhubLabelsToZenhubEpics(input: $input) { zenhubEpics { id } } }'
  const batch = (from: number) => Array.from({ length: 50 }, (_, i) => ({ name: `l${from + i}`, color: '00ff00' }))
  for (const from of [0, 50]) t.equal((await gql(app, 'bob', add, { input: { zenhubEpicIds: [epic], labelInfos: batch(from) } })).errors, undefined, `labels ${from} to ${from + 49}`)
  const over = await gql(app, 'bob', add, { input: { zenhubEpicIds: [epic], labelInfos: [{ name: 'one-more', color: '00ff00' }] } })
  t.equal(code(over), 'BAD_USER_INPUT')
  t.match(over.errors![0].message, /more than 100 labels/)
  const count = await gql(app, 'bob', `{ node(id: "${epic}") { ... on ZenhubEpic { labels(first: 100) { totalCount } } } }`)
  t.equal(count.data.node.labels.totalCount, 100, 'nothing of the refused write kept')
  t.equal((await gql(app, 'bob', add, { input: { zenhubEpicIds: [epic], labelInfos: [{ name: 'l7', color: '0000ff' }] } })).errors, undefined, 'a label it has is not one more')

  const keyDate = 'mutation($input: CreateZenhubEpicKeyDateInput!) { createZenhubEpicKeyDate(input: $input) { keyDate { id } } }'
  for (let i = 0; i < 100; i++) {
    const made = await gql(app, 'bob', keyDate, { input: { zenhubEpicId: epic, date: '2026-12-01', description: `step ${i}` } })
    if (made.errors !== undefined) { t.fail(`key date ${i}: ${made.errors[0].message}`); return }
  }
  const refused = await gql(app, 'bob', keyDate, { input: { zenhubEpicId: epic, date: '2026-12-01', description: 'one more' } })
  t.equal(code(refused), 'BAD_USER_INPUT')
  t.match(refused.errors![0].message, /more than 100 key dates/)
})

t.test('addSubIssues with replaceParent: a child the new parent refuses stays in its old parent', async (t) => {
  // 6 (in 7) holds 5: moving 6 under 5 is a loop
  const issue = async (n: number) => (await gql(app, 'alice', `{ issueByInfo(repositoryGhId: ${REPO}, issueNumber: ${n}) { id } }`)).data.issueByInfo.id
  const moved = await gql(app, 'bob', 'mutation($input: AddSubIssuesInput!) { addSubIssues(input: $input) { successCount failedIssues { number } } }',
    { input: { parentId: await issue(5), childIssueIds: [await issue(6)], replaceParent: true } })
  t.equal(moved.errors, undefined)
  t.same(moved.data.addSubIssues, { successCount: 0, failedIssues: [{ number: 6 }] })
  const held = await gql(app, 'alice', `{ issueByInfo(repositoryGhId: ${REPO}, issueNumber: 6) { parentIssue { number } } }`)
  t.same(held.data.issueByInfo.parentIssue, { number: 7 }, '6 still in 7')
})
