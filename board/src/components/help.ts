/// <reference lib="dom" />
import { useEffect, useRef } from 'preact/hooks'
import { html } from '../html.js'

export const KEYS: Array<[string, string]> = [
  ['Tab', 'to the board, the filter and the buttons'],
  ['Arrow keys', 'move the focus between cards and columns'],
  ['Shift + arrow keys', 'move the focused card up, down or to the next column'],
  ['Enter', 'open the focused card\'s issue panel'],
  ['E', 'edit the focused card\'s estimate (Enter saves, Escape cancels)'],
  ['/', 'go to the filter box'],
  ['?', 'show this help'],
  ['Escape', 'close the panel or the help; clear the filter box']
]

/** The keyboard help: a dialog named "Keyboard help". */
export function Help ({ onClose }: { onClose: () => void }) {
  const dialog = useRef<HTMLDialogElement>(null)
  useEffect(() => { if (dialog.current !== null && !dialog.current.open) dialog.current.showModal() }, [])
  return html`<dialog ref=${dialog} class="help" aria-labelledby="help-title" onClose=${onClose}
      >
    <header><h2 id="help-title">Keyboard help</h2><button type="button" onClick=${() => dialog.current?.close()}>Close</button></header>
    <p>Drag a card with a mouse, a finger or a pen (on touch screens, by its grip ⠿), or use the keys:</p>
    <dl>${KEYS.map(([key, what]) => html`<div key=${key}><dt><kbd>${key}</kbd></dt><dd>${what}</dd></div>`)}</dl>
  </dialog>`
}
