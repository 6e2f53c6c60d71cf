/// <reference lib="dom" />
import { Component } from 'preact'
import { useEffect, useRef, useState } from 'preact/hooks'
import { html } from '../html.js'
import { columnTitles, isFiltering, issues, matcher, titleText, type Card as CardData, type Filter } from '../model.js'
import { CLOSED, mayChange, type Store } from '../store.js'
import { useArrivals } from './arrivals.js'
import { Card, type CardProps } from './card.js'
import { Column, ROW } from './column.js'

const MOVE_AFTER = 5 // pixels a pointer travels before a press becomes a drag
/** Titles taken into a column's index at a time while the page is idle (about a millisecond's worth). */
const INDEX_SLICE = 1000

export interface ShownColumn { id: string, name: string, cards: CardData[] }
interface Shown { inputs: unknown[], filter: Filter, columns: ShownColumn[] }
const lastShown = new WeakMap<Store, Shown>()

/**
 * The columns shown: each pipeline's cards that the filter keeps, then the Closed column. Made
 * again only when the cards, columns, relations or filter changed. A text filter reads each
 * column's title index (`columnTitles`): the matches come in the column's order, and only they are
 * tested for the rest of the filter.
 */
export function shownColumns (store: Store): ShownColumn[] {
  const { state } = store
  const inputs = [state.pipelines, state.columns, state.closed.keys, state.cards, state.relations, state.sprintIssues]
  const last = lastShown.get(store)
  const same = last !== undefined && inputs.every((v, i) => v === last.inputs[i])
  if (same && last.filter === state.filter) return last.columns
  const text = titleText(state.filter)
  const others = text === '' ? state.filter : { ...state.filter, text: '' }
  const test = isFiltering(others) ? matcher(others, state.relations, state.sprintIssues) : undefined
  const keep = (keys: string[]) => {
    if (text !== '') {
      const found = columnTitles(state.cards, keys).search(text)
      return test === undefined ? found : found.filter(test)
    }
    const kept: CardData[] = []
    for (const key of keys) {
      const card = state.cards.get(key)
      if (card !== undefined && (test === undefined || test(card))) kept.push(card)
    }
    return kept
  }
  const columns = [
    ...state.pipelines.map((p) => ({ id: p.id, name: p.name, cards: keep(state.columns[p.id] ?? []) })),
    { id: CLOSED, name: 'Closed', cards: keep(state.closed.keys) }
  ]
  lastShown.set(store, { inputs, filter: state.filter, columns })
  return columns
}

