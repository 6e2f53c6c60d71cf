import type { UserRow } from '../db/sign-in/accounts.js'
import type { ChatRole } from '../db/chat/repository.js'
import type { IssueChange, IssueRow, MilestoneFields, Repository } from '../db/repositories.js'
import type { PlanningStore } from '../db/store.js'
import type { PermissionName, User } from '../db/users.js'
import type { NewWorkspace, WorkspaceChange } from '../db/workspaces.js'
import { loadFixture, type FixtureAnalyzed, type FixtureProgress } from './fixtures.js'

/**
 * The operations of the admin API and the admin CLI (the issue-hosting platform's side and the
 * dashboard), each one transaction.
 */
export function createAdminOperations (store: PlanningStore) {
  const tx = store.transaction
  /** An issue as the admin API and the CLI show it. */
  const issueShape = (i: IssueRow) => ({
    repo_id: Number(i.repo_id),
    number: Number(i.number),
    title: i.title,
    state: i.state,
    ...(i.milestone_number === null ? {} : { milestone_number: Number(i.milestone_number) })
  })

  return {
    importFixture: async (fixture: unknown, analyzed?: FixtureAnalyzed, progress?: FixtureProgress) => await loadFixture(store, fixture, progress, analyzed),
    listUsers: async () => await store.accounts.list(),
    createUser: async (login: string, id?: number, email?: string, administrator?: boolean): Promise<UserRow> => await tx(async (s) => {
      const user = await s.users.create(login, id)
      if (email !== undefined) await s.users.setEmail(user.id, email)
      if (administrator === true) await s.accounts.setAdministrator(user.id, true)
      return (await s.accounts.byLogin(login))!
    }),
    /** Sets or clears the email, makes or unmakes an administrator (never the last one: 409). */
    updateUser: async (login: string, change: { email?: string | null, administrator?: boolean }): Promise<UserRow> => await tx(async (s) => {
      const user = await s.users.requireLogin(login)
      if (change.email !== undefined) await s.users.setEmail(user.id, change.email)
      if (change.administrator !== undefined) await s.accounts.setAdministrator(user.id, change.administrator)
      return (await s.accounts.byLogin(user.login))!
    }),
    userTokens: async (login: string) => await store.tokens.list((await store.users.requireLogin(login)).id),
    revokeUserToken: async (login: string, tokenId: string) =>
      await tx(async (s) => { await s.tokens.revoke((await s.users.requireLogin(login)).id, tokenId) }),
    audit: async (cursor: string | undefined, limit: number, filter: { actor?: string, action?: string } = {}) => await store.audit.list(cursor, limit, filter),
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
    deleteUser: async (login: string) => await tx(async (s) => {
      const user = await s.users.requireLogin(login)
      await s.accounts.guardRemoval(user.id)
      await s.users.remove(user.id)
    }),
    revokeToken: async (login: string) => await tx(async (s) => { await s.users.revokeToken((await s.users.requireLogin(login)).id) }),
    deleteRepository: async (repoId: number) => await tx(async (s) => { await s.repositories.remove(repoId) }),
    /** Creates a repository; an administrator who makes it (not ADMIN_TOKEN) gets admin on it, so its board and settings are theirs to open. */
    createRepository: async (repo: Omit<Repository, 'id'> & { id?: number }, maker?: User) => await tx(async (s) => {
      const made = await s.repositories.create(repo)
      if (maker !== undefined) await s.users.setPermission(maker.id, made.id, 'admin')
      return made
    }),
    setPermission: async (repoId: number, login: string, permission: PermissionName) => await tx(async (s) => {
      await s.repositories.requireRepository(repoId)
      await s.users.setPermission((await s.users.requireLogin(login)).id, repoId, permission)
      return { repo_id: repoId, login, permission }
    }),
    /** One permission on every repository of a workspace, in one transaction (all or none). */
    setWorkspacePermission: async (workspaceId: string, login: string, permission: PermissionName) => await tx(async (s) => {
      const workspace = await s.workspaces.requireWorkspace(workspaceId)
      const user = await s.users.requireLogin(login)
      for (const repoId of workspace.repositories) await s.users.setPermission(user.id, repoId, permission)
      return { workspace_id: workspaceId, login: user.login, permission, repositories: workspace.repositories }
    }),
    createIssue: async (repoId: number, issue: { number: number, title: string, state?: 'open' | 'closed', author?: string, milestone_number?: number, pull_request?: boolean }) => await tx(async (s) => {
      const authorId = issue.author === undefined ? undefined : (await s.users.requireLogin(issue.author)).id
      const { milestone_number: milestoneNumber, pull_request: pullRequest, ...rest } = issue
      return issueShape(await s.repositories.createIssue(repoId, { ...rest, authorId, milestoneNumber, pullRequest }))
    }, [repoId], []),
    updateIssue: async (repoId: number, number: number, change: IssueChange) => await tx(async (s) => {
      await s.repositories.requireRepository(repoId)
      return issueShape(await s.repositories.updateIssue(repoId, number, change))
    }, [repoId], []),
    createMilestone: async (repoId: number, number: number, title: string, fields: Omit<MilestoneFields, 'title'> = {}) =>
      await tx(async (s) => await s.repositories.createMilestone(repoId, number, title, fields)),
    updateMilestone: async (repoId: number, number: number, fields: MilestoneFields) =>
      await tx(async (s) => await s.repositories.updateMilestone(repoId, number, fields)),
    deleteMilestone: async (repoId: number, number: number) =>
      await tx(async (s) => await s.repositories.deleteMilestone(repoId, number)),
    createWorkspace: async (input: NewWorkspace) => await tx(async (s) => await s.workspaces.create(input)),
    updateWorkspace: async (id: string, change: WorkspaceChange) => await tx(async (s) => await s.workspaces.update(id, change)),
    /** Deletes a pipeline, its issues moved to the end of another pipeline of the workspace first. */
    deletePipeline: async (user: { id: number, login: string } | undefined, id: string, pipelineId: string, destinationId: string) => await tx(async (s) => {
      await s.pipelineRemoval.remove(user, id, pipelineId, destinationId)
      return await s.workspaces.withPipelines(id)
    }),
    setChatRole: async (login: string, role: ChatRole) => await tx(async (s) => {
      const user = await s.users.requireLogin(login)
      await s.chat.setRole(user.id, role)
      return { login: user.login, role }
    })
  }
}

export type AdminOperations = ReturnType<typeof createAdminOperations>
