import { Value } from '@sinclair/typebox/value'
import { parseArgs } from 'node:util'
import { ConfigError, loadConfig, type ServerConfig } from '../config.js'
import { copyDatabase } from '../db/engine/copy.js'
import { createHostWrites } from '../db/issue-host/host-writes.js'
import { createIdentitiesRepository } from '../db/issue-host/identities.js'
import { setPipelineLabel } from '../db/workspaces.js'
import { migrate } from '../db/engine/migrations/index.js'
import { postgresKysely } from '../db/engine/postgres.js'
import { SecretBox } from '../db/engine/secret-box.js'
import { openSqliteStore } from '../db/store.js'
import type { PermissionName } from '../db/users.js'
import { createAdminOperations } from '../services/admin.js'
import { connect, importNow } from '../services/connections.js'
import { exportFixture, progressLines, readFixtureFile } from '../services/fixtures.js'
import { createHostFetch } from '../services/host-fetch.js'
import { CreateConnectionBody, RepositoryFullName } from '../schemas/admin.js'
import type { Readable, Writable } from 'node:stream'
import type { HostedImport } from '../schemas/hosted-import.js'
import { createHostedImport, HostedImporter, runHostedImport } from '../services/hosted-import/index.js'

const USAGE = `usage: npm run admin -- <command> [arguments]   (acts on DATABASE_PATH directly)

  import <fixture.json>                       merge a fixture, all or nothing
  export                                      everything as one fixture on standard output (> backup.json)
  users                                       list users
  create-user <login> [--id N] [--email E]   create a user
  set-email <login> <email|none>              set or clear a user's email
  token <login>                               make a new (legacy) token (the old one stops working)
  tokens <login>                              a user's API tokens (never their values)
  revoke-user-token <login> <token_id>        revoke one of them (legacy: the admin-made one)
  audit [--limit N] [--cursor C] [--actor A] [--action X]   the audit log, newest first (of one person, one action)
  create-repo <id> <owner> <name>             create a repository
  grant <repo_id> <login> <permission>        read, write, push, admin or none
  create-issue <repo_id> <number> <title> [--author login] [--closed]
  close-issue <repo_id> <number>              take an issue off every board
  reopen-issue <repo_id> <number>             put it back where it was
  create-milestone <repo_id> <number> <title>
  create-workspace <name> --repos 1,2 --pipelines "New,Doing,Done" [--description text]
  copy-to <postgres://…> [--schema name]      copy everything into a new PostgreSQL database
  connect <github|gitea|forgejo> [--web-url U] [--api-url U] [--token-stdin] [--oauth-client-id ID]
                                              connect an issue host (prints the webhook secret once);
                                              the API token comes from HOST_TOKEN or, with
                                              --token-stdin, standard input; the OAuth app's secret
                                              (sign-in) from HOST_OAUTH_CLIENT_SECRET; needs SECRET_KEY
  set-oauth <connection_id> <client_id>|--clear
                                              people sign in through the host's OAuth app (its secret
                                              from HOST_OAUTH_CLIENT_SECRET or standard input)
  connections                                 list issue-host connections
  disconnect <connection_id>                  remove a connection (its repositories stay)
  import-repo <connection_id> <owner/name>    import a repository from the host, showing progress
  import-hosted [--api-url URL] [--closed-issues] [--issue-events] <repo_id>…
                                              import boards, epics, dependencies, release reports and start
                                              dates from the hosted service (token: HOSTED_TOKEN or stdin;
                                              needs SECRET_KEY)
  bindings <connection_id>                    the repositories bound to a connection
  identities <connection_id>                  the host users a connection has seen, and their links
  link-identity <login> <connection_id> <platform_user_id>
                                              the host user's permissions become the user's
  unlink-identity <login> <connection_id>     the access the link gave goes
  pipeline-label <workspace_id> <pipeline_id> <label>|--clear
                                              the issue-host label a pipeline writes (two-way sync)
  outbox <connection_id>                      label writes to the host, pending or failed
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

/** Copies the SQLite file into a new PostgreSQL database (docs/scale-out.md). */
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

/** What the CLI takes from its environment besides the arguments (the tests give their own). */
export interface AdminContext {
  config?: Partial<Pick<ServerConfig, 'secretKey' | 'previousSecretKey' | 'hostAllowPrivate' | 'hostTimeoutMs'>>
  /** HOST_TOKEN: the issue host's API token for `connect` */
  hostToken?: string
  /** HOST_WEBHOOK_SECRET: the webhook secret `connect` stores (generated when absent) */
  webhookSecret?: string
  /** HOST_OAUTH_CLIENT_SECRET: the secret of the host's OAuth app for `connect --oauth-client-id` and `set-oauth` */
  oauthClientSecret?: string
  /** reads standard input to its end (`connect --token-stdin`, `set-oauth`) */
  readStdin?: () => Promise<string>
  /** where `export` writes (standard output) */
  out?: Writable
  /** where `import-hosted` finds its token (HOSTED_TOKEN, standard input) */
  tokens?: TokenSource
}

async function readAll (): Promise<string> {
  const chunks: Buffer[] = []
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer)
  return Buffer.concat(chunks).toString('utf8')
}

/** The connection as the admin API would take it, checked with the API's own schema. */
async function connectionInput (kind: string, values: Record<string, string | boolean | undefined>, context: AdminContext) {
  if (values.token !== undefined) throw new Error('--token is not taken (it would show in the process list): set HOST_TOKEN or pipe the token in with --token-stdin')
  if (values.secret !== undefined) throw new Error('--secret is not taken (it would show in the process list): set HOST_WEBHOOK_SECRET, or leave it out to have one generated')
  const token = values['token-stdin'] === true ? (await (context.readStdin ?? readAll)()).trim() : context.hostToken
  const oauthId = values['oauth-client-id']
  if (oauthId !== undefined && context.oauthClientSecret === undefined) throw new Error('--oauth-client-id needs the OAuth app\'s secret in HOST_OAUTH_CLIENT_SECRET')
  const oauth = oauthId === undefined ? {} : { oauth_client_id: oauthId, oauth_client_secret: context.oauthClientSecret }
  const given = { kind, web_url: values['web-url'], api_url: values['api-url'], secret: context.webhookSecret, token, ...oauth }
  const body = Object.fromEntries(Object.entries(given).filter(([, v]) => v !== undefined))
  const error = Value.Errors(CreateConnectionBody, body).First()
  if (error !== undefined) {
    const say: Record<string, string> = {
      '/kind': `unknown kind '${kind}' (github, gitea or forgejo)`,
      '/web_url': `--web-url must be an http:// or https:// address, got '${String(values['web-url'])}'`,
      '/api_url': `--api-url must be an http:// or https:// address, got '${String(values['api-url'])}'`,
      '/secret': 'HOST_WEBHOOK_SECRET must be 16 to 200 characters (leave it out to have one generated)',
      '/token': 'the token must be 1 to 500 characters',
      '/oauth_client_id': '--oauth-client-id must be 1 to 200 printable characters, no spaces',
      '/oauth_client_secret': 'HOST_OAUTH_CLIENT_SECRET must be 1 to 500 characters'
    }
    throw new Error(say[error.path] ?? `${error.path}: ${error.message}`)
  }
  return body as typeof CreateConnectionBody.static
}

