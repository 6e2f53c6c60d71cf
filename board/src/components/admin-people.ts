/// <reference lib="dom" />
import { useEffect, useRef, useState } from 'preact/hooks'
import { html } from '../html.js'
import { when, type AdminContext, type AdminData, type AdminUser } from './admin-data.js'
import { PendingInvites } from './admin-invites.js'
import { ShownOnce } from './copy.js'
import { FieldError, invalid, useErrors } from './field.js'

export const PERMISSIONS = ['read', 'write', 'admin'] as const
const message = (err: unknown) => err instanceof Error ? err.message : String(err)

/** A date-time as the reader's local date and time; "never" for none. */

/** The invite dialog: Administration offers every workspace, a workspace's Settings only that one (its admin may invite into it). */
export function InviteDialog ({ workspaces, context, onClose }: {
  workspaces: Array<{ id: string, name: string }>, context: AdminContext, onClose: () => void
}) {
  const dialog = useRef<HTMLDialogElement>(null)
  const form = useErrors()
  const [link, setLink] = useState<{ url: string, expires_at: string, email?: string | null, mailed?: boolean, mail_error?: string } | null>(null)
  const [busy, setBusy] = useState(false)
  useEffect(() => { if (dialog.current !== null && !dialog.current.open) dialog.current.showModal() }, [])
  const submit = async (e: SubmitEvent) => {
    e.preventDefault()
    const fields = new FormData(e.target as HTMLFormElement)
    const email = String(fields.get('email') ?? '').trim()
    const workspaceId = String(fields.get('workspace') ?? '')
    if (workspaceId === '') {
      form.set({ workspace: 'Make a workspace first: an invite gives a permission on every repository of one.' })
      return
    }
    if (email !== '' && !/^[^\s@]+@[^\s@]+$/.test(email)) {
      form.set({ email: 'That is not an email address (or leave it empty).' })
      return
    }
    setBusy(true)
    try {
      const made = await context.client.send<{ url: string, expires_at: string, email?: string | null, mailed?: boolean, mail_error?: string }>('POST', '/invites', { workspace_id: workspaceId, permission: String(fields.get('permission')), ...(email === '' ? {} : { email }) })
      if (made !== undefined) setLink(made)
      form.clear()
      context.say('Made an invite link.')
    } catch (err) {
      form.refuse(err, ['email', 'workspace', 'permission'])
    } finally {
      setBusy(false)
    }
  }
  return html`<dialog ref=${dialog} aria-labelledby="invite-title" onClose=${onClose}>
    <header><h2 id="invite-title">Invite someone</h2><button type="button" onClick=${() => dialog.current?.close()}>Close</button></header>
    ${link === null
      ? html`<form class="stack" onSubmit=${submit} noValidate>
        <div class="field"><label for="invite-email">Email</label>
          <input name="email" type="email" autocomplete="off" ...${invalid('invite-email', form.errors.email)} />
          <${FieldError} id="invite-email" error=${form.errors.email} /></div>
        <div class="field"><label for="invite-workspace">Workspace</label>
          <select name="workspace" ...${invalid('invite-workspace', form.errors.workspace)}>
            ${workspaces.map((w) => html`<option key=${w.id} value=${w.id}>${w.name}</option>`)}
          </select>
          <${FieldError} id="invite-workspace" error=${form.errors.workspace} /></div>
        <div class="field"><label for="invite-permission">Permission</label>
          <select name="permission" ...${invalid('invite-permission', form.errors.permission)}>
            ${PERMISSIONS.map((p) => html`<option key=${p} value=${p} selected=${p === 'write'}>${p}</option>`)}
          </select>
          <${FieldError} id="invite-permission" error=${form.errors.permission} /></div>
        <p class="hint">Whoever opens the link chooses a login and password and gets this permission on every repository of the workspace. One use, 7 days.</p>
        <div class="row"><button type="submit" class="primary" disabled=${busy}>Make the invite link</button></div>
      </form>`
      : html`<div class="stack"><${ShownOnce} id="invite-link" label="Invite link" value=${link.url} />
        <p class="hint">It works once, until ${when(link.expires_at)}.${link.mailed === true ? ` It was mailed to ${link.email ?? ''} too.` : ''}</p>
        ${link.mail_error !== undefined && html`<p class="field-error" role="alert">${link.mail_error}</p>`}</div>`}
  </dialog>`
}

