import t from 'tap'
import { buildWithSql, OTHER_REPO, REPO, testFixture, WS_OLD } from './helper.js'
import { encodeId } from '../plugins/graphql/ids.js'
import { gql, type Gql } from './gql.js'

// Bounds on what one caller can pile up or make the server say: connections per issue, batches
// that name one issue two ways, error messages that repeat what the request gave.
const fixture = testFixture() as ReturnType<typeof testFixture> & { issues: Array<Record<string, unknown>> }
for (let n = 300; n <= 401; n++) fixture.issues.push({ repo_id: REPO, number: n, title: `PR ${n}`, pull_request: true })
const { app, sql } = await buildWithSql(t, { fixture })
const code = (r: Gql) => r.errors?.[0]?.extensions.code
const idOf = async (repo: number, n: number): Promise<{ id: string, key: number }> => {
  const id: string = (await gql(app, 'alice', `{ issueByInfo(repositoryGhId: ${repo}, issueNumber: ${n}) { id } }`)).data.issueByInfo.id
  return { id, key: Number(/\/([0-9]+)$/.exec(Buffer.from(id, 'base64url').toString())![1]) }
}
const CREATE = 'mutation ($input: CreateIssuePrConnectionInput!) { createIssuePrConnection(input: $input) { pullRequest { number } } }'

t.test('an issue has at most 100 connected pull requests; connecting one again still answers', async (t) => {
  const issue = await idOf(REPO, 1)
  const first = await idOf(REPO, 300)
  const last = await idOf(REPO, 401)
  // 100 connections stored at once: 300..399
  for (let n = 0; n < 100; n++) {
    await sql('INSERT INTO issue_pr_connections (issue_id, pull_request_id, created_at) VALUES (?, ?, ?)', [issue.key, first.key + n, new Date(Date.UTC(2026, 0, 1, 0, 0, n)).toISOString()])
  }
  const refused = await gql(app, 'bob', CREATE, { input: { issueId: issue.id, pullRequestId: last.id } })
  t.equal(code(refused), 'BAD_USER_INPUT')
  t.match(refused.errors![0].message, /already has 100 connected pull requests/)
  t.same(await sql('SELECT count(*) AS n FROM issue_pr_connections WHERE pull_request_id = ?', [last.key]).then((r) => Number(r[0].n)), 0, 'nothing stored')
  const again = await gql(app, 'bob', CREATE, { input: { issueId: issue.id, pullRequestId: first.id } })
  t.equal(again.errors, undefined, 'an existing connection made again is not the 101st')
  t.equal(again.data.createIssuePrConnection.pullRequest.number, 300)
})

t.test('a pull request is connected to at most 100 issues', async (t) => {
  const pr = await idOf(REPO, 401)
  const issues = (await sql('SELECT id FROM issues WHERE repo_id = ? AND is_pull_request = 0 ORDER BY number', [REPO])).map((r) => Number(r.id))
  t.ok(issues.length >= 2, 'the fixture has issues to connect')
  const filler = (await sql('SELECT id FROM issues WHERE repo_id = ? AND number BETWEEN 300 AND 399', [REPO])).map((r) => Number(r.id))
  // the pull request side counts whatever is on the issue side of its rows
  for (const [i, id] of filler.entries()) {
    await sql('INSERT INTO issue_pr_connections (issue_id, pull_request_id, created_at) VALUES (?, ?, ?)', [id, pr.key, new Date(Date.UTC(2026, 0, 2, 0, 0, i)).toISOString()])
  }
  const refused = await gql(app, 'bob', CREATE, { input: { issueId: encodeId('Issue', issues[1]), pullRequestId: pr.id } })
  t.equal(code(refused), 'BAD_USER_INPUT')
  t.match(refused.errors![0].message, /already connected to 100 issues/)
})

