import { randomBytes } from 'node:crypto'
import { createConnectionsRepository, type Connection } from '../db/connections.js'
import { Invalid } from '../db/errors.js'
import type { PlanningStore } from '../db/store.js'
import { Importer } from './importer.js'

export interface ConnectionInput { kind: Connection['kind'], web_url?: string, api_url?: string, secret?: string, token?: string }

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

/** Makes a connection; the secret (generated when not given) is returned this once. */
export async function connect (store: PlanningStore, input: ConnectionInput): Promise<{ connection: Connection, secret: string }> {
  const secret = input.secret ?? randomBytes(24).toString('base64url')
  const connection = await createConnectionsRepository(store.db).create({
    kind: input.kind, ...connectionUrls(input.kind, input.web_url, input.api_url), secret, token: input.token ?? null
  })
  return { connection, secret }
}

/** Runs one import to its end in this process (the admin CLI), reporting progress as it goes. */
export async function importNow (store: PlanningStore, connectionId: string, repository: string, progress: (line: string) => void) {
  const connections = createConnectionsRepository(store.db)
  await connections.require(connectionId)
  const job = await connections.createImport(connectionId, repository)
  const silent = { info () {}, warn () {}, error () {}, debug () {}, trace () {}, fatal () {}, child () { return silent }, level: 'silent', silent () {} }
  const importer = new Importer(store, silent as never)
  importer.start(job.id)
  for (;;) {
    const row = await connections.requireImport(job.id)
    progress(`${repository}: ${row.state}, ${row.issues} issues, ${row.pull_requests} pull requests, ${row.milestones} milestones, ${row.collaborators} collaborators`)
    if (row.state === 'done' || row.state === 'failed') {
      await importer.stop()
      return row
    }
    await new Promise((resolve) => setTimeout(resolve, 500))
  }
}
