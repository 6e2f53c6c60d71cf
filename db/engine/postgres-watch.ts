import { randomUUID } from 'node:crypto'
import pg from 'pg'
import { clientConfig, type PostgresOptions } from './postgres.js'
import { parseReach, type CommitFence } from './transaction.js'

export interface WatchTimings {
  /** how often the instance renews its place on the list and confirms it hears every change */
  heartbeatMs: number
  /** how long after a confirmation was sent the instance answers from the counter it heard */
  trustMs: number
  /** the longest a write waits for a listed instance that does not say it saw the write (≥ trustMs) */
  fenceMs: number
  /** a listed instance that has not renewed for this long is taken off the list */
  lapseMs: number
  /** the wait before connecting again once the connection is lost */
  retryMs: number
}

const DEFAULTS: WatchTimings = { heartbeatMs: 250, trustMs: 1000, fenceMs: 1500, lapseMs: 3000, retryMs: 1000 }

export interface WatchStats {
  /** changes heard from other writes' commits */
  heard: number
  /** writes that stopped waiting for an instance at fenceMs */
  fenceTimeouts: number
}

/**
 * Told what each write reached, heard just before its version (see `writeTransaction`), and when
 * the counter was set back (a restore, a failover that lost commits): what was heard before then
 * names versions that other writes will take again.
 */
export interface ReachListener {
  reached: (version: number, repositories: readonly number[], boardRows: readonly number[] | undefined) => void
  setBack: () => void
}

export interface CounterWatch extends CommitFence {
  /** A value of the counter read by a query: what was heard is at least that. */
  observed: (version: number) => void
  /** Connects and joins (once the app has started: an app that fails to start leaves nothing open). */
  start: () => void
  /** The counter when this instance may answer from it without asking PostgreSQL; else undefined. */
  trusted: () => number | undefined
  stats: WatchStats
  close: () => Promise<void>
}

interface Waiter { version: number, others: readonly string[], timer: NodeJS.Timeout, resolve: () => void }

const ACK = /^([0-9a-f-]{36}) (\d{1,15})$/
/** What a leaving instance says it heard: more than any write will ever wait for. */
const GONE = 999_999_999_999_999

// One statement each, so none leaves half a change. Each locks listener rows before the counter's
// row (the CTE is read in the counter row's WHERE, so it runs first): no deadlock between them.
const JOIN = `WITH joined AS (
    INSERT INTO counter_listeners (id, renewed_at, pid) VALUES ($1, now(), pg_backend_pid())
    ON CONFLICT (id) DO UPDATE SET renewed_at = now(), pid = pg_backend_pid() RETURNING id)
  UPDATE change_counter SET listeners = array_append(array_remove(listeners, $1::text), $1::text)
  WHERE id = 1 AND EXISTS (SELECT 1 FROM joined) RETURNING value`
// Also says whether this session is still the one listening on the counter's channel: behind a
// pooler that hands each statement another session, it would not be, and nothing heard counts.
const RENEW = `UPDATE counter_listeners SET renewed_at = now() WHERE id = $1
  RETURNING pg_backend_pid() AS pid, $3 IN (SELECT pg_listening_channels()) AS listening,
    'change_counter'::regclass::oid::text AS relid,
    (SELECT count(*) FROM counter_listeners WHERE renewed_at < now() - $2::interval) AS lapsed`
const CLEAN_UP = `WITH gone AS (DELETE FROM counter_listeners WHERE renewed_at < now() - $1::interval RETURNING id, pid),
    ids AS (SELECT array_agg(id) AS ids, array_agg(pid) AS pids FROM gone)
  UPDATE change_counter SET listeners = ARRAY(SELECT l FROM unnest(listeners) AS l WHERE l <> ALL(COALESCE((SELECT ids FROM ids), '{}')))
  WHERE id = 1 AND (SELECT ids FROM ids) IS NOT NULL
  RETURNING (SELECT pids FROM ids) AS pids`
// A lapsed instance's session may still be open (a stopped process): PostgreSQL keeps every
// notification until each listening session has read it, so such a session is ended.
const END_SESSIONS = `SELECT pg_terminate_backend(pid) FROM pg_stat_activity
  WHERE pid = ANY($1::int[]) AND pid <> pg_backend_pid() AND application_name = current_setting('application_name')`
const LEAVE = `WITH gone AS (DELETE FROM counter_listeners WHERE id = $1 RETURNING id)
  UPDATE change_counter SET listeners = array_remove(listeners, $1::text) WHERE id = 1 AND EXISTS (SELECT 1 FROM gone)`

