import { Invalid, NotFound } from '../../../db/errors.js'
import type { IssueNode } from '../../../db/graph-reads.js'
import { LEVELS } from '../../../db/users.js'
import type { KeyDateRow, LabelWanted } from '../../../db/zenhub-epic-meta.js'
import type { ZenhubEpicRow } from '../../../db/zenhub-epics.js'
import { listConnection, type PageArgs } from '../connections.js'
import { encodeId, numberKey, parseId, textKey } from '../ids.js'
import { smallIssueConnection } from './issue-connections.js'
import { workspaceFor } from './visibility.js'
import { echo, mayWrite, MAX_BATCH, type Ctx, type Input } from './write-access.js'
import { after, writableEpic, zenhubEpicObject } from './zenhub-epics.js'
import type { Query } from '../batched-fields.js'

type EpicObject = ReturnType<typeof zenhubEpicObject>

const MAX_EPICS = 20
const keyDateObject = (row: KeyDateRow) => ({ ...row, __typename: 'KeyDate' as const })
type KeyDateObject = ReturnType<typeof keyDateObject>

/** Every epic of a batch, each writable, checked before anything is written. */
async function writableEpics (ctx: Ctx, ids: string[]): Promise<ZenhubEpicRow[]> {
  mayWrite(ctx)
  const unique = [...new Set(ids)]
  if (unique.length === 0 || unique.length > MAX_EPICS) throw new Invalid(`zenhubEpicIds must list 1 to ${MAX_EPICS} epics`)
  const epics = []
  for (const id of unique) epics.push(await writableEpic(ctx, id))
  return epics
}

async function epicsAfter (ctx: Ctx, input: Input, epics: ZenhubEpicRow[]) {
  const ids = epics.map((e) => e.id)
  return { ...echo(input), zenhubEpics: after(await ctx.store.zenhubEpics.byIds(ids), ids) }
}

const readableRepos = async (ctx: Ctx, workspaceId: string) =>
  (await ctx.reads.repositoriesOf([workspaceId])).map((r) => r.repo_id).filter((r) => ctx.readable.has(r))

/** The users named, each a user who can read every epic's workspace (an assignee sees what they are assigned). */
async function assignees (ctx: Ctx, epics: ZenhubEpicRow[], ids: string[], adding: boolean): Promise<number[]> {
  const unique = [...new Set(ids)]
  if (unique.length === 0 || unique.length > MAX_BATCH) throw new Invalid(`assigneeIds must list 1 to ${MAX_BATCH} users`)
  const keys = unique.map((id) => numberKey(id, 'ZenhubUser'))
  if (!adding) return keys
  for (const workspaceId of new Set(epics.map((e) => e.workspace_id))) {
    // Only the repositories the caller reads: who reads the others is not theirs to learn.
    const readers = new Set((await ctx.reads.usersOn(await readableRepos(ctx, workspaceId), LEVELS.read)).map((u) => u.id))
    const missing = keys.findIndex((k) => !readers.has(k))
    if (missing !== -1) throw new NotFound(`zenhub user ${unique[missing]} not found among the users of the epic's workspace`)
  }
  return keys
}

/** A label id: a ZenhubLabel's, or a Label's as ZenhubEpic.labels answers them (both name the label). */
function labelName (id: string): string {
  return textKey(id, parseId(id)?.type === 'Label' ? 'Label' : 'ZenhubLabel')
}

export interface LabelsInput {
  zenhubEpicIds: string[]
  zenhubLabelIds?: string[] | null
  labelInfos?: Array<{ name?: string | null, color?: string | null }> | null
}

/**
 * The labels asked for. One given by id names a label of each epic's workspace (the
 * organization's, or one of its repositories', as workspace.zenhubLabels lists them) or, to take
 * it off, one on the epics; by name (labelInfos) any name goes.
 */
async function labels (ctx: Ctx, epics: ZenhubEpicRow[], input: LabelsInput, adding: boolean): Promise<LabelWanted[]> {
  const byId = [...new Set(input.zenhubLabelIds ?? [])].map((id) => ({ id, name: labelName(id) }))
  const byName = (input.labelInfos ?? []).map((l) => ({ name: l.name ?? '', color: l.color ?? null }))
  if (byId.length + byName.length === 0) throw new Invalid('give zenhubLabelIds or labelInfos')
  if (byId.length + byName.length > MAX_BATCH) throw new Invalid(`give at most ${MAX_BATCH} labels`)
  const onEpics = adding ? [] : await ctx.store.zenhubEpicMeta.labelsOf(epics.map((e) => e.id))
  const colors = new Map<string, string | null>()
  const organization = await ctx.reads.organizationLabels()
  for (const workspaceId of new Set(epics.map((e) => e.workspace_id))) {
    const known = new Map([...await ctx.reads.labelsIn(await readableRepos(ctx, workspaceId)), ...organization].map((l) => [l.name, l.color]))
    for (const l of onEpics) if (!known.has(l.name)) known.set(l.name, l.color)
    for (const { id, name } of byId) {
      if (!known.has(name)) throw new NotFound(`zenhub label ${id} not found`)
      if (!colors.has(name) || colors.get(name) === null) colors.set(name, known.get(name) ?? null)
    }
  }
  return [...byId.map(({ name }) => ({ name, color: colors.get(name) ?? null })), ...byName]
}