/** What a command returns when it wrote its output itself (the export). */
export const WRITTEN = Symbol('written')

async function writeAll (chunks: AsyncIterable<string>, out: Writable): Promise<typeof WRITTEN> {
  for await (const chunk of chunks) {
    if (!out.write(chunk)) await new Promise<void>((resolve, reject) => { out.once('drain', resolve); out.once('error', reject) })
  }
  return WRITTEN
}

/** Where `import-hosted` finds the token: never the command line (it would stay in the shell history and the process list). */
export interface TokenSource { env: Record<string, string | undefined>, stdin: Readable & { isTTY?: boolean } }

async function hostedToken (source: TokenSource): Promise<string> {
  const given = source.env.HOSTED_TOKEN
  if (given !== undefined && given.trim() !== '') return given.trim()
  if (source.stdin.isTTY === true) process.stderr.write('hosted API token: ')
  let text = ''
  for await (const chunk of source.stdin) {
    text += String(chunk)
    if (text.includes('\n') || text.length > 1000) break
  }
  const token = text.split('\n')[0].trim()
  if (token === '') throw new Error('no token: set HOSTED_TOKEN or give it on standard input')
  return token
}

/** One line of progress: requests done of those estimated, a bar, and a rate-limit wait said as such. */
export function hostedProgressLine (job: HostedImport): string {
  const total = Math.max(job.estimated_requests, job.requests, 1)
  const filled = Math.round(20 * Math.min(job.requests, total) / total)
  const bar = `[${'#'.repeat(filled)}${'-'.repeat(20 - filled)}]`
  const state = job.state === 'waiting' ? 'waiting for the hosted rate limit to reset' : job.state
  return `${bar} ${job.requests} of ~${total} requests, ${state}${job.waited_seconds > 0 ? ` (waited ${job.waited_seconds} s)` : ''}`
}

