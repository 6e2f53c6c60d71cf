import { Forbidden, Invalid, NotFound } from '../../../db/errors.js'
import type { IssueNode } from '../../../db/graph-reads.js'
import { LEVELS } from '../../../db/users.js'
import type { ZenhubEpicChange, ZenhubEpicRow, ZenhubEpicState } from '../../../db/zenhub-epics.js'
import { listConnection, type PageArgs } from '../connections.js'
import { encodeId, numberKey } from '../ids.js'
import { smallIssueConnection } from './issue-connections.js'
import { ORGANIZATION, repositoryObject, type IssueObject, type WorkspaceObject } from './objects.js'
import { workspaceFor } from './visibility.js'
import { echo, mayWrite, MAX_BATCH, type Ctx, type Input } from './write-access.js'
import type { Query } from '../batched-fields.js'

export const zenhubEpicObject = (row: ZenhubEpicRow) => ({ ...row, __typename: 'ZenhubEpic' as const })
type EpicObject = ReturnType<typeof zenhubEpicObject>

const PERMISSIONS = ['NONE', 'READ', 'WRITE', 'ADMIN']
const iso = (text: string) => new Date(text).toISOString()

/** The viewer's highest level on a visible workspace's repositories (0 when it is not visible). */
export async function levelIn (ctx: Ctx, workspaceId: string): Promise<number> {
  const found = await workspaceFor(ctx, workspaceId)
  if (found === undefined) return 0
  return await ctx.auth.bestLevel(ctx.request, found.repoIds.filter((r) => ctx.readable.has(r)))
}

/** An epic the viewer can see: its workspace is visible to them. */
export async function visibleEpic (ctx: Ctx, id: string): Promise<ZenhubEpicRow> {
  const [row] = await ctx.store.zenhubEpics.byIds([numberKey(id, 'ZenhubEpic')])
  if (row === undefined || await workspaceFor(ctx, row.workspace_id) === undefined) throw new NotFound(`zenhub epic ${id} not found`)
  return row
}

/** A workspace's write permission: write on one of its repositories, and a credential that may write. */
async function requireWorkspaceWrite (ctx: Ctx, workspaceId: string): Promise<void> {
  mayWrite(ctx)
  const level = await levelIn(ctx, workspaceId)
  if (level === 0) throw new NotFound(`workspace ${workspaceId} not found`)
  if (level < LEVELS.write) throw new Forbidden('write permission on the workspace (on one of its repositories) is required')
}

export async function writableEpic (ctx: Ctx, id: string): Promise<ZenhubEpicRow> {
  mayWrite(ctx)
  const row = await visibleEpic(ctx, id)
  await requireWorkspaceWrite(ctx, row.workspace_id)
  return row
}

/**
 * The workspace a new epic goes to. Epics here belong to a workspace, where the hosted service's
 * belong to its organization (this server's only one): `zenhubRepositoryId` names the workspace
 * by its own repository; without it, the one workspace the viewer may write is taken.
 */
async function workspaceForNewEpic (ctx: Ctx, input: { zenhubOrganizationId: string, zenhubRepositoryId?: string | null }): Promise<string> {
  if (input.zenhubOrganizationId !== ORGANIZATION.id) throw new NotFound(`zenhub organization ${input.zenhubOrganizationId} not found`)
  if (input.zenhubRepositoryId != null) {
    const repoId = numberKey(input.zenhubRepositoryId, 'Repository')
    const owner = ctx.readable.has(repoId) ? await ctx.store.ownRepositories.workspaceOf(repoId) : undefined
    if (owner === undefined) throw new NotFound(`zenhub repository ${input.zenhubRepositoryId} not found (give a workspace's zenhubRepository id)`)
    return owner
  }
  const candidates = []
  for (const w of await ctx.reads.workspacesHolding([...ctx.readable])) {
    if (await levelIn(ctx, w.id) >= LEVELS.write) candidates.push(w.id)
  }
  if (candidates.length === 1) return candidates[0]
  throw new Invalid(candidates.length === 0
    ? 'no workspace you may write: epics are created in a workspace'
    : 'give zenhubRepositoryId (the workspace\'s zenhubRepository id) to say which workspace the epic goes to')
}

