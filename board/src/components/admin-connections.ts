/// <reference lib="dom" />
import { useEffect, useRef, useState } from 'preact/hooks'
import { html } from '../html.js'
import { when, type AdminContext } from './admin-data.js'
import { ShownOnce } from './copy.js'
import { FieldError, invalid, TextField, useErrors } from './field.js'

export interface AdminConnection { id: string, kind: 'github' | 'gitea' | 'forgejo', web_url: string, webhook_path: string, secret?: string, has_token: boolean }
export interface Delivery { received_at: string, event: string, action: string | null, result: string, detail: string | null }
export interface ImportJob { id: string, repository: string, state: 'queued' | 'running' | 'done' | 'failed', issues: number, pull_requests: number, milestones: number, collaborators: number, error: string | null }

/** The kinds a person chooses from, and what each asks the API for. */
export const HOST_KINDS = [
  { value: 'github', label: 'GitHub', kind: 'github', needsAddress: false },
  { value: 'ghe', label: 'GitHub Enterprise', kind: 'github', needsAddress: true },
  { value: 'gitea', label: 'Gitea', kind: 'gitea', needsAddress: true },
  { value: 'forgejo', label: 'Forgejo', kind: 'forgejo', needsAddress: true }
] as const

const KIND_NAMES: Record<AdminConnection['kind'], string> = { github: 'GitHub', gitea: 'Gitea', forgejo: 'Forgejo' }
const REPOSITORY = /^[A-Za-z0-9][A-Za-z0-9._-]*\/[A-Za-z0-9._-]+$/

/** The request body for the connection form, or the errors by field. */
export function connectionRequest (choice: string, webUrl: string, token: string): { body?: Record<string, string>, errors: Record<string, string> } {
  const kind = HOST_KINDS.find((k) => k.value === choice)
  const errors: Record<string, string> = {}
  if (kind === undefined) return { errors: { kind: 'Choose the kind of issue host.' } }
  if (kind.needsAddress && !/^https?:\/\/\S+$/.test(webUrl)) errors.web_url = `${kind.label} needs its web address (http:// or https://).`
  else if (webUrl !== '' && !/^https?:\/\/\S+$/.test(webUrl)) errors.web_url = 'A web address starts with http:// or https://.'
  if (token.length > 500) errors.token = 'A token is at most 500 characters.'
  if (Object.keys(errors).length > 0) return { errors }
  return { body: { kind: kind.kind, ...(webUrl === '' ? {} : { web_url: webUrl }), ...(token === '' ? {} : { token }) }, errors }
}

/** An import's counts as a sentence. */
export const importSummary = (job: ImportJob): string =>
  `${job.repository}: ${job.state}, ${job.issues} issues, ${job.pull_requests} pull requests, ${job.milestones} milestones, ${job.collaborators} collaborators${job.error === null ? '' : ` (${job.error})`}`

function ConnectForm ({ context, onMade, onCancel }: { context: AdminContext, onMade: (c: AdminConnection) => void, onCancel: () => void }) {
  const form = useErrors()
  const [busy, setBusy] = useState(false)
  const submit = async (e: SubmitEvent) => {
    e.preventDefault()
    const fields = new FormData(e.target as HTMLFormElement)
    const { body, errors } = connectionRequest(String(fields.get('kind') ?? ''), String(fields.get('web_url') ?? '').trim(), String(fields.get('token') ?? '').trim())
    form.set(errors)
    if (body === undefined) return
    setBusy(true)
    try {
      const made = await context.client.send<AdminConnection>('POST', '/admin/connections', body)
      if (made !== undefined) onMade(made)
    } catch (err) {
      form.refuse(err, ['web_url', 'token', 'kind'])
    } finally {
      setBusy(false)
    }
  }
  return html`<form class="admin-form" aria-label="Connect an issue host" onSubmit=${submit} noValidate>
    <div class="field">
      <label for="conn-kind">Kind</label>
      <select id="conn-kind" name="kind" ...${invalid('conn-kind', form.errors.kind)}>
        ${HOST_KINDS.map((k) => html`<option key=${k.value} value=${k.value}>${k.label}</option>`)}
      </select>
      <${FieldError} id="conn-kind" error=${form.errors.kind} />
    </div>
    <${TextField} id="conn-web-url" label="Web address" name="web_url" type="url" placeholder="https://git.example.org" error=${form.errors.web_url} />
    <${TextField} id="conn-token" label="Token" name="token" type="password" error=${form.errors.token} />
    <p class="hint">The token (read access to issues, pull requests and members) is needed for imports; it is never shown again.</p>
    <div class="row"><button type="submit" class="primary" disabled=${busy}>Connect</button><button type="button" onClick=${onCancel}>Cancel</button></div>
  </form>`
}

