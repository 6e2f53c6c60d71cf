import { randomBytes } from 'node:crypto'
import pg from 'pg'
import { DomainEvents } from '../db/domain-events.js'
import { migrate } from '../db/migrations/index.js'
import { postgresKysely } from '../db/postgres.js'
import { createStore } from '../db/store.js'
import { loadFixture } from '../services/fixtures.js'
import { benchFixture, CASES, compare, startInstances } from './http.js'
import { moveCosts } from './moves.js'

async function admin (sql: string, url: string): Promise<void> {
  const client = new pg.Client({ connectionString: url })
  await client.connect()
  await client.query(sql)
  await client.end()
}

/**
 * The board and issue cases on PostgreSQL, through one instance and through two sharing the
 * database (the connections split between them), and moves; skipped when no server answers.
 */
export async function benchPostgres (url: string, seconds: number, rounds: number): Promise<string[]> {
  try {
    await admin('SELECT 1', url)
  } catch {
    return [`PostgreSQL: skipped (no server answers at ${url})`]
  }
  const schema = `bench_${randomBytes(4).toString('hex')}`
  await admin(`CREATE SCHEMA ${schema}`, url)
  const lines: string[] = []
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
  const moves = await moveCosts(async () => {
    const moveSchema = `bench_${randomBytes(4).toString('hex')}`
    await admin(`CREATE SCHEMA ${moveSchema}`, url)
    const db = postgresKysely({ url, schema: moveSchema, poolMax: 2 })
    await migrate(db, 'postgres', moveSchema)
    const store = createStore(db, new DomainEvents())
    return { store, close: async () => { await db.destroy(); await admin(`DROP SCHEMA ${moveSchema} CASCADE`, url) } }
  }, 300)
  return [...lines, ...moves.map((line) => `PostgreSQL, ${line}`)]
}
