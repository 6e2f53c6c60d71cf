/// <reference lib="dom" />
import { useState } from 'preact/hooks'
import { ApiError } from '../api.js'
import { html } from '../html.js'

/** Which of a form's fields a server message names (`body/owner must match…`), else the first. */
export function fieldOf (message: string, names: string[]): string {
  const text = message.replace(/\bbody\//, '').replace(/_/g, ' ')
  return names.find((n) => new RegExp(`\\b${n.replace(/_/g, ' ')}\\b`, 'i').test(text)) ?? names[0]
}

/** The attributes tying an input to its error message below it. */
export function invalid (id: string, error: string | undefined) {
  return error === undefined || error === '' ? { id } : { id, 'aria-invalid': 'true', 'aria-describedby': `${id}-error` }
}

/** The message under a field, referenced by the field's `aria-describedby`. */
export function FieldError ({ id, error }: { id: string, error: string | undefined }) {
  return error === undefined || error === '' ? null : html`<p class="field-error" id=${`${id}-error`}>${error}</p>`
}

export type Errors = Record<string, string>

/** A form's errors by field name, and a way to put a refusal next to the field it is about. */
export function useErrors () {
  const [errors, setErrors] = useState<Errors>({})
  return {
    errors,
    set: setErrors,
    clear: () => { setErrors({}) },
    /** Puts the server's message (or any error) next to the field it names; the rest of the form is left alone. */
    refuse (err: unknown, names: string[]) {
      const message = err instanceof ApiError || err instanceof Error ? err.message : String(err)
      setErrors({ [fieldOf(message, names)]: message })
    }
  }
}

/** A labelled text input with its error message. */
export function TextField ({ id, label, name, error, ...rest }: { id: string, label: string, name: string, error?: string } & Record<string, unknown>) {
  return html`<div class="field">
    <label for=${id}>${label}</label>
    <input name=${name} autocomplete="off" ...${rest} ...${invalid(id, error)} />
    <${FieldError} id=${id} error=${error} />
  </div>`
}
