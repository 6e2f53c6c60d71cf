import { Kysely, PostgresDialect } from 'kysely'
import pg from 'pg'
import type { Database } from './schema.js'

// BIGINT (ids, epoch milliseconds, counts) arrives as text by default; every value we keep fits
// in a double, so take them as numbers, as SQLite gives them.
pg.types.setTypeParser(pg.types.builtins.INT8, (value) => Number(value))

export interface PostgresOptions {
  /** `postgres://user@host:port/database` */
  url: string
  /** pool size (DATABASE_POOL_MAX) */
  poolMax?: number
  /** tables live in this schema (tests give each its own) */
  schema?: string
}

/** Kysely over a pg pool. */
export function postgresKysely (options: PostgresOptions): Kysely<Database> {
  const pool = new pg.Pool({
    connectionString: options.url,
    max: options.poolMax ?? 10,
    ...(options.schema === undefined ? {} : { options: `-c search_path=${options.schema}` })
  })
  return new Kysely<Database>({ dialect: new PostgresDialect({ pool }) })
}
