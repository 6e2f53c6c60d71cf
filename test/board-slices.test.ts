import t, { type Test } from 'tap'
import Database from 'better-sqlite3'
import pg from 'pg'
import { join } from 'node:path'
import { build, P, REPO, OTHER_REPO, WS_OLD, type App } from './helper.js'
import { gql } from './gql.js'
import Fastify from 'fastify'
import { boardJson } from '../plugins/board-bytes.js'
import { Board } from '../schemas/boards.js'
import type { Board as BoardData } from '../db/boards.js'
import { TEST_DATABASE_URL, testSchema } from './pg.js'

/**
 * Two instances on one database: `a` writes and reads, keeping its boards in memory and patching
 * them (db/board-model.ts); `b` notes none of `a`'s writes, so every read of its own is a fresh
 * build of the whole board. `sql` changes rows behind both, moving no counter.
 */
async function twoInstances (t: Test): Promise<{ a: App, b: App, sql: (text: string) => Promise<void> }> {
  if (TEST_DATABASE_URL !== undefined) {
    const { schema, drop } = await testSchema(TEST_DATABASE_URL)
    const client = new pg.Client({ connectionString: TEST_DATABASE_URL, options: `-c search_path=${schema}` })
    t.teardown(async () => {
      await client.end()
      await drop()
    })
    const options = { databaseUrl: TEST_DATABASE_URL, databaseSchema: schema, databasePoolMax: 4 }
    const a = await build(t, options)
    const b = await build(t, { ...options, fixture: null })
    await client.connect()
    return { a, b, sql: async (text) => { await client.query(text) } }
  }
  const file = join(t.testdir(), 'board.db')
  const a = await build(t, { database: file })
  const b = await build(t, { database: file, fixture: null })
  const raw = new Database(file)
  t.teardown(() => raw.close())
  return { a, b, sql: async (text) => { raw.prepare(text).run() } }
}

const BOARDS = [`/p1/repositories/${REPO}/board`, `/p2/workspaces/${WS_OLD}/repositories/${REPO}/board`, `/p1/repositories/${REPO}/board?pipeline_id=${P.doing}`]

t.test('a board patched for each write answers what a fresh build of the whole board answers, byte for byte', async (t) => {
  const { a, b } = await twoInstances(t)
  const same = async (what: string) => {
    for (const url of BOARDS) {
      const mine = await a.as('alice', { url })
      const fresh = await b.as('alice', { url })
      t.equal(mine.statusCode, 200)
      t.equal(mine.body, fresh.body, `${what}: ${url}`)
      t.equal(mine.headers.etag, fresh.headers.etag, `${what}: ${url}, its tag`)
    }
  }
  const ok = (res: { statusCode: number, body: string }) => t.ok(res.statusCode < 300, res.body)
  const move = async (n: number, pipeline: string, position: string | number) =>
    ok(await a.as('alice', { method: 'POST', url: `/p1/repositories/${REPO}/issues/${n}/moves`, payload: { pipeline_id: pipeline, position } }))
  await same('before any write')

  ok(await a.as('alice', { method: 'PUT', url: `/p1/repositories/${REPO}/issues/1/estimate`, payload: { estimate: 3 } }))
  await same('an estimate set')
  ok(await a.as('alice', { method: 'PUT', url: `/p1/repositories/${REPO}/issues/1/estimate`, payload: { estimate: 0.5 } }))
  ok(await a.as('alice', { method: 'PUT', url: `/p1/repositories/${REPO}/issues/2/estimate`, payload: { estimate: 8 } }))
  await same('two estimates between reads')
  ok(await a.as('alice', { method: 'PUT', url: `/p1/repositories/${REPO}/issues/1/estimate`, payload: { estimate: null } }))
  await same('an estimate cleared')

  await move(2, P.doing, 'top')
  await same('a move to another pipeline')
  await move(3, P.doing, 1)
  await move(4, P.todo, 'bottom')
  await same('a move to an index and one within its pipeline')
  await move(1, P.done, 0)
  await move(4, P.todo, 'top')
  await same('moves back and forth')

  const dependency = { blocking: { repo_id: REPO, issue_number: 1 }, blocked: { repo_id: REPO, issue_number: 2 } }
  ok(await a.as('alice', { method: 'POST', url: '/p1/dependencies', payload: dependency }))
  await same('a dependency added')
  ok(await a.as('alice', { method: 'DELETE', url: '/p1/dependencies', payload: dependency }))
  await same('a dependency removed')

  ok(await a.as('alice', { method: 'POST', url: `/p1/repositories/${REPO}/issues/3/close` }))
  await same('an issue closed')
  ok(await a.as('alice', { method: 'POST', url: `/p1/repositories/${REPO}/issues/3/reopen` }))
  await same('an issue reopened')

  const id = (await gql(a, 'alice', `{ issueByInfo(repositoryGhId: ${REPO}, issueNumber: 5) { id } }`)).data.issueByInfo.id
  t.notOk((await gql(a, 'alice', `mutation { setEstimate(input: { issueId: "${id}", value: 13 }) { clientMutationId } }`)).errors)
  await same('an estimate set through GraphQL')
  t.notOk((await gql(a, 'alice', `mutation { moveIssue(input: { issueId: "${id}", pipelineId: "${P.doing}", position: 0 }) { issue { number } } }`)).errors)
  await same('a move through GraphQL')

  // Moves into the same gap, again and again, until the pipeline is respaced around it.
  for (let i = 0; i < 64; i++) {
    await move(i % 2 === 0 ? 6 : 4, P.doing, 1)
    if (i % 16 === 15) await same(`${i + 1} moves into one gap`)
  }
  ok(await a.as('alice', { method: 'PUT', url: `/p1/repositories/${OTHER_REPO}/issues/1/estimate`, payload: { estimate: 2 } }))
  await same('a write to another repository')
})

