import pg from 'pg'
import { clientConfig, type PostgresOptions } from './postgres.js'

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
  let current: Promise<pg.Client> | undefined
  let closed = false

  const drop = (client: Promise<pg.Client>): void => {
    if (current === client) current = undefined
    client.then((c) => { c.end().catch(() => {}) }, () => {})
  }
  const open = (): Promise<pg.Client> => {
    const client = new pg.Client(clientConfig(options))
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
