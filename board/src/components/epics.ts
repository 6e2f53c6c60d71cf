/// <reference lib="dom" />
import { html } from '../html.js'
import { points } from '../model.js'
import type { Store } from '../store.js'
import { NewEpic } from './epic-new.js'

/** Progress of one epic from what the board knows of its issues. */
export function progress (store: Store, epic: string): { closed: number, total: number, donePoints: number, totalPoints: number } {
  const out = { closed: 0, total: 0, donePoints: 0, totalPoints: 0 }
  for (const [key, epics] of store.state.relations.epicsOf) {
    if (!epics.includes(epic)) continue
    const card = store.state.cards.get(key)
    out.total++
    out.totalPoints += card?.estimate ?? 0
    if (card?.closed === true) {
      out.closed++
      out.donePoints += card.estimate ?? 0
    }
  }
  return out
}

/** The epics view: each epic of the board with its issues' progress. */
export function Epics ({ store }: { store: Store }) {
  const { state } = store
  if (state.epics.length === 0) {
    return html`<section class="epics" aria-label="Epics">
      <p class="empty-view">No epics on this board yet. An epic groups issues.</p>
      <${NewEpic} store=${store} />
    </section>`
  }
  return html`<section class="epics" aria-label="Epics">
    <${NewEpic} store=${store} />
    <div class="table-scroll"><table>
      <thead><tr><th scope="col">Epic</th><th scope="col">Repository</th><th scope="col">Issues closed</th><th scope="col">Points done</th></tr></thead>
      <tbody>${state.epics.map((key) => {
        const epic = state.cards.get(key)
        const p = progress(store, key)
        const repo = epic === undefined ? undefined : state.repos.get(epic.repo)
        return html`<tr key=${key}>
          <th scope="row"><button type="button" class="link" onClick=${() => store.set({ panel: key })}>${epic === undefined ? key : `#${epic.number} ${epic.title}`}</button></th>
          <td>${repo === undefined ? '' : `${repo.owner}/${repo.name}`}</td>
          <td><progress max=${Math.max(p.total, 1)} value=${p.closed} aria-label=${`Issues closed in ${key}`}></progress> ${p.closed} of ${p.total}</td>
          <td>${points(p.donePoints)} of ${points(p.totalPoints)}</td>
        </tr>`
      })}</tbody>
    </table></div>
  </section>`
}
