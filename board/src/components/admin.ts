/// <reference lib="dom" />
import { useEffect, useState } from 'preact/hooks'
import { html } from '../html.js'
import type { Store } from '../store.js'
import { AuditLog } from './admin-audit.js'
import { Connections } from './admin-connections.js'
import { People } from './admin-people.js'
import { Repositories } from './admin-repositories.js'
import { Workspaces } from './admin-workspaces.js'
import type { AdminConnectionName, AdminContext, AdminData, AdminRepo, AdminUser, AdminWorkspace } from './admin-data.js'

/** The sections of the Administration view, for a given read of the admin API. */
export function AdminSections ({ data, context }: { data: AdminData, context: AdminContext }) {
  return html`
    <${Repositories} data=${data} context=${context} />
    <${Workspaces} data=${data} context=${context} />
    <${People} data=${data} context=${context} />
    <${Connections} context=${context} />
    <${AuditLog} data=${data} context=${context} />`
}

/**
 * The Administration view (administrators only; the admin API answers others 403): repositories,
 * workspaces and their pipelines, people (invites, permissions, reset links), issue-host connections,
 * the audit log. Every change is a request to the admin API, then a fresh read.
 */
export function Administration ({ store }: { store: Store }) {
  const [data, setData] = useState<AdminData | null>(null)
  const [error, setError] = useState('')
  const reload = async () => {
    try {
      const [repositories, workspaces, users, connections] = await Promise.all([
        store.client.get<AdminRepo[]>('/admin/repositories'),
        store.client.get<AdminWorkspace[]>('/admin/workspaces'),
        store.client.get<AdminUser[]>('/admin/users'),
        // Only names the repositories' connections: the Connections section says why it cannot read them.
        store.client.get<AdminConnectionName[]>('/admin/connections').catch(() => [])
      ])
      setData({ repositories, workspaces, users, connections })
      setError('')
      store.reloadWorkspaces().catch(() => {})
    } catch (err) {
      setError(`Could not read the administration data: ${err instanceof Error ? err.message : String(err)}`)
    }
  }
  useEffect(() => { reload() }, [])
  const context: AdminContext = { client: store.client, say: store.say, reload }
  return html`<section class="admin" aria-labelledby="admin-title">
    <h2 id="admin-title" class="view-title">Administration</h2>
    ${error !== '' && html`<p class="form-error" role="alert">${error}</p>`}
    ${data === null ? error === '' && html`<p class="hint">Loading…</p>` : html`<${AdminSections} data=${data} context=${context} />`}
  </section>`
}
