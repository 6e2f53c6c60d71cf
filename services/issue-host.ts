import { TypeCompiler, type TypeCheck } from '@sinclair/typebox/compiler'
import type { TSchema } from '@sinclair/typebox'
import { createConnectionsRepository, type Connection } from '../db/issue-host/connections.js'
import { Invalid } from '../db/errors.js'
import { createHostSync, keptBody, type BoundRepository, type HostIssue, type HostMilestone, type HostRepository, type HostSync, type Refusal, type RepositoryLookup } from '../db/issue-host/host-sync.js'
import type { PlanningStore } from '../db/store.js'
import type { PermissionName } from '../db/users.js'
import { registerFormats } from '../schemas/formats.js'
import {
  HostIssuePayload, HostMilestonePayload, HostRepositoryPayload, HostUser, InstallationRepositoriesEvent,
  IssueEvent, MemberEvent, MilestoneEvent, RepositoryEvent
} from '../schemas/host-payloads.js'

type Json = Record<string, any>

export type Outcome = 'handled' | 'duplicate' | 'stale' | 'ignored'
/** What a delivery did; `reason` says why one was ignored (for the log, never the client). */
export interface Result { outcome: Outcome, reason?: string }

registerFormats()
const checkers = new Map<TSchema, TypeCheck<TSchema>>()

/** The payload's fields this server reads, checked against their schema: 400 naming the first problems otherwise. */
export function checked<T extends TSchema> (schema: T, value: unknown, where: string): T['static'] {
  let checker = checkers.get(schema)
  if (checker === undefined) {
    checker = TypeCompiler.Compile(schema)
    checkers.set(schema, checker)
  }
  if (checker.Check(value)) return value
  const problems = [...checker.Errors(value)].slice(0, 3).map((e) => `${where}${e.path}: ${e.message}`)
  throw new Invalid(`the delivery is not valid: ${problems.join('; ')}`)
}

/**
 * What this server keeps of a payload holds no NUL character (PostgreSQL cannot store one): 400
 * naming where. Only the reduced values are walked, so a NUL in a field nobody reads is no matter.
 */
function withoutNul<T> (value: T, where: string): T {
  const pending: unknown[] = [value]
  while (pending.length > 0) {
    const next = pending.pop()
    if (typeof next === 'string' && next.includes('\u0000')) throw new Invalid(`the delivery is not valid: ${where} holds a NUL character`)
    if (typeof next === 'object' && next !== null) pending.push(...Object.values(next))
  }
  return value
}

/** A repository from a payload or the host's API: GitHub's owner has `login`, Gitea's and Forgejo's also `username`. */
export function hostRepository (value: unknown, where = 'repository'): HostRepository {
  const repo = checked(HostRepositoryPayload, value, where)
  const owner = repo.owner.login ?? repo.owner.username
  if (owner === undefined) throw new Invalid(`the delivery is not valid: ${where}/owner/login is missing`)
  const kind = repo.owner.type === 'Organization' || repo.owner.type === 'User' ? repo.owner.type : undefined
  return withoutNul({
    id: repo.id,
    owner,
    name: repo.name,
    html_url: repo.html_url,
    updated_at: repo.updated_at ?? null,
    ...(repo.created_at == null ? {} : { created_at: new Date(typeof repo.created_at === 'number' ? repo.created_at * 1000 : repo.created_at).toISOString() }),
    ...(repo.private === undefined ? {} : { private: repo.private }),
    ...(repo.archived === undefined ? {} : { archived: repo.archived }),
    ...(repo.owner.id === undefined ? {} : { owner_id: repo.owner.id }),
    ...(kind === undefined ? {} : { owner_kind: kind })
  }, where)
}

