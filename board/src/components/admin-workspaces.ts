/// <reference lib="dom" />
import { useEffect, useRef, useState } from 'preact/hooks'
import { html } from '../html.js'
import { repoName, type AdminContext, type AdminData, type AdminPipeline, type AdminWorkspace } from './admin-data.js'
import { FieldError, invalid, TextField, useErrors } from './field.js'

export const DEFAULT_PIPELINES = 'New Issues, In Progress, Done'

/** The pipelines with the one at `from` put at `to` (both indexes in the list as it is). */
export function reorder<T> (list: T[], from: number, to: number): T[] {
  if (from === to || from < 0 || from >= list.length || to < 0 || to >= list.length) return list
  const out = [...list]
  const [moved] = out.splice(from, 1)
  out.splice(to, 0, moved)
  return out
}

/** Pipeline names typed comma-separated: trimmed, empty ones left out. */
export const pipelineNames = (text: string): string[] => text.split(',').map((n) => n.trim()).filter((n) => n !== '')

const message = (err: unknown) => err instanceof Error ? err.message : String(err)

function NewWorkspace ({ data, context, onDone }: { data: AdminData, context: AdminContext, onDone: () => void }) {
  const form = useErrors()
  const [busy, setBusy] = useState(false)
  const submit = async (e: SubmitEvent) => {
    e.preventDefault()
    const fields = new FormData(e.target as HTMLFormElement)
    const name = String(fields.get('name') ?? '').trim()
    const description = String(fields.get('description') ?? '').trim()
    const repositories = fields.getAll('repositories').map(Number)
    const pipelines = pipelineNames(String(fields.get('pipelines') ?? ''))
    const wrong: Record<string, string> = {}
    if (name === '') wrong.name = 'A workspace needs a name.'
    if (pipelines.length === 0) wrong.pipelines = 'Name at least one pipeline (several: separated by commas).'
    else if (pipelines.some((p) => p.length > 100)) wrong.pipelines = 'A pipeline name is at most 100 characters.'
    form.set(wrong)
    if (Object.keys(wrong).length > 0) return
    setBusy(true)
    try {
      await context.client.send('POST', '/admin/workspaces', { name, ...(description === '' ? {} : { description }), repositories, pipelines })
      context.say(`Created the workspace ${name}.`)
      onDone()
      await context.reload()
    } catch (err) {
      form.refuse(err, ['name', 'description', 'repositories', 'pipelines'])
    } finally {
      setBusy(false)
    }
  }
  return html`<form class="admin-form" aria-label="New workspace" onSubmit=${submit} noValidate>
    <${TextField} id="new-ws-name" label="Name" name="name" error=${form.errors.name} required maxlength="200" />
    <${TextField} id="new-ws-description" label="Description" name="description" error=${form.errors.description} maxlength="2000" />
    <fieldset class="choices" ...${invalid('new-ws-repositories', form.errors.repositories)}>
      <legend>Repositories</legend>
      ${data.repositories.length === 0 && html`<p class="hint">No repositories yet: make one above, or connect an issue host.</p>`}
      ${data.repositories.map((r) => html`<label key=${r.id}><input type="checkbox" name="repositories" value=${r.id} /> ${r.owner}/${r.name}</label>`)}
      <${FieldError} id="new-ws-repositories" error=${form.errors.repositories} />
    </fieldset>
    <${TextField} id="new-ws-pipelines" label="Pipelines (separated by commas)" name="pipelines" value=${DEFAULT_PIPELINES} error=${form.errors.pipelines} />
    <div class="row"><button type="submit" class="primary" disabled=${busy}>Create workspace</button><button type="button" onClick=${onDone}>Cancel</button></div>
  </form>`
}

