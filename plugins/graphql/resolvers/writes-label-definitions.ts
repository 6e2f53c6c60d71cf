import { Invalid, NotFound } from '../../../db/errors.js'
import type { LabelFields, LabelRow } from '../../../db/labels.js'
import { numberKey } from '../ids.js'
import { recordAudit, requireAdministrator } from './admin-writes.js'
import { ORGANIZATION } from './objects.js'
import { echo, mayWrite, type Ctx, type Input } from './write-access.js'

const zenhubLabel = (row: LabelRow) => ({ __typename: 'ZenhubLabel' as const, ...row })

function requireOrganization (id: string): void {
  if (id !== ORGANIZATION.id) throw new NotFound(`zenhub organization ${id} not found`)
}

/**
 * Labels themselves (docs/graphql.md, "Labels"): a repository's, made with write permission on
 * it, and the organization's (ZenhubLabel), made and deleted by administrators, audited.
 */
export const labelDefinitionWrites = {
  async createGithubLabel (_: unknown, { input }: { input: Input & LabelFields & { repositoryId: string } }, ctx: Ctx) {
    mayWrite(ctx)
    const repoId = numberKey(input.repositoryId, 'Repository')
    if (!ctx.readable.has(repoId)) throw new NotFound(`repository ${input.repositoryId} not found`)
    await ctx.auth.requireAccess(ctx.request, repoId, 'write')
    // The host's labels come here with its deliveries; one made here only would never reach it.
    if (await ctx.store.repositories.hostConnection(repoId) !== null) {
      throw new Invalid(`repository ${repoId} is bound to an issue host: make its labels there; they come back with the sync`)
    }
    const label = await ctx.store.labels.createRepositoryLabel(repoId, input)
    return { ...echo(input), label: { __typename: 'Label' as const, repo_id: repoId, ...label } }
  },

  async createZenhubLabel (_: unknown, { input }: { input: Input & LabelFields & { zenhubOrganizationId: string } }, ctx: Ctx) {
    requireOrganization(input.zenhubOrganizationId)
    await requireAdministrator(ctx, 'the organization\'s labels')
    const label = await ctx.store.transaction(async (s) => {
      const made = await s.labels.createOrganizationLabel(input)
      await recordAudit(s, ctx, 'label.created', 'organization', { name: made.name, color: made.color })
      return made
    })
    return { ...echo(input), zenhubLabel: zenhubLabel(label) }
  },

  async deleteZenhubLabels (_: unknown, { input }: { input: Input & { zenhubOrganizationId: string, names: string[] } }, ctx: Ctx) {
    requireOrganization(input.zenhubOrganizationId)
    await requireAdministrator(ctx, 'the organization\'s labels')
    const deleted = await ctx.store.transaction(async (s) => {
      const rows = await s.labels.deleteOrganizationLabels(input.names)
      if (rows.length > 0) await recordAudit(s, ctx, 'label.deleted', 'organization', { names: rows.map((r) => r.name) })
      return rows
    })
    return { ...echo(input), zenhubLabels: deleted.map(zenhubLabel) }
  }
}
