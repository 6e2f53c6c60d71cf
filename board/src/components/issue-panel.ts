/// <reference lib="dom" />
import { useEffect, useRef, useState } from 'preact/hooks'
import { html } from '../html.js'
import { keyOf, labelColors, namesIn, parseEstimate, points, type Card } from '../model.js'
import { mayChange, type Store } from '../store.js'
import { EpicIssues } from './epic-issues.js'
import { IssueDescription } from './issue-description.js'

interface IssueEvent {
  type: string
  created_at: string
  from_estimate?: { value: number }
  to_estimate?: { value: number }
  from_pipeline?: { name: string }
  to_pipeline?: { name: string }
  workspace_id?: string
}
interface Release { release_id: string, title: string, desired_end_date: string, state: string }
/** Release reports looked at for one panel: a repository rarely has more. */
const RELEASES_READ = 20

interface Duration { workspace_id: string, pipeline_name: string, seconds: number, left_at: string | null }

/**
 * One history entry as a sentence. A move in another workspace than `here` names it (`workspaceName`
 * knows the workspaces the viewer has), so its pipelines are not taken for this board's.
 */
export function describeEvent (e: IssueEvent, here?: string, workspaceName: (id: string) => string | undefined = () => undefined): string {
  if (e.type === 'transferIssue') {
    const elsewhere = here === undefined || e.workspace_id === undefined || e.workspace_id === here ? '' : ` in ${workspaceName(e.workspace_id) ?? 'another workspace'}`
    return `Moved from ${e.from_pipeline?.name ?? 'nowhere'} to ${e.to_pipeline?.name ?? 'nowhere'}${elsewhere}`
  }
  const from = e.from_estimate === undefined ? 'no estimate' : points(e.from_estimate.value)
  const to = e.to_estimate === undefined ? 'no estimate' : points(e.to_estimate.value)
  return `Estimate changed from ${from} to ${to}`
}

export function duration (seconds: number): string {
  if (seconds < 3600) return `${Math.max(1, Math.round(seconds / 60))} min`
  if (seconds < 86400 * 2) return `${Math.round(seconds / 3600)} h`
  return `${Math.round(seconds / 86400)} days`
}

