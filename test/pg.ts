import pg from 'pg'
import t, { type Test } from 'tap'
import { randomBytes } from 'node:crypto'

/** The PostgreSQL server the suite runs against as well, when set (docs/development.md). */
export const TEST_DATABASE_URL = process.env.TEST_DATABASE_URL === '' ? undefined : process.env.TEST_DATABASE_URL

let announced = false

/** A fresh schema for one test; `drop` removes it with everything in it. */
export async function testSchema (url: string): Promise<{ schema: string, drop: () => Promise<void> }> {
  if (!announced) t.comment(`PostgreSQL tests on ${url.replace(/\/\/[^@/]*@/, '//')}, each in a schema of its own (t_<random>, dropped after); TEST_DATABASE_URL points elsewhere`)
  announced = true
  const schema = `t_${randomBytes(6).toString('hex')}`
  const client = new pg.Client({ connectionString: url })
  await client.connect()
  await client.query(`CREATE SCHEMA ${schema}`)
  await client.end()
  return {
    schema,
    drop: async () => {
      const dropper = new pg.Client({ connectionString: url })
      await dropper.connect()
      await dropper.query(`DROP SCHEMA ${schema} CASCADE`)
      await dropper.end()
    }
  }
}

/** Whether a PostgreSQL server answers at this URL (tests that need one skip otherwise). */
export async function postgresAnswers (url: string | undefined): Promise<boolean> {
  if (url === undefined) return false
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 2000 })
  try {
    await client.connect()
    await client.end()
    return true
  } catch {
    return false
  }
}

/**
 * Records the text of every query a pg client sends, below the pool's wrappers, until the test
 * ends; `refuse` may answer one with an error instead of sending it.
 */
export function recordSent (test: Test, refuse?: (text: string) => Error | undefined): string[] {
  const sent: string[] = []
  const send = pg.Client.prototype.query
  pg.Client.prototype.query = function (this: pg.Client, ...args: unknown[]) {
    const [query] = args
    const text = typeof query === 'string' ? query : String((query as { text?: string }).text)
    sent.push(text)
    const refused = refuse?.(text)
    if (refused !== undefined) return Promise.reject(refused)
    return (send as (...a: unknown[]) => unknown).apply(this, args)
  } as typeof send
  test.teardown(() => { pg.Client.prototype.query = send })
  return sent
}
