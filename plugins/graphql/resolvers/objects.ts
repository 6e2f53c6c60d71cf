import type { IssueNode, PipelineNode, RepositoryNode, WorkspaceNode } from '../../../db/graph-reads.js'
import type { Sprint } from '../../../db/sprints.js'
import { encodeId } from '../ids.js'

/**
 * mercurius keys each loader call by the JSON of its object: an object that serializes to its
 * type and key makes that cheap (a page of issues is keyed hundreds of times per request).
 */
const keyed = <T extends object>(object: T, key: string): T => Object.defineProperty(object, 'toJSON', { value: () => key, enumerable: false })

/** How rows become GraphQL objects: the parts that need no further query. */
export const issueObject = (row: IssueNode) => keyed({ ...row, __typename: 'Issue' as const }, `Issue:${row.id}`)
export type IssueObject = ReturnType<typeof issueObject>
export const pipelineObject = (row: PipelineNode) => keyed({ ...row, __typename: 'Pipeline' as const }, `Pipeline:${row.id}`)
export type PipelineObject = ReturnType<typeof pipelineObject>
export const repositoryObject = (row: RepositoryNode) => keyed({ ...row, __typename: 'Repository' as const }, `Repository:${row.id}`)
export type RepositoryObject = ReturnType<typeof repositoryObject>
export const workspaceObject = (row: WorkspaceNode) => keyed({ ...row, __typename: 'Workspace' as const }, `Workspace:${row.id}`)
export type WorkspaceObject = ReturnType<typeof workspaceObject>
export const sprintObject = (row: Sprint) => ({ ...row, __typename: 'Sprint' as const })
export type SprintObject = ReturnType<typeof sprintObject>

export const ORGANIZATION = { __typename: 'ZenhubOrganization' as const, id: encodeId('ZenhubOrganization', 1), name: 'Planning server' }
