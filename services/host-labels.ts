import { Type } from '@sinclair/typebox'
import { TypeCompiler } from '@sinclair/typebox/compiler'
import type { Connection } from '../db/issue-host/connections.js'
import { Invalid } from '../db/errors.js'
import { hostRequest, type HostRequest } from './host-api.js'

const LabelPage = TypeCompiler.Compile(Type.Array(Type.Object({ id: Type.Integer(), name: Type.String({ maxLength: 1000 }) }), { maxItems: 100 }))
const PAGE = 50
const MAX_PAGES = 20

/** Gitea and Forgejo name labels by id in their issue writes, where GitHub takes names. */
export const labelsById = (connection: Connection): boolean => connection.kind !== 'github'

/**
 * The ids of a repository's labels by (lower-cased) name, read from a Gitea or Forgejo host (`GET
 * /repos/{owner}/{repo}/labels`, 50 a page, at most 1,000 labels); stops once every name is found.
 */
export async function labelIds (call: Omit<HostRequest, 'method' | 'path' | 'body'>, repoPath: string, names: string[]): Promise<Map<string, number>> {
  const known = new Map<string, number>()
  if (names.length === 0) return known
  for (let page = 1; page <= MAX_PAGES; page++) {
    const answer = await hostRequest({ ...call, method: 'GET', path: `${repoPath}/labels?limit=${PAGE}&page=${page}` })
    if (!LabelPage.Check(answer)) throw new Invalid('the issue host\'s label list is not a list of labels')
    for (const label of answer) if (!known.has(label.name.toLowerCase())) known.set(label.name.toLowerCase(), label.id)
    if (answer.length < PAGE || names.every((n) => known.has(n.toLowerCase()))) break
  }
  return known
}

/** The ids of these names; one the repository has no label for is refused (400): these hosts do not make labels on first use. */
export function requireLabelIds (known: Map<string, number>, names: string[]): number[] {
  const missing = names.filter((n) => !known.has(n.toLowerCase()))
  if (missing.length > 0) throw new Invalid(`the issue host's repository has no label ${missing.map((n) => JSON.stringify(n)).join(', ')} (create it there first)`)
  return names.map((n) => known.get(n.toLowerCase())!)
}
