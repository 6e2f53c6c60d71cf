/** Versions remembered; a cached answer further behind than this is built again. */
const REMEMBERED = 1024

/**
 * The writes this process committed, by the counter value each left, with the repositories each
 * was confined to (null: anything). A version not here was written elsewhere (another instance,
 * the admin CLI) or not yet noted, and may have changed anything.
 */
export class CommittedWrites {
  private readonly writes = new Map<number, readonly number[] | null>()

  note (version: number, repositories: readonly number[] | undefined): void {
    this.writes.set(version, repositories ?? null)
    if (this.writes.size > REMEMBERED) this.writes.delete(this.writes.keys().next().value!)
  }

  /** Whether every write after `from` up to `to` is known here and was confined to some repositories. */
  confined (from: number, to: number): boolean {
    if (to <= from || to - from > REMEMBERED) return false
    for (let v = from + 1; v <= to; v++) if ((this.writes.get(v) ?? null) === null) return false
    return true
  }

  /** Whether every write after `from` up to `to` is known here and left repository `repoId` alone. */
  leftAlone (repoId: number, from: number, to: number): boolean {
    if (to <= from || to - from > REMEMBERED) return false
    for (let v = from + 1; v <= to; v++) {
      const repositories = this.writes.get(v)
      if (repositories === undefined || repositories === null || repositories.includes(repoId)) return false
    }
    return true
  }
}
