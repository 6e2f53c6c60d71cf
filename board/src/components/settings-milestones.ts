/// <reference lib="dom" />
import { useEffect, useState } from 'preact/hooks'
import { ApiError } from '../api.js'
import { html } from '../html.js'
import type { Card } from '../model.js'
import { dayStart, nameRepos, repoName } from '../names.js'
import { mayChange, type Store } from '../store.js'
import { FieldError, invalid, useErrors } from './field.js'

export interface MilestoneRow { repo: number, number: number, title: string, due_on: string | null }

/** The milestones of the board's issues (the API lists milestones through their issues), by repository and number. */
export function milestonesOf (cards: Iterable<Card>, repos: number[]): MilestoneRow[] {
  const found = new Map<string, MilestoneRow>()
  for (const card of cards) {
    if (card.milestone === undefined || !repos.includes(card.repo)) continue
    found.set(`${card.repo}:${card.milestone.number}`, { repo: card.repo, number: card.milestone.number, title: card.milestone.title, due_on: card.milestone.due_on })
  }
  return [...found.values()].sort((a, b) => a.repo - b.repo || a.number - b.number)
}

/** Why a start date cannot be sent, or undefined. */
export function startDateError (day: string, dueOn: string | null): string | undefined {
  if (!/^\d{4}-\d{2}-\d{2}$/.test(day) || Number.isNaN(Date.parse(day))) return 'Choose the milestone\'s first day.'
  if (dueOn !== null && day > dueOn.slice(0, 10)) return `The start date must not be after the due date (${dueOn.slice(0, 10)}).`
  return undefined
}

function MilestoneStart ({ store, milestone }: { store: Store, milestone: MilestoneRow }) {
  const { state } = store
  const name = `${milestone.title} (${repoName(state.repos, milestone.repo)})`
  const path = `/p1/repositories/${milestone.repo}/milestones/${milestone.number}/start_date`
  const [start, setStart] = useState<string | null | undefined>(undefined)
  const [busy, setBusy] = useState(false)
  const form = useErrors()
  const id = `milestone-start-${milestone.repo}-${milestone.number}`
  useEffect(() => {
    store.client.get<{ start_date: string }>(path).then((d) => setStart(d.start_date.slice(0, 10)), (err: unknown) => {
      setStart(null)
      if (!(err instanceof ApiError && err.status === 404)) store.say(`Could not read the start date of ${name}: ${nameRepos((err as Error).message, state.repos)}`, true)
    })
  }, [path])
  const burndown = html`<button type="button" class="link" aria-label=${`Burndown of ${name}`}
    onClick=${() => store.showBurndown(`milestone:${milestone.repo}:${milestone.number}`)}>Burndown</button>`
  if (!mayChange(state.account, milestone.repo)) {
    return html`<li>${name}: ${start === undefined ? '…' : start === null ? 'no start date' : `starts on ${start}`}${milestone.due_on === null ? '' : `, due ${milestone.due_on.slice(0, 10)}`} ${burndown}</li>`
  }
  const save = async (e: SubmitEvent) => {
    e.preventDefault()
    const day = String(new FormData(e.target as HTMLFormElement).get('start_date') ?? '')
    const wrong = startDateError(day, milestone.due_on)
    form.set(wrong === undefined ? {} : { start_date: wrong })
    if (wrong !== undefined) return
    setBusy(true)
    try {
      const saved = await store.client.send<{ start_date: string }>('POST', path, { start_date: dayStart(day) })
      setStart(saved?.start_date.slice(0, 10) ?? day)
      store.say(`${name} starts on ${day}: its burndown is in Reports.`)
    } catch (err) {
      form.refuse(new Error(nameRepos(err instanceof Error ? err.message : String(err), state.repos)), ['start_date'])
    } finally {
      setBusy(false)
    }
  }
  return html`<li><form class="row" role="group" aria-label=${name} onSubmit=${save} noValidate>
    <div class="field"><label for=${id}>Start date of ${name}</label>
      <input name="start_date" type="date" defaultValue=${start ?? ''} ...${invalid(id, form.errors.start_date)} />
      <${FieldError} id=${id} error=${form.errors.start_date} /></div>
    <button type="submit" disabled=${busy || start === undefined}>Save start date</button>
    ${milestone.due_on !== null && html`<span class="hint">due ${milestone.due_on.slice(0, 10)}</span>`}
    ${burndown}
  </form></li>`
}

/** Start dates of the milestones of the board's issues: a milestone's burndown runs from its start date. */
export function MilestoneSettings ({ store }: { store: Store }) {
  const milestones = milestonesOf(store.state.cards.values(), store.repoIds())
  return html`<section class="settings-section" aria-labelledby="milestone-settings">
    <h2 id="milestone-settings">Milestones</h2>
    <p>A milestone's burndown (in Reports) runs from its start date to its due date. Milestones come from the issue host; these are the ones of this board's issues.</p>
    ${milestones.length === 0
      ? html`<p class="hint">No issue on this board has a milestone.</p>`
      : html`<ul class="milestones" aria-label="Milestones">${milestones.map((m) => html`<${MilestoneStart} key=${`${m.repo}:${m.number}`} store=${store} milestone=${m} />`)}</ul>`}
  </section>`
}