t.test('a batch naming a repository two ways that disagree is refused, nothing set', async (t) => {
  const priorities = (await gql(app, 'alice', 'query ($w: ID!) { workspace(id: $w) { prioritiesConnection { nodes { id } } } }', { w: WS_OLD })).data.workspace.prioritiesConnection.nodes
  const SET = 'mutation ($input: SetIssueInfoPrioritiesInput!) { setIssueInfoPriorities(input: $input) { pipelineIssues { issue { number } } } }'
  const input = { priorityId: priorities[0].id, issues: [{ repositoryGhId: REPO, issueNumber: 2 }, { repositoryGhId: REPO, repositoryId: encodeId('Repository', OTHER_REPO), issueNumber: 1 }] }
  const refused = await gql(app, 'bob', SET, { input })
  t.equal(code(refused), 'BAD_USER_INPUT')
  t.match(refused.errors![0].message, /name two repositories/)
  t.same(await sql('SELECT count(*) AS n FROM issue_priorities').then((r) => Number(r[0].n)), 0, 'nothing set')
  const both = await gql(app, 'bob', SET, { input: { ...input, issues: [{ repositoryGhId: REPO, issueNumber: 2 }, { repositoryGhId: REPO, repositoryId: encodeId('Repository', REPO), issueNumber: 1 }] } })
  t.equal(both.errors, undefined, 'the same repository named both ways')
  t.same(both.data.setIssueInfoPriorities.pipelineIssues.map((p: { issue: { number: number } }) => p.issue.number).sort(), [1, 2])
})

t.test('an error message never repeats more than 500 characters of what the request gave', async (t) => {
  const long = 'f'.repeat(20_000)
  const res = await gql(app, 'alice', 'query ($w: ID!) { searchClosedIssues(workspaceId: $w, filters: {}) { totalCount } }', { w: long })
  t.equal(code(res), 'NOT_FOUND')
  t.ok(res.errors![0].message.length <= 501, `${res.errors![0].message.length} characters`)
})

t.test('which user is linked to a host login is shown to that user (and administrators) only', async (t) => {
  await sql("INSERT INTO connections (id, kind, web_url, api_url, secret, token, created_at) VALUES ('cccccccccccccccccccccccc', 'github', 'https://github.com', 'https://api.github.com', 'x', NULL, '2026-01-01T00:00:00Z')")
  await sql("INSERT INTO host_identities (connection_id, platform_user_id, login, user_id, created_at) VALUES ('cccccccccccccccccccccccc', 77, 'octo-bob', 2, '2026-01-01T00:00:00Z')")
  const issue = (await idOf(REPO, 2)).key
  for (const login of ['octo-bob', 'carol']) await sql('INSERT INTO issue_assignees (issue_id, login, avatar_url) VALUES (?, ?, NULL)', [issue, login])
  const doc = 'query ($w: ID!) { workspace(id: $w) { assignees { nodes { login zenhubUser { name } } } } }'
  const seen = async (login: 'bob' | 'carol') => Object.fromEntries((await gql(app, login, doc, { w: WS_OLD })).data.workspace.assignees.nodes
    .map((n: { login: string, zenhubUser: { name: string } | null }) => [n.login, n.zenhubUser?.name ?? null]))
  t.same((await seen('bob'))['octo-bob'], 'bob', 'bob sees his own link')
  const carol = await seen('carol')
  t.same([carol['octo-bob'], carol.carol], [null, 'carol'], 'carol sees nobody behind octo-bob, herself behind carol')
})

t.test('label options weigh in the complexity limit: six per workspace over a page of workspaces is refused', async (t) => {
  const each = ['a', 'b', 'c', 'd', 'e', 'f'].map((a) => `${a}: issueLabelOptions { totalCount }`).join(' ')
  const res = await app.as('alice', { method: 'POST', url: '/public/graphql', payload: { query: `{ viewer { searchWorkspaces(query: "", first: 100) { nodes { ${each} } } } }` } })
  t.equal(res.statusCode, 200)
  t.equal(res.json().data, null)
  t.match(res.json().errors[0].message, /complex/i)
  const one = await gql(app, 'alice', `{ viewer { searchWorkspaces(query: "", first: 10) { nodes { ${each} } } } }`)
  t.equal(one.errors, undefined, 'ten workspaces are fine')
})