function PermissionForm ({ data, user, context, onDone }: { data: AdminData, user: AdminUser, context: AdminContext, onDone: () => void }) {
  const form = useErrors()
  const id = `perm-${user.login}`
  const submit = async (e: SubmitEvent) => {
    e.preventDefault()
    const fields = new FormData(e.target as HTMLFormElement)
    const workspace = data.workspaces.find((w) => w.id === String(fields.get('workspace')))
    const permission = String(fields.get('permission'))
    if (workspace === undefined || workspace.repositories.length === 0) {
      form.set({ workspace: 'That workspace holds no repository.' })
      return
    }
    try {
      // One request, one transaction: a refusal leaves every repository as it was.
      await context.client.send('PUT', `/admin/workspaces/${encodeURIComponent(workspace.id)}/permissions/${encodeURIComponent(user.login)}`, { permission })
    } catch (err) {
      form.refuse(err, ['workspace', 'permission'])
      return
    }
    context.say(permission === 'none' ? `${user.login} has no permission on ${workspace.name} now.` : `${user.login} has ${permission} on every repository of ${workspace.name} now.`)
    onDone()
  }
  return html`<form class="row permission-form" aria-label=${`Permission of ${user.login}`} onSubmit=${submit} noValidate>
    <div class="field"><label for=${`${id}-ws`}>Workspace</label>
      <select name="workspace" ...${invalid(`${id}-ws`, form.errors.workspace)}>${data.workspaces.map((w) => html`<option key=${w.id} value=${w.id}>${w.name}</option>`)}</select>
      <${FieldError} id=${`${id}-ws`} error=${form.errors.workspace} /></div>
    <div class="field"><label for=${`${id}-p`}>Permission</label>
      <select name="permission" ...${invalid(`${id}-p`, form.errors.permission)}>${[...PERMISSIONS, 'none'].map((p) => html`<option key=${p} value=${p}>${p}</option>`)}</select>
      <${FieldError} id=${`${id}-p`} error=${form.errors.permission} /></div>
    <button type="submit">Save permission</button>
    <button type="button" onClick=${onDone}>Cancel</button>
  </form>`
}

function Person ({ data, user, context }: { data: AdminData, user: AdminUser, context: AdminContext }) {
  const [mode, setMode] = useState<'' | 'permission' | 'remove'>('')
  const [reset, setReset] = useState<string | null>(null)
  const [error, setError] = useState('')
  const act = async (method: 'PATCH' | 'DELETE' | 'POST', path: string, body: unknown, done: string) => {
    try {
      const answer = await context.client.send<{ url?: string }>(method, path, body)
      setError('')
      context.say(done)
      return answer ?? {}
    } catch (err) {
      setError(message(err))
      return undefined
    }
  }
  const login = encodeURIComponent(user.login)
  const administrator = user.administrator === true
  return html`<tr>
    <th scope="row">${user.login}</th>
    <td>${user.email ?? ''}</td>
    <td>${administrator ? 'administrator' : ''}</td>
    <td>${when(user.last_sign_in_at)}</td>
    <td>
      <div class="row">
        <button type="button" onClick=${() => setMode(mode === 'permission' ? '' : 'permission')} aria-expanded=${mode === 'permission'}>Change permission</button>
        <button type="button" onClick=${async () => { if (await act('PATCH', `/admin/users/${login}`, { administrator: !administrator }, administrator ? `${user.login} is no administrator now.` : `${user.login} is an administrator now.`) !== undefined) await context.reload() }}>
          ${administrator ? 'Unmake administrator' : 'Make administrator'}</button>
        <button type="button" onClick=${async () => { const made = await act('POST', `/admin/users/${login}/password-reset`, {}, `Made a password reset link for ${user.login}.`); if (made?.url !== undefined) setReset(made.url) }}>Reset link</button>
        <button type="button" onClick=${() => setMode(mode === 'remove' ? '' : 'remove')} aria-expanded=${mode === 'remove'}>Remove</button>
      </div>
      ${mode === 'permission' && html`<${PermissionForm} data=${data} user=${user} context=${context} onDone=${() => setMode('')} />`}
      ${mode === 'remove' && html`<div class="row confirm" role="group" aria-label=${`Remove ${user.login}?`}>
        <span>Remove ${user.login}? Their sessions and tokens end at once.</span>
        <button type="button" class="danger" onClick=${async () => { if (await act('DELETE', `/admin/users/${login}`, undefined, `Removed ${user.login}.`) !== undefined) await context.reload() }}>Remove ${user.login}</button>
        <button type="button" onClick=${() => setMode('')}>Cancel</button>
      </div>`}
      ${reset !== null && html`<${ShownOnce} id=${`reset-${user.login}`} label=${`Password reset link for ${user.login}`} value=${reset} />`}
      ${error !== '' && html`<p class="field-error" role="alert">${error}</p>`}
    </td>
  </tr>`
}

/** Every person with their email, whether an administrator, and their last sign-in; invites and reset links. */
export function People ({ data, context }: { data: AdminData, context: AdminContext }) {
  const [inviting, setInviting] = useState(false)
  const [invitesRead, setInvitesRead] = useState(0)
  return html`<section class="admin-section" aria-labelledby="admin-people">
    <h3 id="admin-people">People</h3>
    <button type="button" onClick=${() => setInviting(true)}>Invite</button>
    ${inviting && html`<${InviteDialog} workspaces=${data.workspaces} context=${context} onClose=${() => { setInviting(false); setInvitesRead((n) => n + 1) }} />`}
    <div class="table-scroll"><table>
      <thead><tr><th scope="col">Login</th><th scope="col">Email</th><th scope="col">Administrator</th><th scope="col">Last sign-in</th><th scope="col">Changes</th></tr></thead>
      <tbody>${data.users.map((u) => html`<${Person} key=${u.login} data=${data} user=${u} context=${context} />`)}</tbody>
    </table></div>
    <${PendingInvites} data=${data} context=${context} read=${invitesRead} />
  </section>`
}