export function hostIssue (value: unknown, where = 'issue', pullRequest = false): HostIssue {
  const issue = checked(HostIssuePayload, value, where)
  return withoutNul({
    number: issue.number,
    ...(pullRequest || (issue.pull_request !== undefined && issue.pull_request !== null) ? { pull_request: true } : {}),
    title: issue.title,
    state: issue.state,
    updated_at: issue.updated_at,
    // A NUL in the description (which PostgreSQL cannot store) is replaced, not a reason to refuse the whole delivery.
    ...(issue.body === undefined ? {} : { body: keptBody(issue.body === null ? null : issue.body.replaceAll('\u0000', '\uFFFD')) }),
    ...(issue.milestone === undefined ? {} : { milestone_number: issue.milestone === null ? null : issue.milestone.number }),
    ...(issue.labels === undefined ? {} : { labels: (issue.labels ?? []).map((l) => ({ name: l.name, color: l.color?.replace(/^#/, '') ?? null })) }),
    ...(issue.assignees === undefined
      ? {}
      : {
          assignees: (issue.assignees ?? []).flatMap((a) => {
            const login = a.login ?? a.username
            return login === undefined ? [] : [{ login, avatar_url: a.avatar_url === '' ? null : a.avatar_url ?? null }]
          })
        })
  }, where)
}

export function hostMilestone (value: unknown, where = 'milestone'): HostMilestone {
  const m = checked(HostMilestonePayload, value, where)
  return withoutNul({ number: m.number, title: m.title, updated_at: m.updated_at ?? null, due_on: m.due_on, state: m.state }, where)
}

export function hostUser (value: unknown, where: string): { id: number, login: string } {
  const user = checked(HostUser, value, where)
  const login = user.login ?? user.username
  if (login === undefined) throw new Invalid(`the delivery is not valid: ${where}/login is missing`)
  return withoutNul({ id: user.id, login }, where)
}

/** The host's permission names, as ours: pull/triage/read → read, push/maintain/write → write, admin/owner → admin. */
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
  if (name === 'none') return 'none'
  return undefined
}

const ISSUE_ACTIONS = new Set(['opened', 'edited', 'closed', 'reopened', 'milestoned', 'demilestoned', 'labeled', 'unlabeled', 'assigned', 'unassigned'])

/**
 * A delivery checked and reduced to what it changes, before any transaction: invalid payloads are
 * refused here, and a membership change that needs the host's word is read back here.
 */
type Plan = (sync: HostSync) => Promise<Result>

const ignored = (reason: string): Result => ({ outcome: 'ignored', reason })
const refusedOr = <T>(value: T | Refusal): value is T => typeof value !== 'object' || value === null || !('refused' in value)

/** Reads an identity's permission on a repository from the host (when the connection has an API token). */
export type PermissionReader = (repo: HostRepository, login: string) => Promise<PermissionName | undefined>

async function plan (
  connection: Connection, event: string, payload: Json, readPermission?: PermissionReader, ownAccount?: () => Promise<number | undefined>,
  lookupRepository?: RepositoryLookup
): Promise<Plan | Result> {
  const action = typeof payload.action === 'string' ? payload.action : ''
  const outcome = (result: 'created' | 'updated' | 'stale'): Result => ({ outcome: result === 'stale' ? 'stale' : 'handled' })
  const withRepository = (repo: HostRepository, fn: (sync: HostSync, local: BoundRepository) => Promise<Result>, create = true): Plan =>
    async (sync) => {
      const local = create ? await sync.bind(repo) : await sync.bound(repo.id)
      if (local === undefined) return ignored(`repository ${repo.owner}/${repo.name} (${repo.id}) is not bound to this connection`)
      if (!refusedOr(local)) return ignored(local.refused)
      return await fn(sync, local)
    }

  switch (event) {
    case 'issues':
    case 'pull_request': {
      const body = checked(IssueEvent, payload, '')
      const repo = hostRepository(body.repository)
      const item = event === 'issues' ? hostIssue(payload.issue, 'issue') : hostIssue(payload.pull_request, 'pull_request', true)
      const milestone = body.milestone === undefined || body.milestone === null ? undefined : hostMilestone(body.milestone)
      if (action === 'deleted' || action === 'transferred') {
        return withRepository(repo, async (sync, local) => outcome(await sync.deleteIssue(local, item)), false)
      }
      if (!ISSUE_ACTIONS.has(action)) return ignored(`${event} ${action} is not handled`)
      // Our own label writes (and other changes made with the connection's token) coming back change nothing.
      if (body.sender !== undefined && ownAccount !== undefined && body.sender.id === await ownAccount()) return ignored('the connection\'s own account sent it')
      return withRepository(repo, async (sync, local) => {
        if (milestone !== undefined) await sync.milestone(local, milestone)
        const result = await sync.issue(local, item)
        if (result !== 'stale' && action === 'labeled' && body.label !== undefined) await sync.labelled(local, item, withoutNul(body.label.name, 'label/name'))
        return outcome(result)
      })
    }
    case 'milestone': {
      const body = checked(MilestoneEvent, payload, '')
      const repo = hostRepository(body.repository)
      const milestone = hostMilestone(body.milestone)
      return withRepository(repo, async (sync, local) =>
        outcome(action === 'deleted' ? await sync.deleteMilestone(local, milestone) : await sync.milestone(local, milestone)), action !== 'deleted')
    }
    case 'repository': {
      const body = checked(RepositoryEvent, payload, '')
      let repo = hostRepository(body.repository)
      // With a token, the host is asked: a signed delivery alone does not rename a repository
      // (and so redirect the token's writes) or delete one with everything planned on it.
      const current = lookupRepository === undefined ? undefined : await lookupRepository(repo.id)
      if (action === 'deleted' && current !== undefined && current !== null) return ignored(`the host still has repository ${repo.id}`)
      if (action !== 'deleted' && current === null) return ignored(`the host has no repository ${repo.id}`)
      if (current !== undefined && current !== null) repo = { ...current, updated_at: current.updated_at ?? repo.updated_at }
      if (action === 'deleted') {
        return withRepository(repo, async (sync, local) => {
          if (local.host_updated_at !== null && Date.parse(repo.updated_at!) < Date.parse(local.host_updated_at)) return { outcome: 'stale' }
          await sync.deleteRepository(local)
          return { outcome: 'handled' }
        }, false)
      }
      return withRepository(repo, async (sync, local) => {
        const described = await sync.describe(local, repo)
        return refusedOr(described) ? outcome(described) : ignored(described.refused)
      })
    }
    case 'member':
    case 'collaborator': {
      const body = checked(MemberEvent, payload, '')
      const repo = hostRepository(body.repository)
      const where = payload.member === undefined ? 'collaborator' : 'member'
      const member = hostUser(payload.member ?? payload.collaborator, where)
      let permission: PermissionName | undefined
      if (readPermission !== undefined) {
        // The event carries no time to order it by: it only says "look again", and the host's answer is stored.
        permission = await readPermission(repo, member.login)
      } else if (action === 'removed') {
        permission = 'none'
      } else {
        // GitHub names the new permission in changes.permission.to; an added collaborator without one can push.
        const named = permissionOf(payload.changes?.permission?.to ?? payload.permission ?? payload.changes?.new_permission?.to)
        permission = named ?? (action === 'added' ? 'write' : undefined)
      }
      if (permission === undefined) return ignored(`${event} ${action} names no permission`)
      const granted = permission
      return withRepository(repo, async (sync, local) => {
        await sync.permission(await sync.identity(member), local, granted)
        return { outcome: 'handled' }
      })
    }
    case 'installation_repositories': {
      const body = checked(InstallationRepositoriesEvent, payload, '')
      const web = connection.web_url.replace(/\/$/, '')
      return async (sync) => {
        const refusals: string[] = []
        for (const added of body.repositories_added ?? []) {
          const [owner, name] = withoutNul(added.full_name, 'repositories_added/full_name').split('/')
          const local = await sync.bind({ id: added.id, owner, name, html_url: `${web}/${added.full_name}`, updated_at: null })
          if (!refusedOr(local)) refusals.push(local.refused)
        }
        return refusals.length === 0 ? { outcome: 'handled' } : ignored(refusals.join('; '))
      }
    }
    default:
      return ignored(`${event} is not handled`)
  }
}

/**
 * Applies one webhook delivery from an issue host, in one transaction with the record of its
 * delivery id: a delivery seen before changes nothing. The payload is checked first (400 and
 * nothing changed when invalid); only repositories bound to this connection are touched.
 */
export async function handleDelivery (
  store: PlanningStore, connection: Connection, event: string, deliveryId: string | undefined, payload: Json,
  readPermission?: PermissionReader, ownAccount?: () => Promise<number | undefined>, lookupRepository?: RepositoryLookup
): Promise<Result> {
  // The host is asked about the repository as bound here, never about a name the payload puts next to a bound id.
  const askBound: PermissionReader | undefined = readPermission === undefined
    ? undefined
    : async (repo, login) => {
      const known = await createHostSync(store.db, connection).bound(repo.id)
      return await readPermission(known === undefined ? repo : { ...repo, owner: known.owner, name: known.name }, login)
    }
  const planned = await plan(connection, event, payload, askBound, ownAccount, lookupRepository)
  if (typeof planned !== 'function' && planned.outcome === 'ignored') return planned
  // Confined to what the sync's steps say they reached (a close names its issue's board row).
  return await store.transaction(async (tx) => {
    if (deliveryId !== undefined && !await createConnectionsRepository(tx.db).firstDelivery(tx.db, connection.id, deliveryId)) return { outcome: 'duplicate' }
    if (typeof planned !== 'function') return planned
    return await planned(createHostSync(tx.db, connection, store.events))
  }, [], [])
}