/** The board: a region named "Board" of columns; cards move by pointer (mouse, touch, pen) and by keys. */
export function Board ({ store }: { store: Store }) {
  const { state } = store
  const columns = shownColumns(store)
  /** Whether the person may move and estimate this card (read-only people see no controls for it). */
  const writable = (key: string): boolean => { const card = state.cards.get(key); return card === undefined || mayChange(state.account, card.repo) }
  const region = useRef<HTMLElement>(null)
  const press = useRef<{ key: string, x: number, y: number, id: number, el: HTMLElement, moved: boolean, ghost?: HTMLElement } | null>(null)
  const dragged = useRef(false)
  const [more, setMore] = useState(false)
  const epicName = (key: string) => {
    const epic = state.cards.get(key)
    return epic === undefined ? `#${key.split('#')[1]}` : `#${epic.number} ${epic.title}`
  }
  const showRepo = state.choice?.repo === null
  useArrivals(region, state.arrived)
  // The columns in view across the board draw spare rows above and below theirs (a vertical scroll
  // finds them drawn); the others, out of view to the right or left, only the rows of their own view:
  // on a wide board that is most of the cards a keystroke's filter draws (13 columns at 1,440 px, 5 in view).
  const [across, setAcross] = useState<ReadonlySet<string> | null>(null)
  const ids = columns.map((c) => c.id).join('\n')
  useEffect(() => {
    const el = region.current
    if (el === null || typeof IntersectionObserver !== 'function') return
    const observer = new IntersectionObserver((entries) => {
      setAcross((before) => {
        const now = new Set(before ?? [])
        for (const entry of entries) {
          const id = (entry.target as HTMLElement).dataset.pipeline
          if (id === undefined) continue
          if (entry.isIntersecting) now.add(id); else now.delete(id)
        }
        return now
      })
    }, { root: el })
    for (const section of Array.from(el.querySelectorAll('section.column'))) observer.observe(section)
    return () => observer.disconnect()
  }, [ids])
  // The columns' title indexes are made while the page is idle, a slice at a time (a long task
  // would hold up a scroll), not at the next keystroke.
  useEffect(() => {
    const cards = state.cards
    if (typeof requestIdleCallback !== 'function' || cards.size < 1000) return
    const lists = [...state.pipelines.map((p) => state.columns[p.id] ?? []), state.closed.keys]
    const slice = (deadline: IdleDeadline) => {
      for (const keys of lists) {
        const index = columnTitles(cards, keys)
        while (!index.done) {
          if (deadline.timeRemaining() < 2) {
            idle = requestIdleCallback(slice)
            return
          }
          index.extend(INDEX_SLICE)
        }
      }
    }
    let idle = requestIdleCallback(slice)
    return () => cancelIdleCallback(idle)
  }, [state.cards, state.columns, state.pipelines, state.closed.keys])
  useEffect(() => () => { press.current?.ghost?.remove() }, [])

  // Whether columns are cut off on the right: a hint says the board scrolls.
  useEffect(() => {
    const el = region.current
    if (el === null) return
    const check = () => setMore(el.scrollLeft + el.clientWidth < el.scrollWidth - 2)
    check()
    el.addEventListener('scroll', check, { passive: true })
    window.addEventListener('resize', check)
    return () => { el.removeEventListener('scroll', check); window.removeEventListener('resize', check) }
  })

  const where = (x: number, y: number, dragged: string): { pipeline: string, slot: number } | null => {
    for (const el of document.elementsFromPoint(x, y)) {
      const list = (el as HTMLElement).closest?.('.column')?.querySelector('ul.cards')
      if (list === null || list === undefined) continue
      const pipeline = (list as HTMLElement).dataset.pipeline!
      if (pipeline === CLOSED) return null
      const column = columns.find((c) => c.id === pipeline)!
      // The slot among all the cards drawn, then among the others: the dragged card leaves its own place.
      let slot = Math.max(0, Math.min(column.cards.length, Math.floor((y - list.getBoundingClientRect().top) / ROW + 0.5)))
      const own = column.cards.findIndex((c) => c.key === dragged)
      if (own >= 0 && own < slot) slot--
      return { pipeline, slot }
    }
    return null
  }

  const onPointerDown = (e: PointerEvent) => {
    const el = (e.target as HTMLElement).closest<HTMLElement>('li.card')
    if (el === null || e.button !== 0 || (e.target as HTMLElement).closest('button, input, a') !== null) return
    if (el.closest('ul.cards')?.getAttribute('data-pipeline') === CLOSED) return
    if (!writable(el.dataset.key!)) return
    press.current = { key: el.dataset.key!, x: e.clientX, y: e.clientY, id: e.pointerId, el, moved: false }
    el.setPointerCapture?.(e.pointerId)
  }
  const onPointerMove = (e: PointerEvent) => {
    const p = press.current
    if (p === null || e.pointerId !== p.id) return
    const dx = e.clientX - p.x
    const dy = e.clientY - p.y
    if (!p.moved && Math.hypot(dx, dy) < MOVE_AFTER) return
    e.preventDefault()
    p.moved = true
    p.ghost ??= ghostOf(p.el)
    p.ghost.style.transform = `translate(${dx}px, ${dy}px)`
    const target = where(e.clientX, e.clientY, p.key)
    store.set({ drag: { key: p.key, pipeline: target?.pipeline ?? null, slot: target?.slot ?? 0 } })
  }
  const onPointerUp = (e: PointerEvent) => {
    const p = press.current
    if (p === null || e.pointerId !== p.id) return
    press.current = null
    p.ghost?.remove()
    if (!p.moved) {
      store.set({ drag: null })
      return
    }
    const target = e.type === 'pointercancel' ? null : where(e.clientX, e.clientY, p.key)
    store.set({ drag: null })
    dragged.current = true
    if (target === null) {
      store.set({ focus: p.key })
      return
    }
    const column = columns.find((c) => c.id === target.pipeline)!
    store.move(p.key, target.pipeline, target.slot, column.cards.map((c) => c.key))
  }
  // A press that was a drag is not also a click that opens the panel.
  const onClick = (e: MouseEvent) => {
    const el = (e.target as HTMLElement).closest<HTMLElement>('li.card')
    if (el === null || (e.target as HTMLElement).closest('button, input, a') !== null) return
    if (dragged.current) {
      dragged.current = false
      return
    }
    store.set({ panel: el.dataset.key!, focus: el.dataset.key! })
  }

  const onKeyDown = (e: KeyboardEvent) => {
    const el = e.target as HTMLElement
    if (!el.matches?.('li.card')) return
    const key = el.dataset.key!
    const at = columns.findIndex((c) => c.cards.some((card) => card.key === key))
    if (at < 0) return
    const cards = columns[at].cards
    const index = cards.findIndex((c) => c.key === key)
    if (e.key === 'e' || e.key === 'E') {
      if (columns[at].id === CLOSED || !writable(key)) return
      e.preventDefault()
      store.set({ editing: key })
      return
    }
    if (e.key === 'Enter') {
      e.preventDefault()
      store.set({ panel: key, focus: key })
      return
    }
    const step = ({ ArrowUp: [0, -1], ArrowDown: [0, 1], ArrowLeft: [-1, 0], ArrowRight: [1, 0] } as Record<string, [number, number]>)[e.key]
    if (step === undefined) return
    e.preventDefault()
    const [dx, dy] = step
    // Collapsed columns are passed over.
    let to = at + dx
    if (dx !== 0) while (columns[to] !== undefined && state.collapsed.has(columns[to].id)) to += dx
    const target = columns[to]
    if (target === undefined) return
    const others = target.cards.filter((c) => c.key !== key)
    if (!e.shiftKey) {
      const next = dx === 0 ? cards[index + dy] : others[Math.min(index, others.length - 1)]
      if (next !== undefined) store.set({ focus: next.key })
      return
    }
    if (target.id === CLOSED || columns[at].id === CLOSED || !writable(key)) return
    const slot = dx === 0 ? index + dy : Math.min(index, others.length)
    if (slot < 0 || (dx === 0 && slot >= cards.length)) return
    store.move(key, target.id, slot, target.cards.map((c) => c.key))
  }

  // One of each for all the cards (they take the card's key), not three closures a card at each draw.
  const edit = (key: string, on: boolean) => store.set(on ? { editing: key } : { editing: null, focus: key })
  const estimate = async (key: string, value: number | null) => await store.setEstimate(key, value)
  const focus = (key: string) => { if (state.focus !== key) state.focus = key }

  const filtering = isFiltering(state.filter)
  // New issue where at least one repository of the board takes them.
  const canCreate = [...state.repos.keys()].some((id) => mayChange(state.account, id))
  return html`<div class="board-wrap">
    <section id="board" class="board" aria-label="Board" ref=${region}
      onPointerDown=${onPointerDown} onPointerMove=${onPointerMove} onPointerUp=${onPointerUp} onPointerCancel=${onPointerUp}
      onClick=${onClick} onKeyDown=${onKeyDown}>
      ${columns.map((column) => {
        const isClosed = column.id === CLOSED
        const dropSlot = state.drag !== null && state.drag.pipeline === column.id ? state.drag.slot : null
        const focusIndex = state.focus === null ? -1 : column.cards.findIndex((c) => c.key === state.focus)
        const collapsed = state.collapsed.has(column.id)
        const closedCount = isClosed && collapsed && !state.closed.loaded && state.closed.total !== null ? issues(state.closed.total) : undefined
        // The collapsed Closed column's count is read after the first rows: until then it says so, not "0 issues".
        const loading = isClosed ? collapsed && state.closed.counting === true && state.closed.total === null : state.phase === 'loading'
        const count = column.cards.length
        return html`<${Column} key=${column.id} id=${column.id} name=${column.name} cards=${column.cards} collapsed=${collapsed}
          loading=${loading} count=${closedCount} spare=${across === null || across.has(column.id) ? 6 : 0}
          filtering=${filtering} dropSlot=${dropSlot} focusIndex=${focusIndex} onToggle=${() => store.toggleCollapsed(column.id)}
          footer=${isClosed && closedFooter(store)} onNew=${isClosed || !canCreate ? undefined : () => store.set({ creating: column.id })}
          renderCard=${(card: CardData, index: number, top: number) => html`<${BoardCard} key=${card.key} card=${card} repo=${state.repos.get(card.repo)}
            showRepo=${showRepo} relations=${state.relations} epicName=${epicName} top=${top} index=${index} count=${count}
            focused=${state.focus === card.key} editing=${state.editing === card.key} dragging=${state.drag?.key === card.key}
            editable=${mayChange(state.account, card.repo)} edit=${edit} estimate=${estimate} onSay=${store.say} focus=${focus} />`} />`
      })}
    </section>
    ${more && html`<button type="button" class="scroll-hint" onClick=${() => region.current?.scrollBy({ left: region.current.clientWidth * 0.8, behavior: 'smooth' })}>More columns →</button>`}
  </div>`
}

