import type { DomainEvents } from './domain-events.js'
import { isUniqueViolation } from './engine.js'
import { createRepositoriesRepository, issueByNumber } from './repositories.js'
import type { Executor } from './transaction.js'
import { createUsersRepository, type PermissionName } from './users.js'

/** A repository as the issue host describes it. */
export interface HostRepository { id: number, owner: string, name: string, html_url: string | null }
/** An issue or pull request as the issue host describes it (they share one number space). */
export interface HostIssue { number: number, title: string, state: 'open' | 'closed', updated_at: string | null }
export interface HostUser { id: number, login: string }

/**
 * Keeping repositories, users, issues, milestones and permissions in step with the issue host.
 * Every function runs inside the caller's transaction (one delivery or one imported page).
 */
export function createHostSync (trx: Executor, events?: DomainEvents) {
  const repos = createRepositoriesRepository(trx, events)
  const users = createUsersRepository(trx)

  return {
    /** Creates the repository on first sight; a renamed or transferred one follows. */
    async repository (repo: HostRepository, connectionId: string): Promise<void> {
      const existing = await repos.byId(repo.id)
      if (existing === undefined) {
        await repos.create({ id: repo.id, owner: repo.owner, name: repo.name })
      }
      await trx.updateTable('repositories')
        .set({ owner: repo.owner, name: repo.name, html_url: repo.html_url, connection_id: connectionId })
        .where('id', '=', repo.id).execute()
    },

    async deleteRepository (repoId: number): Promise<void> {
      await trx.deleteFrom('repositories').where('id', '=', repoId).execute()
    },

    /** Creates the user on first sight (ids are the host's); a renamed login follows. */
    async user (user: HostUser): Promise<number> {
      const existing = await users.byId(user.id)
      if (existing === undefined) return (await users.create(user.login, user.id)).id
      if (existing.login !== user.login) {
        try {
          await trx.updateTable('users').set({ login: user.login }).where('id', '=', user.id).execute()
        } catch (err) {
          // Another user holds the login here; the rename waits until that one is renamed too.
          if (!isUniqueViolation(err)) throw err
        }
      }
      return user.id
    },

    async permission (userId: number, repoId: number, permission: PermissionName): Promise<void> {
      await users.setPermission(userId, repoId, permission)
    },

    /**
     * Creates (landing unprioritized in each workspace's first pipeline), retitles, closes (off the
     * boards) or reopens (back where it was) an issue. A description older than what is stored is
     * stale and changes nothing: 'stale' is returned then.
     */
    async issue (repoId: number, issue: HostIssue): Promise<'created' | 'updated' | 'stale'> {
      const existing = await issueByNumber(trx, repoId, issue.number)
      if (existing === undefined) {
        const row = await repos.createIssue(repoId, { number: issue.number, title: issue.title, state: issue.state })
        await trx.updateTable('issues').set({ host_updated_at: issue.updated_at }).where('id', '=', row.id).execute()
        return 'created'
      }
      const stored = await trx.selectFrom('issues').select('host_updated_at').where('id', '=', existing.id).executeTakeFirstOrThrow()
      if (issue.updated_at !== null && stored.host_updated_at !== null && Date.parse(issue.updated_at) < Date.parse(stored.host_updated_at)) return 'stale'
      await repos.updateIssue(repoId, issue.number, { title: issue.title, state: issue.state })
      if (issue.updated_at !== null) await trx.updateTable('issues').set({ host_updated_at: issue.updated_at }).where('id', '=', existing.id).execute()
      return 'updated'
    },

    /** Deleted on the host, or transferred to another repository (which brings it in anew). */
    async deleteIssue (repoId: number, number: number): Promise<void> {
      await trx.deleteFrom('issues').where('repo_id', '=', repoId).where('number', '=', number).execute()
    },

    async milestone (repoId: number, milestone: { number: number, title: string }): Promise<void> {
      await trx.insertInto('milestones').values({ repo_id: repoId, number: milestone.number, title: milestone.title, start_date: null })
        .onConflict((oc) => oc.columns(['repo_id', 'number']).doUpdateSet({ title: milestone.title })).execute()
    },

    async deleteMilestone (repoId: number, number: number): Promise<void> {
      await trx.deleteFrom('milestones').where('repo_id', '=', repoId).where('number', '=', number).execute()
    }
  }
}

export type HostSync = ReturnType<typeof createHostSync>
