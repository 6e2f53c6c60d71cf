import type Database from 'better-sqlite3'
import { closeSync, openSync, readSync } from 'node:fs'
import { resolve } from 'node:path'
import type { SqliteHandle } from './sqlite.js'

/** The two copies of the WAL-index header at the start of the `-shm` file (docs/development.md, "Benchmarks"). */
const HEADER = 96
const COPY = 48
/** `iVersion` of the WAL-index format every SQLite since 3.7.0 writes. */
const WAL_INDEX_VERSION = 3007000

export interface VersionReader {
  /** the change counter as the database holds it now */
  read: () => number
  /** whether unchanged reads are answered from the WAL-index header (false: every read queries) */
  shared: boolean
  close: () => void
}

/**
 * The change counter read straight from the handle: what every cached read compares with.
 *
 * Reading it through SQLite takes a read transaction, two file-lock system calls and a statement
 * step on every request. On a WAL file the reader first looks at the WAL-index header in the
 * `-shm` file, which SQLite rewrites (its `iChange` counter moves) on every commit, by any process:
 * while both copies of the header are the bytes seen at the last read, nothing was committed since
 * and the counter read then still holds. Anything unexpected (no `-shm` file, another format, a
 * header being written) falls back to the query.
 */
export function sqliteVersionReader (handle: SqliteHandle): VersionReader {
  let statement: Database.Statement | undefined
  const query = (): number => {
    statement ??= handle.prepare('SELECT value FROM change_counter WHERE id = 1').pluck()
    return Number(statement.get() ?? 0)
  }
  const shm = sharedMemory(handle)
  if (shm === undefined) return { read: query, shared: false, close () {} }
  const now = Buffer.alloc(HEADER)
  // 32-bit words, compared in JavaScript: cheaper than two calls into Buffer.compare.
  const words = new Uint32Array(now.buffer, now.byteOffset, HEADER / 4)
  const seen = new Uint32Array(COPY / 4)
  let version: number | undefined
  const same = (): boolean => {
    for (let i = 0; i < seen.length; i++) if (words[i] !== seen[i]) return false
    return true
  }
  const whole = (): boolean => {
    if (!shm.read(now) || words[0] !== WAL_INDEX_VERSION || now[12] !== 1) return false
    for (let i = 0; i < seen.length; i++) if (words[i] !== words[i + seen.length]) return false
    return true
  }
  return {
    read () {
      const valid = whole()
      if (valid && version !== undefined && same()) return version
      // The header is read before the counter: a commit in between only makes the next read query again.
      const value = query()
      version = valid ? value : undefined
      if (valid) seen.set(words.subarray(0, seen.length))
      return value
    },
    get shared () { return shm.usable },
    close () { shm.close() }
  }
}

/** The handle's `-shm` file, opened once SQLite made it, when the file is in WAL mode with normal locking. */
function sharedMemory (handle: SqliteHandle): { read: (into: Buffer) => boolean, readonly usable: boolean, close: () => void } | undefined {
  if (handle.memory || handle.name.startsWith('file:')) return undefined
  if (handle.pragma('journal_mode', { simple: true }) !== 'wal') return undefined
  if (handle.pragma('locking_mode', { simple: true }) !== 'normal') return undefined
  const path = `${resolve(handle.name)}-shm`
  let fd: number | undefined
  let failed = false
  return {
    read (into) {
      if (failed) return false
      try {
        fd ??= openSync(path, 'r')
        return readSync(fd, into, 0, HEADER, 0) === HEADER
      } catch {
        failed = true
        return false
      }
    },
    get usable () { return !failed },
    close () {
      if (fd !== undefined) closeSync(fd)
      fd = undefined
    }
  }
}
