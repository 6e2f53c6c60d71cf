import type { InjectOptions, LightMyRequestResponse } from 'fastify'
import { type App, OTHER_REPO, P, REPO, WS_NEW, WS_OLD } from './helper.js'

type Get = (url: string) => Promise<LightMyRequestResponse>

/** Drops what differs between two servers holding the same data: the clock and the feed's cursor. */
function normalize (url: string, body: any): unknown {
  if (url.endsWith('/issues/changed?since=1970-01-01T00:00:00Z')) return body.issue_numbers
  if (url.includes('/events?')) return body.data
  if (url.endsWith('/pipeline_durations')) return body.map((stay: any) => ({ ...stay, seconds: stay.left_at === null ? 'open' : stay.seconds }))
  return body
}

/**
 * Every GET answer of the planning API about these repositories, as one reader sees it, by URL:
 * workspaces, boards, issue data, events, durations, epics, dependencies, release reports and
 * milestone start dates. Two servers holding the same data give the same map.
 */
export async function planningAnswers (get: Get, repos: number[]): Promise<Record<string, { status: number, body: unknown }>> {
  const out: Record<string, { status: number, body: unknown }> = {}
  const read = async (url: string): Promise<any> => {
    const res = await get(url)
    const body = res.body === '' ? null : res.json()
    out[url] = { status: res.statusCode, body: res.statusCode === 200 ? normalize(url, body) : body }
    return res.statusCode === 200 ? body : undefined
  }
  await read('/p2/workspaces')
  for (const repo of repos) {
    const workspaces = await read(`/p2/repositories/${repo}/workspaces`) ?? []
    for (const ws of workspaces) await read(`/p2/workspaces/${ws.id}/repositories/${repo}/board`)
    const board = await read(`/p1/repositories/${repo}/board`)
    const numbers = new Set<number>()
    for (const ws of workspaces) {
      const b = out[`/p2/workspaces/${ws.id}/repositories/${repo}/board`]?.body as any
      for (const p of b?.pipelines ?? []) for (const i of p.issues) numbers.add(i.issue_number)
    }
    for (const p of board?.pipelines ?? []) for (const i of p.issues) numbers.add(i.issue_number)
    // Closed issues are on no board: the admin list names them all.
    for (let n = 1; n <= 12; n++) numbers.add(n)
    for (const n of [...numbers].sort((a, b) => a - b)) {
      await read(`/p1/repositories/${repo}/issues/${n}`)
      await read(`/p1/repositories/${repo}/issues/${n}/events`)
      await read(`/p1/repositories/${repo}/issues/${n}/pipeline_durations`)
    }
    await read(`/p1/repositories/${repo}/issues?issue_numbers=${[...numbers].slice(0, 100).join(',')}`)
    await read(`/p1/repositories/${repo}/events?limit=100`)
    await read(`/p1/repositories/${repo}/issues/changed?since=1970-01-01T00:00:00Z`)
    const epics = await read(`/p1/repositories/${repo}/epics`)
    for (const e of epics?.epic_issues ?? []) await read(`/p1/repositories/${repo}/epics/${e.issue_number}`)
    await read(`/p1/repositories/${repo}/dependencies`)
    const reports = await read(`/p1/repositories/${repo}/reports/releases`) ?? []
    for (const r of reports) {
      await read(`/p1/reports/release/${r.release_id}`)
      await read(`/p1/reports/release/${r.release_id}/issues`)
    }
    for (let m = 1; m <= 3; m++) await read(`/p1/repositories/${repo}/milestones/${m}/start_date`)
  }
  return out
}

/** The admin API's lists (users, repositories, workspaces, and per repository its permissions, issues, milestones). */
export async function adminAnswers (admin: (options: InjectOptions) => Promise<LightMyRequestResponse>, repos: number[]): Promise<Record<string, unknown>> {
  const out: Record<string, unknown> = {}
  const urls = ['/admin/users', '/admin/repositories', '/admin/workspaces',
    ...repos.flatMap((r) => [`/admin/repositories/${r}/permissions`, `/admin/repositories/${r}/issues`, `/admin/repositories/${r}/milestones`])]
  for (const url of urls) {
    const res = await admin({ url })
    out[url] = { status: res.statusCode, body: res.json() }
  }
  return out
}

/** Planning data of every kind, made through the API as people would. */
export async function plan (app: App): Promise<void> {
  const ok = async (login: 'alice' | 'bob', method: 'POST' | 'PUT' | 'PATCH', url: string, payload: unknown) => {
    const res = await app.as(login, { method, url, payload: payload as object })
    if (res.statusCode >= 300) throw new Error(`${method} ${url}: ${res.statusCode} ${res.body}`)
    return res.body === '' ? undefined : res.json()
  }
  await ok('alice', 'POST', `/p2/workspaces/${WS_OLD}/repositories/${REPO}/issues/3/moves`, { pipeline_id: P.doing, position: 'top' })
  await ok('bob', 'POST', `/p2/workspaces/${WS_OLD}/repositories/${REPO}/issues/5/moves`, { pipeline_id: P.doing, position: 0 })
  await ok('alice', 'POST', `/p2/workspaces/${WS_OLD}/repositories/${REPO}/issues/2/moves`, { pipeline_id: P.todo, position: 1 })
  await ok('alice', 'POST', `/p2/workspaces/${WS_NEW}/repositories/${REPO}/issues/4/moves`, { pipeline_id: P.now, position: 'bottom' })
  await ok('alice', 'PUT', `/p1/repositories/${REPO}/issues/3/estimate`, { estimate: 5 })
  await ok('bob', 'PUT', `/p1/repositories/${REPO}/issues/3/estimate`, { estimate: 8 })
  await ok('alice', 'PUT', `/p1/repositories/${OTHER_REPO}/issues/1/estimate`, { estimate: 2 })
  await ok('alice', 'POST', `/p1/repositories/${REPO}/issues/1/convert_to_epic`, { issues: [{ repo_id: REPO, issue_number: 2 }, { repo_id: OTHER_REPO, issue_number: 1 }] })
  await ok('alice', 'POST', `/p1/repositories/${REPO}/issues/6/convert_to_epic`, { issues: [] })
  await ok('alice', 'POST', '/p1/dependencies', { blocking: { repo_id: REPO, issue_number: 2 }, blocked: { repo_id: REPO, issue_number: 3 } })
  await ok('alice', 'POST', '/p1/dependencies', { blocking: { repo_id: OTHER_REPO, issue_number: 2 }, blocked: { repo_id: REPO, issue_number: 4 } })
  const report = await ok('alice', 'POST', `/p1/repositories/${REPO}/reports/release`, {
    title: 'v1', description: 'first', start_date: '2026-01-01T00:00:00Z', desired_end_date: '2026-02-01T00:00:00Z', repositories: [OTHER_REPO]
  })
  await ok('alice', 'PATCH', `/p1/reports/release/${report.release_id}/issues`, { add_issues: [{ repo_id: REPO, issue_number: 3 }, { repo_id: OTHER_REPO, issue_number: 2 }], remove_issues: [] })
  const closed = await ok('alice', 'POST', `/p1/repositories/${REPO}/reports/release`, { title: 'v0', start_date: '2025-01-01T00:00:00Z', desired_end_date: '2025-02-01T00:00:00Z' })
  await ok('alice', 'PATCH', `/p1/reports/release/${closed.release_id}`, { title: 'v0', state: 'closed' })
  await ok('alice', 'POST', `/p1/repositories/${REPO}/milestones/1/start_date`, { start_date: '2026-03-01T10:00:00+02:00' })
}
