import t from 'tap'
import Database from 'better-sqlite3'
import { spawnSync } from 'node:child_process'
import { createRequire } from 'node:module'
import { join } from 'node:path'
import { migrate } from '../db/engine/migrations/index.js'
import { sqliteKysely } from '../db/engine/sqlite.js'
import { sqliteVersionReader } from '../db/engine/sqlite-version.js'

async function migrated (path: string) {
  const { db, handle } = sqliteKysely(path)
  await migrate(db, 'sqlite')
  return { db, handle }
}

const bump = (handle: Database.Database) => handle.prepare('UPDATE change_counter SET value = value + 1 WHERE id = 1').run()

t.test('the counter follows writes through the same handle, another handle and another process', async (t) => {
  const path = join(t.testdir({}), 'planning.db')
  const { db, handle } = await migrated(path)
  t.teardown(() => db.destroy())
  const reader = sqliteVersionReader(handle)
  t.teardown(() => reader.close())
  const start = reader.read()
  t.equal(reader.read(), start, 'unchanged while nothing is written')
  t.equal(reader.shared, true, 'unchanged reads look at the shared header, not at the table')
  bump(handle)
  t.equal(reader.read(), start + 1, 'a write through the same handle')
  const other = new Database(path)
  other.pragma('journal_mode = WAL')
  bump(other)
  t.equal(reader.read(), start + 2, 'a write through another connection')
  other.close()
  const script = `const D = require(${JSON.stringify(createRequire(import.meta.url).resolve('better-sqlite3'))}); const d = new D(${JSON.stringify(path)}); d.prepare('UPDATE change_counter SET value = value + 1 WHERE id = 1').run(); d.close()`
  t.equal(spawnSync(process.execPath, ['-e', script]).status, 0)
  t.equal(reader.read(), start + 3, 'a write by another process (which closed the file after it)')
  handle.pragma('wal_checkpoint(TRUNCATE)')
  bump(handle)
  t.equal(reader.read(), start + 4, 'a write after the WAL was checkpointed and restarted')
})

// No shared header to look at: `:memory:`, and exclusive locking (its WAL index lives in the process).
for (const [name, exclusive] of [['in memory', false], ['under exclusive locking', true]] as const) {
  t.test(`${name}, the reader queries every time`, async (t) => {
    const { db, handle } = await migrated(exclusive ? join(t.testdir({}), 'planning.db') : ':memory:')
    t.teardown(() => db.destroy())
    if (exclusive) handle.pragma('locking_mode = EXCLUSIVE')
    const reader = sqliteVersionReader(handle)
    t.equal(reader.shared, false)
    const start = reader.read()
    bump(handle)
    t.equal(reader.read(), start + 1)
    reader.close()
  })
}
