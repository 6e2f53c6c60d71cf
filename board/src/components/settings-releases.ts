/// <reference lib="dom" />
import { useEffect, useState } from 'preact/hooks'
import { html } from '../html.js'
import { keyOf } from '../model.js'
import { dayStart, issueName, nameRepos, repoName } from '../names.js'
import { mayChange, type Store } from '../store.js'
import { issueNumbers } from './epic-new.js'
import { FieldError, invalid, TextField, useErrors } from './field.js'

export interface Release { release_id: string, title: string, start_date: string, desired_end_date: string, state: string, repositories?: number[] }
interface Ref { repo_id: number, issue_number: number }

const message = (err: unknown) => err instanceof Error ? err.message : String(err)
const DAY = /^\d{4}-\d{2}-\d{2}$/

/** What is wrong with a new release report's fields, by field name; empty when it may be sent. */
export function releaseErrors (input: { title: string, start: string, end: string, repositories: number[] }): Record<string, string> {
  const errors: Record<string, string> = {}
  if (input.title.trim() === '') errors.title = 'A release report needs a title.'
  else if (input.title.length > 500) errors.title = 'A title is at most 500 characters.'
  if (!DAY.test(input.start)) errors.start_date = 'Choose the first day of the release.'
  if (!DAY.test(input.end)) errors.desired_end_date = 'Choose the day the release should be done.'
  else if (DAY.test(input.start) && input.end < input.start) errors.desired_end_date = 'The desired end date must not be before the start date.'
  if (input.repositories.length === 0) errors.repositories = 'Choose at least one repository.'
  return errors
}

/** The workspace's release reports: every repository's, each once, open ones first, newest start first. */
export function mergeReleases (lists: Release[][]): Release[] {
  const all = [...new Map(lists.flat().map((r) => [r.release_id, r])).values()]
  return all.sort((a, b) => Number(a.state === 'closed') - Number(b.state === 'closed') || b.start_date.localeCompare(a.start_date))
}

function NewRelease ({ store, repos, onDone }: { store: Store, repos: number[], onDone: (made?: Release) => void }) {
  const { state } = store
  const form = useErrors()
  const [busy, setBusy] = useState(false)
  const submit = async (e: SubmitEvent) => {
    e.preventDefault()
    const fields = new FormData(e.target as HTMLFormElement)
    const input = {
      title: String(fields.get('title') ?? '').trim(),
      start: String(fields.get('start_date') ?? ''),
      end: String(fields.get('desired_end_date') ?? ''),
      repositories: fields.getAll('repositories').map(Number).filter((id) => repos.includes(id))
    }
    const wrong = releaseErrors(input)
    form.set(wrong)
    if (Object.keys(wrong).length > 0) return
    setBusy(true)
    try {
      const [first, ...others] = input.repositories
      const made = await store.client.send<Release>('POST', `/p1/repositories/${first}/reports/release`,
        { title: input.title, start_date: dayStart(input.start), desired_end_date: dayStart(input.end), repositories: others })
      store.say(`Made the release report ${input.title} over ${input.repositories.map((id) => repoName(state.repos, id)).join(', ')}.`)
      form.clear()
      if (made !== undefined) onDone(made)
    } catch (err) {
      form.refuse(new Error(nameRepos(message(err), state.repos)), ['title', 'start_date', 'desired_end_date', 'repositories'])
    } finally {
      setBusy(false)
    }
  }
  return html`<form class="admin-form" aria-label="New release report" onSubmit=${submit} noValidate>
    <${TextField} id="release-title" label="Title" name="title" error=${form.errors.title} maxlength="500" />
    <div class="field"><label for="release-start">Start date</label>
      <input name="start_date" type="date" ...${invalid('release-start', form.errors.start_date)} />
      <${FieldError} id="release-start" error=${form.errors.start_date} /></div>
    <div class="field"><label for="release-end">Desired end date</label>
      <input name="desired_end_date" type="date" ...${invalid('release-end', form.errors.desired_end_date)} />
      <${FieldError} id="release-end" error=${form.errors.desired_end_date} /></div>
    <fieldset class="choices" ...${invalid('release-repositories', form.errors.repositories)}>
      <legend>Repositories</legend>
      ${repos.map((id) => html`<label key=${id}><input type="checkbox" name="repositories" value=${id} defaultChecked=${repos.length === 1} /> ${repoName(state.repos, id)}</label>`)}
      <${FieldError} id="release-repositories" error=${form.errors.repositories} />
    </fieldset>
    <div class="row"><button type="submit" class="primary" disabled=${busy}>Create release report</button><button type="button" onClick=${() => { form.clear(); onDone() }}>Cancel</button></div>
  </form>`
}