/** The issue's title, labels and assignees as a form; only what changed is sent. */
function EditIssue ({ store, card, onDone }: { store: Store, card: Card, onDone: () => void }) {
  const [title, setTitle] = useState(card.title)
  const [labels, setLabels] = useState(card.labels.map((l) => l.name).join(', '))
  const [assignees, setAssignees] = useState(card.assignees.map((a) => a.login).join(', '))
  const [saving, setSaving] = useState(false)
  const save = async (e: SubmitEvent) => {
    e.preventDefault()
    const change: { title?: string, labels?: string[], assignees?: string[] } = {}
    if (title.trim() !== card.title) change.title = title.trim()
    const [names, logins] = [namesIn(labels), namesIn(assignees)]
    if (names.join('\n') !== card.labels.map((l) => l.name).join('\n')) change.labels = names
    if (logins.join('\n') !== card.assignees.map((a) => a.login).join('\n')) change.assignees = logins
    if (change.title === '') {
      store.say('Not saved: an issue needs a title.', true)
      return
    }
    setSaving(true)
    const saved = Object.keys(change).length === 0 || await store.editIssue(card.key, change)
    setSaving(false)
    if (saved) onDone()
  }
  return html`<form class="edit" aria-label=${`Edit #${card.number}`} onSubmit=${save}>
    <label>Title <input type="text" value=${title} maxlength="256" required onInput=${(e: InputEvent) => setTitle((e.target as HTMLInputElement).value)} /></label>
    <label>Labels <input type="text" value=${labels} placeholder="bug, ui" onInput=${(e: InputEvent) => setLabels((e.target as HTMLInputElement).value)} /></label>
    <label>Assignees <input type="text" value=${assignees} placeholder="login, login" onInput=${(e: InputEvent) => setAssignees((e.target as HTMLInputElement).value)} /></label>
    <div class="row">
      <button type="submit" disabled=${saving}>Save title, labels and assignees</button>
      <button type="button" onClick=${onDone}>Cancel</button>
    </div>
  </form>`
}

/** The issue panel: a dialog named `#<number> <title>` with everything the board knows of the issue. */
export function IssuePanel ({ store, issueKey, onClose }: { store: Store, issueKey: string, onClose: () => void }) {
  const { state } = store
  const card = state.cards.get(issueKey)
  const dialog = useRef<HTMLDialogElement>(null)
  const [events, setEvents] = useState<IssueEvent[] | null>(null)
  const [durations, setDurations] = useState<Duration[] | null>(null)
  const [estimate, setEstimate] = useState(card?.estimate === null || card === undefined ? '' : String(card.estimate))
  const [blocker, setBlocker] = useState('')
  const [releases, setReleases] = useState<Release[] | null>(null)
  const [epic, setEpic] = useState('')
  const [editing, setEditing] = useState(false)
  useEffect(() => {
    const el = dialog.current
    if (el !== null && !el.open) el.showModal()
  }, [])
  useEffect(() => {
    if (card === undefined) return
    setEvents(null)
    Promise.all([
      store.client.get<IssueEvent[]>(`/p1/repositories/${card.repo}/issues/${card.number}/events`),
      store.client.get<Duration[]>(`/p1/repositories/${card.repo}/issues/${card.number}/pipeline_durations`)
    ]).then(([e, d]) => { setEvents(e); setDurations(d) }, (err: Error) => store.say(`Could not read the history of #${card.number}: ${err.message}`, true))
  }, [issueKey])
  // The release reports holding the issue: the repository's reports, then each one's issues.
  useEffect(() => {
    if (card === undefined) return
    const read = async () => {
      const all = (await store.client.get<Release[]>(`/p1/repositories/${card.repo}/reports/releases`)).slice(0, RELEASES_READ)
      const holding = await Promise.all(all.map(async (r) => (await store.client.get<Array<{ repo_id: number, issue_number: number }>>(`/p1/reports/release/${r.release_id}/issues`))
        .some((i) => i.repo_id === card.repo && i.issue_number === card.number)))
      setReleases(all.filter((_, i) => holding[i]))
    }
    read().catch((err: Error) => { setReleases([]); store.say(`Could not read the release reports of #${card.number}: ${err.message}`, true) })
  }, [issueKey])
  if (card === undefined) return null
  const repo = state.repos.get(card.repo)
  // Who only reads the repository sees the issue without any control to change it (absent, not refused).
  const writable = mayChange(state.account, card.repo)
  const pipeline = Object.keys(state.columns).find((id) => state.columns[id].includes(issueKey))
  const blockedBy = state.relations.blockedBy.get(issueKey) ?? []
  const blocking = state.relations.blocking.get(issueKey) ?? []
  const epicsOf = state.relations.epicsOf.get(issueKey) ?? []
  const nameOf = (key: string) => {
    const other = state.cards.get(key)
    return other === undefined ? `#${key.split('#')[1]}` : `#${other.number} ${other.title}`
  }
  const headingId = 'panel-title'
  const saveEstimate = async (e: SubmitEvent) => {
    e.preventDefault()
    const parsed = parseEstimate(estimate)
    if ('error' in parsed) {
      store.say(`Not saved: ${parsed.error}.`, true)
      return
    }
    await store.setEstimate(issueKey, parsed.value)
  }
  const addBlocker = async (e: SubmitEvent) => {
    e.preventDefault()
    const number = /^#?(\d{1,15})$/.exec(blocker.trim())
    if (number === null) {
      store.say('Type the number of the blocking issue, e.g. #12.', true)
      return
    }
    await store.setDependency(keyOf(card.repo, Number(number[1])), issueKey, true)
    setBlocker('')
  }
  const workspaceName = state.workspaces.find((w) => w.id === state.choice?.workspace)?.name
  const durationsHere = (durations ?? []).filter((d) => d.workspace_id === state.choice?.workspace)
  return html`<dialog ref=${dialog} class="panel" aria-labelledby=${headingId}
      onClose=${onClose} onCancel=${(e: Event) => { if (editing) { e.preventDefault(); setEditing(false) } }}>
    <header>
      <h2 id=${headingId}>#${card.number} ${card.title}</h2>
      ${!editing && writable && html`<button type="button" onClick=${() => setEditing(true)}>Edit</button>`}
      <button type="button" class="close" onClick=${() => dialog.current?.close()}>Close</button>
    </header>
    ${editing && writable && html`<${EditIssue} store=${store} card=${card} onDone=${() => setEditing(false)} />`}
    <dl class="facts">
      <dt>Repository</dt><dd>${repo === undefined ? `repository ${card.repo}` : `${repo.owner}/${repo.name}`}${card.html_url !== null && html` · <a href=${card.html_url} target="_blank" rel="noopener">Open on the issue host</a>`}</dd>
      <dt>State</dt><dd>${card.closed ? 'Closed' : 'Open'}
        ${writable && html`<button type="button" onClick=${() => { store.setIssueState(issueKey, card.closed ? 'reopen' : 'close') }}>${card.closed ? 'Reopen issue' : 'Close issue'}</button>`}</dd>
      ${card.labels.length > 0 && html`<dt>Labels</dt><dd class="labels">${card.labels.map((l) => {
        const colors = labelColors(l.color)
        return html`<span key=${l.name} class="label" style=${colors === undefined ? undefined : { '--label': colors.background, '--label-text': colors.text }}>${l.name}</span>`
      })}</dd>`}
      ${card.assignees.length > 0 && html`<dt>Assignees</dt><dd>${card.assignees.map((a) => a.login).join(', ')}</dd>`}
      ${card.milestone !== undefined && html`<dt>Milestone</dt><dd>${card.milestone.title}${card.milestone.due_on === null ? '' : ` (due ${card.milestone.due_on.slice(0, 10)})`}
        <button type="button" class="link" aria-label=${`Burndown of ${card.milestone.title}`}
          onClick=${() => store.showBurndown(`milestone:${card.repo}:${card.milestone!.number}`)}>Burndown</button></dd>`}
      ${card.is_epic && html`<dt>Kind</dt><dd>Epic</dd>`}
      ${!writable && html`<dt>Estimate</dt><dd>${card.estimate === null ? 'none' : points(card.estimate)}</dd>`}
      ${!writable && pipeline !== undefined && html`<dt>Pipeline</dt><dd>${state.pipelines.find((p) => p.id === pipeline)?.name ?? pipeline}</dd>`}
    </dl>
    <${IssueDescription} store=${store} card=${card} />
    ${!card.closed && writable && html`<section aria-label="Planning">
      <form class="row" onSubmit=${saveEstimate}>
        <label>Estimate <input type="text" inputmode="decimal" value=${estimate} size="6" onInput=${(e: InputEvent) => setEstimate((e.target as HTMLInputElement).value)} /></label>
        <button type="submit">Save estimate</button>
      </form>
      <label class="row">Pipeline${workspaceName === undefined ? '' : ` in ${workspaceName}`}
        <select value=${pipeline ?? ''} onChange=${(e: InputEvent) => {
          const to = (e.target as HTMLSelectElement).value
          store.move(issueKey, to, (state.columns[to] ?? []).length, state.columns[to] ?? [])
        }}>
          ${state.pipelines.map((p) => html`<option key=${p.id} value=${p.id}>${p.name}</option>`)}
        </select>
      </label>
    </section>`}
    <section aria-labelledby="panel-epics">
      <h3 id="panel-epics">Epics</h3>
      ${epicsOf.length === 0
? html`<p class="hint">In no epic.</p>`
: html`<ul>${epicsOf.map((e) => html`<li key=${e}>${nameOf(e)}
        ${writable && html`<button type="button" onClick=${() => { store.setEpic(issueKey, e, false) }}>Remove from epic</button>`}</li>`)}</ul>`}
      ${writable && state.epics.filter((e) => e !== issueKey && !epicsOf.includes(e)).length > 0 && html`<form class="row" onSubmit=${(ev: SubmitEvent) => { ev.preventDefault(); if (epic !== '') store.setEpic(issueKey, epic, true) }}>
        <label>Add to epic <select value=${epic} onChange=${(ev: InputEvent) => setEpic((ev.target as HTMLSelectElement).value)}>
          <option value="">Choose an epic</option>
          ${state.epics.filter((e) => e !== issueKey && !epicsOf.includes(e)).map((e) => html`<option key=${e} value=${e}>${nameOf(e)}</option>`)}
        </select></label>
        <button type="submit">Add</button>
      </form>`}
    </section>
    ${card.is_epic && html`<${EpicIssues} store=${store} epic=${issueKey} />`}
    <section aria-labelledby="panel-deps">
      <h3 id="panel-deps">Dependencies</h3>
      ${blockedBy.length === 0 && blocking.length === 0 && html`<p class="hint">Blocks nothing and is blocked by nothing.</p>`}
      <ul>
        ${blockedBy.map((b) => html`<li key=${`by${b}`}>Blocked by ${nameOf(b)} ${writable && html`<button type="button" onClick=${() => { store.setDependency(b, issueKey, false) }}>Remove</button>`}</li>`)}
        ${blocking.map((b) => html`<li key=${`on${b}`}>Blocking ${nameOf(b)} ${writable && html`<button type="button" onClick=${() => { store.setDependency(issueKey, b, false) }}>Remove</button>`}</li>`)}
      </ul>
      ${writable && html`<form class="row" onSubmit=${addBlocker}>
        <label>Blocked by issue <input type="text" value=${blocker} placeholder="#12" size="6" onInput=${(e: InputEvent) => setBlocker((e.target as HTMLInputElement).value)} /></label>
        <button type="submit">Add blocker</button>
      </form>`}
    </section>
    <section aria-labelledby="panel-releases">
      <h3 id="panel-releases">Release reports</h3>
      ${releases === null
? html`<p class="hint">Loading…</p>`
: releases.length === 0
? html`<p class="hint">In no release report.</p>`
        : html`<ul>${releases.map((r) => html`<li key=${r.release_id}>${r.title} (${r.state === 'closed' ? 'closed' : `due ${r.desired_end_date.slice(0, 10)}`})
          <button type="button" class="link" aria-label=${`Burndown of ${r.title}`} onClick=${() => store.showBurndown(`release:${r.release_id}`)}>Burndown</button></li>`)}</ul>`}
    </section>
    <section aria-labelledby="panel-time">
      <h3 id="panel-time">Time per pipeline</h3>
      ${durations === null
? html`<p class="hint">Loading…</p>`
: durationsHere.length === 0
? html`<p class="hint">Not on this workspace's board yet.</p>`
        : html`<ul>${durationsHere.map((d, i) => html`<li key=${i}>${d.pipeline_name}: ${duration(d.seconds)}${d.left_at === null ? ' so far' : ''}</li>`)}</ul>`}
    </section>
    <section aria-labelledby="panel-history">
      <h3 id="panel-history">History</h3>
      ${events === null
? html`<p class="hint">Loading…</p>`
: events.length === 0
? html`<p class="hint">No moves or estimates yet.</p>`
        : html`<ol class="timeline">${events.map((e, i) => html`<li key=${i}><time datetime=${e.created_at}>${new Date(e.created_at).toLocaleString()}</time> ${describeEvent(e, state.choice?.workspace, (id) => state.workspaces.find((w) => w.id === id)?.name)}</li>`)}</ol>`}
    </section>
  </dialog>`
}
