import { Migrator, sql, type Kysely, type Migration, type MigrationProvider } from 'kysely'
import type { Database } from '../../schema.js'
import { changeWatchMigration } from './change-watch.js'
import { chatBotMigration } from './chat-bot.js'
import { connectionsMigration } from './connections.js'
import { deliveryLeasesMigration } from './delivery-leases.js'
import { deliveryLogMigration } from './delivery-log.js'
import { extensionsMigration } from './extensions.js'
import { identitiesMigration } from './identities.js'
import { importLeasesMigration } from './import-leases.js'
import { hostedImportsMigration } from './hosted-imports.js'
import { twoWaySyncMigration } from './two-way-sync.js'
import { issueActivityMigration } from './issue-activity.js'
import { prioritiesMigration } from './priorities.js'
import { pullRequestsMigration } from './pull-requests.js'
import { schemaMigration } from './schema.js'
import { sprintsMigration } from './sprints.js'
import { signInMigration } from './sign-in.js'
import { hostSignInMigration } from './host-sign-in.js'
import { upgradeLinksMigration } from './upgrade-links.js'
import { accountsMigration } from './accounts.js'
import { stableIdsMigration } from './stable-ids.js'
import { keyCheckMigration } from './key-check.js'
import { issueBodyMigration } from './issue-body.js'
import { zenhubEpicsMigration } from './zenhub-epics.js'
import { labelsMigration } from './labels.js'
import { issueCreatorMigration } from './issue-creator.js'
import { hostedFieldsMigration } from './hosted-fields.js'
import { zenhubEpicMetaMigration } from './zenhub-epic-meta.js'
import { workspaceUserMigration } from './workspace-user.js'
import { pipelinePagesMigration } from './pipeline-pages.js'
import { dependenciesBlockingMigration } from './dependencies-blocking.js'
import { writeReachMigration } from './write-reach.js'
import { closedIssuesMigration } from './closed-issues.js'

import type { Engine } from '../engine.js'
import { setTimeout as sleep } from 'node:timers/promises'

export type { Engine }

/** The migrations, by name in the order they run. Never edit a released one: add a new one. */
export function migrations (engine: Engine): Record<string, Migration> {
  return {
    '001-schema': schemaMigration(engine),
    '002-delivery-leases': deliveryLeasesMigration(engine),
    '003-connections': connectionsMigration(engine),
    '004-extensions': extensionsMigration(engine),
    '005-identities': identitiesMigration(engine),
    '006-import-leases': importLeasesMigration(engine),
    '007-hosted-imports': hostedImportsMigration(engine),
    '008-sign-in': signInMigration(engine),
    '009-sprints': sprintsMigration(engine),
    '013-chat-bot': chatBotMigration(engine),
    '014-two-way-sync': twoWaySyncMigration(engine),
    '016-host-sign-in': hostSignInMigration(engine),
    '017-issue-activity': issueActivityMigration(engine),
    '018-pull-requests': pullRequestsMigration(),
    '019-change-watch': changeWatchMigration(engine),
    '020-accounts': accountsMigration(engine),
    '021-upgrade-links': upgradeLinksMigration(),
    '022-delivery-log': deliveryLogMigration(engine),
    '023-stable-ids': stableIdsMigration(engine),
    '024-key-check': keyCheckMigration(),
    '025-issue-body': issueBodyMigration(),
    '026-zenhub-epics': zenhubEpicsMigration(engine),
    '027-zenhub-epic-meta': zenhubEpicMetaMigration(engine),
    '028-priorities': prioritiesMigration(engine),
    '029-hosted-fields': hostedFieldsMigration(),
    '030-labels': labelsMigration(engine),
    '031-workspace-user': workspaceUserMigration(engine),
    '032-issue-creator': issueCreatorMigration(engine),
    '033-pipeline-pages': pipelinePagesMigration(),
    '034-dependencies-blocking': dependenciesBlockingMigration(),
    '035-write-reach': writeReachMigration(engine),
    '036-closed-issues': closedIssuesMigration()
  }
}

/**
 * SQLite migrations that rebuild a table others refer to: they run after the others, with foreign
 * keys off (SQLite's own procedure; dropping the old table would otherwise delete what refers to it),
 * and check every foreign key before they commit.
 */
const WITHOUT_FOREIGN_KEYS = new Set(['023-stable-ids'])

/**
 * How long a migration waits for a table's lock on PostgreSQL (`timeoutMs`), and how long the run
 * is tried again after that (`deadlineMs` from the first try, which must stay under the start's
 * 60 s plugin timeout; pauses growing by `pauseMs`): `migrate`'s `locks`. `retried` hears each retry.
 */
export interface LockPatience { timeoutMs: number, deadlineMs: number, pauseMs: number, retried?: (attempt: number) => void }
const LOCK_PATIENCE: LockPatience = { timeoutMs: 2000, deadlineMs: 40_000, pauseMs: 500 }
/** PostgreSQL's lock_not_available: a lock_timeout ran out. */
const LOCK_NOT_AVAILABLE = '55P03'