t.test('after a write that names its rows only those rows are read again; any other write reads the board whole', async (t) => {
  const { a, b, sql } = await twoInstances(t)
  const board = async (app: App) => (await app.as('alice', { url: BOARDS[0] })).body
  const estimates = (body: string) => JSON.parse(body).pipelines.flatMap((p: { issues: Array<{ issue_number: number, estimate?: { value: number } }> }) =>
    p.issues.map((i) => [i.issue_number, i.estimate?.value ?? null]))
  await board(a)
  // Behind the API's back (no counter moved): only a fresh build sees it.
  await sql(`UPDATE issues SET estimate = 21 WHERE repo_id = ${REPO} AND number = 6`)
  t.equal((await a.as('alice', { method: 'PUT', url: `/p1/repositories/${REPO}/issues/1/estimate`, payload: { estimate: 5 } })).statusCode, 200)
  const patched = estimates(await board(a))
  t.match(patched, [[1, 5]], 'the written row was read again')
  t.same(patched.find((e: number[]) => e[0] === 6), [6, null], 'the row no write named is as it was kept')
  t.same(estimates(await board(b)).find((e: number[]) => e[0] === 6), [6, 21], 'a fresh build reads it')
  // A write that says nothing of its rows (a title, here) has the whole board read again.
  t.equal((await a.as('alice', { method: 'PATCH', url: `/p1/repositories/${REPO}/issues/2`, payload: { title: 'Renamed' } })).statusCode, 200)
  t.equal(await board(a), await board(b), 'read whole again')
})

t.test('a board made of its pipelines\' kept JSON is the JSON of the whole board, byte for byte', async (t) => {
  const app = Fastify()
  t.teardown(async () => await app.close())
  let board: BoardData = { pipelines: [] }
  const response = { 200: Board }
  // ?clone: the same board as new objects, nothing kept for them.
  app.get('/joined', { schema: { response } }, async (request, reply) => {
    const answer = boardJson(reply, 'clone' in (request.query as object) ? structuredClone(board) : board)
    return await reply.header('x-tag', answer.etag).type('application/json; charset=utf-8').send(answer.body)
  })
  app.get('/whole', { schema: { response } }, async () => board)
  const tags = new Set<unknown>()
  const same = async (what: string) => {
    const joined = await app.inject({ url: '/joined' })
    const whole = await app.inject({ url: '/whole' })
    t.equal(joined.body, whole.body, what)
    t.same(JSON.parse(joined.body), board, `${what}: the board's values`)
    t.equal((await app.inject({ url: '/joined?clone' })).headers['x-tag'], joined.headers['x-tag'], `${what}: the same bytes made afresh, the same tag`)
    tags.add(joined.headers['x-tag'])
  }
  await same('no pipeline')
  const todo = { id: 'p1', name: 'To "do" \u2028 é', issues: [{ issue_number: 1, is_epic: false, estimate: { value: 0.5 }, position: 0 }, { issue_number: 2, is_epic: true }] }
  const empty = { id: 'p2', name: 'Empty', issues: [] }
  board = { pipelines: [todo, empty] }
  await same('two pipelines, one empty')
  await same('the same pipelines again (their kept JSON)')
  board = { pipelines: [{ ...todo, issues: [...todo.issues, { issue_number: 3, is_epic: false }] }, empty, { id: 'p3', name: 'Done', issues: [{ issue_number: 4, is_epic: false }] }] }
  await same('one pipeline changed, one kept, one new')
  t.equal(tags.size, 3, 'other bytes, another tag')
})