/** One release report: its dates and repositories, its issues (added and removed by who writes to one of its repositories), its burndown. */
function ReleaseItem ({ store, release }: { store: Store, release: Release }) {
  const { state } = store
  const id = release.release_id
  const [repositories, setRepositories] = useState<number[] | null>(release.repositories ?? null)
  const [issues, setIssues] = useState<Ref[] | null>(null)
  const [busy, setBusy] = useState(false)
  const form = useErrors()
  const load = async () => {
    const [report, refs] = await Promise.all([
      store.client.get<Release>(`/p1/reports/release/${id}`),
      store.client.get<Ref[]>(`/p1/reports/release/${id}/issues`)
    ])
    setRepositories(report.repositories ?? [])
    setIssues(refs)
    store.learn(refs.map((r) => keyOf(r.repo_id, r.issue_number))).catch(() => {})
  }
  useEffect(() => { load().catch((err: unknown) => { setIssues([]); store.say(`Could not read the release report ${release.title}: ${nameRepos(message(err), state.repos)}`, true) }) }, [id])
  const editable = repositories !== null && repositories.some((r) => mayChange(state.account, r))
  const name = (r: Ref) => { const card = state.cards.get(keyOf(r.repo_id, r.issue_number)); return `${issueName(state.repos, r.repo_id, r.issue_number)}${card === undefined ? '' : ` ${card.title}`}` }
  const change = async (add: Ref[], remove: Ref[]): Promise<string | null> => {
    setBusy(true)
    try {
      const answer = await store.client.send<{ added: Ref[], removed: Ref[] }>('PATCH', `/p1/reports/release/${id}/issues`, { add_issues: add, remove_issues: remove })
      const list = (refs: Ref[]) => refs.map((r) => issueName(state.repos, r.repo_id, r.issue_number)).join(', ')
      const added = answer?.added ?? []
      const removed = answer?.removed ?? []
      store.say(added.length + removed.length === 0
        ? `${release.title} already held what was asked.`
        : [added.length > 0 ? `Added ${list(added)} to ${release.title}.` : '', removed.length > 0 ? `Removed ${list(removed)} from ${release.title}.` : ''].filter((s) => s !== '').join(' '))
      await load()
      return null
    } catch (err) {
      return nameRepos(message(err), state.repos)
    } finally {
      setBusy(false)
    }
  }
  const add = async (e: SubmitEvent) => {
    e.preventDefault()
    const target = e.target as HTMLFormElement
    const fields = new FormData(target)
    const repo = Number(fields.get('repository'))
    const parsed = issueNumbers(String(fields.get('issues') ?? ''))
    const wrong: Record<string, string> = {}
    if (!(repositories ?? []).includes(repo)) wrong.repository = 'Choose one of the report\'s repositories.'
    if ('error' in parsed) wrong.issues = parsed.error
    else if (parsed.numbers.length === 0) wrong.issues = 'Type the numbers of the issues to add, e.g. 12, 15.'
    form.set(wrong)
    if (Object.keys(wrong).length > 0 || 'error' in parsed) return
    const refused = await change(parsed.numbers.map((n) => ({ repo_id: repo, issue_number: n })), [])
    if (refused === null) { form.clear(); target.reset() } else form.refuse(new Error(refused), ['issues', 'repository'])
  }
  const remove = async (ref: Ref) => {
    const refused = await change([], [ref])
    if (refused !== null) store.say(`Could not remove ${name(ref)} from ${release.title}: ${refused}`, true)
  }
  const headingId = `release-${id}`
  const field = (suffix: string) => `release-${id}-${suffix}`
  return html`<li><section class="release" aria-labelledby=${headingId}>
    <h3 id=${headingId}>${release.title}</h3>
    <p>${release.start_date.slice(0, 10)} to ${release.desired_end_date.slice(0, 10)}${release.state === 'closed' ? ' (closed)' : ''}${repositories === null ? '' : ` · ${repositories.map((r) => repoName(state.repos, r)).join(', ')}`}
      ${' '}<button type="button" class="link" aria-label=${`Burndown of ${release.title}`} onClick=${() => store.showBurndown(`release:${id}`)}>Burndown</button></p>
    ${issues === null
      ? html`<p class="hint">Loading…</p>`
      : issues.length === 0
        ? html`<p class="hint">No issue in this release report yet.</p>`
        : html`<ul aria-label=${`Issues of ${release.title}`}>${issues.map((r) => html`<li key=${keyOf(r.repo_id, r.issue_number)}>${name(r)}
          ${editable && html` <button type="button" disabled=${busy} aria-label=${`Remove ${issueName(state.repos, r.repo_id, r.issue_number)} from ${release.title}`} onClick=${() => { remove(r) }}>Remove</button>`}</li>`)}</ul>`}
    ${editable && release.state !== 'closed' && html`<form class="admin-form" aria-label=${`Add issues to ${release.title}`} onSubmit=${add} noValidate>
      <div class="field"><label for=${field('repository')}>Repository</label>
        <select name="repository" ...${invalid(field('repository'), form.errors.repository)}>
          ${(repositories ?? []).map((r) => html`<option key=${r} value=${r}>${repoName(state.repos, r)}</option>`)}
        </select>
        <${FieldError} id=${field('repository')} error=${form.errors.repository} /></div>
      <${TextField} id=${field('issues')} label="Issues to add (numbers, e.g. 12, 15)" name="issues" error=${form.errors.issues} />
      <div class="row"><button type="submit" disabled=${busy}>Add to the release report</button></div>
    </form>`}
  </section></li>`
}