function ImportForm ({ connection, context }: { connection: AdminConnection, context: AdminContext }) {
  const [jobs, setJobs] = useState<ImportJob[]>([])
  const [error, setError] = useState('')
  const timer = useRef<ReturnType<typeof setTimeout> | null>(null)
  const base = `/admin/connections/${encodeURIComponent(connection.id)}`
  const load = async () => {
    try {
      const latest = await context.client.get<ImportJob[]>(`${base}/imports`)
      setJobs(latest)
      if (latest.some((j) => j.state === 'queued' || j.state === 'running')) timer.current = setTimeout(load, 1000)
    } catch (err) {
      setError(`Could not read the imports: ${err instanceof Error ? err.message : String(err)}`)
    }
  }
  useEffect(() => { load(); return () => { if (timer.current !== null) clearTimeout(timer.current) } }, [])
  const id = `import-${connection.id}`
  const submit = async (e: SubmitEvent) => {
    e.preventDefault()
    const repository = String(new FormData(e.target as HTMLFormElement).get('repository') ?? '').trim()
    if (!REPOSITORY.test(repository)) {
      setError('Name the repository as owner/name.')
      return
    }
    try {
      await context.client.send('POST', `${base}/imports`, { repository })
      setError('')
      context.say(`Importing ${repository}…`)
      if (timer.current !== null) clearTimeout(timer.current)
      await load()
    } catch (err) {
      setError(err instanceof Error ? err.message : String(err))
    }
  }
  return html`<form class="row import" aria-label=${`Import into ${connection.web_url}`} onSubmit=${submit} noValidate>
      <div class="field">
        <label for=${id}>Repository to import</label>
        <input id=${id} name="repository" placeholder="owner/name" autocomplete="off" ...${invalid(id, error)} />
        <${FieldError} id=${id} error=${error} />
      </div>
      <button type="submit">Import</button>
    </form>
    <ul class="imports" aria-label=${`Imports from ${connection.web_url}`}>
      ${jobs.map((j) => html`<li key=${j.id}>
        <progress aria-label=${`Import of ${j.repository}`} max="1" value=${j.state === 'done' || j.state === 'failed' ? 1 : undefined}></progress>
        <span>${importSummary(j)}</span>
      </li>`)}
    </ul>`
}

function Deliveries ({ connection, context }: { connection: AdminConnection, context: AdminContext }) {
  const [rows, setRows] = useState<Delivery[] | null>(null)
  const [error, setError] = useState('')
  const load = async () => {
    try {
      setRows(await context.client.get<Delivery[]>(`/admin/connections/${encodeURIComponent(connection.id)}/deliveries`))
      setError('')
    } catch (err) {
      setError(`Could not read the deliveries: ${err instanceof Error ? err.message : String(err)}`)
    }
  }
  useEffect(() => { load() }, [])
  return html`<div>
    <div class="row"><h5>Last deliveries</h5><button type="button" aria-label=${`Refresh the deliveries of ${connection.web_url}`} onClick=${load}>Refresh</button></div>
    ${error !== '' && html`<p class="field-error" role="alert">${error}</p>`}
    ${rows === null
      ? error === '' && html`<p class="hint">Loading…</p>`
      : rows.length === 0
        ? html`<p class="hint">No delivery yet: add the webhook on the host.</p>`
        : html`<div class="table-scroll"><table aria-label=${`Last deliveries of ${connection.web_url}`}>
          <thead><tr><th scope="col">Event</th><th scope="col">Time</th><th scope="col">Result</th></tr></thead>
          <tbody>${rows.map((d, i) => html`<tr key=${i}>
            <td>${d.event}${d.action === null ? '' : ` ${d.action}`}</td><td>${when(d.received_at)}</td>
            <td>${d.result}${d.detail === null ? '' : `: ${d.detail}`}</td></tr>`)}</tbody>
        </table></div>`}
  </div>`
}

/**
 * A connection's token changed or cleared, or the connection ended: the token is sent, never shown
 * back (the list says only whether one is set); disconnecting asks first.
 */