type BoardCardProps = Omit<CardProps, 'onEdit' | 'onEstimate' | 'onFocus'> & {
  edit: (key: string, on: boolean) => void
  estimate: (key: string, value: number | null) => Promise<boolean>
  focus: (key: string) => void
}

/**
 * A card of the board, drawn again only when a prop changed. A scroll step draws its column's
 * rows again with the same props (a row's place is its index's), and only the rows it brings into
 * view are new: the others are not diffed, nor their closures and vnodes made again.
 */
class BoardCard extends Component<BoardCardProps> {
  override shouldComponentUpdate (next: BoardCardProps): boolean {
    const now = this.props as unknown as Record<string, unknown>
    for (const name in next) if ((next as unknown as Record<string, unknown>)[name] !== now[name]) return true
    return false
  }

  override render (props: BoardCardProps) {
    const { edit, estimate, focus, ...rest } = props
    const key = props.card.key
    return html`<${Card} ...${rest} onEdit=${(on: boolean) => edit(key, on)} onEstimate=${async (value: number | null) => await estimate(key, value)}
      onFocus=${() => focus(key)} />`
  }
}

/**
 * What follows the pointer during a drag: a copy of the card fixed to the viewport, so no column's
 * scrolling box clips it; the card itself stays in its place, faded, until it is dropped.
 */
function ghostOf (card: HTMLElement): HTMLElement {
  const box = card.getBoundingClientRect()
  const ghost = document.createElement('div')
  ghost.className = `${card.className} drag-ghost`
  ghost.setAttribute('aria-hidden', 'true')
  card.childNodes.forEach((child) => ghost.append(child.cloneNode(true)))
  Object.assign(ghost.style, { left: `${box.left}px`, top: `${box.top}px`, width: `${box.width}px`, height: `${box.height}px` })
  document.body.append(ghost)
  return ghost
}

function closedFooter (store: Store) {
  const { closed } = store.state
  if (closed.loading) return html`<p class="empty">Loading closed issues…</p>`
  if (!closed.loaded) return null
  const more = [...closed.next.values()].some((n) => n != null)
  return more ? html`<button type="button" class="more" onClick=${() => { store.loadClosed() }}>Show more closed issues</button>` : null
}
