/// <reference lib="dom" />
import { useEffect, useReducer, useRef, useState } from 'preact/hooks'
import { html } from '../html.js'
import type { Store } from '../store.js'
import { AccountView } from './account.js'
import { Administration } from './admin.js'
import { Board } from './board.js'
import { Epics } from './epics.js'
import { Filters } from './filters.js'
import { Help } from './help.js'
import { IssuePanel } from './issue-panel.js'
import { NewIssue } from './new-issue.js'
import { Picker } from './picker.js'
import { Reports } from './reports.js'
import { Settings } from './settings.js'
import { SignIn } from './sign-in.js'

/** Views that need no board: an administrator with no workspace yet makes the first one there. */
const OWN_VIEWS = new Set(['admin', 'account'])

function view (store: Store) {
  if (store.state.view === 'admin') return html`<${Administration} store=${store} />`
  if (store.state.view === 'account') return html`<${AccountView} store=${store} />`
  if (store.state.view === 'epics') return html`<${Epics} store=${store} />`
  if (store.state.view === 'reports') return html`<${Reports} store=${store} />`
  if (store.state.view === 'settings') return html`<${Settings} store=${store} />`
  return html`<${Board} store=${store} />`
}

/** The whole page: header, status line, then sign-in or the board (or the epics view), the panel and the help. */
export function App ({ store }: { store: Store }) {
  const [, redraw] = useReducer((n: number) => n + 1, 0)
  useEffect(() => {
    const stop = store.subscribe(() => redraw(undefined))
    // A change between the first draw and this subscription (the session check answering first) draws too.
    redraw(undefined)
    return () => { stop() }
  }, [])
  const filter = useRef<HTMLInputElement>(null)
  const { state } = store
  const signedIn = state.phase === 'loading' || state.phase === 'ready'

  useEffect(() => {
    const keys = (e: KeyboardEvent) => {
      const typing = (e.target as HTMLElement).closest?.('input, select, textarea') !== null
      if (typing || !signedIn || e.ctrlKey || e.metaKey || e.altKey) return
      if (e.key === '/') {
        e.preventDefault()
        filter.current?.focus()
      } else if (e.key === '?') {
        e.preventDefault()
        store.set({ help: true })
      }
    }
    document.addEventListener('keydown', keys)
    return () => document.removeEventListener('keydown', keys)
  }, [signedIn])

  // On a phone the status line shows over the board: a message that is not an error fades after a while (board.css).
  const [quiet, setQuiet] = useState(false)
  useEffect(() => {
    setQuiet(false)
    if (state.status.error || state.status.text === '') return
    const timer = setTimeout(() => setQuiet(true), 6000)
    return () => clearTimeout(timer)
  }, [state.status])

  const closePanel = () => {
    const key = state.panel
    store.set({ panel: null, focus: key })
    // The card the panel belonged to takes the focus back.
    if (key !== null) requestAnimationFrame(() => document.querySelector<HTMLElement>(`li.card[data-key="${CSS.escape(key)}"]`)?.focus())
  }

  return html`
    <a class="skip" href="#board">Skip to the board</a>
    <header class=${`top${signedIn ? ' signed-in' : ''}`}>
      <h1>Planning board</h1>
      ${signedIn && html`
        <${Picker} store=${store} />
        <nav class="views" aria-label="Views">
          <a href="?view=board" aria-current=${state.view === 'board' ? 'page' : undefined} onClick=${(e: Event) => { e.preventDefault(); store.setView('board') }}>Board</a>
          <a href="?view=epics" aria-current=${state.view === 'epics' ? 'page' : undefined} onClick=${(e: Event) => { e.preventDefault(); store.setView('epics') }}>Epics</a>
          <a href="?view=reports" aria-current=${state.view === 'reports' ? 'page' : undefined} onClick=${(e: Event) => { e.preventDefault(); store.setView('reports') }}>Reports</a>
          <a href="?view=settings" aria-current=${state.view === 'settings' ? 'page' : undefined} onClick=${(e: Event) => { e.preventDefault(); store.setView('settings') }}>Settings</a>
          ${state.account?.administrator === true && html`<a href="?view=admin" aria-current=${state.view === 'admin' ? 'page' : undefined} onClick=${(e: Event) => { e.preventDefault(); store.setView('admin') }}>Administration</a>`}
          <a href="?view=account" aria-current=${state.view === 'account' ? 'page' : undefined} onClick=${(e: Event) => { e.preventDefault(); store.setView('account') }}>Account</a>
        </nav>
        <span class="spacer"></span>
        <button type="button" class="help-button" aria-label="Keyboard help" title="Keyboard help (?)" onClick=${() => store.set({ help: true })}>?</button>
        <button type="button" class="sign-out" onClick=${() => store.signOut()}>Sign out</button>`}
    </header>
    <main>
      <p class="status${state.status.error ? ' error' : ''}${quiet ? ' quiet' : ''}" role="status" aria-live="polite">${state.status.text}</p>
      ${state.phase === 'signed-out' && html`<${SignIn} store=${store} />`}
      ${signedIn && state.choice !== null && state.view !== 'reports' && state.view !== 'settings' && !OWN_VIEWS.has(state.view) && html`<${Filters} store=${store} inputRef=${filter} />`}
      ${signedIn && (state.choice !== null || OWN_VIEWS.has(state.view)) && view(store)}
    </main>
    ${state.panel !== null && html`<${IssuePanel} key=${state.panel} store=${store} issueKey=${state.panel} onClose=${closePanel} />`}
    ${state.creating !== null && html`<${NewIssue} store=${store} pipeline=${state.creating} onClose=${() => store.set({ creating: null })} />`}
    ${state.help && html`<${Help} onClose=${() => store.set({ help: false })} />`}`
}
