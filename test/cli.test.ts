import t from 'tap'
import { join } from 'node:path'
import { runAdminCommand } from '../cli/admin.js'
import { buildApp } from '../app.js'

t.test('the admin CLI works on the database file directly', async (t) => {
  const database = join(t.testdir({}), 'planning.db')
  const run = async (...argv: string[]) => await runAdminCommand(database, argv)
  t.match(await run('help'), /usage: npm run admin/)
  t.match(await run('--help'), /usage: npm run admin/, '--help prints the usage')
  t.match(await run('-h'), /usage: npm run admin/)
  t.match(await run('users', '--help'), /usage: npm run admin/)
  t.match(await run('create-user', 'dan', '--id', '7'), { id: 7, login: 'dan' })
  const { token } = await run('token', 'dan') as { token: string }
  t.match(await run('create-repo', '42', 'acme', 'cli'), { id: 42 })
  t.match(await run('grant', '42', 'dan', 'write'), { permission: 'write' })
  const ws = await run('create-workspace', 'Ops', '--repos', '42', '--pipelines', 'Inbox, Doing,Done') as { id: string, pipelines: Array<{ name: string }> }
  t.same(ws.pipelines.map((p) => p.name), ['Inbox', 'Doing', 'Done'])
  t.match(await run('create-issue', '42', '1', 'First', '--author', 'dan'), { state: 'open' })
  t.match(await run('create-issue', '42', '2', 'Second'), { number: 2 })
  t.match(await run('close-issue', '42', '2'), { state: 'closed' })
  await t.rejects(run('grant', '42', 'dan', 'owner'), /unknown permission 'owner'/)
  await t.rejects(run('create-issue', 'x', '1', 'y'), /repo_id must be a positive integer/)
  await t.rejects(run('frobnicate'), /unknown command 'frobnicate'/)

  const app = await buildApp({ database })
  t.teardown(() => app.close())
  const board = await app.inject({ url: '/p1/repositories/42/board', headers: { 'x-authentication-token': token } })
  t.equal(board.statusCode, 200)
  t.same(board.json().pipelines[0].issues.map((i: { issue_number: number }) => i.issue_number), [1], 'closed #2 is off the board')
  await app.close()
  t.match(await run('reopen-issue', '42', '2'), { state: 'open' })
})

t.test('the CLI shows what the admin API shows', async (t) => {
  const database = join(t.testdir({}), 'planning.db')
  const run = async (...argv: string[]) => await runAdminCommand(database, argv)
  await run('create-repo', '42', 'acme', 'cli')
  t.same(await run('create-issue', '42', '1', 'First'), { repo_id: 42, number: 1, title: 'First', state: 'open' }, 'no internal columns (is_epic: 0)')
  t.same(await run('issues', '42'), [{ repo_id: 42, number: 1, title: 'First', state: 'open' }])
  await run('create-user', 'dan')
  await run('grant', '42', 'dan', 'push')
  t.same(await run('permissions', '42'), [{ login: 'dan', permission: 'write' }])
  t.same(await run('revoke-token', 'dan'), { revoked: 'dan' })
  t.same(await run('delete-repo', '42'), { deleted: 42 })
  t.same(await run('repositories'), [])
  t.same(await run('delete-user', 'dan'), { deleted: 'dan' })
})

t.test('the CLI: emails, a user\'s tokens and the audit log', async (t) => {
  const database = join(t.testdir({}), 'planning.db')
  const run = async (...argv: string[]) => await runAdminCommand(database, argv)
  t.same(await run('create-user', 'eve', '--email', 'eve@example.com'), { id: 1, login: 'eve', email: 'eve@example.com', administrator: false, last_sign_in_at: null })
  await t.rejects(run('create-user', 'frank', '--email', 'eve@example.com'), /belongs to another user/)
  await t.rejects(run('set-email', 'eve', 'not-an-email'), /not an email address/)
  t.match(await run('set-email', 'eve', 'none'), { email: null })
  await run('token', 'eve')
  t.match(await run('tokens', 'eve'), [{ id: 'legacy', legacy: true, scope: 'write' }])
  t.same(await run('revoke-user-token', 'eve', 'legacy'), { revoked: 'legacy' })
  t.same(await run('tokens', 'eve'), [])
  const audit = await run('audit', '--limit', '2') as { entries: Array<{ actor: string, action: string }>, next_cursor: string }
  t.same(audit.entries.map((e) => [e.actor, e.action]), [['admin-cli', 'cli.revoke-user-token'], ['admin-cli', 'cli.token']])
  const tokens = await run('audit', '--action', 'cli.token', '--actor', 'admin-cli') as { entries: Array<{ actor: string, action: string }> }
  t.same(tokens.entries.map((e) => e.action), ['cli.token'], 'of one person and one action')
  const older = await run('audit', '--cursor', audit.next_cursor) as { entries: Array<{ action: string }> }
  t.same(older.entries.map((e) => e.action), ['cli.set-email', 'cli.create-user'])
  t.notOk(JSON.stringify(older).includes('frank'), 'a refused command leaves no entry')
})