type Store = Awaited<ReturnType<typeof openSqliteStore>>

async function importHosted (
  store: Store, args: string[], values: Record<string, unknown>, tokens: TokenSource, progress: (line: string) => void, config: AdminContext['config']
) {
  if (values.token !== undefined) throw new Error('import-hosted never takes the token on the command line: set HOSTED_TOKEN or give it on standard input')
  const repositories = args.map((a) => positive(a, 'repo_id'))
  if (repositories.length === 0) throw new Error('missing repo_id (one or more repository ids on the hosted service)')
  const apiUrl = values['api-url'] as string | undefined
  if (apiUrl !== undefined && !/^https?:\/\/[^\s/]+(\/\S*)?$/.test(apiUrl)) throw new Error(`--api-url must be an http(s) URL, got ${apiUrl}`)
  const token = await hostedToken(tokens)
  const silent = { info () {}, warn () {}, error () {}, debug () {}, trace () {}, fatal () {}, child () { return silent }, level: 'silent', silent () {} }
  // The issue-host fetch with its address policy, as in the server (HOST_ALLOW_PRIVATE, HOST_TIMEOUT_MS).
  const fetch = createHostFetch({ allowPrivate: config?.hostAllowPrivate, timeoutMs: config?.hostTimeoutMs })
  const importer = new HostedImporter(store, silent as never, { fetch })
  const job = await createHostedImport(store, {
    api_url: apiUrl, token, repositories, closed_issues: values['closed-issues'] === true, issue_events: values['issue-events'] === true
  })
  try {
    return await runHostedImport(importer, store, job.id, (j) => progress(hostedProgressLine(j)))
  } finally {
    await importer.stop()
  }
}

/** Runs one admin command; returns what to print. Exported for the tests. */
export async function runAdminCommand (
  databasePath: string, argv: string[], progress: (line: string) => void = () => {}, context: AdminContext = {}
): Promise<unknown> {
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
      'token-stdin': { type: 'boolean' },
      secret: { type: 'string' },
      'oauth-client-id': { type: 'string' },
      'closed-issues': { type: 'boolean' },
      'issue-events': { type: 'boolean' },
      clear: { type: 'boolean' },
      email: { type: 'string' },
      limit: { type: 'string' },
      cursor: { type: 'string' },
      actor: { type: 'string' },
      action: { type: 'string' },
      help: { type: 'boolean', short: 'h' }
    }
  })
  const [command, ...args] = positionals
  if (command === undefined || command === 'help' || values.help === true) return USAGE
  if (command === 'copy-to') return await copyTo(databasePath, need(args[0], 'PostgreSQL URL'), values.schema)
  const secrets = SecretBox.fromStrings(context.config?.secretKey, context.config?.previousSecretKey)
  const store = await openSqliteStore(databasePath, undefined, secrets)
  try {
    const result = await runOn(store, command, args, values, progress, context)
    // Writes made here are the admin's too: the audit log names the command, not its options (secrets).
    if (!READ_COMMANDS.has(command)) await store.audit.record({ actor: 'admin-cli', action: `cli.${command}`, target: args[0] ?? null, detail: { args } })
    return result
  } finally {
    await store.close()
  }
}

const READ_COMMANDS = new Set(['users', 'connections', 'repositories', 'workspaces', 'permissions', 'issues', 'milestones', 'tokens', 'audit', 'bindings', 'identities'])

type Values = Record<string, string | boolean | undefined>

