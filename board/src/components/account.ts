/// <reference lib="dom" />
import { useEffect, useState } from 'preact/hooks'
import { html } from '../html.js'
import type { Store } from '../store.js'
import { when } from './admin-data.js'
import { ShownOnce } from './copy.js'
import { FieldError, invalid, TextField, useErrors } from './field.js'

export interface AccountToken { id: string, name: string, scope: 'read' | 'write', created_at: string | null, expires_at: string | null, last_used_at: string | null, legacy: boolean }
export const MIN_PASSWORD = 10
/** Expiry choices for a new token, in days (0: never). */
export const EXPIRIES = [[30, '30 days'], [90, '90 days'], [365, 'a year'], [0, 'never']] as const

/** The expiry a choice of days gives from `now`; null for never. */
export const expiryFrom = (days: number, now: Date): string | null => days === 0 ? null : new Date(now.getTime() + days * 86_400_000).toISOString()

function ChangePassword ({ store }: { store: Store }) {
  const form = useErrors()
  const [busy, setBusy] = useState(false)
  const submit = async (e: SubmitEvent) => {
    e.preventDefault()
    const target = e.target as HTMLFormElement
    const fields = new FormData(target)
    const current = String(fields.get('current_password') ?? '')
    const next = String(fields.get('new_password') ?? '')
    if (next.length < MIN_PASSWORD) {
      form.set({ new_password: `A password is at least ${MIN_PASSWORD} characters.` })
      return
    }
    setBusy(true)
    try {
      await store.client.send('POST', '/account/password', { ...(current === '' ? {} : { current_password: current }), new_password: next })
      form.clear()
      target.reset()
      store.say('Your password is changed.')
    } catch (err) {
      form.refuse(err, ['current_password', 'new_password'])
    } finally {
      setBusy(false)
    }
  }
  return html`<section class="admin-section" aria-labelledby="account-password">
    <h3 id="account-password">Change password</h3>
    <form class="admin-form" aria-label="Change password" onSubmit=${submit} noValidate>
      <${TextField} id="current-password" label="Current password" name="current_password" type="password" autocomplete="current-password" error=${form.errors.current_password} />
      <${TextField} id="new-password" label="New password" name="new_password" type="password" autocomplete="new-password" minlength=${MIN_PASSWORD} error=${form.errors.new_password} />
      <p class="hint">At least ${MIN_PASSWORD} characters. Leave the current password empty if you have none yet (you signed in through a provider).</p>
      <div class="row"><button type="submit" class="primary" disabled=${busy}>Change password</button></div>
    </form>
  </section>`
}

function Tokens ({ store }: { store: Store }) {
  const [tokens, setTokens] = useState<AccountToken[] | null>(null)
  const [adding, setAdding] = useState(false)
  const [made, setMade] = useState<string | null>(null)
  const [error, setError] = useState('')
  const form = useErrors()
  const load = async () => {
    try {
      setTokens(await store.client.get<AccountToken[]>('/account/tokens'))
    } catch (err) {
      setError(`Could not read your tokens: ${err instanceof Error ? err.message : String(err)}`)
    }
  }
  useEffect(() => { load() }, [])
  const submit = async (e: SubmitEvent) => {
    e.preventDefault()
    const fields = new FormData(e.target as HTMLFormElement)
    const name = String(fields.get('name') ?? '').trim()
    if (name === '' || name.length > 100) {
      form.set({ name: 'A token needs a name of 1 to 100 characters.' })
      return
    }
    try {
      const answer = await store.client.send<{ token: string }>('POST', '/account/tokens', { name, scope: String(fields.get('scope')), expires_at: expiryFrom(Number(fields.get('expiry')), new Date()) })
      setMade(answer?.token ?? null)
      setAdding(false)
      form.clear()
      store.say(`Made the token ${name}.`)
      await load()
    } catch (err) {
      form.refuse(err, ['name', 'scope', 'expires_at'])
    }
  }
  const revoke = async (token: AccountToken) => {
    try {
      await store.client.send('DELETE', `/account/tokens/${encodeURIComponent(token.id)}`, undefined)
      store.say(`Revoked the token ${token.name}.`)
      await load()
    } catch (err) {
      setError(`Not revoked: ${err instanceof Error ? err.message : String(err)}`)
    }
  }
  return html`<section class="admin-section" aria-labelledby="account-tokens">
    <h3 id="account-tokens">API tokens</h3>
    ${made !== null && html`<${ShownOnce} id="new-token-value" label="Your new token" value=${made} />`}
    ${adding
      ? html`<form class="admin-form" aria-label="New token" onSubmit=${submit} noValidate>
        <${TextField} id="token-name" label="Name" name="name" maxlength="100" error=${form.errors.name} />
        <div class="field"><label for="token-scope">Scope</label>
          <select name="scope" ...${invalid('token-scope', form.errors.scope)}><option value="read">read</option><option value="write">write</option></select>
          <${FieldError} id="token-scope" error=${form.errors.scope} /></div>
        <div class="field"><label for="token-expiry">Expires after</label>
          <select name="expiry" ...${invalid('token-expiry', form.errors.expires_at)}>${EXPIRIES.map(([days, text]) => html`<option key=${days} value=${days}>${text}</option>`)}</select>
          <${FieldError} id="token-expiry" error=${form.errors.expires_at} /></div>
        <div class="row"><button type="submit" class="primary">Make the token</button><button type="button" onClick=${() => setAdding(false)}>Cancel</button></div>
      </form>`
      : html`<button type="button" onClick=${() => { setAdding(true); setMade(null) }}>New token</button>`}
    ${error !== '' && html`<p class="field-error" role="alert">${error}</p>`}
    ${tokens !== null && (tokens.length === 0
      ? html`<p class="hint">No tokens.</p>`
      : html`<div class="table-scroll"><table>
        <thead><tr><th scope="col">Name</th><th scope="col">Scope</th><th scope="col">Created</th><th scope="col">Last used</th><th scope="col">Expires</th><th scope="col"><span class="visually-hidden">Revoke</span></th></tr></thead>
        <tbody>${tokens.map((k) => html`<tr key=${k.id}>
          <th scope="row">${k.name}</th><td>${k.scope}</td><td>${when(k.created_at)}</td><td>${when(k.last_used_at)}</td><td>${k.expires_at === null ? 'never' : when(k.expires_at)}</td>
          <td><button type="button" aria-label=${`Revoke ${k.name}`} onClick=${() => revoke(k)}>Revoke</button></td>
        </tr>`)}</tbody>
      </table></div>`)}
  </section>`
}

/** The Account view: who is signed in, the password, and the person's own API tokens. */
export function AccountView ({ store }: { store: Store }) {
  return html`<section class="account" aria-labelledby="account-title">
    <h2 id="account-title" class="view-title">Account</h2>
    <p>Signed in as <strong>${store.state.account?.login ?? '…'}</strong>.</p>
    <${ChangePassword} store=${store} />
    <${Tokens} store=${store} />
  </section>`
}
