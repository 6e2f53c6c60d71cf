/// <reference lib="dom" />
import { useEffect, useRef, useState } from 'preact/hooks'
import { html } from '../html.js'
import { namesIn, parseEstimate } from '../model.js'
import type { NewIssue as NewIssueInput, Store } from '../store.js'

/**
 * The "New issue" form of a pipeline: a dialog named "New issue in <pipeline>". The issue is opened
 * on the repository's issue host (two-way sync) and lands at the top of the pipeline; when the API
 * refuses (no write access, a connection without a token, the host said no), its message stays here.
 */
export function NewIssue ({ store, pipeline, onClose }: { store: Store, pipeline: string, onClose: () => void }) {
  const { state } = store
  const dialog = useRef<HTMLDialogElement>(null)
  const repos = store.repoIds()
  const [repo, setRepo] = useState(String(repos[0] ?? ''))
  const [error, setError] = useState('')
  const [busy, setBusy] = useState(false)
  useEffect(() => { if (dialog.current !== null && !dialog.current.open) dialog.current.showModal() }, [])
  const name = state.pipelines.find((p) => p.id === pipeline)?.name ?? pipeline
  const submit = async (e: SubmitEvent) => {
    e.preventDefault()
    const form = new FormData(e.target as HTMLFormElement)
    const text = (field: string) => String(form.get(field) ?? '').trim()
    const input: NewIssueInput = { title: text('title') }
    if (text('body') !== '') input.body = text('body')
    if (namesIn(text('labels')).length > 0) input.labels = namesIn(text('labels'))
    if (namesIn(text('assignees')).length > 0) input.assignees = namesIn(text('assignees'))
    const estimate = parseEstimate(text('estimate'))
    if ('error' in estimate) {
      setError(`${estimate.error}.`)
      return
    }
    if (estimate.value !== null) input.estimate = estimate.value
    setBusy(true)
    const refused = await store.createIssue(Number(repo), pipeline, input)
    setBusy(false)
    if (refused !== null) setError(refused)
  }
  return html`<dialog ref=${dialog} class="new-issue" aria-labelledby="new-issue-title" onClose=${onClose}>
    <header><h2 id="new-issue-title">New issue in ${name}</h2><button type="button" onClick=${() => dialog.current?.close()}>Cancel</button></header>
    <form class="stack" onSubmit=${submit}>
      ${repos.length > 1 && html`<label>Repository <select name="repo" value=${repo} onChange=${(e: Event) => setRepo((e.target as HTMLSelectElement).value)}>
        ${repos.map((id) => {
          const r = state.repos.get(id)
          return html`<option key=${id} value=${id}>${r === undefined ? `repository ${id}` : `${r.owner}/${r.name}`}</option>`
        })}
      </select></label>`}
      <label>Title <input name="title" required maxlength="256" autocomplete="off" /></label>
      <label>Description <textarea name="body" rows="4" maxlength="65536"></textarea></label>
      <label>Labels <input name="labels" placeholder="bug, ui" autocomplete="off" /></label>
      <label>Assignees <input name="assignees" placeholder="login, login" autocomplete="off" /></label>
      <label>Estimate <input name="estimate" inputmode="decimal" size="6" autocomplete="off" /></label>
      ${error !== '' && html`<p class="form-error" role="alert">Not opened: ${error}</p>`}
      <div class="row"><button type="submit" class="primary" disabled=${busy}>Open the issue</button></div>
    </form>
  </dialog>`
}
