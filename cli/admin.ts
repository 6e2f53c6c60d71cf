import { parseArgs } from 'node:util'
import { ConfigError, loadConfig } from '../config.js'
import { createConnectionsRepository } from '../db/connections.js'
import { copyDatabase } from '../db/copy.js'
import { migrate } from '../db/migrations/index.js'
import { postgresKysely } from '../db/postgres.js'
import { openSqliteStore } from '../db/store.js'
import type { PermissionName } from '../db/users.js'
import { createAdminOperations } from '../services/admin.js'
import { connect, importNow } from '../services/connections.js'
import { readFixtureFile } from '../services/fixtures.js'

const USAGE = `usage: npm run admin -- <command> [arguments]   (acts on DATABASE_PATH directly)

  import <fixture.json>                       merge a fixture, all or nothing
  users                                       list users
  create-user <login> [--id N]                create a user
  token <login>                               make a new token (the old one stops working)
  create-repo <id> <owner> <name>             create a repository
  grant <repo_id> <login> <permission>        read, write, push, admin or none
  create-issue <repo_id> <number> <title> [--author login] [--closed]
  close-issue <repo_id> <number>              take an issue off every board
  reopen-issue <repo_id> <number>             put it back where it was
  create-milestone <repo_id> <number> <title>
  create-workspace <name> --repos 1,2 --pipelines "New,Doing,Done" [--description text]
  copy-to <postgres://…> [--schema name]      copy everything into a new PostgreSQL database
  connect <github|gitea|forgejo> [--web-url U] [--api-url U] [--token T] [--secret S]
                                              connect an issue host (prints the webhook secret once)
  connections                                 list issue-host connections
  disconnect <connection_id>                  remove a connection (its repositories stay)
  import-repo <connection_id> <owner/name>    import a repository from the host, showing progress
  repositories | workspaces                   list them
  permissions|issues|milestones <repo_id>     a repository's permissions, issues or milestones
  revoke-token <login>                        the token stops working, no new one is made
  delete-user <login>                         the user goes, with their token and permissions
  delete-repo <repo_id>                       the repository goes, with everything planned on it
`

function positive (value: string | undefined, what: string): number {
  const n = Number(value)
  if (value === undefined || !Number.isSafeInteger(n) || n < 1) throw new Error(`${what} must be a positive integer, got ${value ?? 'nothing'}`)
  return n
}

function need (value: string | undefined, what: string): string {
  if (value === undefined || value === '') throw new Error(`missing ${what}`)
  return value
}

