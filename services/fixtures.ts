import { TypeCompiler } from '@sinclair/typebox/compiler'
import { readFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { DomainError, Invalid } from '../db/errors.js'
import type { PlanningStore, StoreScope } from '../db/store.js'
import type { PermissionName } from '../db/users.js'
import { Fixture } from '../schemas/fixture.js'
import { registerFormats } from '../schemas/formats.js'

registerFormats()
const checker = TypeCompiler.Compile(Fixture)

/** The bundled demo fixture (resolved when asked: the single executable carries it as an asset instead). */
export function demoFixturePath (): string {
  return fileURLToPath(new URL('../fixtures/demo.json', import.meta.url))
}

export interface FixtureSummary {
  users: number
  repositories: number
  milestones: number
  issues: number
  workspaces: number
}

/** Checks the shape; the message names where the first problems are (e.g. `/issues/2/number`). */
export function parseFixture (input: unknown): Fixture {
  if (checker.Check(input)) return input
  const problems = [...checker.Errors(input)].slice(0, 5).map((e) => `${e.path || '/'}: ${e.message}`)
  throw new Invalid(`invalid fixture: ${problems.join('; ')}`)
}

export function readFixtureFile (path: string): Fixture {
  let text: string
  try {
    text = readFileSync(path, 'utf8')
  } catch (err) {
    throw new Error(`cannot read fixture ${path}: ${(err as Error).message}`)
  }
  let json: unknown
  try {
    json = JSON.parse(text)
  } catch (err) {
    throw new Error(`fixture ${path} is not valid JSON: ${(err as Error).message}`)
  }
  return parseFixture(json)
}

/** Says where in the fixture a refusal comes from; the status stays the data layer's. */
async function at<T> (where: string, fn: () => Promise<T>): Promise<T> {
  try {
    return await fn()
  } catch (err) {
    if (err instanceof DomainError) throw new DomainError(`invalid fixture: ${where}: ${err.message}`, err.statusCode)
    throw err
  }
}

/** Writes a checked fixture with the repositories of one transaction. */
async function write (tx: StoreScope, fixture: Fixture): Promise<FixtureSummary> {
  const userId = async (login: string, where: string): Promise<number> => {
    const user = await tx.users.byLogin(login)
    if (user === undefined) throw new Invalid(`invalid fixture: ${where}: unknown login '${login}'`)
    return user.id
  }
  for (const [i, u] of (fixture.users ?? []).entries()) await at(`users[${i}]`, async () => await tx.users.create(u.login, u.id, u.token))
  for (const [i, r] of (fixture.repositories ?? []).entries()) {
    await at(`repositories[${i}]`, async () => await tx.repositories.create({ id: r.id, owner: r.owner, name: r.name }))
    for (const [login, permission] of Object.entries(r.permissions ?? {})) {
      await tx.users.setPermission(await userId(login, `repositories[${i}].permissions`), r.id, permission as PermissionName)
    }
  }
  for (const [i, m] of (fixture.milestones ?? []).entries()) {
    await at(`milestones[${i}]`, async () => {
      await tx.repositories.createMilestone(m.repo_id, m.number, m.title)
      if (m.start_date !== undefined) await tx.milestones.setStartDate(m.repo_id, m.number, m.start_date)
    })
  }
  for (const [i, w] of (fixture.workspaces ?? []).entries()) {
    await at(`workspaces[${i}]`, async () => await tx.workspaces.create({ ...w, created_at: w.created_at === undefined ? undefined : new Date(w.created_at).toISOString() }))
  }
  for (const [i, issue] of (fixture.issues ?? []).entries()) {
    const authorId = issue.author === undefined ? undefined : await userId(issue.author, `issues[${i}].author`)
    await at(`issues[${i}]`, async () => {
      await tx.repositories.createIssue(issue.repo_id, {
        number: issue.number, title: issue.title, state: issue.state, authorId, plusOnes: issue.plus_ones, pipelines: issue.pipelines, estimate: issue.estimate
      })
    })
  }
  if (fixture.chat?.broadcaster !== undefined) await tx.chat.setRole(await userId(fixture.chat.broadcaster, 'chat.broadcaster'), 'broadcaster')
  for (const [i, login] of (fixture.chat?.moderators ?? []).entries()) await tx.chat.setRole(await userId(login, `chat.moderators[${i}]`), 'moderator')
  return {
    users: fixture.users?.length ?? 0,
    repositories: fixture.repositories?.length ?? 0,
    milestones: fixture.milestones?.length ?? 0,
    issues: fixture.issues?.length ?? 0,
    workspaces: fixture.workspaces?.length ?? 0
  }
}

/**
 * Merges a fixture into the database in one transaction: all of it or nothing. Unknown logins or
 * repositories and duplicate keys are refused with a message that says where.
 */
export async function loadFixture (store: PlanningStore | StoreScope, input: unknown): Promise<FixtureSummary> {
  const fixture = parseFixture(input)
  if ('transaction' in store) return await store.transaction(async (tx) => await write(tx, fixture))
  return await write(store, fixture)
}
