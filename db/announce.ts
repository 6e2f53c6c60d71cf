import { NOBODY, type DomainEvent, type DomainEvents } from './domain-events.js'
import type { Static } from '@sinclair/typebox'
import type { AdminRepository } from '../schemas/admin.js'
import type { Executor } from './engine/transaction.js'
import type { User } from './users.js'

type Repository = Static<typeof AdminRepository>

/** An issue with its repository, as events describe it. */
export interface IssueContext { repo: Repository, issue: { id: number, number: number, title: string } }

/** The context from a row of an issue joined with its repository. */
export function contextOf (row: { id: number, number: number, title: string, repo_id: number, owner: string, name: string, html_url: Repository['html_url'] }): IssueContext {
  return {
    repo: { id: Number(row.repo_id), owner: row.owner, name: row.name, html_url: row.html_url },
    issue: { id: Number(row.id), number: Number(row.number), title: row.title }
  }
}

export async function issueContext (trx: Executor, issueId: number): Promise<IssueContext> {
  return contextOf(await trx.selectFrom('issues as i').innerJoin('repositories as r', 'r.id', 'i.repo_id')
    .select(['i.id', 'i.number', 'i.title', 'r.id as repo_id', 'r.owner', 'r.name', 'r.html_url'])
    .where('i.id', '=', issueId).executeTakeFirstOrThrow())
}

/** Emits inside the transaction when someone listens (webhooks); `user` absent: the issue host did it. */
export async function announce (trx: Executor, events: DomainEvents | undefined, event: DomainEvent): Promise<void> {
  if (events !== undefined && await events.wants(trx, event.type, event.repo.id)) await events.emit(trx, event)
}

export const actor = (user?: User): User => user ?? NOBODY
