/** How often the counter was asked for and how often it was read. */
export interface VersionStats {
  /** requests that asked for the counter */
  asked: number
  /** reads made for them (queries on PostgreSQL, WAL-index header reads on SQLite) */
  queries: number
  /** of the requests, those answered from the counter this instance watches (PostgreSQL) */
  watched: number
}

export interface CoalescedVersion {
  /** The counter as read after this call: never older than the caller. */
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
 * The change counter, read at most once at a time and at most once per turn of the event loop
 * (README, "Scale out").
 *
 * The rule that keeps read-after-write, across instances too: a request is answered with a value
 * read after the request asked. So a request joins the next batch, and that batch is read once
 * every request the turn brought in has asked (`setImmediate` runs after the turn's socket
 * callbacks) and no read is out; a request that asks while a read is out does not take that read's
 * answer (it may have been made before a write the request must see). Under load one read answers
 * every request of a turn, tens of them; when idle each request costs one read, as before.
 */
export function coalescedVersion (read: () => number | Promise<number>): CoalescedVersion {
  const stats: VersionStats = { asked: 0, queries: 0, watched: 0 }
  let out = false
  let scheduled = false
  let next: Batch | undefined

  const schedule = (): void => {
    if (scheduled || out || next === undefined) return
    scheduled = true
    setImmediate(send)
  }
  const done = (): void => {
    out = false
    schedule()
  }
  const send = (): void => {
    scheduled = false
    const current = next!
    next = undefined
    out = true
    stats.queries++
    let value: number | Promise<number>
    try {
      value = read()
    } catch (err) {
      value = Promise.reject(err)
    }
    if (typeof value === 'number') {
      current.resolve(value)
      done()
      return
    }
    value.then((answer) => {
      current.resolve(answer)
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
      schedule()
      return joined.promise
    }
  }
}
