import { Migrator, type Kysely, type Migration, type MigrationProvider } from 'kysely'
import type { Database } from '../schema.js'
import { connectionsMigration } from './connections.js'
import { deliveryLeasesMigration } from './delivery-leases.js'
import { extensionsMigration } from './extensions.js'
import { schemaMigration } from './schema.js'

import type { Engine } from '../engine.js'

export type { Engine }

/** The migrations, by name in the order they run. Never edit a released one: add a new one. */
export function migrations (engine: Engine): Record<string, Migration> {
  return {
    '001-schema': schemaMigration(engine),
    '002-delivery-leases': deliveryLeasesMigration(engine),
    '003-connections': connectionsMigration(engine),
    '004-extensions': extensionsMigration(engine)
  }
}

class Provider implements MigrationProvider {
  constructor (private readonly engine: Engine) {}
  async getMigrations (): Promise<Record<string, Migration>> {
    return migrations(this.engine)
  }
}

export class MigrationError extends Error {}

/**
 * Applies the migrations the database has not had yet (tracked in `kysely_migration`). A database
 * that has run a migration this server does not know is newer than this server: refused.
 */
export async function migrate (db: Kysely<Database>, engine: Engine, schema?: string): Promise<string[]> {
  // Reading the catalog can fail while another process drops a schema (tests do, between runs of
  // their own): that is no reason to fail, so look again.
  for (let attempt = 1; ; attempt++) {
    try {
      return await migrateOnce(db, engine, schema)
    } catch (err) {
      if ((err as { code?: string }).code !== '3F000' || attempt >= 5) throw err
    }
  }
}

async function migrateOnce (db: Kysely<Database>, engine: Engine, schema?: string): Promise<string[]> {
  const migrator = new Migrator({ db, provider: new Provider(engine), ...(schema === undefined ? {} : { migrationTableSchema: schema }) })
  const known = Object.keys(migrations(engine))
  const applied = (await migrator.getMigrations()).filter((m) => m.executedAt !== undefined).map((m) => m.name)
  const tables = await db.introspection.getTables({ withInternalKyselyTables: true })
  if (tables.some((t) => t.name === 'kysely_migration' && (schema === undefined || t.schema === schema))) {
    const scoped = schema === undefined ? db : db.withSchema(schema)
    const recorded = await scoped.selectFrom('kysely_migration' as never).select('name' as never).execute() as Array<{ name: string }>
    const unknown = recorded.map((r) => r.name).filter((name) => !known.includes(name))
    if (unknown.length > 0) throw new MigrationError(`the database schema is newer than this server (it has run ${unknown.join(', ')})`)
  }
  const { error, results } = await migrator.migrateToLatest()
  if (error !== undefined) throw error
  return [...applied, ...(results ?? []).filter((r) => r.status === 'Success').map((r) => r.migrationName)]
}
