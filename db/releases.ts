import { sql } from 'kysely'
import type { Static } from '../schemas/common.js'
import type { CreateReleaseBody, ReleaseReport as ReleaseReportSchema, ReleaseReportSummary, UpdateReleaseBody, UpdateReleaseIssuesReply } from '../schemas/releases.js'
import { actor, announce } from './announce.js'
import type { DomainEvents, ReleaseEvent } from './domain-events.js'
import { lockFor } from './engine/engine.js'
import { recordReleaseChange } from './history.js'
import { touchPlanning } from './repositories.js'
import type { User } from './users.js'
import { Invalid, NotFound } from './errors.js'
import { checkReportSpan } from './report-span.js'
import { newObjectId, nowIso } from './ids.js'
import { refKey, refuseOverlap, resolveRefs, toRef, type IssueRef, type ResolvedIssue } from './issue-refs.js'
import { writeTransaction, type Executor } from './engine/transaction.js'

export type ReleaseSummary = Static<typeof ReleaseReportSummary>
export type ReleaseReport = Static<typeof ReleaseReportSchema>
export type NewRelease = Omit<Static<typeof CreateReleaseBody>, 'repositories'>
export type ReleaseChange = Static<typeof UpdateReleaseBody>
type UpdateIssuesReply = Static<typeof UpdateReleaseIssuesReply>

const COLUMNS = ['id', 'title', 'description', 'start_date', 'desired_end_date', 'created_at', 'closed_at', 'state'] as const
type Row = { id: string } & Omit<ReleaseSummary, 'release_id'>

const toReport = (row: Row): ReleaseSummary => ({
  release_id: row.id,
  title: row.title,
  description: row.description,
  start_date: row.start_date,
  desired_end_date: row.desired_end_date,
  created_at: row.created_at,
  closed_at: row.closed_at,
  state: row.state
})

const iso = (value: string): string => new Date(value).toISOString()

function checkDates (start: string, end: string): void {
  if (Date.parse(end) < Date.parse(start)) throw new Invalid('desired_end_date must not be before start_date')
  checkReportSpan(Date.parse(start), Date.parse(end), 'the release report (start_date to desired_end_date)')
}

