import { randomUUID } from 'node:crypto'
import pg from 'pg'
import { clientConfig, type PostgresOptions } from './postgres.js'
import type { CommitFence } from './transaction.js'

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

export interface CounterWatch extends CommitFence {
  /** Connects and joins (once the app has started: an app that fails to start leaves nothing open). */
  start: () => void
  /** The counter when this instance may answer from it without asking PostgreSQL; else undefined. */
  trusted: () => number | undefined
  stats: WatchStats
  close: () => Promise<void>
}

interface Waiter { version: number, others: readonly string[], timer: NodeJS.Timeout, resolve: () => void }

const ACK = /^([0-9a-f-]{36}) (\d{1,15})$/

// One statement each, so none leaves half a change. Listener rows are locked before the counter's
// row in all of them (no deadlock between a joining instance and a clean-up).
const JOIN = `WITH joined AS (
    INSERT INTO counter_listeners (id, renewed_at) VALUES ($1, now())
    ON CONFLICT (id) DO UPDATE SET renewed_at = now() RETURNING id)
  UPDATE change_counter SET listeners = array_append(array_remove(listeners, $1::text), $1::text)
  WHERE id = 1 AND EXISTS (SELECT 1 FROM joined) RETURNING value`
const RENEW = `UPDATE counter_listeners SET renewed_at = now() WHERE id = $1
  RETURNING (SELECT count(*) FROM counter_listeners WHERE renewed_at < now() - $2::interval) AS lapsed`
const CLEAN_UP = `WITH gone AS (DELETE FROM counter_listeners WHERE renewed_at < now() - $1::interval RETURNING id)
  UPDATE change_counter SET listeners = ARRAY(SELECT l FROM unnest(listeners) AS l WHERE l NOT IN (SELECT id FROM gone))
  WHERE id = 1 AND EXISTS (SELECT 1 FROM gone)`
const LEAVE = `WITH gone AS (DELETE FROM counter_listeners WHERE id = $1 RETURNING id)
  UPDATE change_counter SET listeners = array_remove(listeners, $1::text) WHERE id = 1`

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
export function counterWatch (options: PostgresOptions, timings: Partial<WatchTimings> = {}): CounterWatch {
  const t = { ...DEFAULTS, ...timings }
  const lapse = `${t.lapseMs} milliseconds`
  const id = randomUUID()
  const stats: WatchStats = { heard: 0, fenceTimeouts: 0 }
  const acked = new Map<string, number>()
  const waiters = new Set<Waiter>()
  // What this instance may answer from: the counter it heard, read as it joined, or its own commits
  // left. Acks say only what it heard or read: own commits may have overtaken others' still on the way.
  let value = -1
  let heardThrough = -1
  const ownCommits = new Set<number>()
  let trustUntil = 0
  let client: pg.Client | undefined
  let channels = { counter: '', acks: '' }
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

  const lost = (c: pg.Client, err?: Error): void => {
    c.end().catch(() => {})
    if (client !== c) return
    client = undefined
    trustUntil = 0
    clearInterval(heartbeat)
    if (err !== undefined) options.onConnectionError?.(err)
    if (!closed) retry = setTimeout(connect, t.retryMs).unref()
  }

  const sendAck = (): void => {
    ackScheduled = false
    const c = client
    if (c === undefined || heardThrough <= ackSent) return
    ackSent = heardThrough
    c.query('SELECT pg_notify($1, $2)', [channels.acks, `${id} ${ackSent}`]).catch((err: Error) => { lost(c, err) })
  }
  const scheduleAck = (): void => {
    if (ackScheduled) return
    ackScheduled = true
    setImmediate(sendAck)
  }
  const heard = (message: pg.Notification): void => {
    const payload = message.payload ?? ''
    if (message.channel === channels.counter) {
      if (!/^\d{1,15}$/.test(payload)) return
      const seen = Number(payload)
      hear(seen)
      // Nobody waits for this instance to hear its own write.
      if (ownCommits.delete(seen)) return
      stats.heard++
      scheduleAck()
      return
    }
    const match = ACK.exec(payload)
    if (message.channel !== channels.acks || match === null || match[1] === id) return
    acked.set(match[1], Math.max(acked.get(match[1]) ?? -1, Number(match[2])))
    for (const waiter of waiters) if (seenByAll(waiter)) finish(waiter)
  }

  const join = async (c: pg.Client): Promise<void> => {
    const sent = performance.now()
    const { rows } = await c.query<{ value: number }>(JOIN, [id])
    hear(Number(rows[0].value))
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
      const { rows } = await c.query<{ lapsed: number }>(RENEW, [id, lapse])
      if (rows.length === 0) {
        trustUntil = 0
        await join(c)
        return
      }
      if (client === c) trustUntil = sent + t.trustMs
      if (Number(rows[0].lapsed) > 0) await c.query(CLEAN_UP, [lapse])
    } catch (err) {
      lost(c, err as Error)
    } finally {
      beating = false
    }
  }

  function connect (): void {
    if (closed) return
    const c = new pg.Client(clientConfig(options))
    c.on('error', (err) => { lost(c, err) })
    c.on('end', () => { lost(c) })
    c.on('notification', heard)
    const start = async (): Promise<void> => {
      await c.connect()
      const { rows } = await c.query<{ relid: string }>("SELECT 'change_counter'::regclass::oid::text AS relid")
      channels = { counter: `planning_counter_${rows[0].relid}`, acks: `planning_acks_${rows[0].relid}` }
      await c.query(`LISTEN ${channels.counter}; LISTEN ${channels.acks}`)
      if (closed) throw new Error('closed')
      client = c
      await join(c)
      if (client !== c) return
      heartbeat = setInterval(beat, t.heartbeatMs).unref()
    }
    start().catch((err: Error) => {
      if (client === c) {
        lost(c, err)
        return
      }
      c.end().catch(() => {})
      if (!closed) retry = setTimeout(connect, t.retryMs).unref()
    })
  }
  return {
    stats,
    start: connect,
    trusted: () => client !== undefined && performance.now() < trustUntil ? value : undefined,
    async wait (version, listeners) {
      raise(version)
      if (version > heardThrough) {
        if (ownCommits.size >= 1000) ownCommits.clear()
        ownCommits.add(version)
      }
      const others = listeners.filter((other) => other !== id)
      if (acked.size > others.length + 16) {
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
      await c.query(LEAVE, [id]).catch(() => {})
      await c.end().catch(() => {})
    }
  }
}
