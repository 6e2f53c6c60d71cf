import t from 'tap'
import Database from 'better-sqlite3'
import Fastify from 'fastify'
import { join } from 'node:path'
import { buildApp } from '../app.js'
import { legacyMigrations } from '../db/engine/migrations/legacy-sqlite.js'
import { migrate, migrations } from '../db/engine/migrations/index.js'
import { sqliteKysely } from '../db/engine/sqlite.js'
import databasePlugin from '../plugins/core/database.js'
import domainEventsPlugin from '../plugins/core/domain-events.js'
import { TOKENS } from './helper.js'

t.test('the database plugin decorates, migrates, sets pragmas and closes what it opened', async (t) => {
  const path = join(t.testdir({}), 'nested', 'planning.db')
  const app = Fastify()
  await app.register(domainEventsPlugin)
  await app.register(databasePlugin, { database: path })
  await app.ready()
  t.ok(app.planningStore.boards, 'the store decorator holds the repositories')
  const names = await app.planningStore.db.selectFrom('kysely_migration' as never).select('name' as never).execute() as Array<{ name: string }>
  t.same(names.map((m) => m.name), Object.keys(migrations('sqlite')), 'every migration applied')
  await app.close()
  const db = new Database(path)
  t.equal(db.pragma('journal_mode', { simple: true }), 'wal')
  db.close()
})

t.test('pragmas of the embedded engine', async (t) => {
  const { db, handle } = sqliteKysely(':memory:')
  t.equal(handle.pragma('foreign_keys', { simple: true }), 1)
  t.equal(handle.pragma('synchronous', { simple: true }), 2, 'FULL: commits reach the disk before they are acknowledged')
  await migrate(db, 'sqlite')
  await db.destroy()
  t.equal(handle.open, false, 'closed with the Kysely instance that opened it')
})

t.test('migrations run once and refuse a newer schema', async (t) => {
  const { db } = sqliteKysely(':memory:')
  t.teardown(() => db.destroy())
  t.same(await migrate(db, 'sqlite'), Object.keys(migrations('sqlite')))
  t.same(await migrate(db, 'sqlite'), Object.keys(migrations('sqlite')), 'a second run changes nothing')
  await db.insertInto('kysely_migration' as never).values({ name: '999-future', timestamp: new Date().toISOString() } as never).execute()
  await t.rejects(migrate(db, 'sqlite'), /newer than this server/)
})

t.test('a migration numbered before one the database already ran is still applied', async (t) => {
  const handle = new Database(':memory:')
  const { db } = sqliteKysely(handle)
  t.teardown(() => db.destroy())
  await migrate(db, 'sqlite')
  // As if a development build had run 017 before 016 was merged in.
  handle.exec("DELETE FROM kysely_migration WHERE name = '016-host-sign-in'")
  handle.exec('ALTER TABLE connections DROP COLUMN oauth_client_id')
  handle.exec('ALTER TABLE connections DROP COLUMN oauth_client_secret')
  t.same((await migrate(db, 'sqlite')).sort(), Object.keys(migrations('sqlite')))
  const columns = handle.prepare("SELECT name FROM pragma_table_info('connections')").pluck().all()
  t.ok(columns.includes('oauth_client_secret'), 'the earlier migration ran')
})

