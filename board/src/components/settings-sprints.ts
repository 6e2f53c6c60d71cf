/// <reference lib="dom" />
import { useEffect, useState } from 'preact/hooks'
import { ApiError } from '../api.js'
import { html } from '../html.js'
import { mayChange, type Store } from '../store.js'
import { FieldError, invalid, useErrors } from './field.js'

export interface SprintConfig { length_weeks: number, starts_on: string, time_zone: string, carry_over: boolean }

/** Today in the browser's time zone, as YYYY-MM-DD. */
const today = (): string => new Date().toLocaleDateString('en-CA')
const browserZone = (): string => Intl.DateTimeFormat().resolvedOptions().timeZone ?? 'UTC'

/** Whether the browser knows the time zone (the server checks again). */
export function knownZone (zone: string): boolean {
  try {
    return new Intl.DateTimeFormat('en', { timeZone: zone }).resolvedOptions().timeZone !== undefined
  } catch {
    return false
  }
}

/** Checks the form's values; an empty object when they may be sent. */
export function sprintConfigErrors (config: SprintConfig): Record<string, string> {
  const errors: Record<string, string> = {}
  if (!Number.isInteger(config.length_weeks) || config.length_weeks < 1 || config.length_weeks > 4) errors.length_weeks = 'A sprint is 1 to 4 weeks long.'
  if (!/^\d{4}-\d{2}-\d{2}$/.test(config.starts_on)) errors.starts_on = 'Choose the first sprint\'s first day.'
  if (config.time_zone === '' || !knownZone(config.time_zone)) errors.time_zone = 'Choose an IANA time zone, e.g. Europe/Berlin.'
  return errors
}

/** The settings in a sentence, for who may only read them. */
export const sprintSummary = (c: SprintConfig): string =>
  `${c.length_weeks}-week sprints from ${c.starts_on} (${c.time_zone}); ${c.carry_over ? 'a sprint\'s open issues carry over to the next one' : 'open issues do not carry over'}.`

/** The workspace's sprint settings (its admins may change them): length, first day, time zone, carry-over. */
export function SprintSettings ({ store }: { store: Store }) {
  const workspace = store.state.choice?.workspace
  const [config, setConfig] = useState<SprintConfig | null>(null)
  const [saved, setSaved] = useState(false)
  const [busy, setBusy] = useState(false)
  const form = useErrors()
  const zones: string[] = typeof Intl.supportedValuesOf === 'function' ? Intl.supportedValuesOf('timeZone') : []
  useEffect(() => {
    if (workspace === undefined) return
    store.client.get<SprintConfig>(`/p2/workspaces/${encodeURIComponent(workspace)}/sprint_config`)
      .then((c) => { setConfig(c); setSaved(true) })
      .catch((err: unknown) => {
        if (!(err instanceof ApiError && err.status === 404)) store.say(`Could not read the sprint settings: ${err instanceof Error ? err.message : String(err)}`, true)
        setConfig({ length_weeks: 2, starts_on: today(), time_zone: browserZone(), carry_over: true })
      })
  }, [workspace])
  if (workspace === undefined) return null
  // The form only for who may change it (admin on every repository of the workspace); others read the settings.
  const repositories = store.state.workspaces.find((w) => w.id === workspace)?.repositories ?? []
  const admin = repositories.length > 0 && repositories.every((id) => mayChange(store.state.account, id, 3))
  const submit = async (e: SubmitEvent) => {
    e.preventDefault()
    const fields = new FormData(e.target as HTMLFormElement)
    const next: SprintConfig = {
      length_weeks: Number(fields.get('length_weeks')),
      starts_on: String(fields.get('starts_on') ?? ''),
      time_zone: String(fields.get('time_zone') ?? '').trim(),
      carry_over: fields.get('carry_over') !== null
    }
    const wrong = sprintConfigErrors(next)
    form.set(wrong)
    if (Object.keys(wrong).length > 0) return
    setBusy(true)
    try {
      await store.client.send('PUT', `/p2/workspaces/${encodeURIComponent(workspace)}/sprint_config`, next)
      setConfig(next)
      setSaved(true)
      store.say(`Saved the sprint settings: ${next.length_weeks}-week sprints from ${next.starts_on} (${next.time_zone}).`)
      await store.reloadSprints()
    } catch (err) {
      form.refuse(err, ['length_weeks', 'starts_on', 'time_zone'])
    } finally {
      setBusy(false)
    }
  }
  return html`<section class="settings-section" aria-labelledby="sprint-settings">
    <h2 id="sprint-settings">Sprints</h2>
    <p>${saved ? 'Sprints follow one another from the first day.' : 'No sprints yet.'}${admin ? ' A first day of today or earlier makes the current sprint active at once.' : ''}</p>
    ${config === null
      ? html`<p class="hint">Loading…</p>`
      : !admin
          ? saved && html`<p>${sprintSummary(config)}</p>`
          : html`<form key=${workspace} class="admin-form" aria-label="Sprint settings" onSubmit=${submit} noValidate>
        <div class="field"><label for="sprint-length">Length in weeks</label>
          <select name="length_weeks" ...${invalid('sprint-length', form.errors.length_weeks)}>
            ${[1, 2, 3, 4].map((n) => html`<option key=${n} value=${n} selected=${n === config.length_weeks}>${n}</option>`)}
          </select>
          <${FieldError} id="sprint-length" error=${form.errors.length_weeks} /></div>
        <div class="field"><label for="sprint-start">Start date</label>
          <input name="starts_on" type="date" defaultValue=${config.starts_on} ...${invalid('sprint-start', form.errors.starts_on)} />
          <${FieldError} id="sprint-start" error=${form.errors.starts_on} /></div>
        <div class="field"><label for="sprint-zone">Time zone</label>
          <input name="time_zone" list="sprint-zones" defaultValue=${config.time_zone} autocomplete="off" ...${invalid('sprint-zone', form.errors.time_zone)} />
          <datalist id="sprint-zones">${zones.map((z) => html`<option key=${z} value=${z} />`)}</datalist>
          <${FieldError} id="sprint-zone" error=${form.errors.time_zone} /></div>
        <label><input type="checkbox" name="carry_over" defaultChecked=${config.carry_over} /> Carry a sprint's open issues over to the next one</label>
        <div class="row"><button type="submit" class="primary" disabled=${busy}>Save sprint settings</button></div>
      </form>`}
  </section>`
}
