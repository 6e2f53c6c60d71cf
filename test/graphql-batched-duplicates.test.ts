import t from 'tap'
import { buildWithSql, OTHER_REPO, REPO, WS_OLD } from './helper.js'
import { gql } from './gql.js'

// A row reached through many objects in one document is given to a batched field's loader once
// (plugins/graphql/batched-fields.ts): keyed on each object instead, a loader's batch grew with the
// objects, and reads that bind every id they are given (closedAtOf, dependenciesOf, …) went past
// SQLite's 32,766 variables. In a mutation's document a row read after a write is read again.
const { app } = await buildWithSql(t)

t.test('the same nine issues reached through 41,472 objects in one document are read in a statement SQLite accepts', async (t) => {
  // REPO#1 is blocked by nine issues
  for (const [repo, n] of [[REPO, 2], [REPO, 3], [REPO, 4], [REPO, 5], [REPO, 6], [REPO, 7], [OTHER_REPO, 1], [OTHER_REPO, 2], [OTHER_REPO, 3]]) {
    const res = await app.as('alice', { method: 'POST', url: '/p1/dependencies', payload: { blocking: { repo_id: repo, issue_number: n }, blocked: { repo_id: REPO, issue_number: 1 } } })
    t.ok(res.statusCode < 300, res.body)
  }
  const id = (await gql(app, 'alice', `{ issueByInfo(repositoryGhId: ${REPO}, issueNumber: 1) { id } }`)).data.issueByInfo.id
  // 48 copies of the issue (the list may name an id again), 100 aliases with different page sizes:
  // under the complexity, depth, alias and token limits
  const aliases = Array.from({ length: 100 }, (_, i) => `b${i + 1}: blockingIssues(first: ${i + 1}) { nodes { closedAt } }`).join(' ')
  const doc = `{ issues(ids: [${Array(48).fill(JSON.stringify(id)).join(', ')}]) { ${aliases} } }`
  const started = Date.now()
  const answer = await gql(app, 'alice', doc)
  t.comment(`answered in ${Date.now() - started} ms, ${answer.errors?.length ?? 0} errors`)
  t.equal(answer.errors?.length ?? 0, 0, 'no error')
  t.equal(answer.data?.issues?.length, 48)
  t.equal(answer.data?.issues?.[0]?.b100?.nodes?.length, 9)
  t.equal(answer.data?.issues?.[47]?.b5?.nodes?.[0]?.closedAt, null)
})

t.test('in a mutation\'s document, a workspace read after each write shows that write', async (t) => {
  const doc = `mutation { a: setFavoriteWorkspace(input: { workspaceId: "${WS_OLD}" }) { workspaceFavorite { workspace { isFavorite } } }
    b: deleteWorkspaceFavorite(input: { workspaceId: "${WS_OLD}" }) { workspace { isFavorite } } }`
  const answer = await gql(app, 'alice', doc)
  t.equal(answer.errors, undefined)
  t.equal(answer.data.a.workspaceFavorite.workspace.isFavorite, true, 'after the first write')
  t.equal(answer.data.b.workspace.isFavorite, false, 'after the second: not the first\'s answer again')
})
