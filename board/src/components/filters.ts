/// <reference lib="dom" />
import { useEffect, useRef, useState } from 'preact/hooks'
import { html } from '../html.js'
import { isFiltering, labelColors, labelsAndAssigneesOf, nearestFirst, type Filter } from '../model.js'
import type { Store } from '../store.js'

/**
 * A button that opens a group of choices under it; Esc or a click elsewhere closes it. Choices
 * given as a function are made only while it is open (the labels and assignees gather every card's).
 */
function Menu ({ name, active, children, disabled }: { name: string, active: boolean, children: unknown, disabled?: boolean }) {
  const [open, setOpen] = useState(false)
  const ref = useRef<HTMLDivElement>(null)
  useEffect(() => {
    if (!open) return
    const away = (e: Event) => { if (!ref.current?.contains(e.target as Node)) setOpen(false) }
    document.addEventListener('pointerdown', away)
    return () => document.removeEventListener('pointerdown', away)
  }, [open])
  const id = `menu-${name.toLowerCase()}`
  return html`<div class="menu" ref=${ref} onKeyDown=${(e: KeyboardEvent) => { if (e.key === 'Escape' && open) { e.stopPropagation(); setOpen(false) } }}>
    <button type="button" class=${active ? 'active' : ''} aria-expanded=${open} aria-controls=${id} disabled=${disabled} onClick=${() => setOpen(!open)}>${name}</button>
    ${open && html`<div class="menu-body" id=${id} role="group" aria-label=${name}>${typeof children === 'function' ? (children as () => unknown)() : children}</div>`}
  </div>`
}

/**
 * An estimate bound: what is typed is kept here until it is committed (on change), so a redraw of
 * the board meanwhile does not put the committed value back; a new committed value (the filter
 * cleared) replaces it.
 */
function Bound ({ label, value, commit }: { label: string, value: string, commit: (text: string) => void }) {
  const [text, setText] = useState(value)
  useEffect(() => { setText(value) }, [value])
  return html`<input type="number" min="0" step="any" aria-label=${label} value=${text} size="4"
    onInput=${(e: Event) => { setText((e.target as HTMLInputElement).value) }} onChange=${(e: Event) => { commit((e.target as HTMLInputElement).value) }} />`
}

function toggle<T> (list: T[], value: T): T[] {
  return list.includes(value) ? list.filter((v) => v !== value) : [...list, value]
}

