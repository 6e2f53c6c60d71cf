import { createBoardsRepository, type MovePosition } from '../db/boards.js'
import type { Connection } from '../db/issue-host/connections.js'
import { Conflict, HostUnavailable, Invalid, NotFound } from '../db/errors.js'
import { createHostSync } from '../db/issue-host/host-sync.js'
import { issueByNumber, type Repository } from '../db/repositories.js'
import type { PlanningStore } from '../db/store.js'
import type { User } from '../db/users.js'
import { hostRequest, pathSegment } from './host-api.js'
import { labelIds, labelsById, requireLabelIds } from './host-labels.js'
import { hostIssue } from './issue-host.js'

interface Host { connection: Connection, path: string, deadline: AbortSignal }

export interface HostCallOptions { fetch?: typeof fetch, timeoutMs?: number }

export interface NewHostIssue {
  title: string
  body?: string
  labels?: string[]
  assignees?: string[]
  pipeline_id?: string
  position?: MovePosition
  estimate?: number
}

/** `body` is the description: kept as the host answers with it (or as given, for a repository with no host). */
export interface IssueEdit { title?: string, body?: string, labels?: string[], assignees?: string[] }

/** Where a reopened issue lands, moved in the same transaction that reopens it. */
export interface Landing { user: User, pipelineId: string, position: MovePosition }

/**
 * Acting on the issue host from here (docs/connections.md, "Acting on the host"): the host is
 * written first and answers for it (502/504 when it refuses or hangs, nothing changed here), then
 * the local state follows in one transaction. A repository with no connection is changed here only;
 * one whose connection has no token cannot be written (409). Each transaction is confined to the
 * repository, and the steps name the board rows they change (a close or reopen its issue's, a move
 * its own), so a board kept in memory reads only those again.
 */