/** ZenhubEpic's assignees, labels, key dates and estimate, written. */
export const zenhubEpicMetaWrites = {
  async addAssigneesToZenhubEpics (_: unknown, { input }: { input: Input & { zenhubEpicIds: string[], assigneeIds: string[] } }, ctx: Ctx) {
    const epics = await writableEpics(ctx, input.zenhubEpicIds)
    await ctx.store.zenhubEpicMeta.changeAssignees(epics.map((e) => e.id), await assignees(ctx, epics, input.assigneeIds, true), true)
    return await epicsAfter(ctx, input, epics)
  },

  async removeAssigneesFromZenhubEpics (_: unknown, { input }: { input: Input & { zenhubEpicIds: string[], assigneeIds: string[] } }, ctx: Ctx) {
    const epics = await writableEpics(ctx, input.zenhubEpicIds)
    await ctx.store.zenhubEpicMeta.changeAssignees(epics.map((e) => e.id), await assignees(ctx, epics, input.assigneeIds, false), false)
    return await epicsAfter(ctx, input, epics)
  },

  async addZenhubLabelsToZenhubEpics (_: unknown, { input }: { input: Input & LabelsInput }, ctx: Ctx) {
    const epics = await writableEpics(ctx, input.zenhubEpicIds)
    await ctx.store.zenhubEpicMeta.changeLabels(epics.map((e) => e.id), await labels(ctx, epics, input, true), true)
    return await epicsAfter(ctx, input, epics)
  },

  async removeZenhubLabelsFromZenhubEpics (_: unknown, { input }: { input: Input & LabelsInput }, ctx: Ctx) {
    const epics = await writableEpics(ctx, input.zenhubEpicIds)
    await ctx.store.zenhubEpicMeta.changeLabels(epics.map((e) => e.id), await labels(ctx, epics, input, false), false)
    return await epicsAfter(ctx, input, epics)
  },

  async setMultipleEstimatesOnZenhubEpics (_: unknown, { input }: { input: Input & { zenhubEpicIds: string[], value?: number | null } }, ctx: Ctx) {
    const epics = await writableEpics(ctx, input.zenhubEpicIds)
    await ctx.store.zenhubEpicMeta.setEstimate(epics.map((e) => e.id), input.value ?? null)
    return await epicsAfter(ctx, input, epics)
  },

  async createZenhubEpicKeyDate (_: unknown, { input }: { input: Input & { zenhubEpicId: string, date: string, description: string } }, ctx: Ctx) {
    const epic = await writableEpic(ctx, input.zenhubEpicId)
    const row = await ctx.store.zenhubEpicMeta.addKeyDate(epic.id, input.date, input.description)
    const [now] = await ctx.store.zenhubEpics.byIds([epic.id])
    return { ...echo(input), keyDate: keyDateObject(row), zenhubEpic: zenhubEpicObject(now ?? epic) }
  },

  async deleteZenhubEpicKeyDate (_: unknown, { input }: { input: Input & { keyDateId: string } }, ctx: Ctx) {
    mayWrite(ctx)
    const row = await ctx.store.zenhubEpicMeta.keyDateById(numberKey(input.keyDateId, 'KeyDate'))
    const [epic] = row === undefined ? [] : await ctx.store.zenhubEpics.byIds([row.epic_id])
    if (row === undefined || epic === undefined || await workspaceFor(ctx, epic.workspace_id) === undefined) throw new NotFound(`key date ${input.keyDateId} not found`)
    await writableEpic(ctx, encodeId('ZenhubEpic', epic.id))
    const removed = await ctx.store.zenhubEpicMeta.removeKeyDate(row.id)
    const [now] = await ctx.store.zenhubEpics.byIds([epic.id])
    return { ...echo(input), keyDate: keyDateObject(removed), zenhubEpic: zenhubEpicObject(now ?? epic) }
  }
}

/** `node(id)` of a KeyDate: null when its epic is not visible. */
export async function keyDateNode (ctx: Ctx, key: number): Promise<KeyDateObject | null> {
  const row = await ctx.store.zenhubEpicMeta.keyDateById(key)
  const [epic] = row === undefined ? [] : await ctx.store.zenhubEpics.byIds([row.epic_id])
  return row === undefined || epic === undefined || await workspaceFor(ctx, epic.workspace_id) === undefined ? null : keyDateObject(row)
}