t.test('SQLite: users and issues rebuilt so that ids are never reused (023), with what refers to them kept', async (t) => {
  const handle = new Database(':memory:')
  handle.pragma('foreign_keys = ON')
  const { db } = sqliteKysely(handle)
  t.teardown(() => db.destroy())
  await migrate(db, 'sqlite')
  // As the database was before 023: the tables as 001 made them, rows that refer to them.
  handle.exec("DELETE FROM kysely_migration WHERE name = '023-stable-ids'")
  for (const table of ['users', 'issues']) {
    const [definition] = handle.prepare('SELECT sql FROM sqlite_master WHERE name = ?').pluck().all(table) as string[]
    handle.pragma('foreign_keys = OFF')
    handle.exec(`CREATE TABLE ${table}_plain ${definition.replace(/^CREATE TABLE "?\w+"?/, '').replace(' AUTOINCREMENT', '')}`)
    handle.exec(`DROP TABLE ${table}; ALTER TABLE ${table}_plain RENAME TO ${table}`)
    handle.pragma('foreign_keys = ON')
  }
  handle.exec('CREATE UNIQUE INDEX users_login ON users (lower(login)); CREATE UNIQUE INDEX users_email ON users (lower(email))')
  handle.exec(`INSERT INTO users (id, login, created_at) VALUES (1, 'ann', 'x'), (2, 'ben', 'x');
    INSERT INTO repositories (id, owner, name, html_url) VALUES (9, 'o', 'r', '');
    INSERT INTO permissions (user_id, repo_id, level) VALUES (1, 9, 3), (2, 9, 1);
    INSERT INTO issues (id, repo_id, number, title, created_at) VALUES (1, 9, 1, 'one', 'x'), (2, 9, 2, 'two', 'x');
    INSERT INTO issue_labels (issue_id, name) VALUES (2, 'bug')`)
  t.same(await migrate(db, 'sqlite'), Object.keys(migrations('sqlite')))
  t.match(handle.prepare("SELECT sql FROM sqlite_master WHERE name = 'users'").pluck().get(), /id INTEGER PRIMARY KEY AUTOINCREMENT/)
  t.equal(handle.prepare('SELECT count(*) FROM permissions').pluck().get(), 2, 'permissions kept')
  t.equal(handle.prepare('SELECT count(*) FROM issue_labels').pluck().get(), 1, 'labels kept')
  t.same(handle.pragma('foreign_key_check'), [])
  t.equal(handle.pragma('foreign_keys', { simple: true }), 1, 'foreign keys on again')
  t.throws(() => handle.exec("INSERT INTO users (login, created_at) VALUES ('ANN', 'x')"), /UNIQUE/, 'the indexes made again')
  handle.exec('DELETE FROM users WHERE id = 2; DELETE FROM issues WHERE id = 2')
  t.equal(handle.prepare('SELECT count(*) FROM permissions').pluck().get(), 1, 'cascades still follow the table')
  t.equal(handle.prepare("INSERT INTO users (login, created_at) VALUES ('cy', 'x') RETURNING id").pluck().get(), 3, 'the deleted id is not given again')
  t.equal(handle.prepare("INSERT INTO issues (repo_id, number, title, created_at) VALUES (9, 3, 'three', 'x') RETURNING id").pluck().get(), 3)
})

t.test('a failing migration leaves the database as it was', async (t) => {
  const handle = new Database(':memory:')
  handle.exec('CREATE TABLE placements (id INTEGER PRIMARY KEY)')
  const { db } = sqliteKysely(handle)
  await t.rejects(migrate(db, 'sqlite'), /already exists/)
  const tables = handle.prepare("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'kysely%'").pluck().all()
  t.same(tables, ['placements'])
  handle.close()
})

