import { Invalid } from '../../../db/errors.js'
import { requireAdminOfAll, visibleSprint, visibleWorkspace } from '../../../db/workspace-access.js'
import type { SprintConfig } from '../../../db/sprints.js'
import { encodeId, textKey } from '../ids.js'
import { issueObject, sprintObject, workspaceObject } from './objects.js'
import { echo, mayWrite, writableIssues, type Ctx, type Input } from './write-access.js'

export interface SprintIssues { issueIds: string[], sprintIds: string[] }
export interface NewSprintConfig {
  workspaceId: string
  name: string
  tzIdentifier: string
  startOn?: string | null
  endOn?: string | null
  kind?: 'weekly' | 'monthly' | null
  settings: { moveUnfinishedIssues: boolean, issuesFromPipeline: { enabled: boolean } }
}

const DAYS = ['SUNDAY', 'MONDAY', 'TUESDAY', 'WEDNESDAY', 'THURSDAY', 'FRIDAY', 'SATURDAY'] as const
const DAY_MS = 86_400_000

/** The sprints asked for (each visible to the caller, settled as REST settles them) and the issues, each writable. */
async function sprintsAndIssues (ctx: Ctx, input: SprintIssues) {
  const targets = await writableIssues(ctx, input.issueIds)
  const sprintIds = [...new Set(input.sprintIds.map((id) => textKey(id, 'Sprint')))]
  if (sprintIds.length > 20) throw new Invalid('sprintIds must not list more than 20 sprints')
  const sprints = []
  for (const id of sprintIds) sprints.push({ id, ...await visibleSprint(ctx.store, id, ctx.readable, ctx.now()) })
  return { targets, sprints, refs: targets.map(({ issue }) => ({ repo_id: issue.repo_id, issue_number: issue.number })) }
}

/**
 * The hosted service's sprint configuration as ours: weekly sprints of 1 to 4 weeks from `startOn`,
 * the first ending on `endOn` (its last day, or the next sprint's first).
 */
function configOf (input: NewSprintConfig): SprintConfig {
  if (input.kind === 'monthly') throw new Invalid('sprintConfig.kind: only weekly sprints are offered')
  if (input.settings.issuesFromPipeline.enabled) throw new Invalid('sprintConfig.settings.issuesFromPipeline: filling sprints from a pipeline is not offered; pass enabled: false')
  if (input.startOn == null || input.endOn == null) throw new Invalid('sprintConfig.startOn and sprintConfig.endOn are required')
  const days = (Date.parse(`${input.endOn}T00:00:00Z`) - Date.parse(`${input.startOn}T00:00:00Z`)) / DAY_MS
  const weeks = days % 7 === 6 ? (days + 1) / 7 : days / 7
  if (!Number.isInteger(weeks) || weeks < 1 || weeks > 4) throw new Invalid('sprintConfig.endOn must make the first sprint 1 to 4 whole weeks long')
  return { length_weeks: weeks, starts_on: input.startOn, time_zone: input.tzIdentifier, carry_over: input.settings.moveUnfinishedIssues }
}

/** The configuration as the hosted service's SprintConfig. */
export function configObject (workspaceId: string, name: string, config: SprintConfig) {
  const start = new Date(`${config.starts_on}T00:00:00Z`).getUTCDay()
  return {
    id: encodeId('SprintConfig', workspaceId),
    name,
    kind: 'weekly',
    period: config.length_weeks,
    startDay: DAYS[start],
    endDay: DAYS[(start + 6) % 7],
    tzIdentifier: config.time_zone,
    settings: { moveUnfinishedIssues: config.carry_over }
  }
}

/** Sprints: the operations of PUT …/sprint_config and POST/DELETE /p2/sprints/:id/issues. */
export const sprintWrites = {
  async addIssuesToSprints (_: unknown, { input }: { input: Input & SprintIssues }, ctx: Ctx) {
    const { targets, sprints, refs } = await sprintsAndIssues(ctx, input)
    const canRead = (repoId: number) => ctx.readable.has(repoId)
    for (const sprint of sprints) await ctx.store.sprints.addIssues(sprint.id, refs, canRead, ctx.user, ctx.now())
    const at = new Date(ctx.now()).toISOString()
    const rows = new Map((await ctx.reads.issuesByIds(targets.map((t) => t.issue.id))).map((r) => [r.id, issueObject(r)]))
    const sprintIssues = []
    for (const sprint of sprints) {
      const object = sprintObject(await ctx.store.sprints.get(sprint.id, canRead, ctx.now()))
      for (const { issue } of targets) {
        sprintIssues.push({ __typename: 'SprintIssue' as const, issue: rows.get(issue.id), sprint: object, added_at: at })
      }
    }
    return { ...echo(input), sprintIssues }
  },

  async removeIssuesFromSprints (_: unknown, { input }: { input: Input & SprintIssues }, ctx: Ctx) {
    const { sprints, refs } = await sprintsAndIssues(ctx, input)
    const canRead = (repoId: number) => ctx.readable.has(repoId)
    for (const sprint of sprints) await ctx.store.sprints.removeIssues(sprint.id, refs, canRead, ctx.user, ctx.now())
    const after = []
    for (const sprint of sprints) after.push(sprintObject(await ctx.store.sprints.get(sprint.id, canRead, ctx.now())))
    return { ...echo(input), sprints: after }
  },

  /** Renames a sprint (admin on every repository of its workspace, as its plan); descriptions are not kept here. */
  async updateSprint (_: unknown, { input }: { input: Input & { sprintId: string, name?: string | null, description?: string | null } }, ctx: Ctx) {
    mayWrite(ctx)
    const id = textKey(input.sprintId, 'Sprint')
    const { workspace } = await visibleSprint(ctx.store, id, ctx.readable, ctx.now())
    await requireAdminOfAll(ctx.store.users, ctx.user.id, workspace.repositories)
    if (input.description != null) throw new Invalid('description: sprints have no description here')
    if (input.name != null) await ctx.store.sprints.rename(id, input.name)
    const sprint = await ctx.store.sprints.get(id, (repoId) => ctx.readable.has(repoId), ctx.now())
    return { ...echo(input), sprint: sprintObject(sprint) }
  },

  /** No REST twin: the plan's permission (admin on every repository of the workspace, as PUT …/sprint_config). */
  async deleteSprintConfigAndOpenSprints (_: unknown, { input }: { input: Input & { workspaceId: string } }, ctx: Ctx) {
    mayWrite(ctx)
    const workspace = await visibleWorkspace(ctx.store.workspaces, input.workspaceId, ctx.readable)
    await requireAdminOfAll(ctx.store.users, ctx.user.id, workspace.repositories)
    await ctx.store.sprints.deleteConfigAndOpenSprints(input.workspaceId, ctx.now())
    const [row] = await ctx.reads.workspacesByIds([input.workspaceId])
    return { ...echo(input), workspace: workspaceObject(row) }
  },

  async createSprintConfig (_: unknown, { input }: { input: Input & { sprintConfig: NewSprintConfig } }, ctx: Ctx) {
    mayWrite(ctx)
    const wanted = input.sprintConfig
    const workspace = await visibleWorkspace(ctx.store.workspaces, wanted.workspaceId, ctx.readable)
    await requireAdminOfAll(ctx.store.users, ctx.user.id, workspace.repositories)
    const config = await ctx.store.sprints.setConfig(wanted.workspaceId, configOf(wanted), ctx.now())
    return { ...echo(input), sprintConfig: configObject(wanted.workspaceId, wanted.name, config) }
  }
}
