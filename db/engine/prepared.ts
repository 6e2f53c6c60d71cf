import { createHash } from 'node:crypto'
import type { CompiledQuery, QueryResult } from 'kysely'
import type { Executor } from '../schema.js'

const SLOT = '\u0000slot:'

// The SQL of every prepared query, with the name PostgreSQL keeps its parsed and planned statement
// under on each connection (db/engine/postgres.ts); a bounded set, as the queries are built at start.
const names = new Map<string, string>()

/** The statement name of a prepared query's SQL, or undefined for any other SQL. */
export function statementName (sql: string): string | undefined {
  return names.get(sql)
}

interface Compilable<R> { compile: () => CompiledQuery<R> }
type Slot = { name: string } | { value: unknown }

/**
 * A query built and compiled once per engine and run many times with new values, like a prepared
 * statement: the hot paths (auth, board and issue reads, moves) skip Kysely's building and
 * compiling on every call. `build` gets placeholders in `p` (use them only as plain values, not
 * as lists); `run(db, values)` runs the compiled SQL on `db` (the database or a transaction).
 * On PostgreSQL it runs as a named statement, parsed once per connection.
 */
export function prepared<P extends object> () {
  return <R>(build: (db: Executor, p: P) => Compilable<R>) => {
    const byEngine = new WeakMap<object, { query: CompiledQuery<R>, slots: Slot[] }>()
    const placeholders = new Proxy({}, { get: (_target, name) => `${SLOT}${String(name)}` }) as P
    return async (db: Executor, values: P): Promise<QueryResult<R>> => {
      const engine = db.getExecutor().adapter
      let entry = byEngine.get(engine)
      if (entry === undefined) {
        const query = build(db, placeholders).compile()
        const slots = query.parameters.map((v): Slot => typeof v === 'string' && v.startsWith(SLOT) ? { name: v.slice(SLOT.length) } : { value: v })
        entry = { query, slots }
        names.set(query.sql, `planning_${createHash('sha1').update(query.sql).digest('hex').slice(0, 16)}`)
        byEngine.set(engine, entry)
      }
      const parameters = entry.slots.map((slot) => 'name' in slot ? (values as Record<string, unknown>)[slot.name] : slot.value)
      return await db.executeQuery<R>({ ...entry.query, parameters })
    }
  }
}