async function runOn (
  store: Store, command: string, args: string[], values: Values, progress: (line: string) => void, context: AdminContext
): Promise<unknown> {
  const text = (name: string): string | undefined => typeof values[name] === 'string' ? values[name] : undefined
  const out = context.out ?? process.stdout
  const tokens = context.tokens ?? { env: process.env, stdin: process.stdin }
  const admin = createAdminOperations(store)
  switch (command) {
    case 'import': return await admin.importFixture(readFixtureFile(need(args[0], 'fixture file')), undefined, progressLines((line) => process.stderr.write(`${line}\n`), 'importing'))
    case 'export': return await writeAll(exportFixture(store), out)
    case 'users': return await admin.listUsers()
    case 'create-user': return await admin.createUser(need(args[0], 'login'), text('id') === undefined ? undefined : positive(text('id'), '--id'), emailArg(text('email')))
    case 'set-email': {
      const email = need(args[1], 'email (or none)')
      return await admin.updateUser(need(args[0], 'login'), { email: email === 'none' ? null : emailArg(email)! })
    }
    case 'tokens': return await admin.userTokens(need(args[0], 'login'))
    case 'revoke-user-token': return await admin.revokeUserToken(need(args[0], 'login'), need(args[1], 'token id')).then(() => ({ revoked: args[1] }))
    case 'audit': return await admin.audit(text('cursor'), text('limit') === undefined ? 50 : Math.min(500, positive(text('limit'), '--limit')), { actor: text('actor'), action: text('action') })
    case 'token': return { token: await admin.regenerateToken(need(args[0], 'login')) }
    case 'create-repo': return await admin.createRepository({ id: positive(args[0], 'repo_id'), owner: need(args[1], 'owner'), name: need(args[2], 'name') })
    case 'grant': {
      const permission = need(args[2], 'permission')
      if (!['read', 'write', 'push', 'admin', 'none'].includes(permission)) throw new Error(`unknown permission '${permission}'`)
      return await admin.setPermission(positive(args[0], 'repo_id'), need(args[1], 'login'), permission as PermissionName)
    }
    case 'create-issue': return await admin.createIssue(positive(args[0], 'repo_id'), {
      number: positive(args[1], 'number'), title: need(args[2], 'title'), author: text('author'), state: values.closed === true ? 'closed' : 'open'
    })
    case 'close-issue': return await admin.updateIssue(positive(args[0], 'repo_id'), positive(args[1], 'number'), { state: 'closed' })
    case 'reopen-issue': return await admin.updateIssue(positive(args[0], 'repo_id'), positive(args[1], 'number'), { state: 'open' })
    case 'create-milestone': return await admin.createMilestone(positive(args[0], 'repo_id'), positive(args[1], 'number'), need(args[2], 'title'))
    case 'create-workspace': return await admin.createWorkspace({
      name: need(args[0], 'name'),
      description: text('description') ?? null,
      repositories: (text('repos') ?? '').split(',').filter((r) => r !== '').map((r) => positive(r, '--repos entry')),
      pipelines: need(text('pipelines'), '--pipelines').split(',').map((p) => p.trim()).filter((p) => p !== '')
    })
    case 'connect': {
      const { connection, secret } = await connect(store, await connectionInput(need(args[0], 'kind (github, gitea or forgejo)'), values, context))
      return { id: connection.id, kind: connection.kind, web_url: connection.web_url, api_url: connection.api_url, webhook_path: `/integrations/${connection.id}/webhook`, secret, has_oauth: connection.oauth_client_id !== null }
    }
    case 'connections': return await store.connections.list()
    case 'set-oauth': return await setOAuth(store, args, values, context)
    case 'disconnect': return await store.connections.remove(need(args[0], 'connection id')).then(() => ({ removed: args[0] }))
    case 'repositories': return await admin.listRepositories()
    case 'workspaces': return await admin.workspaces()
    case 'permissions': return await admin.permissions(positive(args[0], 'repo_id'))
    case 'issues': return await admin.issues(positive(args[0], 'repo_id'))
    case 'milestones': return await admin.milestones(positive(args[0], 'repo_id'))
    case 'revoke-token': return await admin.revokeToken(need(args[0], 'login')).then(() => ({ revoked: args[0] }))
    case 'delete-user': return await admin.deleteUser(need(args[0], 'login')).then(() => ({ deleted: args[0] }))
    case 'delete-repo': return await admin.deleteRepository(positive(args[0], 'repo_id')).then(() => ({ deleted: Number(args[0]) }))
    case 'import-hosted': return await importHosted(store, args, values, tokens, progress, context.config)
    case 'bindings': return await createIdentitiesRepository(store.db).bindings(need(args[0], 'connection id'))
    case 'identities': return await createIdentitiesRepository(store.db).ofConnection(need(args[0], 'connection id'))
    case 'link-identity': {
      const user = await store.users.requireLogin(need(args[0], 'login'))
      return await createIdentitiesRepository(store.db).link(user.id, need(args[1], 'connection id'), positive(args[2], 'platform_user_id'))
    }
    case 'unlink-identity': {
      const user = await store.users.requireLogin(need(args[0], 'login'))
      await createIdentitiesRepository(store.db).unlink(user.id, need(args[1], 'connection id'))
      return { unlinked: args[0], connection_id: args[1] }
    }
    case 'pipeline-label': {
      const label = values.clear === true ? null : need(args[2], 'label (or --clear)')
      // eslint-disable-next-line no-control-regex
      if (label !== null && (label.length > 50 || /[\u0000-\u001f,]/.test(label))) throw new Error('a label has at most 50 characters, no commas or control characters')
      await setPipelineLabel(store.db, need(args[0], 'workspace id'), need(args[1], 'pipeline id'), label, { actor: 'admin-cli' })
      return { workspace_id: args[0], pipeline_id: args[1], host_label: label }
    }
    case 'outbox': return await createHostWrites(store.db).outbox(need(args[0], 'connection id'))
    case 'import-repo': {
      const repository = need(args[1], 'owner/name')
      if (!Value.Check(RepositoryFullName, repository)) throw new Error(`'${repository}' is not owner/name (one '/', letters, digits, '-', '.', '_', no '..')`)
      const fetch = createHostFetch({ allowPrivate: context.config?.hostAllowPrivate, timeoutMs: context.config?.hostTimeoutMs })
      return await importNow(store, need(args[0], 'connection id'), repository, progress, { fetch })
    }
    default: throw new Error(`unknown command '${command}'\n\n${USAGE}`)
  }
}

