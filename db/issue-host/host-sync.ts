import { sql } from 'kysely'
import { announce, issueContext } from '../announce.js'
import { createAuditRepository } from '../sign-in/audit.js'
import { createBoardsRepository } from '../boards.js'
import { DomainEvents, NOBODY } from '../domain-events.js'
import { recordMilestone } from '../history.js'
import { createRepositoriesRepository, issueByNumber } from '../repositories.js'
import { nowIso } from '../ids.js'
import { notedEvents, reached, type Executor } from '../engine/transaction.js'
import { createUsersRepository, LEVELS, type PermissionName } from '../users.js'

/** The permission names by level, as the audit log says them. */
const LEVEL_NAMES = ['none', 'read', 'write', 'admin'] as const

/** A repository as the issue host describes it (`id` is the platform's). */
/** Finds a repository on the issue host by its platform id (null: the host does not know it). */
export type RepositoryLookup = (platformId: number) => Promise<HostRepository | null>

export interface HostRepository {
  id: number
  owner: string
  name: string
  html_url: string
  updated_at: string | null
  /** what the host says of it, when it says it (docs/graphql.md, "Fields the hosted clients read") */
  created_at?: string
  private?: boolean
  archived?: boolean
  owner_id?: number
  owner_kind?: 'User' | 'Organization'
}

/** The columns of what the host said of a repository, those it said only. */
function hostFacts (repo: HostRepository) {
  return {
    ...(repo.created_at === undefined ? {} : { created_at: repo.created_at }),
    ...(repo.private === undefined ? {} : { is_private: repo.private ? 1 : 0 }),
    ...(repo.archived === undefined ? {} : { is_archived: repo.archived ? 1 : 0 }),
    ...(repo.owner_id === undefined ? {} : { owner_platform_id: repo.owner_id }),
    ...(repo.owner_kind === undefined ? {} : { owner_kind: repo.owner_kind })
  }
}
/** An issue or pull request as the issue host describes it (they share one number space). */
export interface HostIssue {
  number: number
  title: string
  state: 'open' | 'closed'
  updated_at: string | null
  /** the host's labels and assignees, when the description carries them */
  labels?: Array<{ name: string, color: string | null }>
  assignees?: Array<{ login: string, avatar_url: string | null }>
  /** its milestone (null: none; absent: not said) */
  milestone_number?: number | null
  /** true: a pull request */
  pull_request?: boolean
  /** its description (null: none; absent: not said), kept at most BODY_LIMIT characters */
  body?: string | null
}
export interface HostMilestone { number: number, title: string, updated_at: string | null, due_on?: string | null, state?: 'open' | 'closed' }
export interface HostUser { id: number, login: string }
/** The connection a delivery or import comes through: it reads and writes only what is bound to it. */
export interface SyncConnection { id: string, kind: 'github' | 'gitea' | 'forgejo', web_url?: string }

/** The most of a description kept: GitHub's own limit, so only another host's longer text is cut. */
export const BODY_LIMIT = 65_536

/** A description as kept: an empty one is none; a longer one is cut at BODY_LIMIT characters (never inside a surrogate pair). */
export function keptBody (body: string | null): string | null {
  if (body === null || body === '') return null
  if (body.length <= BODY_LIMIT) return body
  const cut = body.slice(0, BODY_LIMIT)
  return /[\uD800-\uDBFF]$/.test(cut) ? cut.slice(0, -1) : cut
}

/** Platform ids at or above this are never taken as ours, so the ids allocated here stay safe integers. */
const OWN_ID_LIMIT = 2 ** 40

/** github.com, whose repository ids the hosted service (and so a hosted import's placeholders) uses. */
const onGithubCom = (connection: SyncConnection): boolean => connection.kind === 'github' && connection.web_url !== undefined && new URL(connection.web_url).hostname === 'github.com'

/** A label or assignee change of an issue, as its event records it. */
interface ActivityChange { type: 'labelIssue' | 'unlabelIssue' | 'assignIssue' | 'unassignIssue', subject: string }