/** Asks where a deleted pipeline's issues go, then deletes it (they move first, in one transaction). */
function DeletePipelineDialog ({ workspace, pipeline, context, onClose }: {
  workspace: AdminWorkspace
  pipeline: AdminPipeline
  context: AdminContext
  onClose: () => void
}) {
  const dialog = useRef<HTMLDialogElement>(null)
  const [error, setError] = useState('')
  const [busy, setBusy] = useState(false)
  useEffect(() => { if (dialog.current !== null && !dialog.current.open) dialog.current.showModal() }, [])
  const others = workspace.pipelines.filter((p) => p.id !== pipeline.id)
  const id = `delete-${pipeline.id}`
  const submit = async (e: SubmitEvent) => {
    e.preventDefault()
    const destination = String(new FormData(e.target as HTMLFormElement).get('destination') ?? '')
    const target = others.find((p) => p.id === destination)
    if (target === undefined) {
      setError('Choose the pipeline its issues move to.')
      return
    }
    setBusy(true)
    try {
      const path = `/admin/workspaces/${encodeURIComponent(workspace.id)}/pipelines/${encodeURIComponent(pipeline.id)}`
      await context.client.send('DELETE', `${path}?destination_pipeline_id=${encodeURIComponent(destination)}`, undefined)
      context.say(`Deleted the pipeline ${pipeline.name}; its issues are at the end of ${target.name}.`)
      dialog.current?.close()
      await context.reload()
    } catch (err) {
      setError(message(err))
    } finally {
      setBusy(false)
    }
  }
  return html`<dialog ref=${dialog} aria-labelledby=${`${id}-title`} onClose=${onClose}>
    <header><h2 id=${`${id}-title`}>Delete the pipeline ${pipeline.name}</h2><button type="button" onClick=${() => dialog.current?.close()}>Close</button></header>
    <form class="stack" onSubmit=${submit} noValidate>
      <div class="field"><label for=${id}>Move its issues to</label>
        <select name="destination" ...${invalid(id, error)}>
          ${others.map((p) => html`<option key=${p.id} value=${p.id}>${p.name}</option>`)}
        </select>
        <${FieldError} id=${id} error=${error} /></div>
      <p class="hint">Its issues go to the end of that pipeline, in their order; each move is in their history.</p>
      <div class="row"><button type="submit" class="danger" disabled=${busy}>Delete pipeline</button><button type="button" onClick=${() => dialog.current?.close()}>Cancel</button></div>
    </form>
  </dialog>`
}

function PipelineItem ({ workspace, pipeline, index, save, context, onDragStart, onDrop }: {
  workspace: AdminWorkspace
  pipeline: AdminPipeline
  index: number
  context: AdminContext
  save: (pipelines: AdminPipeline[], done: string) => Promise<string | null>
  onDragStart: (index: number) => void
  onDrop: (index: number) => void
}) {
  const [renaming, setRenaming] = useState(false)
  const [deleting, setDeleting] = useState(false)
  const [error, setError] = useState('')
  const count = workspace.pipelines.length
  const id = `rename-${workspace.id}-${pipeline.id}`
  const move = async (delta: number) => {
    await save(reorder(workspace.pipelines, index, index + delta), `Moved ${pipeline.name} to place ${index + delta + 1} of ${count}.`)
  }
  const rename = async (e: SubmitEvent) => {
    e.preventDefault()
    const name = String(new FormData(e.target as HTMLFormElement).get('name') ?? '').trim()
    if (name === '' || name.length > 100) {
      setError('A pipeline name is 1 to 100 characters.')
      return
    }
    const refused = await save(workspace.pipelines.map((p) => p.id === pipeline.id ? { ...p, name } : p), `Renamed ${pipeline.name} to ${name}.`)
    if (refused === null) setRenaming(false); else setError(refused)
  }
  return html`<li class="pipeline" aria-label=${pipeline.name} draggable=${!renaming}
    onDragStart=${(e: DragEvent) => { e.dataTransfer?.setData('text/plain', pipeline.id); onDragStart(index) }}
    onDragOver=${(e: DragEvent) => { e.preventDefault() }}
    onDrop=${(e: DragEvent) => { e.preventDefault(); onDrop(index) }}>
    ${renaming
      ? html`<form class="rename" onSubmit=${rename} noValidate>
          <label for=${id}>New name for ${pipeline.name}</label>
          <input name="name" defaultValue=${pipeline.name} maxlength="100" autocomplete="off" ...${invalid(id, error)} />
          <${FieldError} id=${id} error=${error} />
          <div class="row"><button type="submit">Save</button><button type="button" onClick=${() => { setRenaming(false); setError('') }}>Cancel</button></div>
        </form>`
      : html`<span class="grip-mark" aria-hidden="true">⠿</span> <span class="pipeline-name">${pipeline.name}</span>
        <div class="row">
          <button type="button" disabled=${index === 0} onClick=${() => move(-1)}>Move left</button>
          <button type="button" disabled=${index === count - 1} onClick=${() => move(1)}>Move right</button>
          <button type="button" onClick=${() => setRenaming(true)}>Rename</button>
          ${count > 1 && html`<button type="button" class="danger" onClick=${() => setDeleting(true)}>Delete</button>`}
        </div>`}
    ${deleting && html`<${DeletePipelineDialog} workspace=${workspace} pipeline=${pipeline} context=${context} onClose=${() => setDeleting(false)} />`}
  </li>`
}

