import pg from 'pg'
import { applicationName, type PostgresOptions } from './postgres.js'

/** How often the counter was asked for and how often the database was queried for it. */
export interface VersionStats {
  /** requests that asked for the counter */
  asked: number
  /** queries sent for them */
  queries: number
}

export interface CoalescedVersion {
  /** The counter as read by a query sent after this call: never older than the caller. */
  read: () => Promise<number>
  stats: VersionStats
}

interface Batch { promise: Promise<number>, resolve: (value: number) => void, reject: (err: unknown) => void }

function batch (): Batch {
  let settle!: Pick<Batch, 'resolve' | 'reject'>
  const promise = new Promise<number>((resolve, reject) => { settle = { resolve, reject } })
  // A batch nobody waits on any more (every request gone) must not become an unhandled rejection.
  promise.catch(() => {})
  return { promise, ...settle }
}

/**
 * The change counter on PostgreSQL, read by at most one query at a time (README, "Scale out").
 *
 * The rule that keeps read-after-write across instances: a request is answered with a value read
 * by a query sent after the request asked. So a request that asks while no query is out sends one
 * and waits for it; a request that asks while a query is out does not take that query's answer
 * (it may have been read before a write the request must see): it joins the next batch, sent as
 * soon as the query out returns, and that one query answers every request of the batch. Under load
 * one round trip answers many reads; when idle each read costs one round trip, as before.
 */
export function coalescedVersion (query: () => Promise<number>): CoalescedVersion {
  const stats: VersionStats = { asked: 0, queries: 0 }
  let out = false
  let next: Batch | undefined

  const send = (): void => {
    const current = next!
    next = undefined
    out = true
    stats.queries++
    const done = (): void => {
      out = false
      if (next !== undefined) send()
    }
    let sent: Promise<number>
    try {
      sent = query()
    } catch (err) {
      sent = Promise.reject(err)
    }
    sent.then((value) => {
      current.resolve(value)
      done()
    }, (err: unknown) => {
      current.reject(err)
      done()
    })
  }

  return {
    stats,
    read () {
      stats.asked++
      const joined = next ??= batch()
      if (!out) send()
      return joined.promise
    }
  }
}

export interface CounterConnection {
  /** The counter, read now on the connection (opened again when it was lost). */
  read: () => Promise<number>
  close: () => Promise<void>
}

/**
 * One connection of its own for the change counter, asked with a named (prepared) statement: no
 * pool checkout and no parse or plan per read. Coalescing keeps at most one read out at a time, so
 * one connection is enough. A connection that fails or times out is dropped (reported like the
 * pool's) and the next read opens another, so a PostgreSQL restart costs the reads during it only.
 */
export function counterConnection (options: PostgresOptions): CounterConnection {
  const { timeoutMs, connectTimeoutMs = timeoutMs } = options
  let current: Promise<pg.Client> | undefined
  let closed = false

  const drop = (client: Promise<pg.Client>): void => {
    if (current === client) current = undefined
    client.then((c) => { c.end().catch(() => {}) }, () => {})
  }
  const open = (): Promise<pg.Client> => {
    const client = new pg.Client({
      connectionString: options.url,
      application_name: applicationName(options.schema),
      ...(connectTimeoutMs === undefined ? {} : { connectionTimeoutMillis: connectTimeoutMs }),
      ...(timeoutMs === undefined ? {} : { query_timeout: timeoutMs, statement_timeout: timeoutMs }),
      ...(options.schema === undefined ? {} : { options: `-c search_path=${options.schema}` })
    })
    const opening = client.connect().then(() => client)
    client.on('error', (err) => {
      options.onConnectionError?.(err)
      drop(opening)
    })
    opening.catch(() => { drop(opening) })
    return opening
  }

  return {
    async read () {
      if (closed) throw new Error('the change counter connection is closed')
      const client = (current ??= open())
      try {
        const { rows } = await (await client).query<{ value: number }>(COUNTER_QUERY)
        return Number(rows[0]?.value ?? 0)
      } catch (err) {
        drop(client)
        throw err
      }
    },
    async close () {
      closed = true
      const client = current
      current = undefined
      if (client !== undefined) await client.then(async (c) => { await c.end() }, () => {})
    }
  }
}

const COUNTER_QUERY = { name: 'planning-change-version', text: 'SELECT value FROM change_counter WHERE id = 1' }
