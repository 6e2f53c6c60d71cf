/// <reference lib="dom" />
import { useLayoutEffect, useMemo, useRef, useState } from 'preact/hooks'
import { html } from '../html.js'
import { totals, visibleRows, type Card as CardData } from '../model.js'

/** Every card is one fixed-height row: a column of 1,500 draws only the rows in view. */
export const ROW = 84

export interface ColumnProps {
  id: string
  name: string
  cards: CardData[]
  collapsed: boolean
  filtering: boolean
  /** slot of a drop indicator while a card is dragged over this column */
  dropSlot: number | null
  focusIndex: number
  onToggle: () => void
  renderCard: (card: CardData, index: number, top: number) => unknown
  footer?: unknown
  /** opens the "New issue" form of this pipeline (not on Closed) */
  onNew?: () => void
  /** the board's first read is still out: no count and no "No issues here" yet */
  loading?: boolean
  /** what the header counts when the cards are not all here (the collapsed Closed column) */
  count?: string
  /** rows drawn beyond those in view, above and below (default 6); none for a column out of view across */
  spare?: number
}

// One observer for every column's list: its changes come in one callback, where the page is laid
// out once for all. An observer each told them one at a time, and each column drawn again in
// between laid the page out again for the next one (13 layouts when the first rows came).
let sizes: ResizeObserver | undefined
const told = new Map<Element, () => void>()
function watchSize (el: Element, tell: () => void): () => void {
  sizes ??= new ResizeObserver((entries) => { for (const entry of entries) told.get(entry.target)?.() })
  told.set(el, tell)
  sizes.observe(el)
  return () => {
    told.delete(el)
    sizes?.unobserve(el)
  }
}

/** A pipeline: a sticky header with its counts, then a list named after it that scrolls on its own. */
export function Column (props: ColumnProps) {
  const scroller = useRef<HTMLDivElement>(null)
  const [view, setView] = useState({ top: 0, height: typeof window === 'undefined' ? 1200 : window.innerHeight })
  // The height the list can grow to (the board's): its rows are drawn for that, so a column that
  // grows (its first cards, a filter typed on) has them drawn at once, not a window of its empty
  // box's height drawn, laid out, and then the rest drawn and laid out again once it has grown.
  const [room, setRoom] = useState(0)
  // A card focused by the keyboard is scrolled into view before it is drawn.
  useLayoutEffect(() => {
    const el = scroller.current
    if (el === null || props.focusIndex < 0) return
    const top = props.focusIndex * ROW
    if (top < el.scrollTop) el.scrollTop = top
    else if (top + ROW > el.scrollTop + el.clientHeight) el.scrollTop = top + ROW - el.clientHeight
    if (el.scrollTop !== view.top) setView({ top: el.scrollTop, height: el.clientHeight || view.height })
  }, [props.focusIndex])
  // How high the list's box is, told after the page's layout when it changes (it grows with a short
  // list's cards, and with the window): read there, not after each draw, where a keystroke's or a
  // scroll's draw would lay the page out again just to read it.
  useLayoutEffect(() => {
    const el = scroller.current
    if (el === null || typeof ResizeObserver !== 'function') return
    return watchSize(el, () => {
      if (el.clientHeight > 0) setView((v) => v.height === el.clientHeight && v.top === el.scrollTop ? v : { top: el.scrollTop, height: el.clientHeight })
      const board = el.closest<HTMLElement>('.board')
      if (board !== null && board.clientHeight > 0) setRoom(board.clientHeight)
    })
  }, [props.collapsed])
  // Not summed again for each scroll step of a column of thousands.
  const counts = useMemo(() => totals(props.cards), [props.cards])
  // A list made shorter (a filter) moves the scroll position back, with no scroll event yet: the
  // rows drawn are those at the bottom it moves back to, worked out rather than read from the page.
  const top = Math.min(view.top, Math.max(0, props.cards.length * ROW - view.height))
  // Kept, so that the list made longer again starts from there too, as the page does.
  useLayoutEffect(() => { if (top !== view.top) setView({ top, height: view.height }) }, [top])
  const { from, to } = visibleRows(props.cards.length, ROW, top, Math.max(view.height, room), props.spare)
  const rows = []
  for (let i = from; i < to; i++) rows.push(props.renderCard(props.cards[i], i, i * ROW))
  const headingId = `column-${props.id}`
  return html`<section class=${`column${props.collapsed ? ' collapsed' : ''}`} data-pipeline=${props.id} aria-labelledby=${headingId}>
    <h2 id=${headingId} class="column-head">
      <button type="button" class="toggle" aria-expanded=${!props.collapsed} onClick=${props.onToggle}>
        <span class="name">${props.name}</span>
        <small class="counts">${props.loading === true ? 'loading…' : props.count ?? counts}</small>
      </button>
    </h2>
    ${!props.collapsed && props.onNew !== undefined && html`<button type="button" class="new" onClick=${props.onNew}><span aria-hidden="true">+ </span>New issue</button>`}
    ${!props.collapsed && html`<div class="scroller" ref=${scroller} onScroll=${(e: Event) => {
      const el = e.currentTarget as HTMLDivElement
      setView({ top: el.scrollTop, height: el.clientHeight })
    }}>
      <ul class="cards" role="list" aria-label=${props.name} data-pipeline=${props.id} style=${{ height: `${Math.max(props.cards.length * ROW, ROW)}px` }}>
        ${rows}
      </ul>
      ${props.dropSlot !== null && html`<div class="drop" aria-hidden="true" style=${{ top: `${props.dropSlot * ROW}px` }}></div>`}
      ${props.cards.length === 0 && props.loading === true && html`<p class="empty" role="status">Loading the issues…</p>`}
      ${props.cards.length === 0 && props.loading !== true && html`<p class="empty">${props.filtering ? 'No card here matches the filter.' : 'No issues here. Drag a card here, or focus one and press Shift with an arrow key.'}</p>`}
      ${props.footer}
    </div>`}
  </section>`
}
