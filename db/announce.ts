import { NOBODY, type DomainEvent, type DomainEvents } from './domain-events.js'
import type { Repository } from './repositories.js'
import type { Executor } from './transaction.js'
import type { User } from './users.js'

/** An issue with its repository, as events describe it. */
export async function issueContext (trx: Executor, issueId: number): Promise<{ repo: Repository, issue: { id: number, number: number, title: string } }> {
  const row = await trx.selectFrom('issues as i').innerJoin('repositories as r', 'r.id', 'i.repo_id')
    .select(['i.id', 'i.number', 'i.title', 'r.id as repo_id', 'r.owner', 'r.name', 'r.html_url'])
    .where('i.id', '=', issueId).executeTakeFirstOrThrow()
  return {
    repo: { id: Number(row.repo_id), owner: row.owner, name: row.name, html_url: row.html_url },
    issue: { id: Number(row.id), number: Number(row.number), title: row.title }
  }
}

/** Emits inside the transaction when someone listens (webhooks); `user` absent: the issue host did it. */
export async function announce (trx: Executor, events: DomainEvents | undefined, event: DomainEvent): Promise<void> {
  if (events !== undefined && await events.wants(trx, event.type, event.repo.id)) await events.emit(trx, event)
}

export const actor = (user?: User): User => user ?? NOBODY