/**
 * Reads with no round trip on PostgreSQL (README, "Scale out"). Each instance LISTENs for the
 * counter's moves on a connection of its own and is on a list kept in the counter's row. A write
 * learns the list from the row it bumps and, once committed, waits until each listed instance
 * has said (a NOTIFY back) that it heard the new value, or for `fenceMs`.
 *
 * An instance answers from the value it heard only while its last confirmation is younger than
 * `trustMs`: a confirmation is a statement on the listening connection that finds the instance
 * still listed, and PostgreSQL delivers every notification committed before it ahead of its
 * answer. So a write acknowledged anywhere is either confirmed heard by every listed instance, or
 * its writer waited `fenceMs` ≥ `trustMs`, after which an instance that did not hear it no longer
 * trusts what it heard. An instance that joins after the write's bump reads the counter as it joins.
 * Anything amiss (connection lost, PostgreSQL slow, taken off the list) ends the trust, and reads
 * ask PostgreSQL again until it is back.
 */
export function counterWatch (options: PostgresOptions, timings: Partial<WatchTimings> = {}, reach?: ReachListener): CounterWatch {
  const t = { ...DEFAULTS, ...timings }
  if (!(t.trustMs < t.fenceMs && t.fenceMs < t.lapseMs && t.heartbeatMs < t.trustMs)) {
    throw new Error('the watch needs heartbeatMs < trustMs < fenceMs < lapseMs')
  }
  const lapse = `${t.lapseMs} milliseconds`
  const id = randomUUID()
  const stats: WatchStats = { heard: 0, fenceTimeouts: 0 }
  // The latest each other instance said it heard (one instance's acks arrive in order).
  const acked = new Map<string, number>()
  const waiters = new Set<Waiter>()
  // What this instance may answer from: the counter it heard, read as it joined or by a query, or
  // its own commits. Acks say only what it heard or read as it joined: its own commits may have
  // overtaken others' whose notifications are still on the way.
  let value = -1
  let heardThrough = -1
  const ownCommits = new Set<number>()
  let trustUntil = 0
  let client: pg.Client | undefined
  let session = { pid: 0, relid: '', counter: '', acks: '', reach: '' }
  let closed = false
  let beating = false
  let heartbeat: NodeJS.Timeout | undefined
  let retry: NodeJS.Timeout | undefined
  let ackScheduled = false
  let ackSent = -1

  const raise = (seen: number): void => { if (seen > value) value = seen }
  const hear = (seen: number): void => {
    raise(seen)
    if (seen > heardThrough) heardThrough = seen
  }
  const seenByAll = (waiter: Pick<Waiter, 'version' | 'others'>): boolean =>
    waiter.others.every((other) => (acked.get(other) ?? -1) >= waiter.version)
  const finish = (waiter: Waiter): void => {
    clearTimeout(waiter.timer)
    waiters.delete(waiter)
    waiter.resolve()
  }
  const later = (): void => {
    clearTimeout(retry)
    if (!closed) retry = setTimeout(connect, t.retryMs).unref()
  }

  const lost = (c: pg.Client, err?: Error): void => {
    c.end().catch(() => {})
    if (client !== c) return
    client = undefined
    trustUntil = 0
    // An ack sent on the lost session may never have gone out: say it again once back.
    ackSent = -1
    clearInterval(heartbeat)
    if (err !== undefined) options.onConnectionError?.(err)
    later()
  }

  const sendAck = (): void => {
    ackScheduled = false
    const c = client
    if (c === undefined || heardThrough <= ackSent) return
    ackSent = heardThrough
    c.query('SELECT pg_notify($1, $2)', [session.acks, `${id} ${ackSent}`]).catch((err: Error) => { lost(c, err) })
  }
  const scheduleAck = (): void => {
    if (ackScheduled) return
    ackScheduled = true
    setImmediate(sendAck)
  }
  const heard = (message: pg.Notification): void => {
    const payload = message.payload ?? ''
    // Sent by the trigger just before the version it names: told before that version is heard or acknowledged.
    if (message.channel === session.reach) {
      const heardReach = parseReach(payload)
      if (heardReach !== undefined) reach?.reached(heardReach.version, heardReach.repositories, heardReach.boardRows)
      return
    }
    if (message.channel === session.counter) {
      if (!/^\d{1,15}$/.test(payload)) return
      const seen = Number(payload)
      // Notifications come in commit order: a lower one means the counter was set back (a restore).
      if (seen < heardThrough) {
        value = heardThrough = -1
        ownCommits.clear()
        reach?.setBack()
      }
      hear(seen)
      // Nobody waits for this instance to hear its own write.
      if (ownCommits.delete(seen)) return
      stats.heard++
      scheduleAck()
      return
    }
    const match = ACK.exec(payload)
    if (message.channel !== session.acks || match === null || match[1] === id) return
    acked.set(match[1], Number(match[2]))
    for (const waiter of waiters) if (seenByAll(waiter)) finish(waiter)
  }

  const join = async (c: pg.Client): Promise<void> => {
    const sent = performance.now()
    const { rows } = await c.query<{ value: number }>(JOIN, [id])
    const now = Number(rows[0].value)
    // The counter went back (a restore, a failover that lost commits): what was heard is void.
    // Compared with what was heard only: an own commit may have come back before this answer.
    if (now < heardThrough) {
      value = heardThrough = ackSent = -1
      ownCommits.clear()
      acked.clear()
      reach?.setBack()
    }
    hear(now)
    if (client !== c) return
    trustUntil = sent + t.trustMs
    // A write that listed this instance before it (re)joined may be waiting to hear it saw it.
    scheduleAck()
  }
  // Never rejects: every failure ends in `lost`.
  const beat = async (): Promise<void> => {
    const c = client
    if (beating || c === undefined) return
    beating = true
    const sent = performance.now()
    try {
      const { rows } = await c.query<{ pid: number, listening: boolean, relid: string, lapsed: number }>(RENEW, [id, lapse, session.counter])
      if (rows.length === 0) {
        trustUntil = 0
        await join(c)
        return
      }
      const [row] = rows
      if (row.pid !== session.pid || !row.listening || row.relid !== session.relid) {
        lost(c, new Error('the listening session was not kept (a pooler without sessions? set DATABASE_WATCH=false), or the counter\'s table was replaced'))
        return
      }
      if (client === c) trustUntil = sent + t.trustMs
      if (Number(row.lapsed) > 0) await cleanUp(c)
    } catch (err) {
      lost(c, err as Error)
    } finally {
      beating = false
    }
  }
  const cleanUp = async (c: pg.Client): Promise<void> => {
    const { rows } = await c.query<{ pids: number[] | null }>(CLEAN_UP, [lapse])
    const pids = rows[0]?.pids?.filter((pid) => pid !== null) ?? []
    // Not ours to end (another role's session): it ends when its process does.
    if (pids.length > 0) await c.query(END_SESSIONS, [pids]).catch(() => {})
  }

  function connect (): void {
    if (closed) return
    const c = new pg.Client(clientConfig(options))
    let installed = false
    c.on('error', (err) => { lost(c, err) })
    c.on('end', () => { lost(c) })
    c.on('notification', heard)
    const start = async (): Promise<void> => {
      await c.connect()
      const { rows } = await c.query<{ relid: string, pid: number }>("SELECT 'change_counter'::regclass::oid::text AS relid, pg_backend_pid() AS pid")
      const { relid, pid } = rows[0]
      session = { pid, relid, counter: `planning_counter_${relid}`, acks: `planning_acks_${relid}`, reach: `planning_reach_${relid}` }
      await c.query(`LISTEN ${session.reach}; LISTEN ${session.counter}; LISTEN ${session.acks}`)
      if (closed) throw new Error('closed')
      client = c
      installed = true
      await join(c)
      if (client !== c) return
      clearInterval(heartbeat)
      heartbeat = setInterval(beat, t.heartbeatMs).unref()
    }
    start().catch((err: Error) => {
      // Once installed, `lost` (from the error or from here) ends it and tries again, once.
      if (installed) {
        lost(c, err)
        return
      }
      c.end().catch(() => {})
      later()
    })
  }

  return {
    stats,
    start: connect,
    trusted: () => client !== undefined && performance.now() < trustUntil ? value : undefined,
    observed: raise,
    async wait (version, listeners) {
      raise(version)
      if (version > heardThrough) {
        if (ownCommits.size >= 1000) ownCommits.clear()
        ownCommits.add(version)
      }
      const others = listeners.filter((other) => other !== id)
      // Instances gone from every list: forget them, unless a write still waits for one.
      if (waiters.size === 0 && acked.size > others.length + 16) {
        for (const known of acked.keys()) if (!others.includes(known)) acked.delete(known)
      }
      if (closed || seenByAll({ version, others })) return
      await new Promise<void>((resolve) => {
        const waiter: Waiter = {
          version,
          others,
          resolve,
          timer: setTimeout(() => {
            stats.fenceTimeouts++
            finish(waiter)
          }, t.fenceMs)
        }
        waiters.add(waiter)
      })
    },
    async close () {
      closed = true
      clearTimeout(retry)
      clearInterval(heartbeat)
      for (const waiter of waiters) finish(waiter)
      const c = client
      client = undefined
      if (c === undefined) return
      // Off the list, then a last ack: writes that listed this instance before it left stop waiting.
      await c.query(LEAVE, [id]).catch(() => {})
      await c.query('SELECT pg_notify($1, $2)', [session.acks, `${id} ${GONE}`]).catch(() => {})
      await c.end().catch(() => {})
    }
  }
}
