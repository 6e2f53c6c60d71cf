import type { Client } from '../api.js'

/** What the sections of the Administration view read and share. */
export interface AdminRepo { id: number, owner: string, name: string, html_url?: string | null, connection_id?: string | null }
/** A connection as the Repositories section names it. */
export interface AdminConnectionName { id: string, kind: 'github' | 'gitea' | 'forgejo', web_url: string }
export interface AdminPipeline { id: string, name: string }
export interface AdminWorkspace { id: string, name: string, description: string | null, repositories: number[], pipelines: AdminPipeline[] }
export interface AdminUser { id: number, login: string, email: string | null, administrator?: boolean, last_sign_in_at?: string | null }
export interface AdminData { repositories: AdminRepo[], workspaces: AdminWorkspace[], users: AdminUser[], connections?: AdminConnectionName[] }

/** What a section of the Administration view works with: the API, the status line, and a fresh read after a change. */
export interface AdminContext {
  client: Client
  say: (text: string, error?: boolean) => void
  reload: () => Promise<void>
}

export const repoName = (repos: AdminRepo[], id: number): string => {
  const repo = repos.find((r) => r.id === id)
  return repo === undefined ? `repository ${id}` : `${repo.owner}/${repo.name}`
}

/** A moment for people: the local date and time, or "never". */
export const when = (iso: string | null | undefined): string => iso === null || iso === undefined ? 'never' : new Date(iso).toLocaleString()
