import { httpErrors } from '@fastify/sensible'
import { createChatRepository, type ChatRole } from './chat.js'
import { transactional, type Db } from './connection.js'
import { loadFixture } from './fixtures.js'
import { createRepositoriesRepository, type Repository } from './repositories.js'
import { createUsersRepository, type PermissionName, type User } from './users.js'
import { createWorkspacesRepository, type NewWorkspace, type WorkspaceChange } from './workspaces.js'

/**
 * The operations of the admin API and the admin CLI (the issue-hosting platform's side and the
 * dashboard), each one transaction.
 */
export function createAdminOperations (db: Db) {
  const users = createUsersRepository(db)
  const repos = createRepositoriesRepository(db)
  const workspaces = createWorkspacesRepository(db)
  const chat = createChatRepository(db)
  const tx = <A extends unknown[], R>(fn: (...args: A) => R) => transactional(db, fn)

  const requireUser = (login: string): User => {
    const user = users.byLogin(login)
    if (user === undefined) throw httpErrors.notFound(`user '${login}' not found`)
    return user
  }

  return {
    importFixture: (fixture: unknown) => loadFixture(db, fixture),
    listUsers: () => users.list(),
    createUser: tx((login: string, id?: number): User => {
      if (users.byLogin(login) !== undefined) throw httpErrors.conflict(`login '${login}' already exists`)
      if (id !== undefined && users.byId(id) !== undefined) throw httpErrors.conflict(`user id ${id} already exists`)
      return users.create(login, id)
    }),
    regenerateToken: tx((login: string): string => users.regenerateToken(requireUser(login).id)),
    listRepositories: () => repos.list(),
    createRepository: tx((repo: Repository) => repos.create(repo)),
    setPermission: tx((repoId: number, login: string, permission: PermissionName) => {
      repos.requireRepository(repoId)
      users.setPermission(requireUser(login).id, repoId, permission)
      return { repo_id: repoId, login, permission }
    }),
    createIssue: tx((repoId: number, issue: { number: number, title: string, state?: 'open' | 'closed', author?: string }) => {
      const authorId = issue.author === undefined ? undefined : requireUser(issue.author).id
      return repos.createIssue(repoId, { ...issue, authorId })
    }),
    updateIssue: tx((repoId: number, number: number, change: { title?: string, state?: 'open' | 'closed' }) => {
      repos.requireRepository(repoId)
      return repos.updateIssue(repoId, number, change)
    }),
    createMilestone: tx((repoId: number, number: number, title: string) => repos.createMilestone(repoId, number, title)),
    createWorkspace: tx((input: NewWorkspace) => workspaces.create(input)),
    updateWorkspace: tx((id: string, change: WorkspaceChange) => workspaces.update(id, change)),
    setChatRole: tx((login: string, role: ChatRole) => {
      const user = requireUser(login)
      chat.setRole(user.id, role)
      return { login: user.login, role }
    })
  }
}

export type AdminOperations = ReturnType<typeof createAdminOperations>