class Provider implements MigrationProvider {
  constructor (private readonly engine: Engine, private readonly rebuilds = true, private readonly lockTimeoutMs = LOCK_PATIENCE.timeoutMs) {}
  async getMigrations (): Promise<Record<string, Migration>> {
    const all = Object.entries(migrations(this.engine)).filter(([name]) => this.rebuilds || !WITHOUT_FOREIGN_KEYS.has(name))
    if (this.engine !== 'postgres') return Object.fromEntries(all)
    // The run is one transaction: the setting holds for the rest of it, after Kysely's own lock (an
    // instance waiting for another's migrations waits as long as they take).
    const timeout = sql.lit(`${Math.max(1, Math.round(this.lockTimeoutMs))}ms`)
    return Object.fromEntries(all.map(([name, m]) => [name, {
      ...m,
      async up (db: Kysely<unknown>) {
        await sql`SET LOCAL lock_timeout = ${timeout}`.execute(db)
        await m.up(db)
      }
    }]))
  }
}

export class MigrationError extends Error {}

/** PostgreSQL's invalid_schema_name, undefined_table and undefined_column. */
const CATALOG_RACES = new Set(['3F000', '42P01', '42703'])

/**
 * Applies the migrations the database has not had yet (tracked in `kysely_migration`). A database
 * that has run a migration this server does not know is newer than this server: refused.
 */
export async function migrate (db: Kysely<Database>, engine: Engine, schema?: string, locks: LockPatience = LOCK_PATIENCE): Promise<string[]> {
  // A migration that changes a table waits for every session using it to let go (a long
  // transaction, a slow report), and meanwhile every other query on that table queues behind it:
  // each instance would stall for as long. On PostgreSQL a migration waits `locks.timeoutMs` for a
  // lock; past that the run rolls back, traffic flows again, and the run is tried again after a
  // growing pause, until `locks.deadlineMs` has passed; then the start fails saying why. (Instances
  // starting together take turns: each try holds Kysely's migration lock.)
  const started = performance.now()
  for (let attempt = 1; ; attempt++) {
    try {
      return await migrateRacing(db, engine, schema, locks.timeoutMs)
    } catch (err) {
      if ((err as { code?: string }).code !== LOCK_NOT_AVAILABLE) throw err
      const pause = Math.round(locks.pauseMs * attempt * (0.75 + Math.random() / 2))
      const elapsed = performance.now() - started
      if (elapsed + pause + locks.timeoutMs > locks.deadlineMs) {
        throw new MigrationError(`a migration could not take a table's lock: another session kept it longer than ${locks.timeoutMs} ms, ` +
          `${attempt} times in ${Math.round(elapsed / 1000)} s (a long transaction on this database? see pg_stat_activity); nothing was changed, start again once it ends`)
      }
      locks.retried?.(attempt)
      await sleep(pause)
    }
  }
}

async function migrateRacing (db: Kysely<Database>, engine: Engine, schema: string | undefined, lockTimeoutMs: number): Promise<string[]> {
  // Reading the catalog can fail while another process drops a schema (tests do, between runs of
  // their own): the introspection asks about every schema's columns (pg_get_serial_sequence), and one
  // dropped meanwhile is "no such schema", "no such relation" or "no such column". That is no reason
  // to fail, so look again.
  // Many schemas dropped at once (tests running side by side) can fail several reads in a row:
  // look again after a short, growing, jittered pause.
  for (let attempt = 1; ; attempt++) {
    try {
      return await migrateOnce(db, engine, schema, lockTimeoutMs)
    } catch (err) {
      if (!CATALOG_RACES.has(String((err as { code?: string }).code)) || attempt >= 10) throw err
      await sleep(Math.round((20 + Math.random() * 30) * attempt))
    }
  }
}

async function migrateOnce (db: Kysely<Database>, engine: Engine, schema: string | undefined, lockTimeoutMs: number): Promise<string[]> {
  // Migrations are numbered per piece of work and never depend on a later-numbered one, so a
  // database that ran a later one first (a development build) takes an earlier one afterwards.
  const migrator = new Migrator({
    db,
    provider: new Provider(engine, true, lockTimeoutMs),
    allowUnorderedMigrations: true,
    ...(schema === undefined ? {} : { migrationTableSchema: schema })
  })
  const known = Object.keys(migrations(engine))
  const applied = (await migrator.getMigrations()).filter((m) => m.executedAt !== undefined).map((m) => m.name)
  const tables = await db.introspection.getTables({ withInternalKyselyTables: true })
  if (tables.some((t) => t.name === 'kysely_migration' && (schema === undefined || t.schema === schema))) {
    const scoped = schema === undefined ? db : db.withSchema(schema)
    const recorded = await scoped.selectFrom('kysely_migration' as never).select('name' as never).execute() as Array<{ name: string }>
    const unknown = recorded.map((r) => r.name).filter((name) => !known.includes(name))
    if (unknown.length > 0) throw new MigrationError(`the database schema is newer than this server (it has run ${unknown.join(', ')})`)
  }
  const done: string[] = []
  const run = async (m: Migrator): Promise<void> => {
    const { error, results } = await m.migrateToLatest()
    done.push(...(results ?? []).filter((r) => r.status === 'Success').map((r) => r.migrationName))
    if (error !== undefined) throw error
  }
  if (engine === 'sqlite' && [...WITHOUT_FOREIGN_KEYS].some((name) => !applied.includes(name))) {
    await run(new Migrator({ db, provider: new Provider(engine, false), allowUnorderedMigrations: true }))
    // Outside a transaction: SQLite ignores the pragma inside one.
    await sql`PRAGMA foreign_keys = OFF`.execute(db)
    try {
      await run(migrator)
    } finally {
      await sql`PRAGMA foreign_keys = ON`.execute(db)
    }
  } else {
    await run(migrator)
  }
  return Object.keys(migrations(engine)).filter((name) => applied.includes(name) || done.includes(name))
}