/** Release reports over one or more repositories, with the issues planned for them. */
export function createReleasesRepository (db: Executor, events?: DomainEvents) {
  /** Announces a change in each of the report's repositories. */
  const changed = async (trx: Executor, id: string, change: ReleaseEvent['change'], user?: User, also: number[] = []): Promise<void> => {
    if (events === undefined) return
    const report = await requireReport(trx, id)
    const repos = await trx.selectFrom('repositories').select(['id', 'owner', 'name', 'html_url'])
      .where('id', 'in', [...new Set([...await reposOf(trx, id), ...also])]).execute()
    for (const repo of repos) {
      await announce(trx, events, { type: 'release_report_changed', repo: { ...repo, id: Number(repo.id) }, user: actor(user), release: { id, title: report.title, state: report.state }, change })
    }
  }

  const requireReport = async (trx: Executor, id: string): Promise<Row> => {
    const row = await trx.selectFrom('release_reports').select(COLUMNS).where('id', '=', id).executeTakeFirst()
    if (row === undefined) throw new NotFound(`release report ${id} not found`)
    return row
  }
  const reposOf = async (trx: Executor, id: string): Promise<number[]> =>
    (await trx.selectFrom('release_report_repositories').select('repo_id').where('release_id', '=', id).orderBy('repo_id').execute()).map((r) => Number(r.repo_id))
  const withRepositories = async (trx: Executor, id: string): Promise<ReleaseReport> =>
    ({ ...toReport(await requireReport(trx, id)), repositories: await reposOf(trx, id) })
  const addRepo = async (trx: Executor, id: string, repoId: number): Promise<void> => {
    await trx.insertInto('release_report_repositories').values({ release_id: id, repo_id: repoId })
      .onConflict((oc) => oc.columns(['release_id', 'repo_id']).doNothing()).execute()
  }

  return {
    /** The report's repositories, or a 404 when there is no such report. */
    async repositoriesOf (id: string): Promise<number[]> {
      await requireReport(db, id)
      return await reposOf(db, id)
    },

    get: async (id: string) => await withRepositories(db, id),

    /** Reports holding the repository, oldest first, without their repositories. */
    async listForRepository (repoId: number): Promise<ReleaseSummary[]> {
      const rows = await db.selectFrom('release_reports as r').innerJoin('release_report_repositories as rr', 'rr.release_id', 'r.id')
        .select(COLUMNS.map((c) => `r.${c}` as const)).where('rr.repo_id', '=', repoId).orderBy('r.created_at').orderBy('r.seq').execute()
      return rows.map(toReport)
    },

    async create (input: NewRelease, repositories: number[], user?: User): Promise<ReleaseReport> {
      checkDates(input.start_date, input.desired_end_date)
      return await writeTransaction(db, async (trx) => {
        await lockFor(trx, 'release_reports.seq')
        const id = newObjectId()
        await trx.insertInto('release_reports').values({
          id,
          seq: sql<number>`(SELECT coalesce(max(seq), 0) + 1 FROM release_reports)`,
          title: input.title,
          description: input.description ?? '',
          start_date: iso(input.start_date),
          desired_end_date: iso(input.desired_end_date),
          created_at: nowIso(),
          closed_at: null
        }).execute()
        for (const repoId of repositories) await addRepo(trx, id, repoId)
        await changed(trx, id, 'created', user)
        return await withRepositories(trx, id)
      })
    },

    /** Edits; `state: closed` stamps closed_at (kept if already closed), `open` clears it. */
    async update (id: string, change: ReleaseChange, user?: User): Promise<ReleaseReport> {
      return await writeTransaction(db, async (trx) => {
        const row = await requireReport(trx, id)
        const start = change.start_date === undefined ? row.start_date : iso(change.start_date)
        const end = change.desired_end_date === undefined ? row.desired_end_date : iso(change.desired_end_date)
        checkDates(start, end)
        const state = change.state ?? row.state
        const closedAt = state === 'open' ? null : row.closed_at ?? nowIso()
        await trx.updateTable('release_reports').set({
          title: change.title, description: change.description ?? row.description, start_date: start, desired_end_date: end, closed_at: closedAt, state
        }).where('id', '=', id).execute()
        await changed(trx, id, 'updated', user)
        return await withRepositories(trx, id)
      })
    },

    async addRepository (id: string, repoId: number, user?: User): Promise<void> {
      await writeTransaction(db, async (trx) => {
        await requireReport(trx, id)
        await addRepo(trx, id, repoId)
        await changed(trx, id, 'repository_added', user)
      })
    },

    /** Removes a repository and the report's issues from it; a report keeps at least one. */
    async removeRepository (id: string, repoId: number, user?: User): Promise<void> {
      await writeTransaction(db, async (trx) => {
        const repos = await reposOf(trx, id)
        if (!repos.includes(repoId)) throw new NotFound(`repository ${repoId} is not in release report ${id}`)
        if (repos.length === 1) throw new Invalid('a release report needs at least one repository')
        const leaving = await trx.selectFrom('release_report_issues as ri').innerJoin('issues as i', 'i.id', 'ri.issue_id')
          .select('i.id').where('ri.release_id', '=', id).where('i.repo_id', '=', repoId).execute()
        await trx.deleteFrom('release_report_issues').where('release_id', '=', id)
          .where('issue_id', 'in', (eb) => eb.selectFrom('issues').select('id').where('repo_id', '=', repoId)).execute()
        await trx.deleteFrom('release_report_repositories').where('release_id', '=', id).where('repo_id', '=', repoId).execute()
        await touchPlanning(trx, leaving.map((r) => Number(r.id)))
        await recordReleaseChange(trx, id, leaving.map((r) => Number(r.id)), 'removed', nowIso())
        await changed(trx, id, 'repository_removed', user, [repoId])
      })
    },

    async issues (id: string, canRead: (repoId: number) => boolean): Promise<IssueRef[]> {
      const rows = await db.selectFrom('release_report_issues as ri').innerJoin('issues as i', 'i.id', 'ri.issue_id')
        .select(['i.repo_id', 'i.number']).where('ri.release_id', '=', id).orderBy('i.repo_id').orderBy('i.number').execute()
      return rows.filter((i) => canRead(Number(i.repo_id))).map(toRef)
    },

    /** Adds and removes issues in one go; lists only what changed. Issues must be in the report's repositories. */
    async updateIssues (id: string, add: IssueRef[], remove: IssueRef[], canRead: (repoId: number) => boolean, user?: User): Promise<UpdateIssuesReply> {
      return await writeTransaction(db, async (trx) => {
        const repos = new Set(await reposOf(trx, id))
        const toAdd = await resolveRefs(trx, add, canRead, 'add_issues')
        const toRemove = await resolveRefs(trx, remove, canRead, 'remove_issues')
        const outside = toAdd.filter((i) => !repos.has(Number(i.repo_id)))
        if (outside.length > 0) {
          throw new Invalid(`issues not in the report's repositories: ${outside.map((i) => refKey(toRef(i))).join(', ')}`)
        }
        refuseOverlap(toAdd, toRemove)
        const added: IssueRef[] = []
        for (const issue of toAdd) {
          const inserted = await trx.insertInto('release_report_issues').values({ release_id: id, issue_id: issue.id })
            .onConflict((oc) => oc.columns(['release_id', 'issue_id']).doNothing()).returning('issue_id').executeTakeFirst()
          if (inserted !== undefined) added.push(toRef(issue))
        }
        const removed: IssueRef[] = []
        for (const issue of toRemove) {
          const result = await trx.deleteFrom('release_report_issues').where('release_id', '=', id).where('issue_id', '=', issue.id).executeTakeFirst()
          if (Number(result.numDeletedRows) > 0) removed.push(toRef(issue))
        }
        const isIn = (refs: IssueRef[]) => (i: ResolvedIssue) => refs.some((r) => r.repo_id === Number(i.repo_id) && r.issue_number === Number(i.number))
        const touched = [...toAdd.filter(isIn(added)), ...toRemove.filter(isIn(removed))]
        await recordReleaseChange(trx, id, toAdd.filter(isIn(added)).map((i) => i.id), 'added', nowIso())
        await recordReleaseChange(trx, id, toRemove.filter(isIn(removed)).map((i) => i.id), 'removed', nowIso())
        await touchPlanning(trx, touched.map((i) => i.id))
        if (touched.length > 0) await changed(trx, id, 'issues_changed', user)
        return { added, removed }
      })
    }
  }
}

export type ReleasesRepository = ReturnType<typeof createReleasesRepository>