/** What `after` added to `before` and what it took away, as changes of the given types. */
function difference (before: string[], after: string[], added: ActivityChange['type'], removed: ActivityChange['type']): ActivityChange[] {
  const had = new Set(before)
  const has = new Set(after)
  return [
    ...after.filter((name) => !had.has(name)).map((subject) => ({ type: added, subject })),
    ...before.filter((name) => !has.has(name)).map((subject) => ({ type: removed, subject }))
  ]
}

/** A repository bound to the connection, by our id. */
export interface BoundRepository { id: number, owner: string, name: string, host_updated_at: string | null }

/** Why a repository could not be bound (the delivery is ignored then, with this in the log). */
export type Refusal = { refused: string }

const older = (incoming: string | null, stored: string | null): boolean =>
  incoming !== null && stored !== null && Date.parse(incoming) < Date.parse(stored)

/**
 * Keeping repositories, identities, issues, milestones and permissions in step with one
 * connection's issue host (docs/connections.md, "Identities and bindings"). Every function runs inside the caller's
 * transaction (one delivery or one imported page) and touches only repositories bound to this
 * connection: another connection's, or ones made here (admin API, fixtures, the demo), are
 * never read or changed through it. Each says what it reached (`reached`): the repository and the
 * issues whose board rows it changed, or anything (a repository bound or renamed, a permission).
 */
