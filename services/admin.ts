import type { ChatRole } from '../db/chat.js'
import type { IssueRow, Repository } from '../db/repositories.js'
import type { PlanningStore } from '../db/store.js'
import type { PermissionName, User } from '../db/users.js'
import type { NewWorkspace, WorkspaceChange } from '../db/workspaces.js'
import { loadFixture } from './fixtures.js'

/**
 * The operations of the admin API and the admin CLI (the issue-hosting platform's side and the
 * dashboard), each one transaction.
 */
export function createAdminOperations (store: PlanningStore) {
  const tx = store.transaction
  /** An issue as the admin API and the CLI show it. */
  const issueShape = (i: IssueRow) => ({ repo_id: Number(i.repo_id), number: Number(i.number), title: i.title, state: i.state })

  return {
    importFixture: async (fixture: unknown) => await loadFixture(store, fixture),
    listUsers: async () => await store.users.list(),
    createUser: async (login: string, id?: number): Promise<User> => await tx(async (s) => await s.users.create(login, id)),
    regenerateToken: async (login: string): Promise<string> =>
      await tx(async (s) => await s.users.regenerateToken((await s.users.requireLogin(login)).id)),
    listRepositories: async () => await store.repositories.list(),
    permissions: async (repoId: number) => {
      await store.repositories.requireRepository(repoId)
      return await store.users.permissionsOn(repoId)
    },
    issues: async (repoId: number) => (await store.repositories.issues(repoId)).map(issueShape),
    milestones: async (repoId: number) => await store.repositories.milestones(repoId),
    workspaces: async () => await store.workspaces.list(),
    deleteUser: async (login: string) => await tx(async (s) => { await s.users.remove((await s.users.requireLogin(login)).id) }),
    revokeToken: async (login: string) => await tx(async (s) => { await s.users.revokeToken((await s.users.requireLogin(login)).id) }),
    deleteRepository: async (repoId: number) => await tx(async (s) => { await s.repositories.remove(repoId) }),
    createRepository: async (repo: Repository) => await tx(async (s) => await s.repositories.create(repo)),
    setPermission: async (repoId: number, login: string, permission: PermissionName) => await tx(async (s) => {
      await s.repositories.requireRepository(repoId)
      await s.users.setPermission((await s.users.requireLogin(login)).id, repoId, permission)
      return { repo_id: repoId, login, permission }
    }),
    createIssue: async (repoId: number, issue: { number: number, title: string, state?: 'open' | 'closed', author?: string }) => await tx(async (s) => {
      const authorId = issue.author === undefined ? undefined : (await s.users.requireLogin(issue.author)).id
      return issueShape(await s.repositories.createIssue(repoId, { ...issue, authorId }))
    }),
    updateIssue: async (repoId: number, number: number, change: { title?: string, state?: 'open' | 'closed' }) => await tx(async (s) => {
      await s.repositories.requireRepository(repoId)
      return issueShape(await s.repositories.updateIssue(repoId, number, change))
    }),
    createMilestone: async (repoId: number, number: number, title: string) =>
      await tx(async (s) => await s.repositories.createMilestone(repoId, number, title)),
    createWorkspace: async (input: NewWorkspace) => await tx(async (s) => await s.workspaces.create(input)),
    updateWorkspace: async (id: string, change: WorkspaceChange) => await tx(async (s) => await s.workspaces.update(id, change)),
    setChatRole: async (login: string, role: ChatRole) => await tx(async (s) => {
      const user = await s.users.requireLogin(login)
      await s.chat.setRole(user.id, role)
      return { login: user.login, role }
    })
  }
}

export type AdminOperations = ReturnType<typeof createAdminOperations>
