/// <reference lib="dom" />
import { useState } from 'preact/hooks'
import { html } from '../html.js'
import type { Pipeline } from '../model.js'
import { mayChange, type Store } from '../store.js'
import { InviteDialog } from './admin-people.js'
import { MilestoneSettings } from './settings-milestones.js'
import { ReleaseSettings } from './settings-releases.js'
import { SprintSettings } from './settings-sprints.js'

function HostLabelRow ({ store, pipeline }: { store: Store, pipeline: Pipeline }) {
  const [text, setText] = useState(pipeline.host_label ?? '')
  const [saving, setSaving] = useState(false)
  const id = `host-label-${pipeline.id}`
  const save = async (e: Event) => {
    e.preventDefault()
    setSaving(true)
    await store.setHostLabel(pipeline.id, text)
    setSaving(false)
  }
  return html`<form class="setting" role="group" aria-label=${pipeline.name} onSubmit=${save}>
    <label for=${id}>Host label for ${pipeline.name}</label>
    <input id=${id} type="text" maxlength="50" value=${text} placeholder="no label" autocomplete="off"
      onInput=${(e: Event) => { setText((e.target as HTMLInputElement).value) }} />
    <button type="submit" disabled=${saving}>Save</button>
  </form>`
}

/** A workspace admin's invites into this workspace (Administration has them for every workspace). */
function InviteSettings ({ store, workspace }: { store: Store, workspace: { id: string, name: string } }) {
  const [open, setOpen] = useState(false)
  return html`<section class="settings-section" aria-labelledby="settings-invite">
    <h2 id="settings-invite">People</h2>
    <p>An invite link lets one person join "${workspace.name}" with the permission you choose on each of its repositories.</p>
    <button type="button" onClick=${() => setOpen(true)}>Invite</button>
    ${open && html`<${InviteDialog} workspaces=${[workspace]} context=${{ client: store.client, say: store.say, reload: async () => {} }} onClose=${() => setOpen(false)} />`}
  </section>`
}

/** The workspace's settings: its sprints, release reports and milestone start dates, and which issue-host label each pipeline writes (two-way sync). */
export function Settings ({ store }: { store: Store }) {
  const { state } = store
  const workspace = state.workspaces.find((w) => w.id === state.choice?.workspace)
  // Fields only for who may change them (admin on every repository of the workspace); others read the labels.
  const admin = workspace !== undefined && workspace.repositories.every((id) => mayChange(state.account, id, 3))
  return html`<section class="settings" aria-label="Settings">
    <${SprintSettings} store=${store} />
    <${ReleaseSettings} store=${store} />
    <${MilestoneSettings} store=${store} />
    ${admin && html`<${InviteSettings} store=${store} workspace=${workspace} />`}
    <h2>Pipeline labels on the issue host</h2>
    <p>
      A pipeline may name a label of the issue host. Moving a card into it puts that label on the
      issue there and takes the other pipelines' labels off; a label put on at the host moves the
      card here. Only repositories connected with an API token are written to. Changing these takes
      admin permission on every repository of ${workspace === undefined ? 'the workspace' : `"${workspace.name}"`};
      leave a field empty for no label.
    </p>
    ${admin
      ? state.pipelines.map((p) => html`<${HostLabelRow} key=${`${p.id}:${p.host_label ?? ''}`} store=${store} pipeline=${p} />`)
      : html`<ul class="host-labels" aria-label="Pipeline labels">${state.pipelines.map((p) => html`<li key=${p.id}>${p.name}: ${p.host_label ?? 'no label'}</li>`)}</ul>`}
  </section>`
}