export function createHostIssues (store: PlanningStore, options: HostCallOptions = {}) {
  // One deadline for all the host calls of one operation, so a write needing several calls
  // answers within the same time as one that needs a single call.
  const connectionOf = async (repoId: number): Promise<Host | undefined> => {
    const row = await store.db.selectFrom('repositories').select(['connection_id', 'owner', 'name']).where('id', '=', repoId).executeTakeFirstOrThrow()
    if (row.connection_id === null) return undefined
    const connection = await store.connections.require(row.connection_id)
    if (connection.token === null) throw new Conflict(`repository ${repoId} is bound to connection ${connection.id}, which has no API token to write with`)
    const path = `/repos/${pathSegment(row.owner, 'owner')}/${pathSegment(row.name, 'repository')}/issues`
    return { connection, path, deadline: AbortSignal.timeout(options.timeoutMs ?? 5000) }
  }
  const call = (host: Host) => ({ connection: host.connection, fetch: options.fetch, deadline: host.deadline })

  /** Labels as the host takes them in issue writes: GitHub by name, Gitea and Forgejo by id. */
  const hostLabels = async (host: Host, names: string[] | undefined): Promise<Array<string | number> | undefined> => {
    if (names === undefined || !labelsById(host.connection)) return names
    return requireLabelIds(await labelIds(call(host), host.path.replace(/\/issues$/, ''), names), names)
  }

  /** The host's description of the issue it answered with, checked like a delivery's (and, when asked about one, about that one). */
  const described = (value: unknown, number?: number) => {
    const issue = hostIssue(value, 'the issue host\'s answer')
    if (number !== undefined && issue.number !== number) throw new HostUnavailable(`the issue host answered about issue ${issue.number} when asked about issue ${number}`)
    return issue
  }

  /** The workspace of a pipeline on a board holding the repository; anything else is the same 400 (nothing told about other boards). */
  const placement = async (repoId: number, pipelineId: string): Promise<string> => {
    const row = await store.db.selectFrom('pipelines as p').innerJoin('workspace_repositories as wr', 'wr.workspace_id', 'p.workspace_id')
      .select('p.workspace_id').where('p.id', '=', pipelineId).where('wr.repo_id', '=', repoId).executeTakeFirst()
    if (row === undefined) throw new Invalid(`body/pipeline_id ${pipelineId} is not a pipeline of a board holding repository ${repoId}`)
    return row.workspace_id
  }

  return {
    async create (user: User, repo: Repository, input: NewHostIssue): Promise<number> {
      // Checked before the host is written: an issue that cannot be placed as asked is not opened there.
      const workspaceId = input.pipeline_id === undefined ? undefined : await placement(repo.id, input.pipeline_id)
      const host = await connectionOf(repo.id)
      let issue
      if (host !== undefined) {
        const labels = await hostLabels(host, input.labels)
        const answer = await hostRequest({ ...call(host), method: 'POST', path: host.path, body: { title: input.title, body: input.body, labels, assignees: input.assignees } })
        issue = described(answer)
      } else {
        const top = await store.db.selectFrom('issues').select((eb) => eb.fn.max('number').as('top')).where('repo_id', '=', repo.id).executeTakeFirst()
        issue = { number: Number(top?.top ?? 0) + 1, title: input.title, body: input.body ?? null, state: 'open' as const, updated_at: null, labels: (input.labels ?? []).map((name) => ({ name, color: null })), assignees: (input.assignees ?? []).map((login) => ({ login, avatar_url: null })) }
      }
      await store.transaction(async (tx) => {
        const sync = createHostSync(tx.db, { id: host?.connection.id ?? '', kind: host?.connection.kind ?? 'github' }, store.events)
        const local = { id: repo.id, owner: repo.owner, name: repo.name, host_updated_at: null }
        const created = await sync.issue(local, issue)
        if (created !== 'created') throw new Conflict(`issue ${issue.number} already exists in repository ${repo.id}`)
        if (host === undefined) await tx.issues.setCreator(repo.id, issue.number, user.id)
        if (input.pipeline_id !== undefined && workspaceId !== undefined) {
          await createBoardsRepository(tx.db, store.events).move(user, workspaceId, repo, issue.number, input.pipeline_id, input.position ?? 'top')
        }
        if (input.estimate !== undefined) await tx.issues.setEstimate(user, repo, issue.number, input.estimate)
      }, [repo.id], [])
      return issue.number
    },

    async setState (repo: Repository, number: number, state: 'open' | 'closed', landing?: Landing): Promise<void> {
      const existing = await issueByNumber(store.db, repo.id, number)
      if (existing === undefined) throw new NotFound(`issue ${number} not found in repository ${repo.id}`)
      const workspaceId = landing === undefined || state === 'closed' ? undefined : await placement(repo.id, landing.pipelineId)
      const host = await connectionOf(repo.id)
      let updatedAt: string | null = null
      if (host !== undefined) {
        updatedAt = described(await hostRequest({ ...call(host), method: 'PATCH', path: `${host.path}/${number}`, body: { state } }), number).updated_at
      }
      await store.transaction(async (tx) => {
        await tx.repositories.updateIssue(repo.id, number, { state })
        if (updatedAt !== null) await tx.db.updateTable('issues').set({ host_updated_at: updatedAt }).where('id', '=', existing.id).execute()
        if (landing !== undefined && workspaceId !== undefined) {
          await createBoardsRepository(tx.db, store.events).move(landing.user, workspaceId, repo, number, landing.pipelineId, landing.position)
        }
      }, [repo.id], [])
    },

    async edit (repo: Repository, number: number, change: IssueEdit): Promise<void> {
      const existing = await issueByNumber(store.db, repo.id, number)
      if (existing === undefined) throw new NotFound(`issue ${number} not found in repository ${repo.id}`)
      const host = await connectionOf(repo.id)
      let issue = {
        number,
        title: change.title ?? existing.title,
        state: existing.state,
        updated_at: null as string | null,
        ...(change.body === undefined ? {} : { body: change.body as string | null }),
        ...(change.labels === undefined ? {} : { labels: change.labels.map((name) => ({ name, color: null })) }),
        ...(change.assignees === undefined ? {} : { assignees: change.assignees.map((login) => ({ login, avatar_url: null })) })
      }
      if (host !== undefined && !labelsById(host.connection)) {
        issue = described(await hostRequest({ ...call(host), method: 'PATCH', path: `${host.path}/${number}`, body: change }), number) as typeof issue
      } else if (host !== undefined) {
        // Gitea and Forgejo edit labels apart from the issue (replaced as a whole, by id).
        const { labels, ...rest } = change
        if (labels !== undefined) {
          const ids = await hostLabels(host, labels)
          await hostRequest({ ...call(host), method: 'PUT', path: `${host.path}/${number}/labels`, body: { labels: ids } })
        }
        issue = described(await hostRequest({ ...call(host), method: 'PATCH', path: `${host.path}/${number}`, body: rest }), number) as typeof issue
      }
      await store.transaction(async (tx) => {
        const sync = createHostSync(tx.db, { id: host?.connection.id ?? '', kind: host?.connection.kind ?? 'github' }, store.events)
        await sync.issue({ id: repo.id, owner: repo.owner, name: repo.name, host_updated_at: null }, { ...issue, updated_at: null })
        if (issue.updated_at !== null) await tx.db.updateTable('issues').set({ host_updated_at: issue.updated_at }).where('id', '=', existing.id).execute()
      }, [repo.id], [])
    }
  }
}

export type HostIssues = ReturnType<typeof createHostIssues>
