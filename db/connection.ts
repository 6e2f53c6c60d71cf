import Database from 'better-sqlite3'
import { mkdirSync } from 'node:fs'
import { dirname } from 'node:path'
import { migrations } from './migrations.js'

export type Db = Database.Database

let nativeBinding: object | undefined

/**
 * Where the better-sqlite3 addon comes from when it is not in node_modules: the single
 * executable loads it from its embedded asset and hands it over here before opening anything.
 */
export function useNativeBinding (binding: object): void {
  nativeBinding = binding
}

/** Opens (creating the folder if needed) a database file or `:memory:` with our pragmas set. */
export function openDatabase (path: string): Db {
  if (path !== ':memory:' && !path.startsWith('file:')) mkdirSync(dirname(path), { recursive: true })
  const db = new Database(path, nativeBinding === undefined ? {} : { nativeBinding: nativeBinding as unknown as string })
  configure(db)
  return db
}

/** Pragmas every connection needs, also applied to handles that a host app passes in. */
export function configure (db: Db): void {
  db.pragma('journal_mode = WAL')
  // FULL: a commit is on disk before it is acknowledged, power loss included (webhook outbox too).
  db.pragma('synchronous = FULL')
  db.pragma('foreign_keys = ON')
  db.pragma('busy_timeout = 5000')
}

/** Applies the migrations newer than the file's `user_version`, each in its own transaction. */
export function migrate (db: Db): number {
  const current = db.pragma('user_version', { simple: true }) as number
  if (current > migrations.length) {
    throw new Error(`database schema version ${current} is newer than this server (${migrations.length})`)
  }
  for (let version = current + 1; version <= migrations.length; version++) {
    db.transaction(() => {
      db.exec(migrations[version - 1])
      db.pragma(`user_version = ${version}`)
    })()
  }
  return migrations.length
}

/** Wraps `fn` in a transaction (nested calls become savepoints); typed as a plain function. */
export function transactional<A extends unknown[], R> (db: Db, fn: (...args: A) => R): (...args: A) => R {
  return db.transaction(fn)
}
