import type { Kysely } from 'kysely'
import type { Test } from 'tap'
import { openSqliteFile, sqliteKysely } from '../db/engine/sqlite.js'
import { postgresKysely } from '../db/engine/postgres.js'
import type { Database } from '../db/schema.js'
import { build, type App } from './helper.js'
import { TEST_DATABASE_URL, testSchema } from './pg.js'
import type { BuildOptions } from '../app.js'

/**
 * An app on the test fixture plus a second handle on its database, for writing hand-made
 * histories (closes, estimates, moves at chosen times) that the API records at the real time.
 */
export async function buildWithHistory (t: Test, options: BuildOptions & { fixture?: unknown } = {}): Promise<{ app: App, db: Kysely<Database> }> {
  if (TEST_DATABASE_URL !== undefined) {
    const { schema, drop } = await testSchema(TEST_DATABASE_URL)
    const app = await build(t, { ...options, databaseUrl: TEST_DATABASE_URL, databaseSchema: schema, databasePoolMax: 4 })
    const db = postgresKysely({ url: TEST_DATABASE_URL, schema, poolMax: 2 })
    t.teardown(async () => {
      await db.destroy()
      await drop()
    })
    return { app, db }
  }
  const handle = openSqliteFile(typeof options.database === 'string' ? options.database : ':memory:')
  const app = await build(t, { ...options, database: handle })
  const { db } = sqliteKysely(handle)
  return { app, db }
}

export async function issueId (db: Kysely<Database>, repoId: number, number: number): Promise<number> {
  const row = await db.selectFrom('issues').select('id').where('repo_id', '=', repoId).where('number', '=', number).executeTakeFirstOrThrow()
  return Number(row.id)
}

/** Closes (or reopens) an issue at a chosen time, as the issue host would have. */
export async function setState (db: Kysely<Database>, repoId: number, number: number, state: 'open' | 'closed', at: string): Promise<void> {
  const id = await issueId(db, repoId, number)
  await db.updateTable('issues').set({ state }).where('id', '=', id).execute()
  await db.updateTable('placements').set({ is_open: state === 'open' ? 1 : 0 }).where('issue_id', '=', id).execute()
  await db.insertInto('issue_states').values({ issue_id: id, state, at }).execute()
}

/** Sets an estimate at a chosen time, with its event. */
export async function estimate (db: Kysely<Database>, repoId: number, number: number, value: number | null, at: string): Promise<void> {
  const id = await issueId(db, repoId, number)
  const before = await db.selectFrom('issues').select('estimate').where('id', '=', id).executeTakeFirstOrThrow()
  await db.updateTable('issues').set({ estimate: value }).where('id', '=', id).execute()
  await db.insertInto('issue_events').values({
    issue_id: id, user_id: 1, type: 'estimateIssue', created_at: at, from_estimate: before.estimate, to_estimate: value, from_pipeline: null, to_pipeline: null, workspace_id: null, version: 0
  }).execute()
}

/** Records a move into a pipeline (by name) at a chosen time. */
export async function moved (db: Kysely<Database>, repoId: number, number: number, workspaceId: string, to: string, at: string): Promise<void> {
  await db.insertInto('issue_events').values({
    issue_id: await issueId(db, repoId, number), user_id: 1, type: 'transferIssue', created_at: at, from_estimate: null, to_estimate: null, from_pipeline: null, to_pipeline: to, workspace_id: workspaceId, version: 0
  }).execute()
}
