import { createAccountsRepository } from './sign-in/accounts.js'
import { createAuditRepository } from './sign-in/audit.js'
import { createBoardsRepository } from './boards.js'
import { createBulkIssues } from './bulk-issues.js'
import { createChatRepository } from './chat/repository.js'
import { createConnectionsRepository } from './issue-host/connections.js'
import { createDependenciesRepository } from './dependencies.js'
import { DomainEvents } from './domain-events.js'
import { createEpicsRepository } from './epics.js'
import { createOwnRepositories } from './own-repositories.js'
import { createZenhubEpicsRepository } from './zenhub-epics.js'
import { createPrioritiesRepository } from './priorities.js'
import { createPrConnectionsRepository } from './pr-connections.js'
import { createZenhubEpicMetaRepository } from './zenhub-epic-meta.js'
import { createEpicDatesRepository } from './epic-dates.js'
import { createIssuesRepository } from './issues.js'
import { migrate } from './engine/migrations/index.js'
import { checkSecretKey, sealStoredSecrets } from './sealed-secrets.js'
import { createMilestonesRepository } from './milestones.js'
import { createLabelsRepository } from './labels.js'
import { createPipelineRemoval } from './pipeline-removal.js'
import { createOidcIdentitiesRepository } from './sign-in/oidc-identities.js'
import { createReleasesRepository } from './releases.js'
import { createSessionsRepository } from './sign-in/sessions.js'
import { createTokensRepository } from './sign-in/tokens.js'
import { createSprintsRepository } from './sprints.js'
import { createRepositoriesRepository } from './repositories.js'
import { SecretBox } from './engine/secret-box.js'
import { sqliteKysely, type SqliteHandle } from './engine/sqlite.js'
import { writeTransaction, type Executor } from './engine/transaction.js'
import { createUsersRepository } from './users.js'
import { createWebhooksRepository } from './webhooks.js'
import { createWorkspacesRepository } from './workspaces.js'
import { createWorkspaceFavorites } from './workspace-favorites.js'
import { createWorkspaceViews } from './workspace-views.js'

/** Every domain's data functions over one executor (the database, or one open transaction). */
function repositories (db: Executor, events: DomainEvents, secrets: SecretBox) {
  return {
    db,
    /** SECRET_KEY (and the previous key during a rotation): seals and opens secrets at rest */
    secrets,
    users: createUsersRepository(db),
    tokens: createTokensRepository(db),
    sessions: createSessionsRepository(db),
    accounts: createAccountsRepository(db),
    audit: createAuditRepository(db),
    oidcIdentities: createOidcIdentitiesRepository(db),
    repositories: createRepositoriesRepository(db, events),
    workspaces: createWorkspacesRepository(db),
    boards: createBoardsRepository(db, events),
    pipelineRemoval: createPipelineRemoval(db, events),
    issues: createIssuesRepository(db, events),
    epics: createEpicsRepository(db, events),
    zenhubEpics: createZenhubEpicsRepository(db),
    zenhubEpicMeta: createZenhubEpicMetaRepository(db),
    epicDates: createEpicDatesRepository(db),
    ownRepositories: createOwnRepositories(db),
    priorities: createPrioritiesRepository(db),
    prConnections: createPrConnectionsRepository(db),
    workspaceFavorites: createWorkspaceFavorites(db),
    workspaceViews: createWorkspaceViews(db),
    milestones: createMilestonesRepository(db),
    labels: createLabelsRepository(db),
    dependencies: createDependenciesRepository(db, events),
    releases: createReleasesRepository(db, events),
    sprints: createSprintsRepository(db, events),
    webhooks: createWebhooksRepository(db, secrets),
    connections: createConnectionsRepository(db, secrets),
    chat: createChatRepository(db),
    /** a loader of many issues at once (fixtures), with its own lookups kept for one load */
    bulkIssues: () => createBulkIssues(db, events)
  }
}

export type StoreScope = ReturnType<typeof repositories>

export interface PlanningStore extends StoreScope {
  events: DomainEvents
  /**
   * Runs `fn` with every repository bound to one write transaction: all of it commits, or none.
   * `repositories` and `boardRows` are `writeTransaction`'s: the reach the caller knows, which the
   * parts add to (`reached`); without them the write may change anything.
   */
  transaction: <T>(fn: (scope: StoreScope) => Promise<T>, repositories?: readonly number[], boardRows?: readonly number[]) => Promise<T>
}

/** The store behind `fastify.planningStore`: built once per database. */
export function createStore (db: Executor, events: DomainEvents, secrets = new SecretBox()): PlanningStore {
  return {
    ...repositories(db, events, secrets),
    events,
    transaction: async (fn, reach, boardRows) => await writeTransaction(db, async (trx) => await fn(repositories(trx, events, secrets)), reach, boardRows)
  }
}

/** Opens a SQLite store (migrated) outside Fastify: the admin CLI, benchmarks, tests. */
export async function openSqliteStore (
  database: SqliteHandle | string, events = new DomainEvents(), secrets = new SecretBox()
): Promise<PlanningStore & { close: () => Promise<void> }> {
  const { db } = sqliteKysely(database)
  try {
    await migrate(db, 'sqlite')
    await checkSecretKey(db, secrets)
    await sealStoredSecrets(db, secrets)
  } catch (err) {
    await db.destroy()
    throw err
  }
  const store = createStore(db, events, secrets)
  return {
    ...store,
    close: async () => {
      await store.workspaceViews.close()
      await db.destroy()
    }
  }
}
