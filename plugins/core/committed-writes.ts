/** Versions remembered; a cached answer further behind than this is built again. */
const REMEMBERED = 1024

/** A noted write: the repositories it was confined to (null: anything) and the issues whose board rows it changed (null: not said). */
interface Noted { repositories: readonly number[] | null, boardRows: readonly number[] | null }

const ANYTHING: Noted = { repositories: null, boardRows: null }

/**
 * The writes this process committed, and those other instances said they made (heard on
 * PostgreSQL with their versions), by the counter value each left, with the repositories each was
 * confined to (null: anything). A version not here was written where nobody said (the admin CLI,
 * an older instance, a dependency insert on another instance, any other instance's write when the
 * counter is not watched) or not yet noted, and may have changed anything.
 */
export class CommittedWrites {
  private readonly writes = new Map<number, Noted>()

  note (version: number, repositories: readonly number[] | undefined, boardRows?: readonly number[]): void {
    this.writes.set(version, repositories === undefined ? ANYTHING : { repositories, boardRows: boardRows ?? null })
    if (this.writes.size > REMEMBERED) this.writes.delete(this.writes.keys().next().value!)
  }

  /**
   * What the write at `version` said it reached, heard from the counter's trigger (another
   * instance's, or this one's own write heard back: the same). It replaces what was noted for that
   * value before, which after the counter was set back (a restore) was another write.
   */
  heard (version: number, repositories: readonly number[], boardRows: readonly number[] | undefined): void {
    this.writes.delete(version)
    this.note(version, repositories, boardRows)
  }

  /** Forgets every write noted: after the counter was set back, the versions they name are other writes'. */
  forget (): void {
    this.writes.clear()
  }

  /** Whether every write after `from` up to `to` is known here and was confined to some repositories. */
  confined (from: number, to: number): boolean {
    if (to <= from || to - from > REMEMBERED) return false
    for (let v = from + 1; v <= to; v++) if ((this.writes.get(v)?.repositories ?? null) === null) return false
    return true
  }

  /** Whether every write after `from` up to `to` is known here and left repository `repoId` alone. */
  leftAlone (repoId: number, from: number, to: number): boolean {
    if (to <= from || to - from > REMEMBERED) return false
    for (let v = from + 1; v <= to; v++) {
      const repositories = this.writes.get(v)?.repositories
      if (repositories === undefined || repositories === null || repositories.includes(repoId)) return false
    }
    return true
  }

  /**
   * The issues whose board rows in repository `repoId` the writes after `from` up to `to` may have
   * changed, when every one of them is known here and either left the repository alone or said
   * which rows it changed; undefined otherwise (the board must be read whole).
   */
  boardRows (repoId: number, from: number, to: number): Set<number> | undefined {
    if (to < from || to - from > REMEMBERED) return undefined
    const rows = new Set<number>()
    for (let v = from + 1; v <= to; v++) {
      const noted = this.writes.get(v)
      if (noted === undefined || noted.repositories === null) return undefined
      if (!noted.repositories.includes(repoId)) continue
      if (noted.boardRows === null) return undefined
      for (const id of noted.boardRows) rows.add(id)
    }
    return rows
  }
}
