import t from 'tap'
import Database from 'better-sqlite3'
import Fastify from 'fastify'
import { join } from 'node:path'
import { migrate, openDatabase } from '../db/connection.js'
import { migrations } from '../db/migrations.js'
import databasePlugin from '../plugins/database.js'

t.test('the database plugin decorates, migrates, sets pragmas and closes what it opened', async (t) => {
  const path = join(t.testdir({}), 'nested', 'planning.db')
  const app = Fastify()
  await app.register(databasePlugin, { database: path })
  await app.ready()
  const db = app.planningDb
  t.equal(db.pragma('user_version', { simple: true }), migrations.length, 'every migration applied')
  t.equal(db.pragma('journal_mode', { simple: true }), 'wal')
  t.equal(db.pragma('foreign_keys', { simple: true }), 1)
  t.equal(db.pragma('synchronous', { simple: true }), 2, 'FULL: commits reach the disk before they are acknowledged')
  await app.close()
  t.equal(db.open, false, 'closed in onClose')
})

t.test('migrations run once and refuse a newer schema', async (t) => {
  const db = openDatabase(':memory:')
  t.equal(migrate(db), migrations.length)
  t.equal(migrate(db), migrations.length, 'a second run changes nothing')
  db.pragma(`user_version = ${migrations.length + 1}`)
  t.throws(() => migrate(db), /newer than this server/)
  db.close()
})

t.test('a failing migration leaves the database as it was', async (t) => {
  const db = new Database(':memory:')
  db.exec('CREATE TABLE users (id INTEGER PRIMARY KEY)')
  t.throws(() => migrate(db), /already exists/)
  t.equal(db.pragma('user_version', { simple: true }), 0)
  t.same(db.prepare("SELECT name FROM sqlite_master WHERE type = 'table'").pluck().all(), ['users'])
  db.close()
})

t.test('migration 6 keeps existing dependencies, in creation order', async (t) => {
  const db = new Database(':memory:')
  db.pragma('foreign_keys = ON')
  migrations.slice(0, 5).forEach((sql, i) => { db.exec(sql); db.pragma(`user_version = ${i + 1}`) })
  db.exec(`INSERT INTO repositories (id, owner, name) VALUES (1, 'o', 'r');
    INSERT INTO issues (id, repo_id, number, title, created_at) VALUES (1, 1, 1, 'a', 'x'), (2, 1, 2, 'b', 'x'), (3, 1, 3, 'c', 'x');
    INSERT INTO dependencies (blocking_id, blocked_id, created_at) VALUES (2, 3, '2026-01-02T00:00:00.000Z'), (1, 2, '2026-01-01T00:00:00.000Z');`)
  migrate(db)
  t.same(db.prepare('SELECT blocking_id, blocked_id FROM dependencies ORDER BY seq').all(), [
    { blocking_id: 1, blocked_id: 2 }, { blocking_id: 2, blocked_id: 3 }
  ])
  t.same(db.pragma('foreign_key_check'), [])
  db.close()
})
