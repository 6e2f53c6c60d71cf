import type { Test } from 'tap'
import type { AddressInfo } from 'node:net'
import { setTimeout as sleep } from 'node:timers/promises'
import { build, testFixture, type App, OTHER_REPO, REPO } from './helper.js'
import { plan, planningAnswers } from './planning-answers.js'

export const MOVER = 'mover-token-12345678'
export const FAST = { requestsPerMinute: 60_000, backoffMs: 10, timeoutMs: 3000, leaseMs: 400 }
/** The hosted source listens on 127.0.0.1: private addresses allowed (HOST_ALLOW_PRIVATE). */
export const LOCAL = { allowPrivate: true }

/** The hosted service: our own server, seeded and planned, listening on 127.0.0.1 with a low rate limit. */
export async function source (t: Test, rateLimit = { max: 10_000, timeWindow: 60_000 }, planned = true): Promise<{ app: App, url: string }> {
  const fixture = testFixture()
  const app = await build(t, {
    rateLimit,
    fixture: {
      ...fixture,
      users: [...fixture.users, { id: 5, login: 'mover', token: MOVER }],
      repositories: fixture.repositories.map((r) => ({ ...r, permissions: { ...r.permissions, mover: 'read' } })),
      milestones: [...fixture.milestones, { repo_id: REPO, number: 2, title: 'v2.0' }, { repo_id: OTHER_REPO, number: 2, title: 'o2', start_date: '2026-02-02T00:00:00.000Z' }]
    }
  })
  if (planned) await plan(app)
  await app.listen({ host: '127.0.0.1', port: 0 })
  return { app, url: `http://127.0.0.1:${(app.server.address() as AddressInfo).port}` }
}

/** This server after connecting the issue host and importing REPO from it: the repository, its issues and milestones, no planning. */
export function hostImported () {
  const fixture = testFixture()
  return {
    users: fixture.users,
    repositories: [{ id: REPO, owner: 'acme', name: 'api', permissions: { alice: 'admin', bob: 'write', carol: 'read' } }],
    milestones: [{ repo_id: REPO, number: 1, title: 'v1.0' }, { repo_id: REPO, number: 2, title: 'v2.0' }],
    issues: fixture.issues.filter((i) => i.repo_id === REPO).map((issue) => ({ repo_id: issue.repo_id, number: issue.number, title: issue.title, state: 'state' in issue ? issue.state : 'open' }))
  }
}

export async function until (app: App, id: string, states = ['done', 'failed'], seen?: Set<string>): Promise<any> {
  for (let i = 0; i < 600; i++) {
    const res = await app.admin({ url: `/admin/hosted-imports/${id}` })
    const job = res.json()
    seen?.add(job.state)
    if (states.includes(job.state)) return job
    await sleep(25)
  }
  throw new Error(`hosted import ${id} did not reach ${states.join('|')}`)
}

export async function start (app: App, body: object): Promise<any> {
  const res = await app.admin({ method: 'POST', url: '/admin/hosted-imports', payload: body })
  if (res.statusCode !== 202) throw new Error(`${res.statusCode} ${res.body}`)
  return res.json()
}

/** The answers an import must make identical: boards, workspaces, issue data, epics, dependencies, reports, start dates (events when asked). */
const compared = (events: boolean) => (url: string): boolean =>
  /\/board$|workspaces$|\/issues\/\d+$|epics|dependencies|report|start_date/.test(url) || (events && /\/issues\/\d+\/events$/.test(url))

export async function sameAnswers (t: Test, from: App, to: App, events: boolean): Promise<void> {
  // bob reads REPO and OTHER_REPO (not the private one, which the import was not asked for).
  const pick = (answers: Record<string, unknown>) => Object.fromEntries(Object.entries(answers).filter(([url]) => compared(events)(url)))
  const before = pick(await planningAnswers(async (url) => await from.as('bob', { url }), [REPO, OTHER_REPO]))
  const after = pick(await planningAnswers(async (url) => await to.as('bob', { url }), [REPO, OTHER_REPO]))
  t.ok(Object.keys(before).length > 40, `${Object.keys(before).length} answers compared`)
  t.same(after, before, 'every imported answer is the source\'s')
}
