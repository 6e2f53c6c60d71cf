/// <reference lib="dom" />
import { useState } from 'preact/hooks'
import { html } from '../html.js'
import type { AdminConnectionName, AdminContext, AdminData, AdminRepo } from './admin-data.js'
import { TextField, useErrors } from './field.js'

const NAME = /^[A-Za-z0-9_.-]{1,100}$/
const OWNER = /^[A-Za-z0-9](?:[A-Za-z0-9-]{0,38})$/

/** Checks a new repository's owner and name before asking the server; an empty object when both are fine. */
export function repositoryErrors (owner: string, name: string): Record<string, string> {
  const errors: Record<string, string> = {}
  if (!OWNER.test(owner)) errors.owner = 'An owner is 1 to 39 letters, digits or hyphens, starting with a letter or digit.'
  if (!NAME.test(name)) errors.name = 'A name is 1 to 100 letters, digits, dots, hyphens or underscores.'
  return errors
}

function NewRepository ({ context, onDone }: { context: AdminContext, onDone: () => void }) {
  const form = useErrors()
  const [busy, setBusy] = useState(false)
  const submit = async (e: SubmitEvent) => {
    e.preventDefault()
    const data = new FormData(e.target as HTMLFormElement)
    const owner = String(data.get('owner') ?? '').trim()
    const name = String(data.get('name') ?? '').trim()
    const wrong = repositoryErrors(owner, name)
    form.set(wrong)
    if (Object.keys(wrong).length > 0) return
    setBusy(true)
    try {
      await context.client.send('POST', '/admin/repositories', { owner, name })
      context.say(`Created the repository ${owner}/${name}.`)
      onDone()
      await context.reload()
    } catch (err) {
      form.refuse(err, ['owner', 'name'])
    } finally {
      setBusy(false)
    }
  }
  return html`<form class="admin-form" aria-label="New repository" onSubmit=${submit} noValidate>
    <${TextField} id="new-repo-owner" label="Owner" name="owner" error=${form.errors.owner} required maxlength="39" />
    <${TextField} id="new-repo-name" label="Name" name="name" error=${form.errors.name} required maxlength="100" />
    <div class="row"><button type="submit" class="primary" disabled=${busy}>Create repository</button><button type="button" onClick=${onDone}>Cancel</button></div>
  </form>`
}

const HOSTS: Record<AdminConnectionName['kind'], string> = { github: 'GitHub', gitea: 'Gitea', forgejo: 'Forgejo' }

/** The issue-host connection a repository is bound to, as the Connections section names it; 'none' when it has none. */
export function connectionOf (repo: AdminRepo, connections: AdminConnectionName[]): string {
  if (repo.connection_id === undefined || repo.connection_id === null) return 'none'
  const c = connections.find((x) => x.id === repo.connection_id)
  return c === undefined ? 'a connection' : `${HOSTS[c.kind]} ${c.web_url}`
}

/** Every repository with its connection, if any, and a form for one that lives here only (no issue host). */
export function Repositories ({ data, context }: { data: AdminData, context: AdminContext }) {
  const [adding, setAdding] = useState(false)
  return html`<section class="admin-section" aria-labelledby="admin-repositories">
    <h3 id="admin-repositories">Repositories</h3>
    ${adding
      ? html`<${NewRepository} context=${context} onDone=${() => setAdding(false)} />`
      : html`<button type="button" onClick=${() => setAdding(true)}>New repository</button>`}
    ${data.repositories.length === 0
      ? html`<p class="hint">No repositories yet.</p>`
      : html`<div class="table-scroll"><table>
        <thead><tr><th scope="col">Repository</th><th scope="col">Connection</th><th scope="col">Workspaces</th></tr></thead>
        <tbody>${data.repositories.map((r) => html`<tr key=${r.id}>
          <th scope="row">${r.owner}/${r.name}</th>
          <td>${connectionOf(r, data.connections ?? [])}</td>
          <td>${data.workspaces.filter((w) => w.repositories.includes(r.id)).map((w) => w.name).join(', ')}</td>
        </tr>`)}</tbody>
      </table></div>`}
  </section>`
}
