/// <reference lib="dom" />
// Reads of the page's layout, put off until just before the next frame and made together: the
// first lays the page out, which the frame would do anyway, and the rest read it as it is. Made
// where they are asked for (after a keystroke's or a scroll's draw), each would lay it out again.

const measures = new Set<() => void>()

/** Runs `measure` before the next frame, with the others asked for meanwhile; the answer cancels it. */
export function beforeFrame (measure: () => void): () => void {
  if (measures.size === 0) {
    requestAnimationFrame(() => {
      const now = [...measures]
      measures.clear()
      for (const m of now) m()
    })
  }
  measures.add(measure)
  return () => { measures.delete(measure) }
}
