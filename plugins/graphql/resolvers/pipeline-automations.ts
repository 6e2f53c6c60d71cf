import { listConnection, type PageArgs } from '../connections.js'
import { encodeId } from '../ids.js'
import type { PipelineObject } from './objects.js'
import type { GraphContext as Ctx } from '../context.js'
import type { Query } from '../batched-fields.js'

const iso = (text: string) => new Date(text).toISOString()
const none = (_: unknown, args: PageArgs) => listConnection([], () => '', args)

/**
 * What this server really does to an issue entering a pipeline: with two-way sync
 * (docs/connections.md), the pipeline's issue-host label is written to the host. That is the one
 * automation there is, and only where some repository of the workspace writes back; nothing moves
 * issues between pipelines by itself, so the pipeline-to-pipeline lists are always empty.
 */
export const pipelineAutomationLoaders = {
  Pipeline: {
    async pipelineConfiguration (queries: Array<Query<PipelineObject>>, ctx: Ctx) {
      const rows = new Map((await ctx.reads.pipelineLabelsOf([...new Set(queries.map((q) => q.obj.id))], [...ctx.readable])).map((r) => [r.id, r]))
      return queries.map((q) => {
        const row = rows.get(q.obj.id)
        const at = iso(row?.created_at ?? new Date(0).toISOString())
        const automations = row?.host_label == null || !row.writes_back
          ? []
          : [{ id: encodeId('PipelineAutomation', q.obj.id), elementDetails: { labels: [{ name: row.host_label, color: null }] }, createdAt: at, updatedAt: at }]
        return { id: encodeId('PipelineConfiguration', q.obj.id), createdAt: at, updatedAt: at, automations }
      })
    }
  }
}

export const pipelineAutomationResolvers = {
  Pipeline: {
    pipelineToPipelineAutomationSources: none,
    pipelineToPipelineAutomationDestinations: none
  },
  PipelineConfiguration: {
    pipelineAutomations: (c: { automations: Array<{ id: string }> }, args: PageArgs) => listConnection(c.automations, (a) => a.id, args)
  }
}
