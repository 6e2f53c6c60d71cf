/**
 * One pipeline's open issues of one repository in board order (rank, then issue id), as they
 * stood at one change-counter version: an order-statistic view for moves, so finding the k-th
 * issue or an issue's index is a lookup or a binary search instead of a scan of k rows.
 */
export class PipelineOrder {
  constructor (public version: number, private readonly ranks: number[], private readonly ids: number[]) {}

  get size (): number {
    return this.ids.length
  }

  rankAt (index: number): number {
    return this.ranks[index]
  }

  /** How many issues come before (rank, id) in board order. */
  before (rank: number, id: number): number {
    let low = 0
    let high = this.ids.length
    while (low < high) {
      const mid = (low + high) >>> 1
      if (this.ranks[mid] < rank || (this.ranks[mid] === rank && this.ids[mid] < id)) low = mid + 1
      else high = mid
    }
    return low
  }

  /** The index of the issue at (rank, id), or -1 when it is not here. */
  indexOf (rank: number, id: number): number {
    const at = this.before(rank, id)
    return this.ids[at] === id ? at : -1
  }

  /** How many issues have a rank below `rank`. */
  below (rank: number): number {
    return this.before(rank, Number.NEGATIVE_INFINITY)
  }

  /** Takes the issue at `from` out (if any), puts the issue in at (rank, id) if given, and moves to `version`. */
  move (version: number, from: number, to?: { rank: number, id: number }): void {
    if (from >= 0) {
      this.ranks.splice(from, 1)
      this.ids.splice(from, 1)
    }
    if (to !== undefined) {
      const at = this.before(to.rank, to.id)
      this.ranks.splice(at, 0, to.rank)
      this.ids.splice(at, 0, to.id)
    }
    this.version = version
  }
}

/**
 * The orders of the pipelines moved in lately, at most `capacity`, each good only at the version
 * it was read or moved at: any other write (here, in another process or instance) moves the
 * change counter and the next move in that pipeline reads it again.
 */
export class PipelineOrders {
  private readonly orders = new Map<string, PipelineOrder>()

  constructor (private readonly capacity = 64) {}

  get (key: string, version: number): PipelineOrder | undefined {
    const order = this.orders.get(key)
    return order?.version === version ? order : undefined
  }

  set (key: string, order: PipelineOrder): void {
    this.orders.delete(key)
    if (this.orders.size >= this.capacity) this.orders.delete(this.orders.keys().next().value!)
    this.orders.set(key, order)
  }

  delete (key: string): void {
    this.orders.delete(key)
  }

  /** Every order good at `version` is good at `next` too (a write that changed none of them). */
  carry (version: number, next: number): void {
    for (const order of this.orders.values()) if (order.version === version) order.version = next
  }
}
