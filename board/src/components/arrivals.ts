/// <reference lib="dom" />
import { useLayoutEffect, useRef } from 'preact/hooks'
import { beforeFrame } from '../frame.js'

/** How long a card moved by someone else takes to glide into its new place. */
export const GLIDE_MS = 300

/**
 * Cards moved by someone else glide from where they were to where they are now (first, last,
 * invert, play): after each render the drawn cards' places are kept, by key, relative to the
 * board's content; when `arrived` changes (a refresh brought other columns), each card drawn
 * before and after whose place changed is animated from the old place. Nothing moves for people
 * who ask for reduced motion.
 */
export function useArrivals (region: { current: HTMLElement | null }, arrived: number): void {
  const places = useRef(new Map<string, { x: number, y: number }>())
  const seen = useRef(arrived)
  useLayoutEffect(() => {
    const glide = seen.current !== arrived && !window.matchMedia('(prefers-reduced-motion: reduce)').matches
    seen.current = arrived
    // Other draws (a keystroke's) keep the places before the next frame, not within the draw.
    if (!glide) return beforeFrame(() => { keep(false) })
    keep(true)
  })
  function keep (glide: boolean) {
    const el = region.current
    if (el === null) return
    const origin = el.getBoundingClientRect()
    const now = new Map<string, { x: number, y: number }>()
    for (const card of Array.from(el.querySelectorAll<HTMLElement>('li.card[data-key]'))) {
      const rect = card.getBoundingClientRect()
      const place = { x: rect.left - origin.left + el.scrollLeft, y: rect.top - origin.top }
      const key = card.dataset.key!
      now.set(key, place)
      const before = places.current.get(key)
      if (!glide || before === undefined || (before.x === place.x && before.y === place.y)) continue
      card.animate([{ transform: `translate(${before.x - place.x}px, ${before.y - place.y}px)` }, { transform: 'none' }], { duration: GLIDE_MS, easing: 'ease-out' })
    }
    places.current = now
  }
}
