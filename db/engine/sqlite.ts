import Database from 'better-sqlite3'
import { Kysely, SqliteDialect, type SqliteDatabase, type SqliteStatement } from 'kysely'
import { mkdirSync } from 'node:fs'
import { dirname } from 'node:path'
import type { Database as Tables } from '../schema.js'

export type SqliteHandle = Database.Database

let nativeBinding: object | undefined

/**
 * Where the better-sqlite3 addon comes from when it is not in node_modules: the single
 * executable loads it from its embedded asset and hands it over here before opening anything.
 */
export function useNativeBinding (binding: object): void {
  nativeBinding = binding
}

/** Whether the addon came through `useNativeBinding` (the single executable), not from node_modules. */
export function embeddedBinding (): boolean {
  return nativeBinding !== undefined
}

/** Opens (creating the folder if needed) a database file or `:memory:` with our pragmas set. */
export function openSqliteFile (path: string): SqliteHandle {
  if (path !== ':memory:' && !path.startsWith('file:')) mkdirSync(dirname(path), { recursive: true })
  const db = new Database(path, nativeBinding === undefined ? {} : { nativeBinding: nativeBinding as unknown as string })
  configure(db)
  return db
}

/** Pragmas every connection needs, also applied to handles that a host app passes in. */
export function configure (db: SqliteHandle): void {
  db.pragma('journal_mode = WAL')
  // FULL: a commit is on disk before it is acknowledged, power loss included (webhook outbox too).
  db.pragma('synchronous = FULL')
  db.pragma('foreign_keys = ON')
  db.pragma('busy_timeout = 5000')
}

/**
 * The handle as Kysely's SQLite dialect sees it. Prepared statements are kept by their SQL text
 * (the queries are few and fixed), and transactions begin IMMEDIATE: a writer takes the write lock
 * at once and waits on the busy timeout, so a second process on the file (the admin CLI, another
 * server) never turns a write into an error half-way.
 */
function dialectHandle (db: SqliteHandle, owned: boolean): SqliteDatabase {
  const statements = new Map<string, SqliteStatement>()
  return {
    prepare (text: string): SqliteStatement {
      let statement = statements.get(text)
      if (statement === undefined) {
        statement = db.prepare(text === 'begin' ? 'begin immediate' : text) as unknown as SqliteStatement
        if (statements.size >= 2000) statements.clear()
        statements.set(text, statement)
      }
      return statement
    },
    close () {
      if (owned) db.close()
    }
  }
}

/**
 * Kysely over a SQLite file (a path, `:memory:`) or over a better-sqlite3 handle a host app owns
 * (then left open on destroy).
 */
export function sqliteKysely (database: SqliteHandle | string): { db: Kysely<Tables>, handle: SqliteHandle } {
  const owned = typeof database === 'string'
  const handle = typeof database === 'string' ? openSqliteFile(database) : database
  if (!owned) configure(handle)
  return { db: new Kysely<Tables>({ dialect: new SqliteDialect({ database: dialectHandle(handle, owned) }) }), handle }
}
