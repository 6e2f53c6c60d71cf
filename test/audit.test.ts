import t from 'tap'
import { openSqliteStore } from '../db/store.js'
import { build, REPO, TOKENS } from './helper.js'

interface Entry { actor: string, action: string, target: string | null, address: string | null, detail: Record<string, unknown> | null, at: string }

t.test('admin writes, tokens and permission changes are in the audit log, with no secrets', async (t) => {
  const app = await build(t)
  t.equal((await app.admin({ method: 'PUT', url: `/admin/repositories/${REPO}/permissions/carol`, payload: { permission: 'write' } })).statusCode, 200)
  const made = await app.as('carol', { method: 'POST', url: '/account/tokens', payload: { name: 'ci', scope: 'read' } })
  await app.as('carol', { method: 'DELETE', url: `/account/tokens/${made.json().id as string}` })
  const legacy = (await app.admin({ method: 'POST', url: '/admin/users/carol/token' })).json().token as string
  t.equal((await app.admin({ method: 'PUT', url: `/admin/repositories/${REPO}/permissions/nobody`, payload: { permission: 'read' } })).statusCode, 404)

  const page = await app.admin({ url: '/admin/audit' })
  t.equal(page.statusCode, 200)
  const entries = page.json().entries as Entry[]
  t.same(entries.slice(0, 4).map((e) => [e.actor, e.action, e.target]), [
    ['admin', 'token.created', 'user:carol'],
    ['user:carol', 'token.revoked', 'user:carol'],
    ['user:carol', 'token.created', 'user:carol'],
    ['admin', 'permission.set', 'user:carol']
  ], 'newest first; the refused write is not there')
  t.match(entries[3].detail, { fields: { permission: 'write' }, params: { repo_id: REPO, login: 'carol' } })
  t.equal(entries[3].address, '127.0.0.1')
  t.match(entries[2].detail, { name: 'ci', scope: 'read' })
  const importEntry = entries.find((e) => e.action === 'import.fixture')!
  t.match(importEntry.detail, { fields: { users: '[not kept]' } })
  const text = JSON.stringify(entries)
  for (const secret of [legacy, made.json().token as string, ...Object.values(TOKENS)]) t.notOk(text.includes(secret), 'no token in the log')
})

t.test('the audit log pages by cursor and refuses bad ones', async (t) => {
  const app = await build(t)
  for (const login of ['u1', 'u2', 'u3']) await app.admin({ method: 'POST', url: '/admin/users', payload: { login } })
  const first = (await app.admin({ url: '/admin/audit?limit=2' })).json()
  t.same(first.entries.map((e: Entry) => e.detail?.fields), [{ login: 'u3' }, { login: 'u2' }])
  const second = (await app.admin({ url: `/admin/audit?limit=2&cursor=${first.next_cursor as string}` })).json()
  t.same(second.entries.map((e: Entry) => e.action), ['user.created', 'import.fixture'])
  t.equal(second.next_cursor, null)
  t.equal((await app.admin({ url: '/admin/audit?cursor=abc' })).statusCode, 400)
  t.equal((await app.admin({ url: '/admin/audit?limit=0' })).statusCode, 400)
  t.equal((await app.admin({ url: '/admin/audit?limit=501' })).statusCode, 400)
  t.equal((await app.as('alice', { url: '/admin/audit' })).statusCode, 403, 'a token of someone not an administrator does not open the admin API')
})

t.test('the audit log of one person and one action, across the whole log and paged', async (t) => {
  const app = await build(t)
  const made = await app.as('carol', { method: 'POST', url: '/account/tokens', payload: { name: 'old', scope: 'read' } })
  // Newer entries than the 2 a page shows: a filter must reach past them.
  for (const login of ['u1', 'u2', 'u3']) await app.admin({ method: 'POST', url: '/admin/users', payload: { login } })
  await app.as('carol', { method: 'DELETE', url: `/account/tokens/${made.json().id as string}` })
  const page = async (query: string) => (await app.admin({ url: `/admin/audit?limit=2&${query}` })).json() as { entries: Entry[], next_cursor: string | null }
  const carol = await page('actor=user%3Acarol')
  t.same(carol.entries.map((e) => [e.actor, e.action]), [['user:carol', 'token.revoked'], ['user:carol', 'token.created']], 'only carol\'s, newest first')
  t.equal(carol.next_cursor, null)
  const created = await page('action=user.created')
  t.same(created.entries.map((e) => e.detail?.fields), [{ login: 'u3' }, { login: 'u2' }])
  const older = await page(`action=user.created&cursor=${created.next_cursor as string}`)
  t.same(older.entries.map((e) => e.detail?.fields), [{ login: 'u1' }], 'the next page keeps the filter')
  t.equal(older.next_cursor, null)
  t.same((await page('actor=admin&action=token.revoked')).entries, [], 'both at once')
  t.same((await page('actor=user%3Acarol&action=token.created')).entries.map((e) => e.action), ['token.created'])
  t.equal((await app.admin({ url: '/admin/audit?action=a%20b' })).statusCode, 400, 'an action is a word with dots')
  t.equal((await app.admin({ url: '/admin/audit?actor=' })).statusCode, 400, 'an empty person')
})

t.test('entries older than AUDIT_DAYS are pruned', async (t) => {
  const store = await openSqliteStore(':memory:')
  t.teardown(store.close)
  await store.audit.record({ actor: 'admin', action: 'old' })
  await store.db.updateTable('audit_log').set({ at: new Date(Date.now() - 400 * 86_400_000).toISOString() }).execute()
  await store.audit.record({ actor: 'admin', action: 'new' })
  t.equal(await store.audit.prune(365), 1)
  t.same((await store.audit.list(undefined, 10)).entries.map((e) => e.action), ['new'])
})
