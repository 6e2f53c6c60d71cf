import t from 'tap'
import { join } from 'node:path'
import type { Kysely } from 'kysely'
import { buildApp } from '../app.js'
import type { Database } from '../db/schema.js'
import { openSqliteStore } from '../db/store.js'
import { postgresKysely } from '../db/engine/postgres.js'
import { runAdminCommand } from '../cli/admin.js'
import { build, REPO, OTHER_REPO, P, SECRET_KEY, TOKENS } from './helper.js'
import { postgresAnswers, testSchema } from './pg.js'

/** The columns of migrations 028 and 029, numbers as numbers (PostgreSQL's BIGINT reads as a string). */
async function hosted (db: Kysely<Database>) {
  const number = (row: Record<string, unknown>) => Object.fromEntries(Object.entries(row).map(([k, v]) => [k, typeof v === 'string' && /^(id|.*_id|is_.*)$/.test(k) && /^\d+$/.test(v) ? Number(v) : v]))
  return {
    repositories: (await db.selectFrom('repositories').select(['id', 'created_at', 'is_private', 'is_archived', 'owner_platform_id', 'owner_kind']).orderBy('id').execute()).map(number),
    pipelines: (await db.selectFrom('pipelines').select(['id', 'created_at', 'updated_at']).orderBy('id').execute()).map(number),
    connections: (await db.selectFrom('issue_pr_connections').select(['issue_id', 'pull_request_id', 'created_at']).orderBy('issue_id').orderBy('pull_request_id').execute()).map(number)
  }
}

const PG = process.env.TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test'
const why = await postgresAnswers(PG) ? undefined : `no PostgreSQL answers at ${PG} (set TEST_DATABASE_URL)`
if (why !== undefined) t.comment(`skipping the copy to PostgreSQL: ${why}`)

