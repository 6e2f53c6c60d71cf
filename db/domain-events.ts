import type { Repository } from './repositories.js'

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
)

export type DomainEventListener = (event: DomainEvent) => void

/**
 * Tells whether a listener needs events of this type for this repository. Events that cost extra
 * queries to describe (issue_reprioritized counts positions) are only built when someone wants them.
 */
export type DomainEventFilter = (type: DomainEvent['type'], repoId: number) => boolean

/**
 * Board and estimate changes announce themselves here. Listeners run synchronously inside the
 * writing transaction, so whatever they write (webhook deliveries) commits or rolls back with it.
 */
export class DomainEvents {
  private readonly listeners: Array<{ listener: DomainEventListener, wants: DomainEventFilter }> = []

  subscribe (listener: DomainEventListener, wants: DomainEventFilter = () => true): () => void {
    const entry = { listener, wants }
    this.listeners.push(entry)
    return () => {
      const i = this.listeners.indexOf(entry)
      if (i >= 0) this.listeners.splice(i, 1)
    }
  }

  wants (type: DomainEvent['type'], repoId: number): boolean {
    return this.listeners.some((l) => l.wants(type, repoId))
  }

  emit (event: DomainEvent): void {
    for (const { listener, wants } of this.listeners) if (wants(event.type, event.repo.id)) listener(event)
  }
}
