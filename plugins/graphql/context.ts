import type { FastifyRequest } from 'fastify'
import type { GraphReads } from '../../db/graph-reads.js'
import type { PlanningStore } from '../../db/store.js'
import type { User } from '../../db/users.js'
import type { PlanningAuth } from '../core/auth.js'
import type { HostIssues } from '../../services/host-issues.js'

/** What every resolver gets: the signed-in user from the auth hook, what they can read, the store. */
export interface GraphContext {
  request: FastifyRequest
  user: User
  /** repositories the user can read */
  readable: Set<number>
  store: PlanningStore
  reads: GraphReads
  auth: PlanningAuth
  /** issue writes that go to the issue host first (the REST API's two-way sync endpoints) */
  hostIssues: HostIssues
  /** the time: resolvers read it here only, so an answer that depends on it is never kept (answer-cache.ts) */
  now: () => number
  /** set when `now` was read */
  clockRead?: boolean
  /** an absolute address of this server for a path under its prefix (PUBLIC_URL, else the request's own) */
  address: (path: string) => string
  /** set when a mutation's field ran */
  wrote?: boolean
  /** set when the answer shows what changes without moving the change counter (the viewer's recent workspaces) */
  unkept?: boolean
  /** the viewer's favorites as read (db/workspace-favorites.ts `favoritesStamp`): a kept answer is sent again only while they are the same */
  favorites?: string
  /** workspaces `workspace(id)` opened: recorded as viewed again whenever a kept answer of this document is sent */
  viewed?: string[]
}
