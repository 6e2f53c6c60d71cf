import { createBoardsRepository } from './boards.js'
import { createChatRepository } from './chat.js'
import { createDependenciesRepository } from './dependencies.js'
import { DomainEvents } from './domain-events.js'
import { createEpicsRepository } from './epics.js'
import { createIssuesRepository } from './issues.js'
import { migrate } from './migrations/index.js'
import { createMilestonesRepository } from './milestones.js'
import { createReleasesRepository } from './releases.js'
import { createRepositoriesRepository } from './repositories.js'
import { sqliteKysely, type SqliteHandle } from './sqlite.js'
import { writeTransaction, type Executor } from './transaction.js'
import { createUsersRepository } from './users.js'
import { createWebhooksRepository } from './webhooks.js'
import { createWorkspacesRepository } from './workspaces.js'

/** Every domain's data functions over one executor (the database, or one open transaction). */
function repositories (db: Executor, events: DomainEvents) {
  return {
    db,
    users: createUsersRepository(db),
    repositories: createRepositoriesRepository(db, events),
    workspaces: createWorkspacesRepository(db),
    boards: createBoardsRepository(db, events),
    issues: createIssuesRepository(db, events),
    epics: createEpicsRepository(db, events),
    milestones: createMilestonesRepository(db),
    dependencies: createDependenciesRepository(db, events),
    releases: createReleasesRepository(db, events),
    webhooks: createWebhooksRepository(db),
    chat: createChatRepository(db)
  }
}

export type StoreScope = ReturnType<typeof repositories>

export interface PlanningStore extends StoreScope {
  events: DomainEvents
  /** Runs `fn` with every repository bound to one write transaction: all of it commits, or none. */
  transaction: <T>(fn: (scope: StoreScope) => Promise<T>) => Promise<T>
}

/** The store behind `fastify.planningStore`: built once per database. */
export function createStore (db: Executor, events: DomainEvents): PlanningStore {
  return {
    ...repositories(db, events),
    events,
    transaction: async (fn) => await writeTransaction(db, async (trx) => await fn(repositories(trx, events)))
  }
}

/** Opens a SQLite store (migrated) outside Fastify: the admin CLI, benchmarks, tests. */
export async function openSqliteStore (database: SqliteHandle | string, events = new DomainEvents()): Promise<PlanningStore & { close: () => Promise<void> }> {
  const { db } = sqliteKysely(database)
  try {
    await migrate(db, 'sqlite')
  } catch (err) {
    await db.destroy()
    throw err
  }
  return { ...createStore(db, events), close: async () => await db.destroy() }
}
