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
