/// <reference lib="dom" />
import { useEffect, useRef, useState } from 'preact/hooks'
import { html } from '../html.js'
import type { AdminContext, AdminData } from './admin-data.js'
import { when } from './admin-data.js'

export interface AuditEntry { id: number, at: string, actor: string, action: string, target: string | null }

/** The admin API's read of the audit log for a person and an action ('' for any): the server filters the whole log. */
export function auditUrl (actor: string, action: string, cursor: string | null): string {
  const query = new URLSearchParams({ limit: '200' })
  if (actor !== '') query.set('actor', actor)
  if (action !== '') query.set('action', action)
  if (cursor !== null) query.set('cursor', cursor)
  return `/admin/audit?${query.toString()}`
}

/** The people to choose from: the admin token, everyone with an account, and whoever else the log has named so far. */
export const auditPeople = (users: Array<{ login: string }>, seen: string[]): string[] =>
  [...new Set(['admin', ...users.map((u) => `user:${u.login}`), ...seen])].sort()

const distinct = (values: string[]) => [...new Set(values)].sort()

/** The audit log's newest entries, 200 at a time, of one person and one action if chosen. */
export function AuditLog ({ data, context }: { data: AdminData, context: AdminContext }) {
  const [entries, setEntries] = useState<AuditEntry[]>([])
  const [next, setNext] = useState<string | null>(null)
  const [actor, setActor] = useState('')
  const [action, setAction] = useState('')
  // Every person and action a read has shown, so a choice stays offered while it filters the rest out.
  const [seen, setSeen] = useState<{ actors: string[], actions: string[] }>({ actors: [], actions: [] })
  const [error, setError] = useState('')
  // What the entries shown are of, and the latest read: an earlier choice's answer coming after it is dropped.
  const [shown, setShown] = useState({ actor: '', action: '' })
  const latest = useRef(0)
  const load = async (who: string, what: string, cursor: string | null) => {
    const mine = ++latest.current
    try {
      const page = await context.client.get<{ entries: AuditEntry[], next_cursor: string | null }>(auditUrl(who, what, cursor))
      if (mine !== latest.current) return
      setShown({ actor: who, action: what })
      setEntries((old) => cursor === null ? page.entries : [...old, ...page.entries])
      setNext(page.next_cursor)
      setSeen((old) => ({
        actors: distinct([...old.actors, ...page.entries.map((e) => e.actor)]),
        actions: distinct([...old.actions, ...page.entries.map((e) => e.action)])
      }))
      setError('')
    } catch (err) {
      if (mine !== latest.current) return
      setError(`Could not read the audit log: ${err instanceof Error ? err.message : String(err)}`)
    }
  }
  useEffect(() => { load(actor, action, null) }, [actor, action])
  const filtered = shown.actor !== '' || shown.action !== ''
  return html`<section class="admin-section" aria-labelledby="admin-audit">
    <h3 id="admin-audit">Audit log</h3>
    <div class="row">
      <label>Person <select value=${actor} onChange=${(e: Event) => setActor((e.target as HTMLSelectElement).value)}>
        <option value="">anyone</option>${auditPeople(data.users, seen.actors).map((a) => html`<option key=${a} value=${a}>${a}</option>`)}
      </select></label>
      <label>Action <select value=${action} onChange=${(e: Event) => setAction((e.target as HTMLSelectElement).value)}>
        <option value="">any</option>${seen.actions.map((a) => html`<option key=${a} value=${a}>${a}</option>`)}
      </select></label>
      <button type="button" onClick=${() => load(actor, action, null)}>Refresh</button>
    </div>
    ${error !== '' && html`<p class="field-error" role="alert">${error}</p>`}
    <div class="table-scroll"><table>
      <caption class="hint">${entries.length === 0 ? 'No entries' : `The newest ${entries.length} entries`}${filtered ? ` of ${[shown.actor, shown.action].filter((x) => x !== '').join(', ')}` : ''}${next !== null ? ' (older ones below)' : ''}</caption>
      <thead><tr><th scope="col">When</th><th scope="col">Person</th><th scope="col">Action</th><th scope="col">Target</th></tr></thead>
      <tbody>${entries.map((e) => html`<tr key=${e.id}><td>${when(e.at)}</td><td>${e.actor}</td><td>${e.action}</td><td>${e.target ?? ''}</td></tr>`)}</tbody>
    </table></div>
    ${next !== null && html`<button type="button" onClick=${() => load(actor, action, next)}>Show older entries</button>`}
  </section>`
}
