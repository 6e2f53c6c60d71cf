/// <reference lib="dom" />
// The board page (docs/board-page.md): Preact components over one store, the API through one client.
import { render } from 'preact'
import { createClient } from './api.js'
import { html } from './html.js'
import { App } from './components/app.js'
import { followLive } from './live.js'
import { createStore } from './store.js'

const base = location.pathname.replace(/\/board\/?$/, '').replace(/\/$/, '')
const store = createStore({
  client: createClient(base, () => store.state.token),
  session: sessionStorage,
  local: localStorage,
  location,
  replaceUrl: (url) => history.replaceState(null, '', url),
  openLive: (url, on) => followLive(url, () => store.state.token, on)
})
store.watchVisibility(() => document.hidden)
document.addEventListener('visibilitychange', () => { if (!document.hidden && store.state.choice !== null) store.refresh() })
// Before the first draw, so a session check shows no sign-in form for a moment.
store.start()
render(html`<${App} store=${store} />`, document.getElementById('app')!)