/** The filter bar: a search box and menus; what is chosen is kept in the address. */
export function Filters ({ store, inputRef }: { store: Store, inputRef: { current: HTMLInputElement | null } }) {
  const { state } = store
  const f = state.filter
  const set = (patch: Partial<Filter>) => store.setFilter(patch)
  const workspace = state.workspaces.find((w) => w.id === state.choice?.workspace)
  const repos = (workspace?.repositories ?? []).filter((id) => state.choice?.repo == null || id === state.choice.repo)
  // Gathered from every card (50,000 on the largest boards) only when a menu shows them, not at each
  // new map of cards while the board loads.
  const known = () => labelsAndAssigneesOf(state.cards)
  const [low, high] = f.estimate.includes('-') ? f.estimate.split('-') : ['', '']
  // On a narrow screen the menus fold under one button (board.css), so the board keeps the height.
  const [open, setOpen] = useState(false)
  const chosen = activeFilters(f)
  return html`<form class=${`filters${open ? ' open' : ''}`} role="search" aria-label="Filters" onSubmit=${(e: Event) => e.preventDefault()}>
    <input ref=${inputRef} type="search" aria-label="Filter" placeholder="Filter: title or #number  ( / )" value=${f.text}
      onInput=${(e: Event) => set({ text: (e.target as HTMLInputElement).value })}
      onKeyDown=${(e: KeyboardEvent) => { if (e.key === 'Escape' && f.text !== '') { e.stopPropagation(); set({ text: '' }) } }} />
    <button type="button" class=${`fold${chosen > 0 ? ' active' : ''}`} aria-expanded=${open} aria-controls="filter-choices" onClick=${() => setOpen(!open)}>
      Filters${chosen > 0 ? ` (${chosen})` : ''}</button>
    <div class="filter-choices" id="filter-choices">
    <${Menu} name="Repository" active=${f.repos.length > 0}>
      ${repos.map((id) => html`<label key=${id}><input type="checkbox" checked=${f.repos.includes(id)} onChange=${() => set({ repos: toggle(f.repos, id) })} />
        ${state.repos.has(id) ? `${state.repos.get(id)!.owner}/${state.repos.get(id)!.name}` : `repository ${id}`}</label>`)}
    <//>
    <${Menu} name="Labels" active=${f.labels.length > 0}>${() => html`
      ${known().labels.length === 0 && html`<p class="hint">No labels on these issues: they come from the issue host.</p>`}
      ${known().labels.map((l) => {
        const colors = labelColors(l.color)
        return html`<label key=${l.name}><input type="checkbox" checked=${f.labels.includes(l.name)} onChange=${() => set({ labels: toggle(f.labels, l.name) })} />
          <span class="label" style=${colors === undefined ? undefined : { '--label': colors.background, '--label-text': colors.text }}>${l.name}</span></label>`
      })}`}
    <//>
    <${Menu} name="Assignees" active=${f.assignees.length > 0}>${() => html`
      ${known().assignees.length === 0 && html`<p class="hint">No one is assigned to these issues on the issue host.</p>`}
      ${known().assignees.map((login) => html`<label key=${login}><input type="checkbox" checked=${f.assignees.includes(login)}
        onChange=${() => set({ assignees: toggle(f.assignees, login) })} /> ${login}</label>`)}`}
    <//>
    <${Menu} name="Epics" active=${f.epics.length > 0}>
      ${state.epics.length === 0 && html`<p class="hint">No epics on this board: make one in the Epics view (New epic).</p>`}
      ${state.epics.map((key) => {
        const epic = state.cards.get(key)
        return html`<label key=${key}><input type="checkbox" checked=${f.epics.includes(key)} onChange=${() => set({ epics: toggle(f.epics, key) })} />
          ${epic === undefined ? key : `#${epic.number} ${epic.title}`}</label>`
      })}
    <//>
    <${Menu} name="Estimate" active=${f.estimate !== ''}>
      ${([['', 'Any'], ['none', 'Not estimated'], ['set', 'Estimated']] as const).map(([value, label]) => html`<label key=${value}>
        <input type="radio" name="estimate" checked=${f.estimate === value} onChange=${() => set({ estimate: value })} /> ${label}</label>`)}
      <fieldset><legend>Between</legend>
        <${Bound} label="Estimate from" value=${low} commit=${(text: string) => set({ estimate: range(text, high) })} />
        <${Bound} label="Estimate to" value=${high} commit=${(text: string) => set({ estimate: range(low, text) })} />
      </fieldset>
    <//>
    <label class="select">Dependencies
      <select value=${f.blocked} onChange=${(e: Event) => set({ blocked: (e.target as HTMLSelectElement).value as Filter['blocked'] })}>
        <option value="">Any</option><option value="blocked">Blocked</option><option value="blocking">Blocking</option>
      </select>
    </label>
    ${state.sprints.length > 0 && html`<label class="select">Sprint
      <select value=${f.sprint} onChange=${(e: Event) => set({ sprint: (e.target as HTMLSelectElement).value })}>
        <option value="">Any</option>
        ${nearestFirst(state.sprints).map((s) => html`<option key=${s.id} value=${s.id}>${s.name}${s.state === 'active' ? ' (current)' : s.state === 'future' ? ' (to come)' : ''}</option>`)}
      </select>
    </label>`}
    ${isFiltering(f) && html`<button type="button" onClick=${() => store.resetFilter()}>Clear filters</button>`}
    </div>
  </form>`
}

/** How many filters other than the text are chosen (the folded Filters button shows it). */
export function activeFilters (f: Filter): number {
  return [f.repos.length > 0, f.labels.length > 0, f.assignees.length > 0, f.epics.length > 0, f.estimate !== '', f.blocked !== '', f.sprint !== ''].filter(Boolean).length
}

function range (low: string, high: string): Filter['estimate'] {
  if (low === '' && high === '') return ''
  const a = low === '' ? 0 : Number(low)
  const b = high === '' ? 1e9 : Number(high)
  return Number.isFinite(a) && Number.isFinite(b) ? `${Math.min(a, b)}-${Math.max(a, b)}` as Filter['estimate'] : ''
}