function ConnectionControls ({ connection, context, onChanged }: { connection: AdminConnection, context: AdminContext, onChanged: () => Promise<void> }) {
  const [mode, setMode] = useState<'' | 'token' | 'disconnect'>('')
  const [error, setError] = useState('')
  const [busy, setBusy] = useState(false)
  const path = `/admin/connections/${encodeURIComponent(connection.id)}`
  const id = `conn-token-${connection.id}`
  const run = async (method: 'PATCH' | 'DELETE', body: unknown, said: string) => {
    setBusy(true)
    try {
      await context.client.send(method, path, body)
      setError('')
      setMode('')
      context.say(said)
      await onChanged()
    } catch (err) {
      setError(err instanceof Error ? err.message : String(err))
    } finally {
      setBusy(false)
    }
  }
  const saveToken = async (e: SubmitEvent) => {
    e.preventDefault()
    const token = String(new FormData(e.target as HTMLFormElement).get('token') ?? '').trim()
    if (token === '' || token.length > 500) {
      setError(token === '' ? 'Give the new token (or Remove the token).' : 'A token is at most 500 characters.')
      return
    }
    await run('PATCH', { token }, `Changed the token of ${connection.web_url}.`)
  }
  return html`<div class="connection-controls">
    <div class="row">
      <button type="button" aria-expanded=${mode === 'token'} onClick=${() => { setMode(mode === 'token' ? '' : 'token'); setError('') }}>Change the token</button>
      <button type="button" aria-expanded=${mode === 'disconnect'} onClick=${() => { setMode(mode === 'disconnect' ? '' : 'disconnect'); setError('') }}>Disconnect</button>
    </div>
    ${mode === 'token' && html`<form class="row" aria-label=${`Token of ${connection.web_url}`} onSubmit=${saveToken} noValidate>
      <div class="field">
        <label for=${id}>New token</label>
        <input id=${id} name="token" type="password" autocomplete="off" ...${invalid(id, error)} />
        <${FieldError} id=${id} error=${error} />
      </div>
      <button type="submit" class="primary" disabled=${busy}>Save the token</button>
      ${connection.has_token && html`<button type="button" disabled=${busy} onClick=${() => { run('PATCH', { token: null }, `Removed the token of ${connection.web_url}.`).catch(() => {}) }}>Remove the token</button>`}
      <button type="button" onClick=${() => { setMode(''); setError('') }}>Cancel</button>
    </form>`}
    ${mode === 'disconnect' && html`<div class="row confirm" role="group" aria-label=${`Disconnect ${connection.web_url}?`}>
      <span>Disconnect ${connection.web_url}? Its deliveries are refused from now on; its repositories and issues stay.</span>
      <button type="button" class="danger" disabled=${busy} onClick=${() => { run('DELETE', undefined, `Disconnected ${connection.web_url}.`).catch(() => {}) }}>Disconnect ${connection.web_url}</button>
      <button type="button" onClick=${() => setMode('')}>Cancel</button>
    </div>`}
    ${mode === 'disconnect' && error !== '' && html`<p class="field-error" role="alert">${error}</p>`}
  </div>`
}

/** Issue-host connections: connect one (its webhook URL and secret shown once), each one's last deliveries and imports. */
export function Connections ({ context }: { context: AdminContext }) {
  const [list, setList] = useState<AdminConnection[] | null>(null)
  const [adding, setAdding] = useState(false)
  const [made, setMade] = useState<AdminConnection | null>(null)
  const [error, setError] = useState('')
  const load = async () => {
    try {
      setList(await context.client.get<AdminConnection[]>('/admin/connections'))
    } catch (err) {
      setError(`Could not read the connections: ${err instanceof Error ? err.message : String(err)}`)
    }
  }
  useEffect(() => { load() }, [])
  const webhookUrl = (c: AdminConnection) => new URL(c.webhook_path, location.href).href
  return html`<section class="admin-section" aria-labelledby="admin-connections">
    <h3 id="admin-connections">Connections</h3>
    ${adding
      ? html`<${ConnectForm} context=${context} onCancel=${() => setAdding(false)} onMade=${(c: AdminConnection) => {
          setAdding(false)
          setMade(c)
          context.say(`Connected ${c.web_url}. Add the webhook on the host now.`)
          load()
        }} />`
      : html`<button type="button" onClick=${() => { setAdding(true); setMade(null) }}>Connect an issue host</button>`}
    ${made !== null && html`<div class="made" role="group" aria-label="The new connection's webhook">
      <p>Add a webhook on ${made.web_url} (content type application/json) with:</p>
      <${ShownOnce} id="conn-webhook-url" label="Payload URL" value=${webhookUrl(made)} />
      <${ShownOnce} id="conn-webhook-secret" label="Secret" value=${made.secret ?? ''} />
    </div>`}
    ${error !== '' && html`<p class="field-error" role="alert">${error}</p>`}
    ${list !== null && list.length === 0 && html`<p class="hint">No issue host connected.</p>`}
    ${(list ?? []).map((c) => html`<section key=${c.id} class="connection" aria-labelledby=${`conn-${c.id}`}>
      <h4 id=${`conn-${c.id}`}>${KIND_NAMES[c.kind]} ${c.web_url}</h4>
      <p class="hint">Payload URL ${webhookUrl(c)} · ${c.has_token ? 'a token is set' : 'no token: imports need one'}</p>
      <${ConnectionControls} connection=${c} context=${context} onChanged=${load} />
      <${ImportForm} connection=${c} context=${context} />
      <${Deliveries} connection=${c} context=${context} />
    </section>`)}
  </section>`
}
