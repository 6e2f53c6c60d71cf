/// <reference lib="dom" />
import { useEffect, useState } from 'preact/hooks'
import { html } from '../html.js'
import { when, type AdminContext, type AdminData } from './admin-data.js'

export interface PendingInvite {
  id: string, workspace_id: string, permission: string, email: string | null, created_by: string, created_at: string, expires_at: string
}

/** Who made an invite, for people: `user:ann` is "ann", the admin token "admin". */
export const maker = (createdBy: string): string => createdBy.startsWith('user:') ? createdBy.slice(5) : createdBy

/**
 * The invites not used yet (`GET /invites` per workspace): who made each, its workspace, permission
 * and expiry, and **Revoke** (`DELETE /invites/:id`, its link stops working). `read` changes when an
 * invite is made, for a fresh read.
 */
export function PendingInvites ({ data, context, read }: { data: AdminData, context: AdminContext, read: number }) {
  const [invites, setInvites] = useState<PendingInvite[] | null>(null)
  const [error, setError] = useState('')
  const load = async () => {
    try {
      const lists = await Promise.all(data.workspaces.map(async (w) => await context.client.get<PendingInvite[]>(`/invites?workspace_id=${encodeURIComponent(w.id)}`)))
      setInvites(lists.flat().sort((a, b) => b.created_at.localeCompare(a.created_at)))
      setError('')
    } catch (err) {
      setError(`Could not read the invites: ${err instanceof Error ? err.message : String(err)}`)
    }
  }
  useEffect(() => { load().catch(() => {}) }, [read, data.workspaces])
  const workspace = (id: string) => data.workspaces.find((w) => w.id === id)?.name ?? id
  const revoke = async (invite: PendingInvite) => {
    try {
      await context.client.send('DELETE', `/invites/${encodeURIComponent(invite.id)}`, undefined)
      context.say(`Revoked the invite into ${workspace(invite.workspace_id)}${invite.email === null ? '' : ` for ${invite.email}`}.`)
      await load()
    } catch (err) {
      setError(`Could not revoke it: ${err instanceof Error ? err.message : String(err)}`)
    }
  }
  return html`<section class="admin-subsection" aria-labelledby="admin-invites">
    <h4 id="admin-invites">Pending invites</h4>
    ${error !== '' && html`<p class="field-error" role="alert">${error}</p>`}
    ${invites === null
      ? html`<p>Reading the invites…</p>`
      : invites.length === 0
        ? html`<p>No invite is waiting to be used.</p>`
        : html`<div class="table-scroll"><table aria-labelledby="admin-invites">
          <thead><tr><th scope="col">Workspace</th><th scope="col">Permission</th><th scope="col">Email</th><th scope="col">Made by</th><th scope="col">Expires</th><th scope="col"><span class="visually-hidden">Changes</span></th></tr></thead>
          <tbody>${invites.map((i) => html`<tr key=${i.id}>
            <th scope="row">${workspace(i.workspace_id)}</th>
            <td>${i.permission}</td>
            <td>${i.email ?? ''}</td>
            <td>${maker(i.created_by)}</td>
            <td>${when(i.expires_at)}</td>
            <td><button type="button" aria-label=${`Revoke the invite into ${workspace(i.workspace_id)} made ${when(i.created_at)}`} onClick=${() => { revoke(i).catch(() => {}) }}>Revoke</button></td>
          </tr>`)}</tbody>
        </table></div>`}
  </section>`
}
