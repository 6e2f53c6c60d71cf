import { Kind, type GraphQLResolveInfo, type SelectionSetNode } from 'graphql'
import { Invalid } from '../../db/errors.js'
import type { IssueKey } from '../../db/graph-reads.js'

/** Relay connection arguments as every list field takes them. */
export interface PageArgs { first?: number | null, last?: number | null, after?: string | null, before?: string | null }

export const DEFAULT_PAGE = 100
export const MAX_PAGE = 100

export interface Page<K> { limit: number, after?: K, before?: K, fromEnd: boolean }

/** The page asked for: `first` (default 100) from the start or after a cursor, or `last` from the end or before one. */
export function pageOf<K> (args: PageArgs, decode: (cursor: string) => K): Page<K> {
  for (const name of ['first', 'last'] as const) {
    const value = args[name]
    if (value !== undefined && value !== null && (value < 0 || value > MAX_PAGE)) throw new Invalid(`${name} must be between 0 and ${MAX_PAGE}`)
  }
  const fromEnd = args.first == null && args.last != null
  return {
    limit: (fromEnd ? args.last : args.first) ?? DEFAULT_PAGE,
    after: args.after == null ? undefined : decode(args.after),
    before: args.before == null ? undefined : decode(args.before),
    fromEnd
  }
}

const badCursor = () => new Invalid('the cursor is not one this server handed out')

export function issueCursor (key: IssueKey): string {
  return Buffer.from(JSON.stringify([key.k, key.id])).toString('base64url')
}
export function issueKeyOf (cursor: string): IssueKey {
  try {
    const value: unknown = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'))
    if (Array.isArray(value) && value.length === 2 && (typeof value[0] === 'number' || typeof value[0] === 'string') && Number.isSafeInteger(value[1])) {
      return { k: value[0], id: value[1] as number }
    }
  } catch {}
  throw badCursor()
}

export interface Connection<T> {
  nodes: T[]
  edges: Array<{ cursor: string, node: T }>
  pageInfo: { hasNextPage: boolean, hasPreviousPage: boolean, startCursor: string | null, endCursor: string | null }
  totalCount: number
}

/** A connection of a page already read: `more` says whether rows lie beyond it in its direction. */
export function connectionOf<T> (rows: T[], cursorOf: (row: T) => string, page: Page<unknown>, more: boolean, totalCount: number): Connection<T> {
  const edges = rows.map((node) => ({ cursor: cursorOf(node), node }))
  return {
    nodes: rows,
    edges,
    pageInfo: {
      hasNextPage: page.fromEnd ? page.before !== undefined : more,
      hasPreviousPage: page.fromEnd ? more : page.after !== undefined,
      startCursor: edges[0]?.cursor ?? null,
      endCursor: edges.at(-1)?.cursor ?? null
    },
    totalCount
  }
}

/**
 * A connection over a short list read whole (pipelines, repositories, sprints, workspaces): the
 * cursor is the item's own key, so a page stays where it was when items come or go before it.
 */
export function listConnection<T> (items: T[], keyOf: (item: T) => string, args: PageArgs): Connection<T> {
  const page = pageOf(args, (cursor) => {
    const key = Buffer.from(cursor, 'base64url').toString('utf8')
    if (!key.startsWith('k:')) throw badCursor()
    return key.slice(2)
  })
  const indexOf = (key: string) => {
    const at = items.findIndex((item) => keyOf(item) === key)
    if (at === -1) throw new Invalid('the cursor names an item that is no longer in the list')
    return at
  }
  let start = page.after === undefined ? 0 : indexOf(page.after) + 1
  let end = page.before === undefined ? items.length : indexOf(page.before)
  if (page.fromEnd) start = Math.max(start, end - page.limit)
  else end = Math.min(end, start + page.limit)
  const rows = items.slice(start, Math.max(start, end))
  const more = page.fromEnd ? start > 0 : end < items.length
  return connectionOf(rows, (item) => Buffer.from(`k:${keyOf(item)}`).toString('base64url'), page, more, items.length)
}

/**
 * Whether the resolving field's selection names one of `fields` (directly, or through fragments
 * and inline fragments; `@skip` and `@include` are not evaluated: a skipped field counts as asked).
 */
export function asks (info: GraphQLResolveInfo, fields: string[]): boolean {
  const within = (set: SelectionSetNode | undefined, seen: Set<string>): boolean => (set?.selections ?? []).some((sel) => {
    if (sel.kind === Kind.FIELD) return fields.includes(sel.name.value)
    if (sel.kind === Kind.INLINE_FRAGMENT) return within(sel.selectionSet, seen)
    if (seen.has(sel.name.value)) return false
    return within(info.fragments[sel.name.value]?.selectionSet, new Set([...seen, sel.name.value]))
  })
  return info.fieldNodes.some((node) => within(node.selectionSet, new Set()))
}

/** The fields asked of a connection's nodes, in `nodes { … }` and `edges { node { … } }` (fragments followed). */
export function nodeFields (info: GraphQLResolveInfo): Set<string> {
  const out = new Set<string>()
  const walk = (set: SelectionSetNode | undefined, path: string[], seen: Set<string>): void => {
    for (const sel of set?.selections ?? []) {
      if (sel.kind === Kind.INLINE_FRAGMENT) walk(sel.selectionSet, path, seen)
      else if (sel.kind === Kind.FRAGMENT_SPREAD) {
        if (!seen.has(sel.name.value)) walk(info.fragments[sel.name.value]?.selectionSet, path, new Set([...seen, sel.name.value]))
      } else if (path.length === 0) out.add(sel.name.value)
      else if (sel.name.value === path[0]) walk(sel.selectionSet, path.slice(1), seen)
    }
  }
  for (const node of info.fieldNodes) {
    walk(node.selectionSet, ['nodes'], new Set())
    walk(node.selectionSet, ['edges', 'node'], new Set())
  }
  return out
}
