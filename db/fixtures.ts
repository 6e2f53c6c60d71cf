import { httpErrors } from '@fastify/sensible'
import { TypeCompiler } from '@sinclair/typebox/compiler'
import { readFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { Fixture } from '../schemas/fixture.js'
import { registerFormats } from '../schemas/formats.js'
import { createChatRepository } from './chat.js'
import type { Db } from './connection.js'
import { createRepositoriesRepository } from './repositories.js'
import { createUsersRepository, type PermissionName } from './users.js'
import { createWorkspacesRepository } from './workspaces.js'

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
  throw httpErrors.badRequest(`invalid fixture: ${problems.join('; ')}`)
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

export function isEmptyDatabase (db: Db): boolean {
  const row = db.prepare('SELECT (SELECT count(*) FROM users) + (SELECT count(*) FROM repositories) AS n').get() as { n: number }
  return row.n === 0
}

/**
 * Merges a fixture into the database in one transaction: all of it or nothing. Unknown logins or
 * repositories and duplicate keys are refused with a message that says where.
 */
export function loadFixture (db: Db, input: unknown): FixtureSummary {
  const fixture = parseFixture(input)
  const users = createUsersRepository(db)
  const repos = createRepositoriesRepository(db)
  const workspaces = createWorkspacesRepository(db)
  const setStart = db.prepare<[string, number, number]>('UPDATE milestones SET start_date = ? WHERE repo_id = ? AND number = ?')
  const setEstimate = db.prepare<[number, number]>('UPDATE issues SET estimate = ? WHERE id = ?')

  const at = <T>(where: string, fn: () => T): T => {
    try {
      return fn()
    } catch (err) {
      const e = err as Error & { statusCode?: number }
      if (e.statusCode !== undefined) throw httpErrors.createError(e.statusCode, `invalid fixture: ${where}: ${e.message}`)
      throw err
    }
  }
  const userId = (login: string, where: string): number => {
    const user = users.byLogin(login)
    if (user === undefined) throw httpErrors.badRequest(`invalid fixture: ${where}: unknown login '${login}'`)
    return user.id
  }

  return db.transaction(() => {
    (fixture.users ?? []).forEach((u, i) => at(`users[${i}]`, () => {
      if (users.byLogin(u.login) !== undefined) throw httpErrors.conflict(`login '${u.login}' already exists`)
      if (u.id !== undefined && users.byId(u.id) !== undefined) throw httpErrors.conflict(`user id ${u.id} already exists`)
      users.create(u.login, u.id, u.token)
    }))
    ;(fixture.repositories ?? []).forEach((r, i) => at(`repositories[${i}]`, () => {
      repos.create({ id: r.id, owner: r.owner, name: r.name })
      for (const [login, permission] of Object.entries(r.permissions ?? {})) {
        users.setPermission(userId(login, `repositories[${i}].permissions`), r.id, permission as PermissionName)
      }
    }))
    ;(fixture.milestones ?? []).forEach((m, i) => at(`milestones[${i}]`, () => {
      repos.createMilestone(m.repo_id, m.number, m.title)
      if (m.start_date !== undefined) setStart.run(new Date(m.start_date).toISOString(), m.repo_id, m.number)
    }))
    ;(fixture.workspaces ?? []).forEach((w, i) => at(`workspaces[${i}]`, () => {
      workspaces.create({ ...w, created_at: w.created_at === undefined ? undefined : new Date(w.created_at).toISOString() })
    }))
    ;(fixture.issues ?? []).forEach((issue, i) => at(`issues[${i}]`, () => {
      const authorId = issue.author === undefined ? undefined : userId(issue.author, `issues[${i}].author`)
      const row = repos.createIssue(issue.repo_id, {
        number: issue.number, title: issue.title, state: issue.state, authorId, plusOnes: issue.plus_ones, pipelines: issue.pipelines
      })
      if (issue.estimate !== undefined) setEstimate.run(issue.estimate, row.id)
    }))
    const chat = createChatRepository(db)
    if (fixture.chat?.broadcaster !== undefined) chat.setRole(userId(fixture.chat.broadcaster, 'chat.broadcaster'), 'broadcaster')
    ;(fixture.chat?.moderators ?? []).forEach((login, i) => chat.setRole(userId(login, `chat.moderators[${i}]`), 'moderator'))
    return {
      users: fixture.users?.length ?? 0,
      repositories: fixture.repositories?.length ?? 0,
      milestones: fixture.milestones?.length ?? 0,
      issues: fixture.issues?.length ?? 0,
      workspaces: fixture.workspaces?.length ?? 0
    }
  })()
}
