/// <reference lib="dom" />
import { useState } from 'preact/hooks'
import { html } from '../html.js'

/** A value shown once (an invite link, a token, a secret): read-only, selected on focus, with a Copy button. */
export function ShownOnce ({ id, label, value }: { id: string, label: string, value: string }) {
  const [copied, setCopied] = useState(false)
  const copy = async () => {
    const input = document.getElementById(id) as HTMLInputElement | null
    try {
      await navigator.clipboard.writeText(value)
    } catch {
      // Without clipboard access (plain http), the value is selected for the person to copy.
      input?.select()
      document.execCommand?.('copy')
    }
    setCopied(true)
  }
  return html`<div class="shown-once">
    <label for=${id}>${label}</label>
    <div class="row">
      <input id=${id} readonly value=${value} onFocus=${(e: FocusEvent) => (e.target as HTMLInputElement).select()} />
      <button type="button" onClick=${copy}>Copy</button>
    </div>
    <p class="hint" aria-live="polite">${copied ? 'Copied.' : 'Shown this once: copy it now.'}</p>
  </div>`
}