/** Sets (or with --clear, removes) a connection's OAuth app; the secret never comes from the command line. */
async function setOAuth (store: Store, args: string[], values: Values, context: AdminContext) {
  const id = need(args[0], 'connection id')
  if (values.clear === true) return await store.connections.update(id, { oauth_client_id: null, oauth_client_secret: null })
  const clientId = need(args[1], 'client id (or --clear)')
  if (!/^[\x21-\x7e]{1,200}$/.test(clientId)) throw new Error('the client id must be 1 to 200 printable characters, no spaces')
  const secret = (context.oauthClientSecret ?? (await (context.readStdin ?? readAll)()).split('\n')[0]).trim()
  if (secret === '' || secret.length > 500) throw new Error('no OAuth client secret: set HOST_OAUTH_CLIENT_SECRET or give it on standard input (1 to 500 characters)')
  return await store.connections.update(id, { oauth_client_id: clientId, oauth_client_secret: secret })
}

function emailArg (value: string | undefined): string | undefined {
  if (value !== undefined && !/^[^\s@]+@[^\s@]+$/.test(value)) throw new Error(`'${value}' is not an email address`)
  return value
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
    const result = await runAdminCommand(config.databasePath, process.argv.slice(2), progress, {
      config,
      hostToken: process.env.HOST_TOKEN === '' ? undefined : process.env.HOST_TOKEN,
      webhookSecret: process.env.HOST_WEBHOOK_SECRET === '' ? undefined : process.env.HOST_WEBHOOK_SECRET,
      oauthClientSecret: process.env.HOST_OAUTH_CLIENT_SECRET === '' ? undefined : process.env.HOST_OAUTH_CLIENT_SECRET
    })
    if (shown && process.stderr.isTTY) process.stderr.write('\n')
    if (result !== WRITTEN) console.log(typeof result === 'string' ? result : JSON.stringify(result, null, 2))
  } catch (err) {
    const message = err instanceof ConfigError ? err.message : (err as Error).message
    console.error(`error: ${message}`)
    process.exit(1)
  }
}