t.test('copy-to moves a SQLite deployment to PostgreSQL with nothing lost', { skip: why }, async (t) => {
  const database = join(t.testdir({}), 'planning.db')
  const before = await build(t, { database, webhooks: { worker: false, allowPrivate: true } })
  const as = (login: keyof typeof TOKENS, method: 'POST' | 'PUT' | 'PATCH', url: string, payload: object) => before.as(login, { method, url, payload })
  await as('bob', 'POST', `/p1/repositories/${REPO}/issues/3/moves`, { pipeline_id: P.doing, position: 'top' })
  await as('bob', 'PUT', `/p1/repositories/${REPO}/issues/3/estimate`, { estimate: 8 })
  await as('bob', 'POST', `/p1/repositories/${REPO}/issues/1/convert_to_epic`, { issues: [{ repo_id: REPO, issue_number: 2 }] })
  await as('alice', 'POST', '/p1/dependencies', { blocking: { repo_id: REPO, issue_number: 4 }, blocked: { repo_id: OTHER_REPO, issue_number: 1 } })
  const report = (await as('alice', 'POST', `/p1/repositories/${REPO}/reports/release`, { title: 'R', start_date: '2026-01-01T00:00:00Z', desired_end_date: '2026-02-01T00:00:00Z' })).json()
  await as('alice', 'POST', `/p1/repositories/${REPO}/webhooks`, { url: 'http://127.0.0.1:9/hook', secret: 'a-secret-value' })
  await as('alice', 'PUT', `/p1/repositories/${REPO}/issues/5/estimate`, { estimate: 2 })
  await as('carol', 'POST', '/api/v1/messages/send', { message: 'moving day' })
  const urls = [
    `/p1/repositories/${REPO}/board`, `/p2/repositories/${REPO}/workspaces`, `/p1/repositories/${REPO}/issues/3`, `/p1/repositories/${REPO}/issues/3/events`,
    `/p1/repositories/${REPO}/epics/1`, `/p1/repositories/${REPO}/dependencies`, `/p1/reports/release/${report.release_id}`,
    `/p1/repositories/${REPO}/webhooks`, '/api/v1/messages', `/p1/repositories/${OTHER_REPO}/board`
  ]
  const read = async (app: typeof before) => await Promise.all(urls.map(async (url) => (await app.as('alice', { url })).json()))
  const expected = await read(before)
  const hook = expected[7][0] as { id: string }
  const deliveries = (await before.as('alice', { url: `/p1/webhooks/${hook.id}/deliveries` })).json()
  await before.close()

  // Migration 029's columns and a connection's time (migration 028), which no answer above reads; rows are copied as they are.
  const source = await openSqliteStore(database)
  const db = source.db
  await db.updateTable('repositories').set({ created_at: '2019-03-04T05:06:07.000Z', is_private: 1, is_archived: 1, owner_platform_id: 4242, owner_kind: 'Organization' }).where('id', '=', REPO).execute()
  await db.updateTable('pipelines').set({ created_at: '2025-01-02T03:04:05.000Z', updated_at: '2025-06-07T08:09:10.000Z' }).where('id', '=', P.doing).execute()
  const [issue, pr] = await Promise.all([2, 5].map(async (n) => Number((await db.selectFrom('issues').select('id').where('repo_id', '=', REPO).where('number', '=', n).executeTakeFirstOrThrow()).id)))
  await db.insertInto('issue_pr_connections').values({ issue_id: issue, pull_request_id: pr, created_at: '2026-02-01T10:00:00.000Z' }).execute()
  const hostedBefore = await hosted(db)
  await source.close()
  t.match(hostedBefore.repositories, [{ id: REPO, created_at: '2019-03-04T05:06:07.000Z', is_private: 1, is_archived: 1, owner_platform_id: 4242, owner_kind: 'Organization' }])
  t.match(hostedBefore.pipelines.find((p) => p.id === P.doing), { created_at: '2025-01-02T03:04:05.000Z', updated_at: '2025-06-07T08:09:10.000Z' })
  t.equal(hostedBefore.connections.length, 1)

  const { schema, drop } = await testSchema(PG)
  t.teardown(drop)
  const result = await runAdminCommand(database, ['copy-to', PG, '--schema', schema]) as { copied: Record<string, number> }
  t.match(result.copied, { users: 4, issues: 11, placements: 18, webhook_deliveries: 1, chat_messages: 1 })
  await t.rejects(runAdminCommand(database, ['copy-to', PG, '--schema', schema]), /not empty/, 'never into a database that holds data')

  const webhooks = { worker: false, allowPrivate: true }
  const after = await buildApp({ databaseUrl: PG, databaseSchema: schema, documentation: false, secretKey: SECRET_KEY, webhooks })
  t.teardown(() => after.close())
  const app = Object.assign(after, { as: async (login: keyof typeof TOKENS, opts: { url: string }) => await after.inject({ ...opts, headers: { 'x-authentication-token': TOKENS[login] } }) })
  t.same(await read(app as typeof before), expected, 'every answer the same, tokens included')
  const copied = postgresKysely({ url: PG, schema })
  t.teardown(async () => await copied.destroy())
  t.same(await hosted(copied), hostedBefore, 'repositories\' host facts, pipelines\' times and the connections\' times came along')
  t.same((await app.as('alice', { url: `/p1/webhooks/${hook.id}/deliveries` })).json(), deliveries, 'the webhook outbox came along')
  const moved = await after.inject({
    method: 'POST', url: `/p1/repositories/${REPO}/issues/6/moves`, headers: { 'x-authentication-token': TOKENS.bob }, payload: { pipeline_id: P.doing, position: 0 }
  })
  t.equal(moved.statusCode, 200, 'and it takes new writes (ids continue after the copied ones)')
  const sent = await after.inject({ method: 'POST', url: '/api/v1/messages/send', headers: { 'x-authentication-token': TOKENS.carol }, payload: { message: 'settled in' } })
  t.equal(sent.statusCode, 201)
  t.equal(sent.json().id, 2)
})
