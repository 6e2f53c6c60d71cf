import t from 'tap'
import { join } from 'node:path'
import { buildApp } from '../app.js'
import { runAdminCommand } from '../cli/admin.js'
import { build, REPO, OTHER_REPO, P, SECRET_KEY, TOKENS } from './helper.js'
import { postgresAnswers, testSchema } from './pg.js'

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
  t.same((await app.as('alice', { url: `/p1/webhooks/${hook.id}/deliveries` })).json(), deliveries, 'the webhook outbox came along')
  const moved = await after.inject({
    method: 'POST', url: `/p1/repositories/${REPO}/issues/6/moves`, headers: { 'x-authentication-token': TOKENS.bob }, payload: { pipeline_id: P.doing, position: 0 }
  })
  t.equal(moved.statusCode, 200, 'and it takes new writes (ids continue after the copied ones)')
  const sent = await after.inject({ method: 'POST', url: '/api/v1/messages/send', headers: { 'x-authentication-token': TOKENS.carol }, payload: { message: 'settled in' } })
  t.equal(sent.statusCode, 201)
  t.equal(sent.json().id, 2)
})
