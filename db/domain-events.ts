import type { Static } from '@sinclair/typebox'
import type { AdminRepository } from '../schemas/admin.js'
import { EXTENSION_EVENT_TYPES, LEGACY_EVENT_TYPES } from '../schemas/webhooks.js'
import type { Executor } from './schema.js'

export { EXTENSION_EVENT_TYPES, LEGACY_EVENT_TYPES }
type Repository = Static<typeof AdminRepository>

interface IssueContext {
  repo: Repository
  issue: { id: number, number: number, title: string }
  user: { id: number, login: string }
}

export type DomainEvent = IssueContext & (
  | { type: 'issue_transfer', workspace: { id: string, name: string }, from: string, to: string }
  | {
    type: 'issue_reprioritized'
    workspace: { id: string, name: string }
    pipeline: string
    /** 0-based indexes in the pipeline before and after */
    from: number
    to: number
  }
  | { type: 'estimate_set', estimate: number }
  | { type: 'estimate_cleared' }
  // Extensions, sent only to webhooks that ask for them (docs/extensions.md).
  | { type: 'epic_issue_added' | 'epic_issue_removed', child: { repo_id: number, issue_number: number } }
  | { type: 'dependency_created' | 'dependency_removed', blocking: { repo_id: number, issue_number: number }, blocked: { repo_id: number, issue_number: number } }
  | { type: 'issue_opened' | 'issue_closed' | 'issue_reopened' }
  | { type: 'issue_labeled' | 'issue_unlabeled', label: string }
  | { type: 'issue_assigned' | 'issue_unassigned', assignee: string }
  | { type: 'sprint_issue_added' | 'sprint_issue_removed', workspace: { id: string, name: string }, sprint: SprintRef, carried: boolean }
) | ReleaseEvent | SprintEvent

/** What sprint events say about their sprint. */
export interface SprintRef { id: string, name: string, starts_at: string, ends_at: string }

/** A sprint started or ended: sent for each repository of its workspace, with no issue of its own. */
export interface SprintEvent {
  type: 'sprint_started' | 'sprint_ended'
  repo: Repository
  user: { id: number, login: string }
  workspace: { id: string, name: string }
  sprint: SprintRef
}

/** A release report changed: sent for each of its repositories, with no issue of its own. */
export interface ReleaseEvent {
  type: 'release_report_changed'
  repo: Repository
  user: { id: number, login: string }
  release: { id: string, title: string, state: string }
  change: 'created' | 'updated' | 'issues_changed' | 'repository_added' | 'repository_removed'
}

export type EventType = DomainEvent['type']

/** Who did it, for events the issue host caused (no user of ours acted). */
export const NOBODY = { id: 0, login: '' }

/** Runs inside the writing transaction, with it. */
export type DomainEventListener = (trx: Executor, event: DomainEvent) => Promise<void>

/**
 * Tells whether a listener needs events of this type for this repository. Events that cost extra
 * queries to describe (issue_reprioritized counts positions) are only built when someone wants them.
 */
export type DomainEventFilter = (trx: Executor, type: DomainEvent['type'], repoId: number) => Promise<boolean>

/**
 * Board and estimate changes announce themselves here. Listeners run inside the writing
 * transaction, so whatever they write (webhook deliveries) commits or rolls back with it.
 */
export class DomainEvents {
  private readonly listeners: Array<{ listener: DomainEventListener, wants: DomainEventFilter }> = []

  subscribe (listener: DomainEventListener, wants: DomainEventFilter = async () => true): () => void {
    const entry = { listener, wants }
    this.listeners.push(entry)
    return () => {
      const i = this.listeners.indexOf(entry)
      if (i >= 0) this.listeners.splice(i, 1)
    }
  }

  async wants (trx: Executor, type: DomainEvent['type'], repoId: number): Promise<boolean> {
    for (const l of this.listeners) if (await l.wants(trx, type, repoId)) return true
    return false
  }

  async emit (trx: Executor, event: DomainEvent): Promise<void> {
    for (const { listener, wants } of this.listeners) if (await wants(trx, event.type, event.repo.id)) await listener(trx, event)
  }
}