/** Copies the SQLite file into a new PostgreSQL database (README, "Scale out"). */
async function copyTo (databasePath: string, url: string, schema?: string): Promise<unknown> {
  if (!/^postgres(ql)?:\/\//.test(url)) throw new Error(`copy-to needs a postgres:// URL, got ${url}`)
  const source = await openSqliteStore(databasePath)
  const target = postgresKysely({ url, schema, poolMax: 2 })
  try {
    await migrate(target, 'postgres', schema)
    return { copied: await copyDatabase(source.db, target, true), to: url.replace(/\/\/[^@/]*@/, '//') }
  } finally {
    await source.close()
    await target.destroy()
  }
}

/** Runs one admin command; returns what to print. Exported for the tests. */
export async function runAdminCommand (databasePath: string, argv: string[], progress: (line: string) => void = () => {}): Promise<unknown> {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      id: { type: 'string' },
      author: { type: 'string' },
      closed: { type: 'boolean' },
      repos: { type: 'string' },
      pipelines: { type: 'string' },
      description: { type: 'string' },
      schema: { type: 'string' },
      'web-url': { type: 'string' },
      'api-url': { type: 'string' },
      token: { type: 'string' },
      secret: { type: 'string' }
    }
  })
  const [command, ...args] = positionals
  if (command === undefined || command === 'help') return USAGE
  if (command === 'copy-to') return await copyTo(databasePath, need(args[0], 'PostgreSQL URL'), values.schema)
  const store = await openSqliteStore(databasePath)
  try {
    const admin = createAdminOperations(store)
    switch (command) {
      case 'import': return await admin.importFixture(readFixtureFile(need(args[0], 'fixture file')))
      case 'users': return await admin.listUsers()
      case 'create-user': return await admin.createUser(need(args[0], 'login'), values.id === undefined ? undefined : positive(values.id, '--id'))
      case 'token': return { token: await admin.regenerateToken(need(args[0], 'login')) }
      case 'create-repo': return await admin.createRepository({ id: positive(args[0], 'repo_id'), owner: need(args[1], 'owner'), name: need(args[2], 'name') })
      case 'grant': {
        const permission = need(args[2], 'permission')
        if (!['read', 'write', 'push', 'admin', 'none'].includes(permission)) throw new Error(`unknown permission '${permission}'`)
        return await admin.setPermission(positive(args[0], 'repo_id'), need(args[1], 'login'), permission as PermissionName)
      }
      case 'create-issue': return await admin.createIssue(positive(args[0], 'repo_id'), {
        number: positive(args[1], 'number'), title: need(args[2], 'title'), author: values.author, state: values.closed === true ? 'closed' : 'open'
      })
      case 'close-issue': return await admin.updateIssue(positive(args[0], 'repo_id'), positive(args[1], 'number'), { state: 'closed' })
      case 'reopen-issue': return await admin.updateIssue(positive(args[0], 'repo_id'), positive(args[1], 'number'), { state: 'open' })
      case 'create-milestone': return await admin.createMilestone(positive(args[0], 'repo_id'), positive(args[1], 'number'), need(args[2], 'title'))
      case 'create-workspace': return await admin.createWorkspace({
        name: need(args[0], 'name'),
        description: values.description ?? null,
        repositories: (values.repos ?? '').split(',').filter((r) => r !== '').map((r) => positive(r, '--repos entry')),
        pipelines: need(values.pipelines, '--pipelines').split(',').map((p) => p.trim()).filter((p) => p !== '')
      })
      case 'connect': {
        const kind = need(args[0], 'kind (github, gitea or forgejo)')
        if (!['github', 'gitea', 'forgejo'].includes(kind)) throw new Error(`unknown kind '${kind}' (github, gitea or forgejo)`)
        const { connection, secret } = await connect(store, { kind: kind as 'github', web_url: values['web-url'], api_url: values['api-url'], token: values.token, secret: values.secret })
        return { id: connection.id, kind: connection.kind, web_url: connection.web_url, api_url: connection.api_url, webhook_path: `/integrations/${connection.id}/webhook`, secret }
      }
      case 'connections': return (await createConnectionsRepository(store.db).list()).map(({ secret: _s, token, ...c }) => ({ ...c, has_token: token !== null }))
      case 'disconnect': return await createConnectionsRepository(store.db).remove(need(args[0], 'connection id')).then(() => ({ removed: args[0] }))
      case 'repositories': return await admin.listRepositories()
      case 'workspaces': return await admin.workspaces()
      case 'permissions': return await admin.permissions(positive(args[0], 'repo_id'))
      case 'issues': return await admin.issues(positive(args[0], 'repo_id'))
      case 'milestones': return await admin.milestones(positive(args[0], 'repo_id'))
      case 'revoke-token': return await admin.revokeToken(need(args[0], 'login')).then(() => ({ revoked: args[0] }))
      case 'delete-user': return await admin.deleteUser(need(args[0], 'login')).then(() => ({ deleted: args[0] }))
      case 'delete-repo': return await admin.deleteRepository(positive(args[0], 'repo_id')).then(() => ({ deleted: Number(args[0]) }))
      case 'import-repo': return await importNow(store, need(args[0], 'connection id'), need(args[1], 'owner/name'), progress)
      default: throw new Error(`unknown command '${command}'\n\n${USAGE}`)
    }
  } finally {
    await store.close()
  }
}

if (process.argv[1] !== undefined && import.meta.url === new URL(`file://${process.argv[1]}`).href) {
  try {
    const config = loadConfig(process.env)
    // Progress lines overwrite each other on a terminal; elsewhere each goes on its own line.
    let shown = false
    const progress = (line: string): void => {
      shown = true
      process.stderr.write(process.stderr.isTTY ? `\r${line}\u001b[K` : `${line}\n`)
    }
    const result = await runAdminCommand(config.databasePath, process.argv.slice(2), progress)
    if (shown && process.stderr.isTTY) process.stderr.write('\n')
    console.log(typeof result === 'string' ? result : JSON.stringify(result, null, 2))
  } catch (err) {
    const message = err instanceof ConfigError ? err.message : (err as Error).message
    console.error(`error: ${message}`)
    process.exit(1)
  }
}
