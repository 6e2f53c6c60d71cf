/** The value at fraction `p` (0.5, 0.99) of an ascending list. */
export function percentile (sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))]
}

/** A deterministic pseudo-random sequence in [0, 1), so every run makes the same choices. */
export function random (seed: number): () => number {
  let state = seed
  return () => {
    // In 32-bit integer arithmetic: a double would round the product and fall into a short cycle.
    state = (Math.imul(state, 1103515245) + 12345) & 0x7fffffff
    return state / 2147483648
  }
}