t.test('a database file made by the first release migrates forward with nothing lost', async (t) => {
  const path = join(t.testdir({}), 'old.db')
  const old = new Database(path)
  old.pragma('foreign_keys = ON')
  legacyMigrations.forEach((sql, i) => { old.exec(sql); old.pragma(`user_version = ${i + 1}`) })
  // What the first release wrote: a user and token, permissions, a workspace, placements with a
  // prioritized issue, events, an epic, a dependency, a release report, a webhook with a delivery.
  const hash = (await import('../db/users.js')).hashToken(TOKENS.alice)
  old.exec(`
    INSERT INTO users (id, login, token_hash, created_at) VALUES (1, 'Alice', '${hash}', '2026-01-01T00:00:00.000Z');
    INSERT INTO repositories (id, owner, name) VALUES (10, 'acme', 'api');
    INSERT INTO permissions (user_id, repo_id, level) VALUES (1, 10, 3);
    INSERT INTO issues (id, repo_id, number, title, state, estimate, is_epic, created_at) VALUES
      (1, 10, 1, 'one', 'open', 3, 1, 'x'), (2, 10, 2, 'two', 'open', NULL, 0, 'x'), (3, 10, 3, 'three', 'closed', NULL, 0, 'x');
    INSERT INTO workspaces (seq, id, name, description, created_at) VALUES (1, 'aaaaaaaaaaaaaaaaaaaaaaa1', 'Eng', NULL, '2026-01-01T00:00:00.000Z');
    INSERT INTO workspace_repositories (workspace_id, repo_id) VALUES ('aaaaaaaaaaaaaaaaaaaaaaa1', 10);
    INSERT INTO pipelines (id, workspace_id, name, sort_order) VALUES ('p1', 'aaaaaaaaaaaaaaaaaaaaaaa1', 'New', 0), ('p2', 'aaaaaaaaaaaaaaaaaaaaaaa1', 'Done', 1);
    INSERT INTO placements (issue_id, workspace_id, pipeline_id, repo_id, number, is_open, position) VALUES
      (1, 'aaaaaaaaaaaaaaaaaaaaaaa1', 'p1', 10, 1, 1, NULL), (2, 'aaaaaaaaaaaaaaaaaaaaaaa1', 'p1', 10, 2, 1, 4294967296),
      (3, 'aaaaaaaaaaaaaaaaaaaaaaa1', 'p2', 10, 3, 0, NULL);
    INSERT INTO issue_events (issue_id, user_id, type, created_at, from_estimate, to_estimate) VALUES (1, 1, 'estimateIssue', '2026-01-02T00:00:00.000Z', NULL, 3);
    INSERT INTO epic_issues (epic_id, issue_id) VALUES (1, 2);
    INSERT INTO dependencies (blocking_id, blocked_id, created_at) VALUES (2, 3, 'x');
    INSERT INTO release_reports (id, title, start_date, desired_end_date, created_at) VALUES ('r1', 'R', '2026-01-01T00:00:00.000Z', '2026-02-01T00:00:00.000Z', 'x');
    INSERT INTO release_report_repositories (release_id, repo_id) VALUES ('r1', 10);
    INSERT INTO webhooks (id, repo_id, url, created_at) VALUES ('w1', 10, 'http://127.0.0.1:9/x', '2026-01-01T00:00:00.000Z');
    INSERT INTO webhook_deliveries (id, webhook_id, event_type, body, next_attempt_at, created_at) VALUES ('d1', 'w1', 'estimate_set', 'a=b', 0, 'x');`)
  old.close()

  const app = await buildApp({ database: path, webhooks: { worker: false } })
  t.teardown(() => app.close())
  const get = async (url: string) => (await app.inject({ url, headers: { 'x-authentication-token': TOKENS.alice } })).json()
  const board = await get('/p1/repositories/10/board')
  t.same(board.pipelines[0].issues, [
    { issue_number: 2, is_epic: false, position: 4294967296 },
    { issue_number: 1, is_epic: true, estimate: { value: 3 } }
  ], 'board order kept: the prioritized issue first')
  t.same(board.pipelines[1].issues, [], 'the closed issue stays off the board')
  t.same((await get('/p1/repositories/10/issues/1/events')).length, 1)
  t.same((await get('/p1/repositories/10/epics/1')).issues.map((i: { issue_number: number }) => i.issue_number), [2])
  t.same(await get('/p1/repositories/10/dependencies'), { dependencies: [{ blocking: { repo_id: 10, issue_number: 2 }, blocked: { repo_id: 10, issue_number: 3 } }] })
  t.match(await get('/p1/reports/release/r1'), { title: 'R', repositories: [10] })
  t.match(await get('/p1/webhooks/w1/deliveries'), [{ id: 'd1', status: 'pending' }])
  const moved = await app.inject({ method: 'POST', url: '/p1/repositories/10/issues/1/moves', headers: { 'x-authentication-token': TOKENS.alice }, payload: { pipeline_id: 'p1', position: 'top' } })
  t.equal(moved.statusCode, 200, 'and it takes writes')
  t.same((await get('/p1/repositories/10/board')).pipelines[0].issues.map((i: { issue_number: number }) => i.issue_number), [1, 2])
  const created = await app.inject({ method: 'POST', url: '/p1/repositories/10/webhooks', headers: { 'x-authentication-token': TOKENS.alice }, payload: { url: 'https://x.example.com/' } })
  t.equal(created.statusCode, 201)
  t.same((await get('/p1/repositories/10/webhooks')).map((w: { id: string }) => w.id)[0], 'w1', 'old webhooks keep their place')
})