/** The release reports of the workspace's repositories, a way to make one, and each one's issues. */
export function ReleaseSettings ({ store }: { store: Store }) {
  const { state } = store
  const repos = store.repoIds()
  const writable = repos.filter((id) => mayChange(state.account, id))
  const [releases, setReleases] = useState<Release[] | null>(null)
  const [open, setOpen] = useState(false)
  const read = async () => {
    const lists = await Promise.all(repos.map(async (repo) => await store.client.get<Release[]>(`/p1/repositories/${repo}/reports/releases`).catch(() => [])))
    setReleases(mergeReleases(lists))
  }
  useEffect(() => { read().catch(() => setReleases([])) }, [repos.join(',')])
  return html`<section class="settings-section" aria-labelledby="release-settings">
    <h2 id="release-settings">Release reports</h2>
    <p>A release report follows the issues planned for a release across repositories, from its start date to the day it should be done; its burndown is in Reports.</p>
    ${writable.length > 0 && (open
      ? html`<${NewRelease} store=${store} repos=${writable} onDone=${(made?: Release) => {
        setOpen(false)
        if (made !== undefined) setReleases([made, ...(releases ?? []).filter((r) => r.release_id !== made.release_id)])
      }} />`
      : html`<button type="button" onClick=${() => setOpen(true)}>New release report</button>`)}
    ${releases === null
      ? html`<p class="hint">Loading…</p>`
      : releases.length === 0
        ? html`<p class="hint">No release report on this board's repositories yet.</p>`
        : html`<ul class="releases" aria-label="Release reports">${releases.map((r) => html`<${ReleaseItem} key=${r.release_id} store=${store} release=${r} />`)}</ul>`}
  </section>`
}
