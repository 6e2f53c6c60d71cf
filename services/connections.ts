import { randomBytes } from 'node:crypto'
import type { Connection } from '../db/issue-host/connections.js'
import { Invalid } from '../db/errors.js'
import type { PlanningStore } from '../db/store.js'
import { Importer, type ImporterOptions } from './importer.js'

export interface ConnectionInput {
  kind: Connection['kind']
  web_url?: string
  api_url?: string
  secret?: string
  token?: string
  /** the host's OAuth app, for sign-in (docs/sign-in.md, "Sign-in with the issue host") */
  oauth_client_id?: string
  oauth_client_secret?: string
}

/** Where each kind of host answers by default (GitHub Enterprise and Gitea: from the web URL). */
export function connectionUrls (kind: Connection['kind'], webUrl?: string, apiUrl?: string): { web_url: string, api_url: string } {
  const web = webUrl?.replace(/\/+$/, '')
  if (kind === 'github') {
    if (web === undefined || web === 'https://github.com') return { web_url: 'https://github.com', api_url: apiUrl ?? 'https://api.github.com' }
    return { web_url: web, api_url: apiUrl ?? `${web}/api/v3` }
  }
  if (web === undefined) throw new Invalid(`body/web_url is required for ${kind} (the address of the ${kind} server)`)
  return { web_url: web, api_url: apiUrl ?? `${web}/api/v1` }
}

/**
 * `owner/name` as the host defines them (the schema has already refused `..`, `.` and a second
 * `/`): GitHub owners are letters, digits and hyphens, not starting with a hyphen, at most 39;
 * Gitea and Forgejo owners may hold `.` and `_` too, but start and end with a letter or digit.
 */
export function checkRepositoryName (kind: Connection['kind'], repository: string): void {
  const [owner] = repository.split('/')
  const valid = kind === 'github'
    ? /^[A-Za-z0-9][A-Za-z0-9-]{0,38}$/.test(owner)
    : /^[A-Za-z0-9]([A-Za-z0-9._-]{0,38}[A-Za-z0-9])?$/.test(owner)
  if (!valid) throw new Invalid(`body/repository: '${owner}' is not a ${kind} owner name`)
}

/** Makes a connection; the secret (generated when not given) is returned this once. Needs SECRET_KEY. */
export async function connect (store: PlanningStore, input: ConnectionInput): Promise<{ connection: Connection, secret: string }> {
  const secret = input.secret ?? randomBytes(24).toString('base64url')
  const connection = await store.connections.create({
    kind: input.kind,
    ...connectionUrls(input.kind, input.web_url, input.api_url),
    secret,
    token: input.token ?? null,
    oauth_client_id: input.oauth_client_id ?? null,
    oauth_client_secret: input.oauth_client_secret ?? null
  })
  return { connection, secret }
}

/** Runs one import to its end in this process (the admin CLI), reporting progress as it goes. */
export async function importNow (
  store: PlanningStore, connectionId: string, repository: string, progress: (line: string) => void, options: ImporterOptions = {}
) {
  const connections = store.connections
  const connection = await connections.require(connectionId)
  checkRepositoryName(connection.kind, repository)
  const job = await connections.createImport(connectionId, repository)
  const silent = { info () {}, warn () {}, error () {}, debug () {}, trace () {}, fatal () {}, child () { return silent }, level: 'silent', silent () {} }
  const importer = new Importer(store, silent as never, options)
  importer.start(job.id)
  for (;;) {
    const row = await connections.requireImport(job.id)
    progress(`${repository}: ${row.state}, ${row.issues} issues, ${row.pull_requests} pull requests, ${row.milestones} milestones, ${row.collaborators} collaborators`)
    if (row.state === 'done' || row.state === 'failed') {
      await importer.stop()
      const { lease_owner: _owner, lease_until: _until, ...shown } = row
      return shown
    }
    await new Promise((resolve) => setTimeout(resolve, 500))
  }
}
