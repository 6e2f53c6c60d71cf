// Exits 0 when a PostgreSQL server answers at the URL given (CI runs the suite on it then).
import pg from 'pg'

const client = new pg.Client({ connectionString: process.argv[2], connectionTimeoutMillis: 3000 })
try {
  await client.connect()
  await client.end()
} catch {
  process.exit(1)
}