/** The epics and issues of an add/remove: write on every epic's workspace, read on every issue. */
async function epicsAndIssues (ctx: Ctx, input: { zenhubEpicIds: string[], issueIds: string[] }) {
  mayWrite(ctx)
  const epicIds = [...new Set(input.zenhubEpicIds)]
  const issueIds = [...new Set(input.issueIds)]
  if (epicIds.length > 20 || issueIds.length > MAX_BATCH) throw new Invalid(`give at most 20 epics and ${MAX_BATCH} issues`)
  const epics = []
  for (const id of epicIds) epics.push(await writableEpic(ctx, id))
  const keys = issueIds.map((id) => numberKey(id, 'Issue'))
  const issues = await ctx.reads.issuesByIds(keys)
  if (issues.length !== keys.length || issues.some((i) => !ctx.readable.has(i.repo_id))) throw new NotFound('an issue of issueIds was not found')
  return { epics: epics.map((e) => e.id), issues: keys }
}

/** The epics after a write, in the order asked. */
export const after = (rows: ZenhubEpicRow[], order: number[]) => {
  const byId = new Map(rows.map((r) => [r.id, r]))
  return order.map((id) => zenhubEpicObject(byId.get(id)!))
}

const STATES = new Set(['OPEN', 'TODO', 'IN_PROGRESS', 'CLOSED'])

/** ZenhubEpic's writes: created, edited, dated, its state set, issues added and removed, deleted. */
export interface NewEpic { zenhubOrganizationId: string, zenhubRepositoryId?: string | null, zenhubEpic: { title: string, body?: string | null } }
export type EpicState = Input & { zenhubEpicId: string, state: ZenhubEpicState, applyToIssues?: boolean | null }

export const zenhubEpicWrites = {
  async createZenhubEpic (_: unknown, { input }: { input: Input & NewEpic }, ctx: Ctx) {
    mayWrite(ctx)
    const workspaceId = await workspaceForNewEpic(ctx, input)
    await requireWorkspaceWrite(ctx, workspaceId)
    const row = await ctx.store.zenhubEpics.create(ctx.user, workspaceId, input.zenhubEpic)
    return { ...echo(input), zenhubEpic: zenhubEpicObject(row) }
  },

  async updateZenhubEpic (_: unknown, { input }: { input: Input & { zenhubEpicId: string, title?: string | null, body?: string | null } }, ctx: Ctx) {
    const epic = await writableEpic(ctx, input.zenhubEpicId)
    const change: ZenhubEpicChange = {}
    if (input.title != null) change.title = input.title
    if (input.body !== undefined) change.body = input.body
    return { ...echo(input), zenhubEpic: zenhubEpicObject(await ctx.store.zenhubEpics.update(epic.id, change)) }
  },

  async updateZenhubEpicState (_: unknown, { input }: { input: EpicState }, ctx: Ctx) {
    const epic = await writableEpic(ctx, input.zenhubEpicId)
    if (input.applyToIssues === true) throw new Invalid('applyToIssues is not offered: close or reopen the issues with closeIssues or reopenIssues')
    if (!STATES.has(input.state)) throw new Invalid('state must be OPEN, TODO, IN_PROGRESS or CLOSED')
    return { ...echo(input), zenhubEpic: zenhubEpicObject(await ctx.store.zenhubEpics.update(epic.id, { state: input.state })) }
  },

  async updateZenhubEpicDates (_: unknown, { input }: { input: Input & { zenhubEpicId: string, startOn?: string | null, endOn?: string | null } }, ctx: Ctx) {
    const epic = await writableEpic(ctx, input.zenhubEpicId)
    const change: ZenhubEpicChange = {}
    if (input.startOn !== undefined) change.start_on = input.startOn
    if (input.endOn !== undefined) change.end_on = input.endOn
    return { ...echo(input), zenhubEpic: zenhubEpicObject(await ctx.store.zenhubEpics.update(epic.id, change)) }
  },

  async addIssuesToZenhubEpics (_: unknown, { input }: { input: Input & { zenhubEpicIds: string[], issueIds: string[] } }, ctx: Ctx) {
    const { epics, issues } = await epicsAndIssues(ctx, input)
    return { ...echo(input), zenhubEpics: after(await ctx.store.zenhubEpics.addIssues(epics, issues), epics) }
  },

  async removeIssuesFromZenhubEpics (_: unknown, { input }: { input: Input & { zenhubEpicIds: string[], issueIds: string[] } }, ctx: Ctx) {
    const { epics, issues } = await epicsAndIssues(ctx, input)
    return { ...echo(input), zenhubEpics: after(await ctx.store.zenhubEpics.removeIssues(epics, issues), epics) }
  },

  async deleteZenhubEpic (_: unknown, { input }: { input: Input & { zenhubEpicId: string } }, ctx: Ctx) {
    const epic = await writableEpic(ctx, input.zenhubEpicId)
    await ctx.store.zenhubEpics.remove(epic.id)
    return { ...echo(input), zenhubEpicId: encodeId('ZenhubEpic', epic.id) }
  }
}

