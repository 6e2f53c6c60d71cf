/// <reference lib="dom" />
import { useState } from 'preact/hooks'
import { html } from '../html.js'
import { issueName, nameRepos, repoName } from '../names.js'
import { mayChange, type Store } from '../store.js'
import { issueNumbers } from './epic-new.js'
import { FieldError, invalid, TextField, useErrors } from './field.js'

/** The keys of the issues an epic holds, as the board's relations know them. */
export function membersOf (epicsOf: Map<string, string[]>, epic: string): string[] {
  return [...epicsOf].filter(([, epics]) => epics.includes(epic)).map(([key]) => key)
    .sort((a, b) => { const [ra, na] = a.split('#').map(Number); const [rb, nb] = b.split('#').map(Number); return ra - rb || na - nb })
}

/**
 * An epic's issues in its panel; who may write to the epic's repository adds issues (a repository
 * of the board and their numbers) and removes them (`POST …/epics/:number/update_issues`).
 */
export function EpicIssues ({ store, epic }: { store: Store, epic: string }) {
  const { state } = store
  const [epicRepo, epicNumber] = epic.split('#').map(Number)
  const editable = mayChange(state.account, epicRepo)
  const [busy, setBusy] = useState(false)
  const form = useErrors()
  const members = membersOf(state.relations.epicsOf, epic)
  const repos = store.repoIds().filter((id) => state.repos.has(id))
  /** `#12` in the epic's own repository, `owner/name#12` in another. */
  const short = (key: string) => {
    const [repo, number] = key.split('#').map(Number)
    return repo === epicRepo ? `#${number}` : issueName(state.repos, repo, number)
  }
  const name = (key: string) => { const card = state.cards.get(key); return `${short(key)}${card === undefined ? '' : ` ${card.title}`}` }
  const remove = async (key: string) => {
    const [repo_id, issue_number] = key.split('#').map(Number)
    setBusy(true)
    const refused = await store.changeEpic(epic, [], [{ repo_id, issue_number }])
    setBusy(false)
    if (refused !== null) store.say(`Could not remove ${name(key)} from epic #${epicNumber}: ${nameRepos(refused, state.repos)}`, true)
  }
  const add = async (e: SubmitEvent) => {
    e.preventDefault()
    const fields = new FormData(e.target as HTMLFormElement)
    const repo = Number(fields.get('repository'))
    const parsed = issueNumbers(String(fields.get('issues') ?? ''))
    const wrong: Record<string, string> = {}
    if (!repos.includes(repo)) wrong.repository = 'Choose a repository of this board.'
    if ('error' in parsed) wrong.issues = parsed.error
    else if (parsed.numbers.length === 0) wrong.issues = 'Type the numbers of the issues to add, e.g. 12, 15.'
    else if (parsed.numbers.some((n) => repo === epicRepo && n === epicNumber)) wrong.issues = 'An epic cannot hold itself.'
    form.set(wrong)
    if (Object.keys(wrong).length > 0 || 'error' in parsed) return
    setBusy(true)
    const refused = await store.changeEpic(epic, parsed.numbers.map((n) => ({ repo_id: repo, issue_number: n })), [])
    setBusy(false)
    if (refused !== null) form.refuse(new Error(nameRepos(refused, state.repos)), ['issues', 'repository'])
    else { form.clear(); (e.target as HTMLFormElement).reset() }
  }
  return html`<section aria-labelledby="panel-epic-issues">
    <h3 id="panel-epic-issues">Issues in this epic</h3>
    ${members.length === 0
      ? html`<p class="hint">This epic holds no issue yet.</p>`
      : html`<ul aria-label="Issues in this epic">${members.map((key) => html`<li key=${key}>${name(key)}
        ${editable && html` <button type="button" disabled=${busy} aria-label=${`Remove ${short(key)} from the epic`}
          onClick=${() => { remove(key) }}>Remove</button>`}</li>`)}</ul>`}
    ${editable && html`<form class="admin-form" aria-label="Add issues to the epic" onSubmit=${add} noValidate>
      <div class="field"><label for="epic-add-repository">Repository</label>
        <select name="repository" ...${invalid('epic-add-repository', form.errors.repository)}>
          ${repos.map((id) => html`<option key=${id} value=${id} selected=${id === epicRepo}>${repoName(state.repos, id)}</option>`)}
        </select>
        <${FieldError} id="epic-add-repository" error=${form.errors.repository} /></div>
      <${TextField} id="epic-add-issues" label="Issues to add (numbers, e.g. 12, 15)" name="issues" error=${form.errors.issues} />
      <div class="row"><button type="submit" disabled=${busy}>Add to the epic</button></div>
    </form>`}
  </section>`
}
