/// <reference lib="dom" />
import { useEffect, useRef } from 'preact/hooks'
import { html } from '../html.js'
import type { Store } from '../store.js'

/** Where a sign-in button leads: the provider, asked to come back to this page as it is (docs/sign-in.md). */
export function loginHref (loginUrl: string, here: string): string {
  // The server takes a path of up to 500 characters; a longer address comes back to the page without its query.
  const back = here.length <= 500 ? here : here.split('?')[0]
  return `${loginUrl}${loginUrl.includes('?') ? '&' : '?'}return_to=${encodeURIComponent(back)}`
}

/** Sign-in through the server's providers (a browser session), or by pasting an API token that stays in this tab only. */
export function SignIn ({ store }: { store: Store }) {
  const input = useRef<HTMLInputElement>(null)
  const { providers } = store.state
  useEffect(() => { if (providers.length === 0) input.current?.focus() }, [])
  return html`<form class="sign-in" aria-labelledby="sign-in-title" onSubmit=${(e: SubmitEvent) => {
    e.preventDefault()
    store.signIn(input.current!.value.trim())
  }}>
    <h2 id="sign-in-title">Sign in</h2>
    ${providers.length > 0 && html`<ul class="providers">
      ${providers.map((p) => html`<li key=${p.id}><a class="provider" href=${loginHref(p.login_url, store.here())}>${p.name}</a></li>`)}
    </ul>
    <p>Or:</p>`}
    <p>Paste an API token (the server logs the demo token when it starts). It stays in this tab only.</p>
    <label>API token <input ref=${input} name="token" type="password" autocomplete="off" required /></label>
    <button type="submit">Sign in</button>
  </form>`
}
