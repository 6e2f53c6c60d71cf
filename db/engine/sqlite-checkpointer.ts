import { createRequire } from 'node:module'
import { resolve } from 'node:path'
import { Worker } from 'node:worker_threads'
import { embeddedBinding, type SqliteHandle } from './sqlite.js'

export interface CheckpointerOptions {
  /** checkpoint once this many WAL frames (pages) wait to be copied (default 1000, SQLite's own) */
  pages?: number
  /** and whatever waits once this long passed since the last checkpoint (default 1000 ms) */
  idleMs?: number
  /** how often the worker looks at the WAL-index header (default 100 ms) */
  pollMs?: number
  /** what to say when it cannot run or stops */
  log?: { info: (obj: object, msg: string) => void, warn: (obj: object, msg: string) => void }
}

export interface CheckpointStats {
  /** checkpoints run by the worker */
  runs: number
  /** of which SQLite answered busy (a reader or another checkpoint in the way: normal) */
  busy: number
  /** times the server's connection copied the last frames so that the WAL could start over */
  finished: number
  /** the last run's answer: frames in the WAL, frames copied so far */
  last: { log: number, checkpointed: number } | undefined
}

export interface Checkpointer {
  /**
   * `starting` (SQLite's automatic checkpoint still on), `running` (off; the worker checkpoints),
   * `stopped` (closed), `failed` (the worker ended on its own: automatic checkpoint back on)
   */
  readonly state: 'starting' | 'running' | 'stopped' | 'failed'
  readonly stats: CheckpointStats
  /** the worker itself (tests end it to see the fallback) */
  readonly worker: Worker
  /** stops the worker (it closes its connection) and turns the automatic checkpoint back on */
  close: () => Promise<void>
}

// The worker, as CommonJS source run with `eval`: it needs no loader (tsx, a build) to start, only
// better-sqlite3, required by the path the main thread resolved. It shares the main thread's copy of
// the addon, so both connections use one SQLite library and its file locks (two copies of SQLite on
// one file in one process would release each other's POSIX locks).
const WORKER = `
const { parentPort, workerData } = require('node:worker_threads')
const { closeSync, openSync, readSync } = require('node:fs')
const Database = require(workerData.module)
const { file, pages, idleMs, pollMs, finishAt } = workerData
const db = new Database(file, { fileMustExist: true })
// FULL: the checkpoint syncs the WAL before copying and the database file before it lets the WAL restart.
db.pragma('synchronous = FULL')
const checkpoint = db.prepare('PRAGMA wal_checkpoint(PASSIVE)')
const header = Buffer.alloc(100)
const words = new Uint32Array(header.buffer, header.byteOffset, 25)
let fd
// The WAL-index header: mxFrame (frames in the WAL), and nBackfill (frames copied) after the two
// header copies. Read without a lock: a torn read only moves one checkpoint by one poll.
function walIndex () {
  try {
    fd ??= openSync(file + '-shm', 'r')
    if (readSync(fd, header, 0, 100, 0) !== 100) return undefined
  } catch {
    return undefined
  }
  return { frames: words[4], copied: words[24] }
}
let last = Date.now()
let previous = 0
// SQLite starts the WAL over only at a write that begins with every frame copied: after a
// checkpoint that found new commits behind it, a few more are tried at once, 1 ms apart.
let again = 0
let timer
function tick () {
  const wal = walIndex()
  const now = Date.now()
  if (wal !== undefined && wal.frames < previous) {
    again = 0
  }
  previous = wal?.frames ?? 0
  const waiting = wal === undefined ? 1 : wal.frames - wal.copied
  const due = wal === undefined ? now - last >= idleMs : waiting > 0 && (waiting >= pages || again > 0 || now - last >= idleMs)
  if (due) {
    last = now
    let answer
    try {
      answer = checkpoint.get()
    } catch (err) {
      if (err.code !== 'SQLITE_BUSY' && err.code !== 'SQLITE_LOCKED') throw err
      answer = { busy: 1, log: -1, checkpointed: -1 }
    }
    again = again > 0 ? again - 1 : 5
    parentPort.postMessage({ type: 'checkpoint', ...answer })
  }
  // Commits follow each other too closely for that (a steady stream of writes): the server's
  // connection copies the few frames left, between two of its writes, so the next one starts over.
  // Asked again each poll until the WAL starts over (its own checkpoint may find this one busy).
  if (wal !== undefined && wal.frames >= finishAt) {
    again = 0
    parentPort.postMessage({ type: 'finish' })
  }
  timer = setTimeout(tick, again > 0 ? 1 : pollMs)
}
timer = setTimeout(tick, pollMs)
parentPort.on('message', (message) => {
  if (message !== 'stop') return
  clearTimeout(timer)
  if (fd !== undefined) closeSync(fd)
  db.close()
  parentPort.close()
})
parentPort.postMessage({ type: 'ready' })
`

