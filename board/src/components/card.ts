/// <reference lib="dom" />
import { useLayoutEffect, useRef, useState } from 'preact/hooks'
import { html } from '../html.js'
import { Avatar } from './avatar.js'
import { beforeFrame } from '../frame.js'
import { chipsWidth, fitLabels, META_ROOM, wholeWords } from '../chips.js'
import { cardName, labelColors, parseEstimate, points, repoHue, type Card as CardData, type Relations, type Repo } from '../model.js'

export interface CardProps {
  card: CardData
  repo?: Repo
  /** the repository's short name, shown on workspace boards */
  showRepo: boolean
  relations: Relations
  epicName: (key: string) => string
  top: number
  index: number
  count: number
  focused: boolean
  editing: boolean
  dragging: boolean
  /** false for who may only read the repository: no grip, no estimate button (absent, not refused) */
  editable?: boolean
  onEdit: (editing: boolean) => void
  onEstimate: (value: number | null) => Promise<boolean>
  onSay: (text: string, error: boolean) => void
  onFocus: () => void
}

/** One issue on the board: a list item whose accessible name starts with `#<number> <title>`. */
export function Card (props: CardProps) {
  const { card, relations } = props
  const ref = useRef<HTMLLIElement>(null)
  const meta = useRef<HTMLDivElement>(null)
  // Labels given back because the line of chips overflowed in the page all the same.
  const [fewer, setFewer] = useState(0)
  useLayoutEffect(() => {
    if (props.focused && !props.editing && document.activeElement !== ref.current) ref.current?.focus({ preventScroll: true })
  }, [props.focused, props.editing])
  const blockedBy = relations.blockedBy.get(card.key) ?? []
  const blocking = relations.blocking.get(card.key) ?? []
  const epics = relations.epicsOf.get(card.key) ?? []
  const name = props.repo === undefined ? undefined : props.repo.name
  const editable = props.editable !== false
  const repoText = props.showRepo ? name ?? `repository ${card.repo}` : undefined
  const epicText = epics.length > 0 ? wholeWords(props.epicName(epics[0]), 20) : undefined
  const estimateText = props.editing ? '12.5 pts' : card.estimate !== null ? points(card.estimate) : editable && !card.closed ? '–' : undefined
  const others = [repoText, estimateText, card.pull_request ? 'PR' : undefined, card.is_epic ? 'Epic' : undefined, epicText,
    blockedBy.length > 0 ? 'Blocked' : undefined, blocking.length > 0 ? `Blocking ${blocking.length}` : undefined].filter((t) => t !== undefined)
  const fit = fitLabels(card.labels.map((l) => l.name), META_ROOM - chipsWidth(others, card.assignees.length))
  const fitting = fit.shown.slice(0, Math.max(0, fit.shown.length - fewer))
  const shown = card.labels.filter((l) => fitting.includes(l.name))
  const more = card.labels.filter((l) => !fitting.includes(l.name)).map((l) => l.name)
  // Measured when the card is drawn or its chips change, not at every draw: a scroll draws the
  // column's rows again, and a measure after each would lay out the page once per card. Measured
  // before the next frame, with every other card drawn meanwhile (frame.ts).
  const chips = `${others.join('\n')}\n${shown.map((l) => l.name).join('\n')}\n${card.assignees.length}`
  useLayoutEffect(() => {
    if (shown.length === 0) return
    return beforeFrame(() => {
      const line = meta.current
      if (line !== null && line.scrollWidth > line.clientWidth + 1) setFewer((n) => n + 1)
    })
  }, [chips])
  return html`<li ref=${ref} class=${`card${props.dragging ? ' dragging' : ''}${card.closed ? ' closed' : ''}`} tabindex="0" data-key=${card.key}
      aria-label=${cardName(card, props.showRepo ? name : undefined, relations, props.epicName)}
      aria-posinset=${props.index + 1} aria-setsize=${props.count} style=${{ top: `${props.top}px` }} onFocus=${(e: FocusEvent) => { if (e.target === ref.current) props.onFocus() }}>
    ${editable && html`<span class="grip" aria-hidden="true" title="Drag to move">⠿</span>`}
    ${card.html_url === null ? html`<span class="number">#${card.number}</span>` : html`<a class="number" href=${card.html_url} target="_blank" rel="noopener" tabindex="-1">#${card.number}</a>`}
    <span class="title">${card.title}</span>
    <div class="meta" ref=${meta}>
      ${repoText !== undefined && html`<span class="repo" style=${{ '--hue': String(repoHue(props.repo, card.repo)) }}>${repoText}</span>`}
      ${props.editing && editable
        ? html`<${EstimateEditor} card=${card} onDone=${() => props.onEdit(false)} onSave=${props.onEstimate} onSay=${props.onSay} />`
        : !editable
          ? card.estimate !== null && html`<span class="estimate">${points(card.estimate)}</span>`
          : card.estimate !== null
            ? html`<button type="button" class="estimate" tabindex="-1" title="Estimate (E)" onClick=${() => props.onEdit(true)}>${points(card.estimate)}</button>`
            : !card.closed && html`<button type="button" class="estimate none" tabindex="-1" title="Estimate (E)" aria-label=${`Estimate #${card.number}`} onClick=${() => props.onEdit(true)}>–</button>`}
      ${card.pull_request && html`<span class="badge pr" title="Pull request">PR</span>`}
      ${card.is_epic && html`<span class="badge epic">Epic</span>`}
      ${epicText !== undefined && html`<span class="badge in-epic" title=${`In epic ${props.epicName(epics[0])}`}>${epicText}</span>`}
      ${blockedBy.length > 0 && html`<span class="badge blocked">Blocked</span>`}
      ${blocking.length > 0 && html`<span class="badge blocking">Blocking ${blocking.length}</span>`}
      ${shown.map((l) => {
        const colors = labelColors(l.color)
        return html`<span key=${l.name} class="label" style=${colors === undefined ? undefined : { '--label': colors.background, '--label-text': colors.text }}>${l.name}</span>`
      })}
      ${more.length > 0 && html`<span class="label plus" title=${more.join(', ')}>+${more.length}</span>`}
      ${card.assignees.length > 0 && html`<span class="assignees">${card.assignees.map((a) => html`<${Avatar} key=${a.login} person=${a} />`)}</span>`}
    </div>
  </li>`
}

/**
 * The estimate field: opens with the old value selected (typing replaces it), refuses what is not a
 * number and keeps the old value, and saves a changed value when the focus leaves it.
 */
export interface EditorProps {
  card: CardData, onDone: () => void, onSave: (value: number | null) => Promise<boolean>, onSay: (text: string, error: boolean) => void
}
export function EstimateEditor ({ card, onDone, onSave, onSay }: EditorProps) {
  const ref = useRef<HTMLInputElement>(null)
  const [initial] = useState(card.estimate === null ? '' : String(card.estimate))
  const done = useRef(false)
  useLayoutEffect(() => { ref.current?.focus(); ref.current?.select() }, [])
  const finish = async (save: boolean, leaving: boolean) => {
    if (done.current) return
    const text = ref.current?.value ?? ''
    const old = card.estimate === null ? '' : String(card.estimate)
    if (!save || text.trim() === old) {
      done.current = true
      onDone()
      return
    }
    const parsed = parseEstimate(text)
    if ('error' in parsed) {
      onSay(`Not saved: ${parsed.error}. #${card.number} keeps ${card.estimate === null ? 'no estimate' : points(card.estimate)}.`, true)
      if (leaving) { done.current = true; onDone() } else ref.current?.select()
      return
    }
    done.current = true
    await onSave(parsed.value)
    onDone()
  }
  return html`<input ref=${ref} class="estimate-input" type="text" inputmode="decimal" autocomplete="off" defaultValue=${initial} size="5"
    aria-label=${`Estimate of #${card.number} (empty clears it); Enter saves, Escape cancels`}
    onKeyDown=${(e: KeyboardEvent) => {
      e.stopPropagation()
      if (e.key === 'Enter') { e.preventDefault(); finish(true, false) }
      if (e.key === 'Escape') { e.preventDefault(); finish(false, false) }
    }}
    onPointerDown=${(e: Event) => e.stopPropagation()}
    onBlur=${() => { finish(true, true) }} />`
}
