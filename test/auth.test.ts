import t from 'tap'
import { openSqliteFile } from '../db/engine/sqlite.js'
import { openSqliteStore } from '../db/store.js'
import { loadFixture } from '../services/fixtures.js'
import { build, REPO, OTHER_REPO, PRIVATE_REPO, TOKENS, P, testFixture } from './helper.js'

t.test('a token is accepted by header, query parameter and bearer header', async (t) => {
  const app = await build(t)
  const url = `/p1/repositories/${REPO}/issues/1`
  t.equal((await app.inject({ url, headers: { 'x-authentication-token': TOKENS.carol } })).statusCode, 200)
  t.equal((await app.inject({ url: `${url}?access_token=${TOKENS.carol}` })).statusCode, 200)
  t.equal((await app.inject({ url, headers: { authorization: `Bearer ${TOKENS.carol}` } })).statusCode, 200)
})

t.test('missing or unknown tokens get 401 in the error shape', async (t) => {
  const app = await build(t)
  const missing = await app.inject({ url: `/p1/repositories/${REPO}/board` })
  t.equal(missing.statusCode, 401)
  t.same(Object.keys(missing.json()).sort(), ['error', 'message', 'statusCode'])
  t.match(missing.json().message, /token is required/)
  const unknown = await app.inject({ url: `/p1/repositories/${REPO}/board?access_token=nope-not-a-token` })
  t.equal(unknown.statusCode, 401)
  t.match(unknown.json(), { statusCode: 401, error: 'Unauthorized', message: 'the API token is not valid' })
})

t.test('no read access answers 404 exactly like a missing repository', async (t) => {
  const app = await build(t)
  const hidden = await app.as('bob', { url: `/p1/repositories/${PRIVATE_REPO}/board` })
  const absent = await app.as('bob', { url: '/p1/repositories/999999/board' })
  t.equal(hidden.statusCode, 404)
  t.equal(absent.statusCode, 404)
  t.equal(hidden.json().message, `repository ${PRIVATE_REPO} not found`)
  t.equal(absent.json().message, 'repository 999999 not found')
  t.equal((await app.as('dave', { url: `/p1/repositories/${REPO}/issues/1` })).statusCode, 404)
})

t.test('read access without write gets 403 on writes and 200 on reads', async (t) => {
  const app = await build(t)
  t.equal((await app.as('carol', { url: `/p1/repositories/${REPO}/board` })).statusCode, 200)
  const move = await app.as('carol', { method: 'POST', url: `/p1/repositories/${REPO}/issues/1/moves`, payload: { pipeline_id: P.doing, position: 'top' } })
  t.equal(move.statusCode, 403)
  t.equal(move.json().message, `write permission on repository ${REPO} is required`)
  const estimate = await app.as('bob', { method: 'PUT', url: `/p1/repositories/${OTHER_REPO}/issues/1/estimate`, payload: { estimate: 3 } })
  t.equal(estimate.statusCode, 403)
})

t.test('a new token invalidates the previous one', async (t) => {
  const app = await build(t)
  const res = await app.admin({ method: 'POST', url: '/admin/users/carol/token' })
  t.equal(res.statusCode, 200)
  const fresh = res.json().token as string
  t.ok(fresh.length >= 24)
  t.equal((await app.as('carol', { url: `/p1/repositories/${REPO}/board` })).statusCode, 401)
  t.equal((await app.inject({ url: `/p1/repositories/${REPO}/board`, headers: { 'x-authentication-token': fresh } })).statusCode, 200)
})

t.test('tokens are stored hashed', async (t) => {
  const db = openSqliteFile(':memory:')
  const store = await openSqliteStore(db)
  await loadFixture(store, testFixture())
  await store.close()
  const stored = db.prepare('SELECT token_hash FROM users').pluck().all() as string[]
  t.notOk(stored.some((h) => Object.values(TOKENS).includes(h as never)))
  t.ok(stored.every((h) => /^[0-9a-f]{64}$/.test(h)))
  db.close()
})