export function createHostSync (trx: Executor, connection: SyncConnection, events?: DomainEvents) {
  const repos = createRepositoriesRepository(trx, events)
  const users = createUsersRepository(trx)

  const bound = async (platformRepoId: number): Promise<BoundRepository | undefined> => {
    const row = await trx.selectFrom('repositories').select(['id', 'owner', 'name', 'host_updated_at'])
      .where('connection_id', '=', connection.id).where('platform_repo_id', '=', platformRepoId).executeTakeFirst()
    return row === undefined ? undefined : { ...row, id: Number(row.id) }
  }

  /** Our id for a new repository: the platform's on GitHub when it is free (hosted-API clients use it), else the next one here. */
  const candidateId = async (repo: HostRepository, attempt: number): Promise<number> => {
    if (attempt === 0 && connection.kind === 'github' && repo.id < OWN_ID_LIMIT) return repo.id
    const { top } = await trx.selectFrom('repositories').select(sql<number | null>`max(id)`.as('top')).where('id', '<', OWN_ID_LIMIT).executeTakeFirstOrThrow()
    return Number(top ?? 0) + 1 + (attempt > 1 ? attempt : 0)
  }

  /**
   * The label and assignee changes of an issue that was here before: recorded as issue events
   * (the events feed) and announced (webhooks), one per label or person, in one insert.
   */
  const recordChanges = async (issueId: number, changes: ActivityChange[]): Promise<void> => {
    if (changes.length === 0) return
    const at = nowIso()
    notedEvents(trx)
    await trx.insertInto('issue_events').values(changes.map((c) => ({
      issue_id: issueId,
      user_id: null,
      type: c.type,
      subject: c.subject,
      created_at: at,
      from_estimate: null,
      to_estimate: null,
      from_pipeline: null,
      to_pipeline: null,
      workspace_id: null
    }))).execute()
    const context = { ...await issueContext(trx, issueId), user: NOBODY }
    for (const c of changes) {
      if (c.type === 'labelIssue' || c.type === 'unlabelIssue') {
        await announce(trx, events, { ...context, type: c.type === 'labelIssue' ? 'issue_labeled' : 'issue_unlabeled', label: c.subject })
      } else {
        await announce(trx, events, { ...context, type: c.type === 'assignIssue' ? 'issue_assigned' : 'issue_unassigned', assignee: c.subject })
      }
    }
  }

  /**
   * The host's labels and assignees of the issue, as described (replacing what was kept). Changes
   * to an issue that was here before become events; a new issue's first labels do not.
   */
  const keepLabels = async (issueId: number, issue: HostIssue, isNew: boolean): Promise<void> => {
    const changes: ActivityChange[] = []
    if (issue.labels !== undefined) {
      const before = (await trx.selectFrom('issue_labels').select('name').where('issue_id', '=', issueId).execute()).map((r) => r.name)
      await trx.deleteFrom('issue_labels').where('issue_id', '=', issueId).execute()
      const labels = [...new Map(issue.labels.map((l) => [l.name, l])).values()]
      if (labels.length > 0) await trx.insertInto('issue_labels').values(labels.map((l) => ({ issue_id: issueId, name: l.name, color: l.color }))).execute()
      changes.push(...difference(before, labels.map((l) => l.name), 'labelIssue', 'unlabelIssue'))
    }
    if (issue.assignees !== undefined) {
      const before = (await trx.selectFrom('issue_assignees').select('login').where('issue_id', '=', issueId).execute()).map((r) => r.login)
      await trx.deleteFrom('issue_assignees').where('issue_id', '=', issueId).execute()
      const people = [...new Map(issue.assignees.map((a) => [a.login, a])).values()]
      if (people.length > 0) await trx.insertInto('issue_assignees').values(people.map((a) => ({ issue_id: issueId, login: a.login, avatar_url: a.avatar_url }))).execute()
      changes.push(...difference(before, people.map((a) => a.login), 'assignIssue', 'unassignIssue'))
    }
    if (!isNew) await recordChanges(issueId, changes)
  }

  return {
    bound,

    /** A repository by our id, when it is bound to this connection. */
    async local (repoId: number): Promise<BoundRepository | undefined> {
      const row = await trx.selectFrom('repositories').select(['id', 'owner', 'name', 'host_updated_at'])
        .where('connection_id', '=', connection.id).where('id', '=', repoId).executeTakeFirst()
      return row === undefined ? undefined : { ...row, id: Number(row.id) }
    },

    /**
     * The repository bound to this connection for the platform's repository, bound on first
     * sight. Creating is an upsert that waits for a concurrent first sight of the same repository
     * and then reads it, so simultaneous deliveries all land. A name taken by a repository that is
     * not this one's refuses the binding. A hosted import's placeholder for the id is taken over
     * only by a github.com connection's import (`takeOver`: the repository read through the host's
     * API with the connection's token); a delivery naming it is refused, so a forged or mistaken
     * one cannot claim what was imported.
     */
    async bind (repo: HostRepository, options: { takeOver?: boolean } = {}): Promise<BoundRepository | Refusal> {
      const existing = await bound(repo.id)
      // A repository bound now may be one that users can read from now on.
      reached(trx, existing?.id, [])
      if (existing !== undefined) {
        // Every delivery names its repository: what it says of it is kept, unless older than what is stored.
        const facts = hostFacts(repo)
        if (Object.keys(facts).length > 0 && !older(repo.updated_at, existing.host_updated_at)) {
          await trx.updateTable('repositories').set(facts).where('id', '=', existing.id).execute()
        }
        return existing
      }
      if (onGithubCom(connection) && options.takeOver !== true) {
        const placeholder = await trx.selectFrom('repositories').select('id').where('id', '=', repo.id).where('placeholder', '=', 1).executeTakeFirst()
        if (placeholder !== undefined) return { refused: `repository ${repo.id} is a hosted import's placeholder: import it through this connection to take it over` }
      }
      if (onGithubCom(connection)) {
        await trx.updateTable('repositories')
          .set({
            owner: repo.owner,
            name: repo.name,
            html_url: repo.html_url,
            connection_id: connection.id,
            platform_repo_id: repo.id,
            host_updated_at: repo.updated_at,
            placeholder: 0,
            ...hostFacts(repo)
          })
          .where('id', '=', repo.id).where('placeholder', '=', 1).where('connection_id', 'is', null)
          .where(({ not, exists, selectFrom }) => not(exists(selectFrom('repositories as r').select('r.id').where('r.owner', '=', repo.owner).where('r.name', '=', repo.name))))
          .execute()
        const taken = await bound(repo.id)
        if (taken !== undefined) return taken
      }
      for (let attempt = 0; attempt < 6; attempt++) {
        const id = await candidateId(repo, attempt)
        await trx.insertInto('repositories').values({
          id,
          owner: repo.owner,
          name: repo.name,
          html_url: repo.html_url,
          connection_id: connection.id,
          platform_repo_id: repo.id,
          host_updated_at: repo.updated_at,
          created_at: new Date().toISOString(),
          ...hostFacts(repo)
        }).onConflict((oc) => oc.doNothing()).execute()
        const found = await bound(repo.id)
        if (found !== undefined) return found
        const named = await trx.selectFrom('repositories').select('id')
          .where('owner', '=', repo.owner).where('name', '=', repo.name).executeTakeFirst()
        if (named !== undefined) return { refused: `the name ${repo.owner}/${repo.name} is taken by repository ${named.id}, which this connection does not own` }
      }
      return { refused: `no free repository id for ${repo.owner}/${repo.name}` }
    },

    /** A renamed or transferred repository follows, unless the description is older than what is stored. */
    async describe (local: BoundRepository, repo: HostRepository): Promise<'updated' | 'stale' | Refusal> {
      reached(trx, undefined)
      if (older(repo.updated_at, local.host_updated_at)) return 'stale'
      const named = await trx.selectFrom('repositories').select('id')
        .where('owner', '=', repo.owner).where('name', '=', repo.name).where('id', '!=', local.id).executeTakeFirst()
      if (named !== undefined) return { refused: `the name ${repo.owner}/${repo.name} is taken by repository ${named.id}` }
      await trx.updateTable('repositories')
        .set({ owner: repo.owner, name: repo.name, html_url: repo.html_url, ...(repo.updated_at === null ? {} : { host_updated_at: repo.updated_at }) })
        .set(hostFacts(repo))
        .where('id', '=', local.id).where('connection_id', '=', connection.id).execute()
      return 'updated'
    },

    /** Deleted on the host: the repository and everything planned on it go. */
    async deleteRepository (local: BoundRepository): Promise<void> {
      reached(trx, undefined)
      await trx.deleteFrom('repositories').where('id', '=', local.id).where('connection_id', '=', connection.id).execute()
    },

    /** The host user as an identity of this connection (never a local user); a renamed login follows. */
    async identity (user: HostUser): Promise<{ platform_user_id: number, user_id: number | null }> {
      reached(trx, undefined)
      await trx.insertInto('host_identities')
        .values({ connection_id: connection.id, platform_user_id: user.id, login: user.login, user_id: null, created_at: new Date().toISOString() })
        .onConflict((oc) => oc.columns(['connection_id', 'platform_user_id']).doUpdateSet({ login: user.login }))
        .execute()
      const row = await trx.selectFrom('host_identities').select(['platform_user_id', 'user_id'])
        .where('connection_id', '=', connection.id).where('platform_user_id', '=', user.id).executeTakeFirstOrThrow()
      return { platform_user_id: Number(row.platform_user_id), user_id: row.user_id === null ? null : Number(row.user_id) }
    },

    /**
     * What the host grants an identity on a bound repository: kept for the identity, and given to
     * the local user it is linked to (an unlinked identity's permission applies once it is linked).
     */
    async permission (identity: { platform_user_id: number, user_id: number | null }, local: BoundRepository, permission: PermissionName): Promise<void> {
      reached(trx, undefined)
      const level = LEVELS[permission]
      const key = { connection_id: connection.id, platform_user_id: identity.platform_user_id, repo_id: local.id }
      const before = await trx.selectFrom('identity_permissions').select('level').where('connection_id', '=', key.connection_id)
        .where('platform_user_id', '=', key.platform_user_id).where('repo_id', '=', key.repo_id).executeTakeFirst()
      const from = before === undefined ? 0 : Number(before.level)
      // A change the host made is the audit log's too (docs/sign-in.md, "Audit log"); the same answer again is not.
      if (from !== level) {
        const user = identity.user_id === null ? undefined : await trx.selectFrom('users').select('login').where('id', '=', identity.user_id).executeTakeFirst()
        const change = { from: LEVEL_NAMES[from], to: LEVEL_NAMES[level] }
        await createAuditRepository(trx).record({
          actor: `host:${connection.id}`,
          action: 'permission.changed',
          target: `repository:${local.id}`,
          detail: { connection_id: connection.id, platform_user_id: identity.platform_user_id, user: user?.login ?? null, ...change }
        })
      }
      if (level === 0) {
        await trx.deleteFrom('identity_permissions').where('connection_id', '=', key.connection_id)
          .where('platform_user_id', '=', key.platform_user_id).where('repo_id', '=', key.repo_id).execute()
      } else {
        await trx.insertInto('identity_permissions').values({ ...key, level })
          .onConflict((oc) => oc.columns(['connection_id', 'platform_user_id', 'repo_id']).doUpdateSet({ level })).execute()
      }
      if (identity.user_id !== null) await users.setPermission(identity.user_id, local.id, permission)
    },

    /**
     * Creates (landing unprioritized in each workspace's first pipeline), retitles, closes (off the
     * boards) or reopens (back where it was) an issue. A description older than what is stored is
     * stale and changes nothing.
     */
    async issue (local: BoundRepository, issue: HostIssue): Promise<'created' | 'updated' | 'stale'> {
      // Its title, description, labels and assignees are on no board row; creating, closing or
      // reopening it names its row (repositories.ts).
      reached(trx, local.id, [])
      // A milestone this server does not hold (yet) is left as it is.
      let milestone = issue.milestone_number
      if (milestone !== undefined && milestone !== null) {
        const known = await trx.selectFrom('milestones').select('number').where('repo_id', '=', local.id).where('number', '=', milestone).executeTakeFirst()
        if (known === undefined) milestone = undefined
      }
      const created = await repos.createIssueIfAbsent(local.id, {
        number: issue.number, title: issue.title, state: issue.state, milestoneNumber: milestone ?? undefined, pullRequest: issue.pull_request
      })
      const body = issue.body === undefined ? {} : { body: keptBody(issue.body) }
      if (created !== undefined) {
        await trx.updateTable('issues').set({ host_updated_at: issue.updated_at, ...body }).where('id', '=', created.id).execute()
        await keepLabels(created.id, issue, true)
        return 'created'
      }
      const existing = await issueByNumber(trx, local.id, issue.number)
      const stored = await trx.selectFrom('issues').select('host_updated_at').where('id', '=', existing!.id).executeTakeFirstOrThrow()
      if (older(issue.updated_at, stored.host_updated_at)) return 'stale'
      await repos.updateIssue(local.id, issue.number, { title: issue.title, state: issue.state, milestone_number: milestone })
      if (issue.updated_at !== null || issue.pull_request === true || issue.body !== undefined) {
        await trx.updateTable('issues').set({
          ...(issue.updated_at === null ? {} : { host_updated_at: issue.updated_at }),
          ...(issue.pull_request === true ? { is_pull_request: 1 } : {}),
          ...body
        }).where('id', '=', existing!.id).execute()
      }
      await keepLabels(existing!.id, issue, false)
      return 'updated'
    },

    /**
     * A host label was put on the issue: where a pipeline names it (in any workspace holding the
     * repository), the issue moves to the end of that pipeline, unless it is there already.
     */
    async labelled (local: BoundRepository, issue: HostIssue, label: string): Promise<void> {
      if (issue.state === 'closed') return
      const row = await issueByNumber(trx, local.id, issue.number)
      if (row === undefined) return
      const targets = await trx.selectFrom('pipelines as p')
        .innerJoin('workspace_repositories as wr', 'wr.workspace_id', 'p.workspace_id')
        .leftJoin('placements as pl', (join) => join.onRef('pl.workspace_id', '=', 'p.workspace_id').on('pl.issue_id', '=', row.id))
        .select(['p.id', 'p.workspace_id', 'pl.pipeline_id as current'])
        .where('wr.repo_id', '=', local.id).where(sql<boolean>`lower(p.host_label) = lower(${label})`).execute()
      const repo = await repos.requireRepository(local.id)
      for (const target of targets) {
        if (target.current === target.id || target.current === null) continue
        await createBoardsRepository(trx, events ?? new DomainEvents()).move(NOBODY, target.workspace_id, repo, issue.number, target.id, 'bottom')
      }
    },

    /** Deleted on the host, or transferred to another repository (which brings it in anew). */
    async deleteIssue (local: BoundRepository, issue: HostIssue): Promise<'updated' | 'stale'> {
      const existing = await issueByNumber(trx, local.id, issue.number)
      if (existing === undefined) return 'updated'
      const stored = await trx.selectFrom('issues').select('host_updated_at').where('id', '=', existing.id).executeTakeFirstOrThrow()
      if (older(issue.updated_at, stored.host_updated_at)) return 'stale'
      // Its dependencies go with it: their other issues' repositories are reached too (no board row there).
      const partners = await trx.selectFrom('dependencies as d')
        .innerJoin('issues as i', (join) => join.on((eb) => eb.or([eb('i.id', '=', eb.ref('d.blocking_id')), eb('i.id', '=', eb.ref('d.blocked_id'))])))
        .select('i.repo_id').distinct()
        .where((eb) => eb.or([eb('d.blocking_id', '=', existing.id), eb('d.blocked_id', '=', existing.id)])).execute()
      reached(trx, local.id, [existing.id])
      for (const partner of partners) reached(trx, Number(partner.repo_id), [])
      await trx.deleteFrom('issues').where('id', '=', existing.id).execute()
      return 'updated'
    },

    async milestone (local: BoundRepository, milestone: HostMilestone): Promise<'updated' | 'stale'> {
      reached(trx, local.id, [])
      const stored = await trx.selectFrom('milestones').select('host_updated_at')
        .where('repo_id', '=', local.id).where('number', '=', milestone.number).executeTakeFirst()
      if (stored !== undefined && older(milestone.updated_at, stored.host_updated_at)) return 'stale'
      const time = milestone.updated_at === null ? {} : { host_updated_at: milestone.updated_at }
      const fields = {
        ...(milestone.due_on === undefined ? {} : { due_on: milestone.due_on === null ? null : new Date(milestone.due_on).toISOString() }),
        ...(milestone.state === undefined ? {} : { state: milestone.state })
      }
      await trx.insertInto('milestones').values({ repo_id: local.id, number: milestone.number, title: milestone.title, start_date: null, ...time, ...fields })
        .onConflict((oc) => oc.columns(['repo_id', 'number']).doUpdateSet({ title: milestone.title, ...time, ...fields })).execute()
      return 'updated'
    },

    async deleteMilestone (local: BoundRepository, milestone: HostMilestone): Promise<'updated' | 'stale'> {
      reached(trx, local.id, [])
      const stored = await trx.selectFrom('milestones').select('host_updated_at')
        .where('repo_id', '=', local.id).where('number', '=', milestone.number).executeTakeFirst()
      if (stored !== undefined && older(milestone.updated_at, stored.host_updated_at)) return 'stale'
      const holding = await trx.selectFrom('issues').select('id').where('repo_id', '=', local.id).where('milestone_number', '=', milestone.number).execute()
      if (holding.length > 0) {
        await trx.updateTable('issues').set({ milestone_number: null }).where('id', 'in', holding.map((i) => i.id)).execute()
        for (const i of holding) await recordMilestone(trx, Number(i.id), local.id, null, new Date().toISOString())
      }
      await trx.deleteFrom('milestones').where('repo_id', '=', local.id).where('number', '=', milestone.number).execute()
      return 'updated'
    }
  }
}

export type HostSync = ReturnType<typeof createHostSync>
