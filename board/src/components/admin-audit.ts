/// <reference lib="dom" />
import { useEffect, useState } from 'preact/hooks'
import { html } from '../html.js'
import type { AdminContext } from './admin-data.js'
import { when } from './admin-data.js'

export interface AuditEntry { id: number, at: string, actor: string, action: string, target: string | null }

/** The entries a person and an action choose ('' for any). */
export const auditShown = (entries: AuditEntry[], actor: string, action: string): AuditEntry[] =>
  entries.filter((e) => (actor === '' || e.actor === actor) && (action === '' || e.action === action))

const distinct = (values: string[]) => [...new Set(values)].sort()

/** The audit log's newest entries, 200 at a time, filtered by person and action. */
export function AuditLog ({ context }: { context: AdminContext }) {
  const [entries, setEntries] = useState<AuditEntry[]>([])
  const [next, setNext] = useState<string | null>(null)
  const [actor, setActor] = useState('')
  const [action, setAction] = useState('')
  const [error, setError] = useState('')
  const load = async (cursor: string | null) => {
    try {
      const page = await context.client.get<{ entries: AuditEntry[], next_cursor: string | null }>(`/admin/audit?limit=200${cursor === null ? '' : `&cursor=${encodeURIComponent(cursor)}`}`)
      setEntries((old) => cursor === null ? page.entries : [...old, ...page.entries])
      setNext(page.next_cursor)
      setError('')
    } catch (err) {
      setError(`Could not read the audit log: ${err instanceof Error ? err.message : String(err)}`)
    }
  }
  useEffect(() => { load(null) }, [])
  const shown = auditShown(entries, actor, action)
  return html`<section class="admin-section" aria-labelledby="admin-audit">
    <h3 id="admin-audit">Audit log</h3>
    <div class="row">
      <label>Person <select value=${actor} onChange=${(e: Event) => setActor((e.target as HTMLSelectElement).value)}>
        <option value="">anyone</option>${distinct(entries.map((e) => e.actor)).map((a) => html`<option key=${a} value=${a}>${a}</option>`)}
      </select></label>
      <label>Action <select value=${action} onChange=${(e: Event) => setAction((e.target as HTMLSelectElement).value)}>
        <option value="">any</option>${distinct(entries.map((e) => e.action)).map((a) => html`<option key=${a} value=${a}>${a}</option>`)}
      </select></label>
      <button type="button" onClick=${() => load(null)}>Refresh</button>
    </div>
    ${error !== '' && html`<p class="field-error" role="alert">${error}</p>`}
    <div class="table-scroll"><table>
      <caption class="hint">${shown.length} of the newest ${entries.length} entries</caption>
      <thead><tr><th scope="col">When</th><th scope="col">Person</th><th scope="col">Action</th><th scope="col">Target</th></tr></thead>
      <tbody>${shown.map((e) => html`<tr key=${e.id}><td>${when(e.at)}</td><td>${e.actor}</td><td>${e.action}</td><td>${e.target ?? ''}</td></tr>`)}</tbody>
    </table></div>
    ${next !== null && html`<button type="button" onClick=${() => load(next)}>Show older entries</button>`}
  </section>`
}