function WorkspaceItem ({ data, workspace, context }: { data: AdminData, workspace: AdminWorkspace, context: AdminContext }) {
  const form = useErrors()
  const dragged = useRef<number | null>(null)
  const titleId = `ws-${workspace.id}`
  const fieldId = `add-pipeline-${workspace.id}`
  /** Sends the whole ordered list (renames and moves); answers the refusal, or null when saved. */
  const save = async (pipelines: AdminPipeline[], done: string): Promise<string | null> => {
    try {
      await context.client.send('PATCH', `/admin/workspaces/${encodeURIComponent(workspace.id)}`, { pipelines: pipelines.map((p) => ({ id: p.id, name: p.name })) })
    } catch (err) {
      context.say(`Not saved: ${message(err)}`, true)
      return message(err)
    }
    context.say(done)
    await context.reload()
    return null
  }
  const add = async (e: SubmitEvent) => {
    e.preventDefault()
    const target = e.target as HTMLFormElement
    const name = String(new FormData(target).get('name') ?? '').trim()
    if (name === '' || name.length > 100) {
      form.set({ name: 'A pipeline name is 1 to 100 characters.' })
      return
    }
    try {
      await context.client.send('PATCH', `/admin/workspaces/${encodeURIComponent(workspace.id)}`, { pipelines: [...workspace.pipelines.map((p) => ({ id: p.id, name: p.name })), { name }] })
    } catch (err) {
      form.refuse(err, ['name'])
      return
    }
    form.clear()
    target.reset()
    context.say(`Added the pipeline ${name} to ${workspace.name}.`)
    await context.reload()
  }
  return html`<section class="workspace" aria-labelledby=${titleId}>
    <h4 id=${titleId}>${workspace.name}</h4>
    ${workspace.description !== null && workspace.description !== '' && html`<p class="hint">${workspace.description}</p>`}
    <p>Repositories: ${workspace.repositories.length === 0 ? 'none' : workspace.repositories.map((id) => repoName(data.repositories, id)).join(', ')}</p>
    <ol class="pipelines" aria-label=${`Pipelines of ${workspace.name}`}>
      ${workspace.pipelines.map((p, i) => html`<${PipelineItem} key=${`${p.id}:${p.name}:${i}`} workspace=${workspace} pipeline=${p} index=${i} save=${save} context=${context}
        onDragStart=${(from: number) => { dragged.current = from }}
        onDrop=${(to: number) => {
          const from = dragged.current
          dragged.current = null
          if (from !== null && from !== to) save(reorder(workspace.pipelines, from, to), `Moved ${workspace.pipelines[from].name} to place ${to + 1} of ${workspace.pipelines.length}.`)
        }} />`)}
    </ol>
    <form class="add-pipeline" aria-label=${`Add a pipeline to ${workspace.name}`} onSubmit=${add} noValidate>
      <${TextField} id=${fieldId} label="Pipeline name" name="name" error=${form.errors.name} maxlength="100" />
      <button type="submit">Add pipeline</button>
    </form>
  </section>`
}

/** Every workspace with its pipelines (add, rename, reorder), and a form for a new one. */
export function Workspaces ({ data, context }: { data: AdminData, context: AdminContext }) {
  const [adding, setAdding] = useState(false)
  return html`<section class="admin-section" aria-labelledby="admin-workspaces">
    <h3 id="admin-workspaces">Workspaces</h3>
    ${adding
      ? html`<${NewWorkspace} data=${data} context=${context} onDone=${() => setAdding(false)} />`
      : html`<button type="button" onClick=${() => setAdding(true)}>New workspace</button>`}
    ${data.workspaces.length === 0 && html`<p class="hint">No workspaces yet.</p>`}
    ${data.workspaces.map((w) => html`<${WorkspaceItem} key=${w.id} data=${data} workspace=${w} context=${context} />`)}
  </section>`
}
