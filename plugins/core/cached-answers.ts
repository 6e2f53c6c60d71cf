import { CommittedWrites } from './committed-writes.js'

/**
 * A kept answer: its bytes and tag, good at change-counter `version`; `repoId` is the repository
 * whose data it shows (undefined: any write may change it); `boardRowsOnly`, that it shows only
 * that repository's board rows (a whole board); `viewed`, the workspaces a GraphQL answer opened
 * (recorded as viewed each time it is sent).
 */
export interface Entry {
  version: number
  body: Buffer
  etag: string
  bytes: number
  repoId?: number
  boardRowsOnly?: boolean
  viewed?: readonly string[]
  favorites?: string
}

/** What an entry costs beyond its bytes and key: the entry object, its tag, the map's slot. */
export const ENTRY_OVERHEAD = 256

/** Counted since start-up, shown at /metrics (README, "Health, metrics and CORS"). */
export interface ReadCacheStats {
  hits: number
  misses: number
  evictions: number
  /** hits answered before routing (docs/development.md, "Reads answered before routing") */
  beforeRouting: number
  /** what the entries held now cost, by the estimate the bound uses */
  bytes: number
  entries: number
  /** the bound, READ_CACHE_MB in bytes */
  limit: number
}

/**
 * Answer bytes by key, least recently used out first once their cost would pass `limit` bytes
 * (each entry's bytes, key and a fixed overhead). An answer bigger than the whole bound is not kept.
 */
export class ReadCache {
  private readonly entries = new Map<string, Entry>()
  private newest: string | undefined
  readonly stats: ReadCacheStats
  /** the writes noted here (this process's, and others' heard): an answer they all left alone still holds at a later version */
  readonly writes: CommittedWrites

  constructor (limit: number, writes = new CommittedWrites()) {
    this.writes = writes
    this.stats = { hits: 0, misses: 0, evictions: 0, beforeRouting: 0, bytes: 0, entries: 0, limit }
  }

  /**
   * The entry under `key` if it holds at `version`: made at it, or made earlier for a repository
   * that no write since touched, or (a board's) whose board rows none changed (it is then marked
   * good at `version`). A hit makes it the most recently used.
   */
  get (key: string, version: number | undefined): Entry | undefined {
    const entry = this.entries.get(key)
    if (entry === undefined || version === undefined) return undefined
    if (entry.version !== version) {
      const { repoId } = entry
      if (repoId === undefined) return undefined
      const holds = this.writes.leftAlone(repoId, entry.version, version) ||
        (entry.boardRowsOnly === true && this.writes.boardRows(repoId, entry.version, version)?.size === 0)
      if (!holds) return undefined
      entry.version = version
    }
    if (this.newest !== key) {
      this.entries.delete(key)
      this.entries.set(key, entry)
      this.newest = key
    }
    return entry
  }

  /** Whatever is under `key`, at any version, without touching the order. */
  peek (key: string): Entry | undefined {
    return this.entries.get(key)
  }

  set (key: string, entry: Entry): void {
    this.delete(key)
    if (entry.bytes > this.stats.limit) return
    while (this.stats.bytes + entry.bytes > this.stats.limit) {
      const oldest = this.entries.keys().next().value!
      this.delete(oldest)
      this.stats.evictions++
    }
    this.entries.set(key, entry)
    this.newest = key
    this.stats.bytes += entry.bytes
    this.stats.entries++
  }

  private delete (key: string): void {
    const entry = this.entries.get(key)
    if (entry === undefined) return
    this.entries.delete(key)
    if (this.newest === key) this.newest = undefined
    this.stats.bytes -= entry.bytes
    this.stats.entries--
  }
}
