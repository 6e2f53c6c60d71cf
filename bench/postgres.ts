import { randomBytes } from 'node:crypto'
import pg from 'pg'
import { DomainEvents } from '../db/domain-events.js'
import { migrate } from '../db/engine/migrations/index.js'
import { postgresKysely } from '../db/engine/postgres.js'
import { createStore } from '../db/store.js'
import { loadFixture } from '../services/fixtures.js'
import { dependencyCosts } from './dependencies.js'
import { benchFixture, CASES, compare, startInstances, type HttpRow } from './http.js'
import { moveCosts } from './moves.js'

export async function admin (sql: string, url: string): Promise<void> {
  const client = new pg.Client({ connectionString: url })
  await client.connect()
  await client.query(sql)
  await client.end()
}

/** A store on a schema of its own, dropped on close. */
async function freshStore (url: string) {
  const schema = `bench_${randomBytes(4).toString('hex')}`
  await admin(`CREATE SCHEMA ${schema}`, url)
  const db = postgresKysely({ url, schema, poolMax: 2 })
  await migrate(db, 'postgres', schema)
  const store = createStore(db, new DomainEvents())
  return { store, close: async () => { await db.destroy(); await admin(`DROP SCHEMA ${schema} CASCADE`, url) } }
}

/** Whether a PostgreSQL server answers at `url`. */
export async function postgresAnswers (url: string): Promise<boolean> {
  try {
    await admin('SELECT 1', url)
    return true
  } catch {
    return false
  }
}

/**
 * The board and issue cases on PostgreSQL, through one instance and through two sharing the
 * database (the connections split between them).
 */
export async function benchPostgresHttp (url: string, seconds: number, rounds: number): Promise<HttpRow[]> {
  const schema = `bench_${randomBytes(4).toString('hex')}`
  await admin(`CREATE SCHEMA ${schema}`, url)
  const lines: HttpRow[] = []
  try {
    const db = postgresKysely({ url, schema, poolMax: 2 })
    await migrate(db, 'postgres', schema)
    await loadFixture(createStore(db, new DomainEvents()), benchFixture())
    await db.destroy()
    for (const count of [1, 2]) {
      const instances = await startInstances(count, { databaseUrl: url, databaseSchema: schema })
      try {
        for (const { name, path } of CASES) {
          lines.push(await compare(`PostgreSQL, ${count === 1 ? 'one instance' : 'two instances'}, ${name}`, instances.map((i) => i.url), path, seconds, rounds))
        }
      } finally {
        await Promise.all(instances.map(async (i) => await i.stop()))
      }
    }
  } finally {
    await admin(`DROP SCHEMA ${schema} CASCADE`, url)
  }
  return lines
}

/** Moves and dependency inserts on PostgreSQL, in this process over a pool. */
export async function benchPostgresWrites (url: string): Promise<string[]> {
  const moves = await moveCosts(async () => await freshStore(url), 300)
  const dependencies = await dependencyCosts(async () => await freshStore(url), 10_000, 1000)
  return [...moves, ...dependencies].map((line) => `PostgreSQL, ${line}`)
}
