import type { IssueNode, PipelineNode, RepositoryNode, WorkspaceNode } from '../../../db/graph-reads.js'
import type { Sprint } from '../../../db/sprints.js'
import { encodeId } from '../ids.js'

/** How rows become GraphQL objects: the parts that need no further query. */
export const issueObject = (row: IssueNode) => ({ ...row, __typename: 'Issue' as const })
export type IssueObject = ReturnType<typeof issueObject>
export const pipelineObject = (row: PipelineNode) => ({ ...row, __typename: 'Pipeline' as const })
export type PipelineObject = ReturnType<typeof pipelineObject>
export const repositoryObject = (row: RepositoryNode) => ({ ...row, __typename: 'Repository' as const })
export type RepositoryObject = ReturnType<typeof repositoryObject>
export const workspaceObject = (row: WorkspaceNode) => ({ ...row, __typename: 'Workspace' as const })
export type WorkspaceObject = ReturnType<typeof workspaceObject>
export const sprintObject = (row: Sprint) => ({ ...row, __typename: 'Sprint' as const })
export type SprintObject = ReturnType<typeof sprintObject>

export const ORGANIZATION = { __typename: 'ZenhubOrganization' as const, id: encodeId('ZenhubOrganization', 1), name: 'Planning server' }
