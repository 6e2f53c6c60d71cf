/// <reference lib="dom" />
import type { LiveHandlers } from './store.js'

const RETRY_MS = 5000

/**
 * Reads the workspace's live stream (Server-Sent Events) with fetch rather than EventSource, so the
 * token goes in its header as for every other request. A lost stream (a restart included) is
 * opened again after 5 s; one the server ends for its reader (signed out, the workspace gone) is
 * not: polling then says why.
 */
export function followLive (url: string, token: () => string | null, on: LiveHandlers): { close: () => void } {
  const stop = new AbortController()
  let retry: ReturnType<typeof setTimeout> | undefined
  const connect = async () => {
    let ended = false
    try {
      const current = token()
      const res = await fetch(url, {
        headers: current === null ? {} : { 'x-authentication-token': current },
        credentials: 'same-origin',
        cache: 'no-store',
        signal: stop.signal
      })
      if (!res.ok || res.body === null) {
        // A refusal (429, 503, 401) is not retried: the page polls.
        on.lost()
        return
      }
      on.open()
      const reader = res.body.pipeThrough(new TextDecoderStream()).getReader()
      let text = ''
      for (;;) {
        const { value, done } = await reader.read()
        if (done) break
        text += value
        let end
        while ((end = text.indexOf('\n\n')) !== -1) {
          const block = text.slice(0, end)
          text = text.slice(end + 2)
          const event = /^event: (.*)$/m.exec(block)?.[1]
          if (event === 'change') on.change()
          // A server shutting down comes back (a restart, a deploy); any other end is final.
          if (event === 'end' && !block.includes('shutting down')) ended = true
        }
      }
    } catch {
      if (stop.signal.aborted) return
    }
    on.lost()
    if (!ended && !stop.signal.aborted) retry = setTimeout(() => { connect().catch(() => {}) }, RETRY_MS)
  }
  connect().catch(() => {})
  return { close: () => { clearTimeout(retry); stop.abort() } }
}
