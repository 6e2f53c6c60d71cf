// Repositories named as people know them (`owner/name`), in the page's own text and in the server's messages.
import type { Repo } from './model.js'

export const repoName = (repos: Map<number, Repo>, id: number): string => {
  const repo = repos.get(id)
  return repo === undefined ? `repository ${id}` : `${repo.owner}/${repo.name}`
}

/** An issue as `owner/name#12`. */
export const issueName = (repos: Map<number, Repo>, id: number, number: number): string => {
  const repo = repos.get(id)
  return repo === undefined ? `#${number} (repository ${id})` : `${repo.owner}/${repo.name}#${number}`
}

/**
 * A server message with the repositories it names by id (`repository 1001`, `1001#3`) named
 * `owner/name` instead, where the page knows them.
 */
export function nameRepos (message: string, repos: Map<number, Repo>): string {
  const known = (id: string) => repos.get(Number(id))
  return message
    .replace(/ \(repo_id#issue_number\)/g, '')
    .replace(/\b(\d{1,15})#(\d{1,15})\b/g, (all, id: string, n: string) => { const r = known(id); return r === undefined ? all : `${r.owner}/${r.name}#${n}` })
    .replace(/\brepository (\d{1,15})\b/g, (all, id: string) => { const r = known(id); return r === undefined ? all : `repository ${r.owner}/${r.name}` })
}

/** A day chosen in a date field (YYYY-MM-DD) as the API's date-time: its first moment in UTC. */
export const dayStart = (day: string): string => `${day}T00:00:00.000Z`
