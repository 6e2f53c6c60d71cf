/// <reference lib="dom" />
import { useEffect, useRef, useState } from 'preact/hooks'
import { ApiError } from '../api.js'
import { html } from '../html.js'
import type { Store } from '../store.js'
import { TextField } from './field.js'

/** Where a sign-in button leads: the provider, asked to come back to this page as it is (docs/sign-in.md). */
export function loginHref (loginUrl: string, here: string): string {
  // The server takes a path of up to 500 characters; a longer address comes back to the page without its query.
  const back = here.length <= 500 ? here : here.split('?')[0]
  return `${loginUrl}${loginUrl.includes('?') ? '&' : '?'}return_to=${encodeURIComponent(back)}`
}

/** What a refused password sign-in says: the server's words (the same for an unknown login; a lock-out names the wait). */
export function passwordRefusal (err: unknown): string {
  if (err instanceof ApiError && (err.status === 401 || err.status === 429)) return err.message
  return `Could not sign in: ${err instanceof Error ? err.message : String(err)}`
}

/**
 * Sign-in with a login and password (a browser session), through the server's providers, or with an
 * API token pasted under "Use an API token" (it stays in this tab only).
 */
export function SignIn ({ store }: { store: Store }) {
  const login = useRef<HTMLInputElement>(null)
  const token = useRef<HTMLInputElement>(null)
  const [error, setError] = useState<string | undefined>(undefined)
  const [busy, setBusy] = useState(false)
  const { providers } = store.state
  useEffect(() => { login.current?.focus() }, [])
  return html`<section class="sign-in" aria-labelledby="sign-in-title">
    <h2 id="sign-in-title">Sign in</h2>
    <form class="password-sign-in" onSubmit=${async (e: SubmitEvent) => {
      e.preventDefault()
      const form = e.currentTarget as HTMLFormElement
      const values = new FormData(form)
      setBusy(true)
      try {
        await store.passwordSignIn(String(values.get('login') ?? '').trim(), String(values.get('password') ?? ''))
      } catch (err) {
        setError(passwordRefusal(err))
        form.querySelector<HTMLInputElement>('input[name=password]')?.focus()
      } finally {
        setBusy(false)
      }
    }}>
      <div class="field">
        <label for="sign-in-login">Login</label>
        <input ref=${login} id="sign-in-login" name="login" autocomplete="username" required />
      </div>
      <${TextField} id="sign-in-password" label="Password" name="password" type="password" autocomplete="current-password" required error=${error} />
      <button type="submit" disabled=${busy}>Sign in</button>
    </form>
    ${providers.length > 0 && html`<ul class="providers" aria-label="Other ways to sign in">
      ${providers.map((p) => html`<li key=${p.id}><a class="provider" href=${loginHref(p.login_url, store.here())}>${p.name}</a></li>`)}
    </ul>`}
    <details class="token-sign-in">
      <summary>Use an API token</summary>
      <form onSubmit=${(e: SubmitEvent) => {
        e.preventDefault()
        store.signIn(token.current!.value.trim())
      }}>
        <p>Paste an API token (the server logs the demo token when it starts). It stays in this tab only.</p>
        <label>API token <input ref=${token} name="token" type="password" autocomplete="off" required /></label>
        <button type="submit">Use token</button>
      </form>
    </details>
  </section>`
}
