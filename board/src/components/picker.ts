/// <reference lib="dom" />
import { html } from '../html.js'
import type { Store } from '../store.js'

/** The board picker, a combobox named "Board": each workspace's whole board, then its repositories one by one. */
export function Picker ({ store }: { store: Store }) {
  const { state } = store
  const value = state.choice === null ? '' : state.choice.repo === null ? state.choice.workspace : `${state.choice.workspace}/${state.choice.repo}`
  return html`<label class="picker">Board
    <select value=${value} onChange=${(e: Event) => { store.choose((e.target as HTMLSelectElement).value) }}>
      ${value === '' && html`<option value="" disabled>${state.workspaces.length === 0 ? 'No board yet' : 'Choose a board'}</option>`}
      ${state.workspaces.map((w) => html`<optgroup key=${w.id} label=${w.name}>
        <option value=${w.id}>${w.name}: all repositories</option>
        ${w.repositories.map((id) => {
          const repo = state.repos.get(id)
          return html`<option key=${id} value=${`${w.id}/${id}`}>${repo === undefined ? `${w.name}: repository ${id}` : `${w.name}: ${repo.owner}/${repo.name}`}</option>`
        })}
      </optgroup>`)}
    </select>
  </label>`
}
