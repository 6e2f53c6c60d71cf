import { sql } from 'kysely'
import { NotFound } from './errors.js'
import { lockFor } from './engine/engine.js'
import { writeTransaction, type Executor } from './engine/transaction.js'
import { createRepositoriesRepository, type Repository } from './repositories.js'
import { createWorkspacesRepository } from './workspaces.js'

const slug = (name: string): string => name.toLowerCase().replace(/[^a-z0-9]+/g, '-').replace(/^-+|-+$/g, '').slice(0, 60) || 'workspace'

/**
 * A workspace's own repository (the hosted service's zenhubRepository): native issues that live
 * here only, without an issue host. It is made on first need by someone who may write the
 * workspace, as a repository an administrator could have made ("New repository"), added to the
 * workspace, and only its maker gets a permission on it (their highest level among the
 * workspace's repositories): permissions copied to everybody would outlive their source. From then
 * on its permissions are managed as any repository's (People, invites to the workspace). A
 * repository of the reserved name that is no workspace's own yet is adopted instead (its
 * permissions as they are).
 */
export function createOwnRepositories (db: Executor) {
  const find = async (trx: Executor, workspaceId: string): Promise<Repository | undefined> => {
    const row = await trx.selectFrom('workspace_own_repositories as o').innerJoin('repositories as r', 'r.id', 'o.repo_id')
      .select(['r.id', 'r.owner', 'r.name', 'r.html_url']).where('o.workspace_id', '=', workspaceId).executeTakeFirst()
    return row === undefined ? undefined : { ...row, id: Number(row.id) }
  }

  return {
    /** The workspace's own repository, if made. */
    find: async (workspaceId: string) => await find(db, workspaceId),

    /** The workspace whose own repository this is, if it is one. */
    async workspaceOf (repoId: number): Promise<string | undefined> {
      return (await db.selectFrom('workspace_own_repositories').select('workspace_id').where('repo_id', '=', repoId).executeTakeFirst())?.workspace_id
    },

    /** The workspace's own repository, made now when it is not yet (one transaction). */
    async ensure (workspaceId: string, makerId: number): Promise<Repository> {
      const found = await find(db, workspaceId)
      if (found !== undefined) return found
      return await writeTransaction(db, async (trx) => {
        await lockFor(trx, `own-repository:${workspaceId}`)
        const again = await find(trx, workspaceId)
        if (again !== undefined) return again
        const workspace = await trx.selectFrom('workspaces').select(['id', 'name']).where('id', '=', workspaceId).executeTakeFirst()
        if (workspace === undefined) throw new NotFound(`workspace ${workspaceId} not found`)
        const holds = (await trx.selectFrom('workspace_repositories').select('repo_id').where('workspace_id', '=', workspaceId).execute()).map((r) => Number(r.repo_id))
        const name = `${slug(workspace.name)}-${workspaceId}`
        // An import of an export that did not carry the link brings the repository without it: adopted, as it was.
        const unlinked = await trx.selectFrom('repositories as r').leftJoin('workspace_own_repositories as o', 'o.repo_id', 'r.id')
          .select(['r.id', 'r.owner', 'r.name', 'r.html_url', 'o.workspace_id']).where('r.owner', '=', 'workspace').where('r.name', '=', name).executeTakeFirst()
        if (unlinked !== undefined && unlinked.workspace_id === null) {
          const adopted = { id: Number(unlinked.id), owner: unlinked.owner, name: unlinked.name, html_url: unlinked.html_url }
          await trx.insertInto('workspace_own_repositories').values({ workspace_id: workspaceId, repo_id: adopted.id }).execute()
          if (!holds.includes(adopted.id)) await createWorkspacesRepository(trx).update(workspaceId, { add_repositories: [adopted.id] })
          return adopted
        }
        const repo = await createRepositoriesRepository(trx).create({ owner: 'workspace', name, html_url: null })
        await trx.insertInto('workspace_own_repositories').values({ workspace_id: workspaceId, repo_id: repo.id }).execute()
        if (holds.length > 0) {
          await sql`
            INSERT INTO permissions (user_id, repo_id, level)
            SELECT user_id, ${repo.id}, MAX(level) FROM permissions
            WHERE repo_id IN (${sql.join(holds)}) AND level >= 1 AND user_id = ${makerId}
            GROUP BY user_id`.execute(trx)
        }
        await createWorkspacesRepository(trx).update(workspaceId, { add_repositories: [repo.id] })
        return repo
      })
    }
  }
}

export type OwnRepositories = ReturnType<typeof createOwnRepositories>
