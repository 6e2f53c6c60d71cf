import { createConnectionsRepository, type Connection } from '../db/connections.js'
import { createHostSync, type HostIssue, type HostRepository, type HostSync } from '../db/host-sync.js'
import type { PlanningStore } from '../db/store.js'
import type { PermissionName } from '../db/users.js'

type Json = Record<string, any>

export type Outcome = 'handled' | 'duplicate' | 'stale' | 'ignored'

/** A repository from a payload: GitHub's owner has `login`, Gitea's and Forgejo's also `username`. */
export function hostRepository (repo: Json): HostRepository {
  const owner = repo.owner?.login ?? repo.owner?.username ?? String(repo.full_name ?? '').split('/')[0]
  return { id: Number(repo.id), owner: String(owner), name: String(repo.name), html_url: typeof repo.html_url === 'string' ? repo.html_url : null }
}

export function hostIssue (issue: Json): HostIssue {
  return {
    number: Number(issue.number),
    title: String(issue.title ?? ''),
    state: issue.state === 'closed' ? 'closed' : 'open',
    updated_at: typeof issue.updated_at === 'string' ? issue.updated_at : null
  }
}

/** The host's permission names, as ours: pull/triage/read → read, push/maintain/write → write, admin → admin. */
export function permissionOf (value: unknown): PermissionName | undefined {
  if (typeof value === 'object' && value !== null) {
    const flags = value as Record<string, unknown>
    if (flags.admin === true) return 'admin'
    if (flags.maintain === true || flags.push === true) return 'write'
    if (flags.triage === true || flags.pull === true) return 'read'
    return 'none'
  }
  const name = String(value ?? '').toLowerCase()
  if (name === 'admin' || name === 'owner') return 'admin'
  if (name === 'push' || name === 'maintain' || name === 'write') return 'write'
  if (name === 'pull' || name === 'triage' || name === 'read') return 'read'
  return undefined
}

const ISSUE_ACTIONS = new Set(['opened', 'edited', 'closed', 'reopened', 'milestoned', 'demilestoned'])

/** One event's changes, inside the delivery's transaction. */
async function apply (sync: HostSync, connection: Connection, event: string, payload: Json): Promise<Outcome> {
  const action = String(payload.action ?? '')
  const repository = payload.repository === undefined ? undefined : hostRepository(payload.repository)
  const known = async (): Promise<HostRepository> => {
    await sync.repository(repository!, connection.id)
    return repository!
  }
  switch (event) {
    case 'issues':
    case 'pull_request': {
      const item = event === 'issues' ? payload.issue : payload.pull_request
      if (repository === undefined || item === undefined) return 'ignored'
      const repo = await known()
      if (action === 'deleted' || action === 'transferred') {
        await sync.deleteIssue(repo.id, Number(item.number))
        return 'handled'
      }
      if (!ISSUE_ACTIONS.has(action)) return 'ignored'
      const milestone = payload.milestone
      if (milestone !== undefined && milestone !== null) await sync.milestone(repo.id, { number: Number(milestone.number), title: String(milestone.title) })
      return await sync.issue(repo.id, hostIssue(item)) === 'stale' ? 'stale' : 'handled'
    }
    case 'milestone': {
      if (repository === undefined || payload.milestone === undefined) return 'ignored'
      const repo = await known()
      const milestone = { number: Number(payload.milestone.number), title: String(payload.milestone.title) }
      if (action === 'deleted') await sync.deleteMilestone(repo.id, milestone.number)
      else await sync.milestone(repo.id, milestone)
      return 'handled'
    }
    case 'repository': {
      if (repository === undefined) return 'ignored'
      if (action === 'deleted') {
        await sync.deleteRepository(repository.id)
        return 'handled'
      }
      await known()
      return 'handled'
    }
    case 'member':
    case 'collaborator': {
      const member = payload.member ?? payload.collaborator
      if (repository === undefined || member === undefined) return 'ignored'
      const repo = await known()
      const userId = await sync.user({ id: Number(member.id), login: String(member.login ?? member.username) })
      if (action === 'removed') {
        await sync.permission(userId, repo.id, 'none')
        return 'handled'
      }
      // GitHub names the new permission in changes.permission.to; an added collaborator without one can push.
      const named = permissionOf(payload.changes?.permission?.to ?? payload.permission ?? payload.changes?.new_permission?.to)
      const permission = named ?? (action === 'added' ? 'write' : undefined)
      if (permission === undefined) return 'ignored'
      await sync.permission(userId, repo.id, permission)
      return 'handled'
    }
    case 'installation_repositories': {
      for (const added of payload.repositories_added ?? []) {
        const [owner, name] = String(added.full_name).split('/')
        await sync.repository({ id: Number(added.id), owner, name, html_url: `${connection.web_url.replace(/\/$/, '')}/${added.full_name}` }, connection.id)
      }
      return 'handled'
    }
    default:
      return 'ignored'
  }
}

/**
 * Applies one webhook delivery from an issue host, in one transaction with the record of its
 * delivery id: a delivery seen before changes nothing.
 */
export async function handleDelivery (
  store: PlanningStore, connection: Connection, event: string, deliveryId: string | undefined, payload: Json
): Promise<Outcome> {
  return await store.transaction(async (tx) => {
    if (deliveryId !== undefined && !await createConnectionsRepository(tx.db).firstDelivery(tx.db, connection.id, deliveryId)) return 'duplicate'
    return await apply(createHostSync(tx.db, store.events), connection, event, payload)
  })
}