/**
 * Takes WAL checkpoints off the event loop: SQLite's automatic checkpoint (every 1,000 WAL pages)
 * runs inside the commit that crosses the mark, for 2-18 ms. Here a worker thread with a connection
 * of its own runs `PRAGMA wal_checkpoint(PASSIVE)` (which waits for no reader or writer) once 1,000
 * frames wait or a second passed with any, and the handle's automatic checkpoint is turned off once
 * the worker is up, and back on when the worker ends or fails. Undefined where no worker can run:
 * `:memory:` or a `file:` URI (nothing to do, or no path to open), the single executable (the
 * addon was loaded from a file since removed and there are no node_modules): the automatic
 * checkpoint stays there.
 */
export function startCheckpointer (handle: SqliteHandle, options: CheckpointerOptions = {}): Checkpointer | undefined {
  if (handle.memory || handle.name.startsWith('file:') || handle.name === '') return undefined
  if (handle.pragma('journal_mode', { simple: true }) !== 'wal') return undefined
  let module: string
  try {
    if (embeddedBinding()) throw new Error('the better-sqlite3 addon is embedded')
    module = createRequire(import.meta.url).resolve('better-sqlite3')
  } catch (err) {
    const reason = (err as Error).message
    options.log?.info({ reason }, 'SQLite checkpoints stay automatic (in the commit that crosses 1,000 WAL pages): no worker thread can load better-sqlite3 here')
    return undefined
  }
  const pages = options.pages ?? 1000
  const automatic = handle.pragma('wal_autocheckpoint', { simple: true }) as number
  const worker = new Worker(WORKER, {
    eval: true,
    execArgv: [],
    workerData: { module, file: resolve(handle.name), pages, finishAt: 4 * pages, idleMs: options.idleMs ?? 1000, pollMs: options.pollMs ?? 100 },
    resourceLimits: { maxOldGenerationSizeMb: 16, maxYoungGenerationSizeMb: 4 }
  })
  worker.unref()
  let state: Checkpointer['state'] = 'starting'
  const stats: CheckpointStats = { runs: 0, busy: 0, finished: 0, last: undefined }
  let finishing = false
  const automaticBack = (): void => {
    if (handle.open) handle.pragma(`wal_autocheckpoint = ${automatic}`)
  }
  worker.on('message', (message: { type: string, busy?: number, log?: number, checkpointed?: number }) => {
    if (message.type === 'ready') {
      if (state !== 'starting' || !handle.open) return
      handle.pragma('wal_autocheckpoint = 0')
      state = 'running'
    } else if (message.type === 'finish') {
      if (finishing) return
      finishing = true
      setImmediate(() => {
        finishing = false
        if (state !== 'running' || !handle.open) return
        try {
          handle.pragma('wal_checkpoint(PASSIVE)')
          stats.finished++
        } catch {}
      })
    } else if (message.type === 'checkpoint') {
      stats.runs++
      if (message.busy === 1) stats.busy++
      if (message.log! >= 0) stats.last = { log: message.log!, checkpointed: message.checkpointed! }
    }
  })
  const failed = (err?: unknown): void => {
    if (state === 'stopped' || state === 'failed') return
    state = 'failed'
    automaticBack()
    options.log?.warn({ err }, 'the SQLite checkpoint worker ended: checkpoints are automatic again, in the commit that crosses 1,000 WAL pages')
  }
  worker.on('error', failed)
  worker.on('exit', (code) => { failed(new Error(`exit code ${code}`)) })
  const exited = new Promise<void>((resolve) => worker.once('exit', () => { resolve() }))
  return {
    get state () { return state },
    stats,
    worker,
    async close () {
      if (state !== 'failed') state = 'stopped'
      automaticBack()
      worker.postMessage('stop')
      const timer = setTimeout(() => { worker.terminate().catch(() => {}) }, 2000)
      await exited
      clearTimeout(timer)
    }
  }
}
