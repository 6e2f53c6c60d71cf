/// <reference lib="dom" />
import { useState } from 'preact/hooks'
import { html } from '../html.js'
import { initials, type Assignee } from '../model.js'

/** An http(s) address for an avatar, or null: anything else is shown as initials. */
export function avatarSrc (url: string | null): string | null {
  if (url === null) return null
  try {
    const parsed = new URL(url)
    return parsed.protocol === 'https:' || parsed.protocol === 'http:' ? parsed.href : null
  } catch {
    return null
  }
}

/**
 * An assignee's avatar from the issue host; initials when there is none or it does not load (the
 * page's policy allows images from the connected hosts only).
 */
export function Avatar ({ person }: { person: Assignee }) {
  const [broken, setBroken] = useState(false)
  const src = avatarSrc(person.avatar_url)
  if (src === null || broken) return html`<span class="assignee" title=${person.login}>${initials(person.login)}</span>`
  return html`<img class="assignee avatar" src=${src} alt=${person.login} title=${person.login} width="22" height="22" loading="lazy"
    referrerpolicy="no-referrer" onError=${() => { setBroken(true) }} />`
}
