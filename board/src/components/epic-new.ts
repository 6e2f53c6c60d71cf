/// <reference lib="dom" />
import { useState } from 'preact/hooks'
import { html } from '../html.js'
import { mayChange, type Store } from '../store.js'
import { FieldError, invalid, TextField, useErrors } from './field.js'

/** Issue numbers typed as "12, #15 17": each a positive whole number, or an error. */
export function issueNumbers (text: string): { numbers: number[] } | { error: string } {
  const parts = text.split(/[\s,]+/).map((p) => p.replace(/^#/, '')).filter((p) => p !== '')
  const bad = parts.find((p) => !/^[1-9]\d{0,14}$/.test(p))
  if (bad !== undefined) return { error: `"${bad}" is not an issue number: type numbers such as 12, 15.` }
  return { numbers: [...new Set(parts.map(Number))] }
}

/**
 * A new epic from the Epics view: an issue opened in the chosen repository (its first pipeline),
 * then converted to an epic holding the issues named (the REST API's two steps).
 */
export function NewEpic ({ store }: { store: Store }) {
  const { state } = store
  const [open, setOpen] = useState(false)
  const [busy, setBusy] = useState(false)
  const form = useErrors()
  const workspace = state.workspaces.find((w) => w.id === state.choice?.workspace)
  // Only the repositories the person writes to; with none, no button at all.
  const repos = (workspace?.repositories ?? []).filter((id) => mayChange(state.account, id)).map((id) => state.repos.get(id)).filter((r) => r !== undefined)
  if (repos.length === 0) return null
  if (!open) return html`<button type="button" onClick=${() => setOpen(true)}>New epic</button>`
  const submit = async (e: SubmitEvent) => {
    e.preventDefault()
    const fields = new FormData(e.target as HTMLFormElement)
    const title = String(fields.get('title') ?? '').trim()
    const repo = Number(fields.get('repository'))
    const parsed = issueNumbers(String(fields.get('issues') ?? ''))
    const wrong: Record<string, string> = {}
    if (title === '') wrong.title = 'An epic needs a title.'
    if (!repos.some((r) => r.id === repo)) wrong.repository = 'Choose a repository of this board.'
    if ('error' in parsed) wrong.issues = parsed.error
    form.set(wrong)
    if (Object.keys(wrong).length > 0 || 'error' in parsed) return
    setBusy(true)
    try {
      const made = await store.client.send<{ issue_number: number }>('POST', `/p1/repositories/${repo}/issues`, { title })
      if (made === undefined) throw new Error('the server made no issue')
      try {
        await store.client.send('POST', `/p1/repositories/${repo}/issues/${made.issue_number}/convert_to_epic`,
          { issues: parsed.numbers.map((n) => ({ repo_id: repo, issue_number: n })) })
      } catch (err) {
        form.set({ issues: `Opened #${made.issue_number}, but it is not an epic yet: ${err instanceof Error ? err.message : String(err)}` })
        await store.refresh()
        return
      }
      store.say(`Made the epic #${made.issue_number} ${title}${parsed.numbers.length === 0 ? '' : ` with ${parsed.numbers.length} issues`}.`)
      setOpen(false)
      form.clear()
      await store.refresh()
    } catch (err) {
      form.refuse(err, ['title', 'repository', 'issues'])
    } finally {
      setBusy(false)
    }
  }
  return html`<form class="admin-form" aria-label="New epic" onSubmit=${submit} noValidate>
    <${TextField} id="epic-title" label="Title" name="title" error=${form.errors.title} maxlength="256" />
    <div class="field"><label for="epic-repository">Repository</label>
      <select name="repository" ...${invalid('epic-repository', form.errors.repository)}>
        ${repos.map((r) => html`<option key=${r.id} value=${r.id}>${r.owner}/${r.name}</option>`)}
      </select>
      <${FieldError} id="epic-repository" error=${form.errors.repository} /></div>
    <${TextField} id="epic-issues" label="Issues to add (numbers, e.g. 12, 15)" name="issues" error=${form.errors.issues} />
    <div class="row"><button type="submit" class="primary" disabled=${busy}>Create epic</button><button type="button" onClick=${() => { setOpen(false); form.clear() }}>Cancel</button></div>
  </form>`
}