/** `node(id)` of a ZenhubEpic: null when it does not exist or its workspace is not visible. */
export async function zenhubEpicNode (ctx: Ctx, key: number): Promise<EpicObject | null> {
  const [row] = await ctx.store.zenhubEpics.byIds([key])
  return row !== undefined && await workspaceFor(ctx, row.workspace_id) !== undefined ? zenhubEpicObject(row) : null
}

export interface EpicListArgs extends PageArgs {
  query?: string | null
  filters?: { state?: { in?: ZenhubEpicState[] | null, nin?: ZenhubEpicState[] | null } | null } | null
  orderBy?: { field?: 'CREATED_AT' | 'UPDATED_AT' | 'TITLE' | 'START_ON' | 'END_ON' | 'STATE' | null, direction?: 'ASC' | 'DESC' | null } | null
}

const ORDER: Record<string, (e: ZenhubEpicRow) => string> = {
  CREATED_AT: (e) => e.created_at,
  UPDATED_AT: (e) => e.updated_at,
  TITLE: (e) => e.title.toLowerCase(),
  START_ON: (e) => e.start_on ?? '\uffff',
  END_ON: (e) => e.end_on ?? '\uffff',
  STATE: (e) => String(['OPEN', 'TODO', 'IN_PROGRESS', 'CLOSED'].indexOf(e.state))
}

/** Workspace fields: its epics that are not issues, and its own repository. */
export const workspaceZenhubFields = {
  zenhubEpics: async (w: WorkspaceObject, args: EpicListArgs, ctx: Ctx) => {
    let rows = await ctx.store.zenhubEpics.list(w.id)
    const within = args.filters?.state?.in
    const without = args.filters?.state?.nin
    if (within != null) rows = rows.filter((e) => within.includes(e.state))
    if (without != null) rows = rows.filter((e) => !without.includes(e.state))
    const needle = args.query?.trim().toLowerCase() ?? ''
    if (needle !== '') rows = rows.filter((e) => e.title.toLowerCase().includes(needle))
    const field = args.orderBy?.field
    if (field != null) {
      const key = ORDER[field]
      const sign = args.orderBy?.direction === 'DESC' ? -1 : 1
      rows = [...rows].sort((a, b) => sign * (key(a) < key(b) ? -1 : key(a) > key(b) ? 1 : a.id - b.id))
    }
    return listConnection(rows.map(zenhubEpicObject), (e) => String(e.id), args)
  },
  /**
   * Made on first need (db/own-repositories.ts): a client reads its id to create native issues in
   * it. Only someone who may write the workspace, with a credential that may write, makes it; for
   * anybody else a read writes nothing and answers null until it is there.
   */
  zenhubRepository: async (w: WorkspaceObject, _: unknown, ctx: Ctx) => {
    let repo = await ctx.store.ownRepositories.find(w.id)
    if (repo === undefined) {
      if (ctx.auth.changeRefusal(ctx.request) !== undefined || await levelIn(ctx, w.id) < LEVELS.write) return null
      repo = await ctx.store.ownRepositories.ensure(w.id, ctx.user.id)
    }
    // Made just now, it is not among what the request's credential could read when it began.
    if (!ctx.readable.has(repo.id) && await ctx.store.users.level(ctx.user.id, repo.id) < LEVELS.read) return null
    const [row] = await ctx.reads.repositoriesByIds([repo.id])
    return row === undefined ? null : repositoryObject(row)
  }
}

