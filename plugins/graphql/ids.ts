import { Invalid } from '../../db/errors.js'
import { LOCAL_REPO_IDS } from '../../db/repositories.js'

/**
 * Global ids at the edge: workspaces keep their 24-hex ids; every other object's id is unpadded
 * base64 of `gid://raptor/<Type>/<integer>`. Objects keyed by text here (pipelines, sprints,
 * labels, logins) get an integer that turns back into the text: a 24-hex key is its value as a
 * number (below 2^96); any other text is 2^96 plus its UTF-8 bytes read as one number.
 */
export type NodeType = 'Issue' | 'Pipeline' | 'Repository' | 'Sprint' | 'ZenhubUser' | 'ZenhubOrganization' | 'User' | 'PipelineIssue' | 'Epic' | 'IssueDependency' | 'ZenhubLabel' | 'Release' | 'SprintIssue' | 'Label' | 'Milestone' | 'Organization'
  | 'SprintConfig' | 'WorkspaceRepository' | 'TimelineItem' | 'ZenhubEpic' | 'Priority'
  | 'PipelineConfiguration' | 'PipelineAutomation' | 'WorkspaceFavorite' | 'SprintReview' | 'SprintReviewFeature' | 'KeyDate'

const TEXT = 1n << 96n
const HEX = /^[0-9a-f]{24}$/
const PREFIX = 'gid://raptor/'

function integerOf (key: number | string): string {
  if (typeof key === 'number') return String(key)
  if (HEX.test(key)) return BigInt(`0x${key}`).toString()
  return (TEXT + BigInt(`0x${Buffer.from(key, 'utf8').toString('hex') || '0'}`)).toString()
}

function textOf (integer: bigint): string {
  if (integer < TEXT) return integer.toString(16).padStart(24, '0')
  const hex = (integer - TEXT).toString(16)
  return Buffer.from(hex.length % 2 === 1 ? `0${hex}` : hex, 'hex').toString('utf8')
}

export function encodeId (type: NodeType, key: number | string): string {
  return Buffer.from(`${PREFIX}${type}/${integerOf(key)}`).toString('base64').replace(/=+$/, '')
}

/** The type and integer an id names, or undefined when it is not one of ours. */
export function parseId (id: string): { type: NodeType, integer: bigint } | undefined {
  if (id.length > 400 || !/^[A-Za-z0-9+/_-]+=*$/.test(id)) return undefined
  const match = /^gid:\/\/raptor\/([A-Za-z]{1,40})\/([0-9]{1,200})$/.exec(Buffer.from(id, 'base64').toString('utf8'))
  if (match === null) return undefined
  return { type: match[1] as NodeType, integer: BigInt(match[2]) }
}

const bad = (id: string, type: string) => new Invalid(`${JSON.stringify(id.slice(0, 100))} is not a ${type} id`)

/** The integer key of a numeric-keyed object (Issue, Repository, ZenhubUser…). */
export function numberKey (id: string, type: NodeType): number {
  const parsed = parseId(id)
  if (parsed === undefined || parsed.type !== type || parsed.integer > BigInt(Number.MAX_SAFE_INTEGER)) throw bad(id, type)
  return Number(parsed.integer)
}

/** The text key of a text-keyed object (Pipeline, Sprint…). */
export function textKey (id: string, type: NodeType): string {
  const parsed = parseId(id)
  if (parsed === undefined || parsed.type !== type) throw bad(id, type)
  return textOf(parsed.integer)
}

/** A pipeline argument: our id, or (anything that is not one of our ids) the REST API's pipeline id as it is. */
export function pipelineKey (id: string): string {
  if (HEX.test(id) || parseId(id) === undefined) return id
  return textKey(id, 'Pipeline')
}

/** A PipelineIssue's key: the issue's and the workspace's, in one text. */
export const pipelineIssueId = (issueId: number, workspaceId: string): string => encodeId('PipelineIssue', `${workspaceId}:${issueId}`)
export function pipelineIssueKey (id: string): { issueId: number, workspaceId: string } {
  const [workspaceId, issue] = textKey(id, 'PipelineIssue').split(':')
  if (issue === undefined || !/^[0-9]{1,15}$/.test(issue)) throw bad(id, 'PipelineIssue')
  return { issueId: Number(issue), workspaceId }
}

/** Any of our ids as type and key, for `node(id)`. */
export function nodeKey (id: string): { type: NodeType, key: number | string } | undefined {
  const parsed = parseId(id)
  if (parsed === undefined) return undefined
  const numeric: NodeType[] = ['Issue', 'Repository', 'ZenhubUser', 'ZenhubOrganization', 'Epic', 'ZenhubEpic', 'KeyDate']
  if (numeric.includes(parsed.type)) return parsed.integer > BigInt(Number.MAX_SAFE_INTEGER) ? undefined : { type: parsed.type, key: Number(parsed.integer) }
  return { type: parsed.type, key: textOf(parsed.integer) }
}

/** A Milestone's key: its repository and number, in one text. */
export function milestoneKey (id: string): { repoId: number, number: number } {
  const [repo, number] = textKey(id, 'Milestone').split(':')
  if (!/^[0-9]{1,15}$/.test(repo) || !/^[0-9]{1,15}$/.test(number ?? '')) throw bad(id, 'Milestone')
  return { repoId: Number(repo), number: Number(number) }
}

/**
 * `Repository.ghId` (a 32-bit Int) is the REST API's repo_id. A repository that lives here only
 * has an id from 2^40 up, past what an Int holds: its ghId is negative, -1 for the first of them.
 */
export const ghIdOf = (repoId: number): number => repoId >= LOCAL_REPO_IDS ? LOCAL_REPO_IDS - repoId - 1 : repoId
/** The repository a ghId names (see ghIdOf). */
export const repoOfGhId = (ghId: number): number => ghId < 0 ? LOCAL_REPO_IDS - ghId - 1 : ghId