interface IdFilter { in?: string[] | null, nin?: string[] | null, notInAny?: boolean | null }
interface EpicIssueSearch extends PageArgs { zenhubEpicIds: string[], filters: { workspaces?: IdFilter | null } }

/** Which workspaces hold each repository (of those given). */
async function workspacesOfRepos (ctx: Ctx, repoIds: number[]): Promise<Map<number, Set<string>>> {
  const holding = await ctx.reads.workspacesHolding(repoIds)
  const out = new Map<number, Set<string>>()
  for (const link of await ctx.reads.repositoriesOf(holding.map((w) => w.id))) {
    const set = out.get(link.repo_id)
    if (set === undefined) out.set(link.repo_id, new Set([link.workspace_id]))
    else set.add(link.workspace_id)
  }
  return out
}

export const zenhubEpicMetaQueries = {
  async searchIssuesByZenhubEpics (_: unknown, args: EpicIssueSearch, ctx: Ctx) {
    const ids = [...new Set(args.zenhubEpicIds)]
    if (ids.length === 0 || ids.length > MAX_EPICS) throw new Invalid(`zenhubEpicIds must list 1 to ${MAX_EPICS} epics`)
    const keys = ids.map((id) => numberKey(id, 'ZenhubEpic'))
    const rows = new Map((await ctx.store.zenhubEpics.byIds(keys)).map((e) => [e.id, e]))
    for (const [i, key] of keys.entries()) {
      const epic = rows.get(key)
      if (epic === undefined || await workspaceFor(ctx, epic.workspace_id) === undefined) throw new NotFound(`zenhub epic ${ids[i]} not found`)
    }
    const links = (await ctx.store.zenhubEpics.issuesOf(keys)).sort((a, b) => keys.indexOf(a.epic_id) - keys.indexOf(b.epic_id))
    const order = [...new Set(links.map((l) => l.issue_id))]
    const found = new Map((await ctx.reads.issuesByIds(order)).map((r) => [r.id, r]))
    let issues = order.map((id) => found.get(id)).filter((r): r is IssueNode => r !== undefined && ctx.readable.has(r.repo_id))
    const filter = args.filters.workspaces
    if (filter != null && (filter.in != null || filter.nin != null || filter.notInAny === true)) {
      const held = await workspacesOfRepos(ctx, [...new Set(issues.map((r) => r.repo_id))])
      const within = filter.in == null ? undefined : new Set(filter.in)
      const without = new Set(filter.nin ?? [])
      issues = issues.filter((r) => {
        const of = [...held.get(r.repo_id) ?? []]
        const wanted = within === undefined ? filter.notInAny !== true : of.some((w) => within.has(w))
        return (wanted || (filter.notInAny === true && of.length === 0)) && !of.some((w) => without.has(w))
      })
    }
    return smallIssueConnection(issues, args)
  }
}

export const zenhubEpicMetaTypeResolvers = {
  ZenhubEpic: {
    blockingItems: (_: EpicObject, args: PageArgs) => listConnection([], () => '', args),
    blockedItems: (_: EpicObject, args: PageArgs) => listConnection([], () => '', args)
  },
  KeyDate: {
    id: (k: KeyDateObject) => encodeId('KeyDate', k.id),
    color: () => null
  }
}

/** Assignees, labels and key dates of a page of epics, one query each. */
export const zenhubEpicMetaLoaders = {
  ZenhubEpic: {
    async assignees (queries: Array<Query<EpicObject, PageArgs>>, ctx: Ctx) {
      const rows = await ctx.store.zenhubEpicMeta.assigneesOf(queries.map((q) => q.obj.id))
      return queries.map((q) => listConnection(rows.filter((r) => r.epic_id === q.obj.id)
        .map((r) => ({ __typename: 'ZenhubUser' as const, id: r.user_id, login: r.login, created_at: r.created_at })), (u) => String(u.id), q.params))
    },
    async labels (queries: Array<Query<EpicObject, PageArgs>>, ctx: Ctx) {
      const rows = await ctx.store.zenhubEpicMeta.labelsOf(queries.map((q) => q.obj.id))
      const of = (id: number) => rows.filter((r) => r.epic_id === id).map((r) => ({ name: r.name, color: r.color }))
      return queries.map((q) => listConnection(of(q.obj.id), (l) => l.name, q.params))
    },
    async keyDates (queries: Array<Query<EpicObject, PageArgs>>, ctx: Ctx) {
      const rows = await ctx.store.zenhubEpicMeta.keyDatesOf(queries.map((q) => q.obj.id))
      return queries.map((q) => listConnection(rows.filter((r) => r.epic_id === q.obj.id).map(keyDateObject), (k) => String(k.id), q.params))
    }
  }
}