async function childrenOf (queries: Array<{ obj: EpicObject }>, ctx: Ctx): Promise<Map<number, IssueNode[]>> {
  const links = await ctx.store.zenhubEpics.issuesOf(queries.map((q) => q.obj.id))
  const rows = new Map((await ctx.reads.issuesByIds([...new Set(links.map((l) => l.issue_id))])).map((r) => [r.id, r]))
  const out = new Map<number, IssueNode[]>()
  for (const l of links) {
    const row = rows.get(l.issue_id)
    if (row === undefined || !ctx.readable.has(row.repo_id)) continue
    const list = out.get(l.epic_id)
    if (list === undefined) out.set(l.epic_id, [row])
    else list.push(row)
  }
  return out
}

const progress = (list: IssueNode[], value: (r: IssueNode) => number) => {
  const closed = list.filter((r) => r.state === 'closed').reduce((s, r) => s + value(r), 0)
  const total = list.reduce((s, r) => s + value(r), 0)
  return { open: total - closed, closed, total }
}

export const zenhubEpicTypeResolvers = {
  ZenhubEpic: {
    id: (e: EpicObject) => encodeId('ZenhubEpic', e.id),
    createdAt: (e: EpicObject) => iso(e.created_at),
    updatedAt: (e: EpicObject) => iso(e.updated_at),
    startOn: (e: EpicObject) => e.start_on,
    endOn: (e: EpicObject) => e.end_on,
    estimate: (e: EpicObject) => e.estimate === null ? null : { value: e.estimate },
    zenhubOrganization: () => ORGANIZATION,
    viewerPermission: async (e: EpicObject, _: unknown, ctx: Ctx) => PERMISSIONS[Math.min(3, await levelIn(ctx, e.workspace_id))],
    creator: async (e: EpicObject, _: unknown, ctx: Ctx) => {
      if (e.creator_id === null) return null
      const [user] = await ctx.reads.usersByIds([e.creator_id])
      return user === undefined ? null : { __typename: 'ZenhubUser' as const, ...user }
    }
  }
}

/** Fields read for a whole page of epics (or of issues) at once. */
export const zenhubEpicLoaders = {
  ZenhubEpic: {
    async childIssues (queries: Array<Query<EpicObject, PageArgs>>, ctx: Ctx) {
      const rows = await childrenOf(queries, ctx)
      return queries.map((q) => smallIssueConnection(rows.get(q.obj.id) ?? [], q.params))
    },
    async zenhubIssueCountProgress (queries: Array<Query<EpicObject>>, ctx: Ctx) {
      const rows = await childrenOf(queries, ctx)
      return queries.map((q) => progress(rows.get(q.obj.id) ?? [], () => 1))
    },
    async zenhubIssueEstimateProgress (queries: Array<Query<EpicObject>>, ctx: Ctx) {
      const rows = await childrenOf(queries, ctx)
      return queries.map((q) => progress(rows.get(q.obj.id) ?? [], (r) => r.estimate ?? 0))
    }
  },
  Issue: {
    async parentZenhubEpics (queries: Array<Query<IssueObject, PageArgs>>, ctx: Ctx) {
      const links = await ctx.store.zenhubEpics.epicsOf(queries.map((q) => q.obj.id))
      const epics = await ctx.store.zenhubEpics.byIds([...new Set(links.map((l) => l.epic_id))])
      const visible = new Map<number, EpicObject>()
      for (const workspaceId of new Set(epics.map((e) => e.workspace_id))) {
        if (await workspaceFor(ctx, workspaceId) === undefined) continue
        for (const e of epics) if (e.workspace_id === workspaceId) visible.set(e.id, zenhubEpicObject(e))
      }
      return queries.map((q) => {
        const list = links.filter((l) => l.issue_id === q.obj.id).map((l) => visible.get(l.epic_id)).filter((e): e is EpicObject => e !== undefined)
        return listConnection(list, (e) => String(e.id), q.params)
      })
    }
  }
}
