import { sql, type Kysely, type Migration } from 'kysely'
import type { Engine } from '../engine.js'

/** Tables whose ids are named where no foreign key follows them (sprint_events.user_id, audit targets, node ids). */
const TABLES = ['users', 'issues'] as const

/**
 * A deleted row's id is never given to a new row. PostgreSQL's identity columns never reuse one;
 * SQLite's `INTEGER PRIMARY KEY` takes the largest id plus one, so deleting the newest user gave
 * the next user its id (and what still named that id credited the new person). There each table is
 * rebuilt `AUTOINCREMENT` from its definition as the database holds it (SQLite's procedure; the
 * migrations run this one with foreign keys off, db/engine/migrations/index.ts), its indexes made
 * again, and every foreign key checked before it commits.
 */
export function stableIdsMigration (engine: Engine): Migration {
  return {
    async up (db: Kysely<unknown>) {
      if (engine !== 'sqlite') return
      for (const table of TABLES) await rebuild(db, table)
      const { rows } = await sql<{ table: string }>`PRAGMA foreign_key_check`.execute(db)
      if (rows.length > 0) throw new Error(`023-stable-ids: rows refer to missing ones in ${[...new Set(rows.map((r) => r.table))].join(', ')}`)
    }
  }
}

async function rebuild (db: Kysely<unknown>, table: string): Promise<void> {
  const { rows } = await sql<{ type: string, sql: string | null }>`SELECT type, sql FROM sqlite_master WHERE tbl_name = ${table}`.execute(db)
  const definition = rows.find((r) => r.type === 'table')?.sql
  if (definition === undefined || definition === null || /AUTOINCREMENT/i.test(definition)) return
  const next = `${table}_autoincrement`
  const keyed = definition.replace(/^CREATE TABLE "?\w+"?/, `CREATE TABLE ${next}`).replace(/\bid INTEGER PRIMARY KEY\b/, 'id INTEGER PRIMARY KEY AUTOINCREMENT')
  if (!keyed.includes('AUTOINCREMENT')) throw new Error(`023-stable-ids: ${table} has no integer id`)
  await sql.raw(keyed).execute(db)
  await sql.raw(`INSERT INTO ${next} SELECT * FROM ${table}`).execute(db)
  await sql.raw(`DROP TABLE ${table}`).execute(db)
  await sql.raw(`ALTER TABLE ${next} RENAME TO ${table}`).execute(db)
  // The indexes went with the old table (the unique ones of the definition came back with it).
  for (const index of rows.filter((r) => r.type === 'index' && r.sql !== null)) await sql.raw(index.sql!).execute(db)
}
