import t, { type Test } from 'tap'
import Database from 'better-sqlite3'
import { statSync } from 'node:fs'
import { join } from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import Fastify, { type FastifyInstance } from 'fastify'
import { databasePlugin } from '../app.js'
import type { DatabasePluginOptions } from '../plugins/core/database.js'
import domainEventsPlugin from '../plugins/core/domain-events.js'
import { TEST_DATABASE_URL } from './pg.js'

const autocheckpoint = (handle: Database.Database) => handle.pragma('wal_autocheckpoint', { simple: true })

async function until (t: Test, what: string, test: () => boolean): Promise<void> {
  for (let i = 0; i < 500 && !test(); i++) await sleep(10)
  t.ok(test(), what)
}

/** The database plugin (what the app registers) on a SQLite file whose handle the test keeps. */
async function onFile (t: Test, options: DatabasePluginOptions = {}): Promise<{ app: FastifyInstance, handle: Database.Database, path: string }> {
  const path = join(t.testdir({}), 'planning.db')
  const handle = new Database(path)
  t.teardown(() => handle.close())
  const app = await plugin(t, { database: handle, ...options })
  return { app, handle, path }
}

async function plugin (t: Test, options: DatabasePluginOptions): Promise<FastifyInstance> {
  const app = Fastify()
  await app.register(domainEventsPlugin)
  await app.register(databasePlugin, options)
  await app.ready()
  t.teardown(async () => { await app.close() })
  return app
}

t.test('SQLite files only', { skip: TEST_DATABASE_URL !== undefined && 'SQLite only' }, async (t) => {
  t.test('a worker checkpoints the WAL: the automatic checkpoint is off and the WAL stays bounded', async (t) => {
    const { app, handle, path } = await onFile(t, { sqliteCheckpoints: { pages: 100, idleMs: 50, pollMs: 5 } })
    const checkpointer = app.planningCheckpointer!
    t.equal(autocheckpoint(handle), 1000, 'automatic until the worker is up')
    await until(t, 'the worker is up', () => checkpointer.state === 'running')
    t.equal(autocheckpoint(handle), 0, 'then off on the server connection')
    const pageSize = handle.pragma('page_size', { simple: true }) as number
    // Commits on the server's connection in bursts of 20, each of a new page of its own and the
    // counter's page: 2,000 frames or more without a checkpoint.
    handle.exec('CREATE TABLE filler (bytes BLOB)')
    const fill = handle.prepare('INSERT INTO filler (bytes) VALUES (?)')
    const bump = handle.prepare('UPDATE change_counter SET value = value + 1 WHERE id = 1')
    const write = handle.transaction(() => { fill.run(Buffer.alloc(pageSize - 100, 1)); bump.run() })
    let largest = 0
    for (let i = 0; i < 1000; i++) {
      write()
      largest = Math.max(largest, statSync(`${path}-wal`).size)
      if (i % 20 === 0) await sleep(6)
    }
    t.ok(checkpointer.stats.runs > 0, `the worker checkpointed (${checkpointer.stats.runs} runs, ${checkpointer.stats.busy} busy)`)
    t.ok(checkpointer.stats.last!.checkpointed > 0, 'and copied frames into the database file')
    t.ok(checkpointer.stats.finished > 0, `and the server connection finished some (${checkpointer.stats.finished})`)
    // The worker asks the server connection to finish past 4 × 100 frames; it answers between bursts.
    t.ok(largest < 1000 * (pageSize + 24), `the WAL stayed below 1,000 frames (${Math.round(largest / (pageSize + 24))} at most)`)
    await until(t, 'a quiet WAL is checkpointed to its end', () => {
      const last = checkpointer.stats.last
      return last !== undefined && last.checkpointed === last.log
    })
    const [mine] = handle.pragma('wal_checkpoint(PASSIVE)') as Array<{ log: number, checkpointed: number }>
    t.equal(mine.checkpointed, mine.log, 'nothing left for the server connection to copy')
  })

  t.test('the worker ending turns the automatic checkpoint back on', async (t) => {
    const { app, handle } = await onFile(t)
    const checkpointer = app.planningCheckpointer!
    await until(t, 'the worker is up', () => checkpointer.state === 'running')
    t.equal(autocheckpoint(handle), 0)
    await checkpointer.worker.terminate()
    await until(t, 'seen as failed', () => checkpointer.state === 'failed')
    t.equal(autocheckpoint(handle), 1000, 'SQLite checkpoints again')
    t.equal(handle.prepare('UPDATE change_counter SET value = value + 1 WHERE id = 1').run().changes, 1, 'writes go on')
  })

  t.test('closing the app ends the worker and gives the handle its automatic checkpoint back', async (t) => {
    const path = join(t.testdir({}), 'planning.db')
    const handle = new Database(path)
    t.teardown(() => handle.close())
    const app = await plugin(t, { database: handle })
    const checkpointer = app.planningCheckpointer!
    await until(t, 'the worker is up', () => checkpointer.state === 'running')
    let exited = false
    checkpointer.worker.once('exit', () => { exited = true })
    await app.close()
    t.ok(exited, 'the worker has exited when close resolves')
    t.equal(checkpointer.state, 'stopped')
    t.equal(autocheckpoint(handle), 1000, 'the host\'s handle checkpoints by itself again')
  })

  t.test('no worker for :memory: or when turned off', async (t) => {
    t.equal((await plugin(t, { database: ':memory:' })).planningCheckpointer, undefined, ':memory:')
    const { app, handle } = await onFile(t, { sqliteCheckpoints: false })
    t.equal(app.planningCheckpointer, undefined, 'off')
    t.equal(autocheckpoint(handle), 1000, 'SQLite\'s own stays')
  })
})
