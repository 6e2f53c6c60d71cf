import t from 'tap'
import { createHmac } from 'node:crypto'
import { join } from 'node:path'
import { ConfigError, loadConfig } from '../config.js'
import { SEALED_PREFIX, SecretBox, parseSecretKey } from '../db/engine/secret-box.js'
import { openSqliteFile } from '../db/engine/sqlite.js'
import { build, SECRET_KEY, type App } from './helper.js'

const OTHER_KEY = Buffer.alloc(32, 9).toString('hex')
const sign = (body: string, secret: string): string => `sha256=${createHmac('sha256', secret).update(body).digest('hex')}`

/** The rows as stored, read straight from the SQLite file. */
function stored (file: string) {
  const handle = openSqliteFile(file)
  try {
    return {
      connections: handle.prepare('SELECT id, secret, token FROM connections ORDER BY id').all() as Array<{ id: string, secret: string, token: string | null }>,
      webhooks: handle.prepare('SELECT id, secret FROM webhooks ORDER BY id').all() as Array<{ id: string, secret: string | null }>
    }
  } finally {
    handle.close()
  }
}

function write (file: string, statement: string, ...values: unknown[]): void {
  const handle = openSqliteFile(file)
  try {
    handle.prepare(statement).run(...values)
  } finally {
    handle.close()
  }
}

async function ping (app: App, id: string, secret: string): Promise<number> {
  const body = JSON.stringify({ zen: 'Keep it logically awesome.', hook_id: 1 })
  const res = await app.inject({
    method: 'POST',
    url: `/integrations/${id}/webhook`,
    headers: { 'content-type': 'application/json', 'x-github-event': 'ping', 'x-github-delivery': `d-${Math.random()}`, 'x-hub-signature-256': sign(body, secret) },
    payload: body
  })
  return res.statusCode
}

t.test('the secret box: AES-256-GCM bound to its row, two keys during a rotation', async (t) => {
  const box = SecretBox.fromStrings(SECRET_KEY)
  const sealed = box.seal('ghp_token', 'connections.token:1')
  t.ok(sealed.startsWith(SEALED_PREFIX))
  t.notMatch(sealed, /ghp_token/)
  t.not(box.seal('ghp_token', 'connections.token:1'), sealed, 'a fresh IV each time')
  t.equal(box.open(sealed, 'connections.token:1'), 'ghp_token')
  t.throws(() => box.open(sealed, 'connections.token:2'), 'sealed for another row: does not open')
  t.throws(() => box.open(`${sealed.slice(0, -4)}AAAA`, 'connections.token:1'), 'tampered: does not open')
  t.equal(box.open('plain-old', 'connections.token:1'), 'plain-old', 'a value from before SECRET_KEY is plaintext')
  t.ok(box.stale('plain-old'))
  t.notOk(box.stale(sealed))

  const rotated = SecretBox.fromStrings(OTHER_KEY, SECRET_KEY)
  t.equal(rotated.open(sealed, 'connections.token:1'), 'ghp_token', 'the previous key still opens')
  t.ok(rotated.stale(sealed), 'and what it sealed is due to be sealed again')
  t.throws(() => SecretBox.fromStrings(OTHER_KEY).open(sealed, 'connections.token:1'), /neither SECRET_KEY nor SECRET_KEY_PREVIOUS/)
  t.throws(() => new SecretBox().open(sealed, 'connections.token:1'), /SECRET_KEY is not set/)
  t.throws(() => new SecretBox().seal('x', 'c'), /needs SECRET_KEY on the server \(make one with `openssl rand -base64 32`\)/)

  t.equal(parseSecretKey(SECRET_KEY).length, 32)
  t.equal(parseSecretKey(OTHER_KEY).length, 32, 'hex')
  for (const bad of ['short', Buffer.alloc(16).toString('base64'), 'z'.repeat(64)]) t.throws(() => parseSecretKey(bad), /32 bytes written as base64 or hex \(make one with `openssl rand -base64 32`\)/)
})

t.test('SECRET_KEY is checked at boot', async (t) => {
  t.equal(loadConfig({ SECRET_KEY, SECRET_KEY_PREVIOUS: OTHER_KEY }).secretKey, SECRET_KEY)
  t.throws(() => loadConfig({ SECRET_KEY: 'hunter2' }), new ConfigError('invalid configuration: SECRET_KEY must be 32 bytes written as base64 or hex (make one with `openssl rand -base64 32`)'))
  t.throws(() => loadConfig({ SECRET_KEY, SECRET_KEY_PREVIOUS: 'x' }), /SECRET_KEY_PREVIOUS must be 32 bytes/)
  t.throws(() => loadConfig({ SECRET_KEY_PREVIOUS: SECRET_KEY }), /SECRET_KEY_PREVIOUS needs SECRET_KEY/)
  t.equal(loadConfig({}).secretKey, undefined, 'optional: the demo runs without one')
})

t.test('without SECRET_KEY the API serves, and refuses to store a connection', async (t) => {
  const app = await build(t, { secretKey: undefined })
  t.equal((await app.as('alice', { url: '/p1/repositories/1001/board' })).statusCode, 200)
  const res = await app.admin({ method: 'POST', url: '/admin/connections', payload: { kind: 'github', token: 'ghp_x' } })
  t.equal(res.statusCode, 400)
  t.match(res.json().message, /storing a secret needs SECRET_KEY on the server \(make one with `openssl rand -base64 32`\)/)
  t.same((await app.admin({ url: '/admin/connections' })).json(), [], 'nothing half-stored')
})

t.test('secrets and tokens are stored sealed, used decrypted, never shown', async (t) => {
  const file = join(t.testdir({}), 'planning.db')
  const app = await build(t, { database: file })
  const made = (await app.admin({ method: 'POST', url: '/admin/connections', payload: { kind: 'github', token: 'ghp_SECRET_TOKEN', secret: 'a-webhook-secret-of-20' } })).json()
  const hook = (await app.as('alice', { method: 'POST', url: '/p1/repositories/1001/webhooks', payload: { url: 'https://hooks.example.com/x', secret: 'outgoing-secret-value' } })).json()
  const rows = stored(file)
  t.ok(rows.connections[0].secret.startsWith(SEALED_PREFIX) && rows.connections[0].token!.startsWith(SEALED_PREFIX), 'sealed in the database')
  t.notMatch(JSON.stringify(rows), /ghp_SECRET_TOKEN|a-webhook-secret-of-20|outgoing-secret-value/)
  t.ok(rows.webhooks.find((w) => w.id === hook.id)!.secret!.startsWith(SEALED_PREFIX), 'an outgoing webhook\'s secret too')
  t.equal(await ping(app, made.id, 'a-webhook-secret-of-20'), 200, 'the signature check uses the decrypted secret')
  t.equal(await ping(app, made.id, rows.connections[0].secret), 401, 'the ciphertext is no secret')
  t.notMatch(JSON.stringify((await app.admin({ url: '/admin/connections' })).json()), /ghp_|a-webhook-secret|enc:v1/)
})

t.test('plaintext from before SECRET_KEY is sealed at the next start; a rotation seals again with the new key', async (t) => {
  const file = join(t.testdir({}), 'planning.db')
  const first = await build(t, { database: file, secretKey: undefined })
  await first.as('alice', { method: 'POST', url: '/p1/repositories/1001/webhooks', payload: { url: 'https://hooks.example.com/x', secret: 'outgoing-plain-secret' } })
  await first.close()
  // A connection as an earlier version stored it: plaintext.
  write(file, "INSERT INTO connections (id, kind, web_url, api_url, secret, token, created_at) VALUES ('aaaaaaaaaaaaaaaaaaaaaaaa', 'github', 'https://github.com', 'https://api.github.com', 'old-plain-secret-value', 'ghp_old', '2026-01-01T00:00:00Z')")
  t.equal(stored(file).connections[0].secret, 'old-plain-secret-value')

  const keyed = await build(t, { database: file, fixture: null })
  const sealed = stored(file)
  t.ok(sealed.connections[0].secret.startsWith(SEALED_PREFIX) && sealed.connections[0].token!.startsWith(SEALED_PREFIX), 'the connection sealed at start')
  t.ok(sealed.webhooks[0].secret!.startsWith(SEALED_PREFIX), 'the webhook secret too')
  t.equal(await ping(keyed, 'aaaaaaaaaaaaaaaaaaaaaaaa', 'old-plain-secret-value'), 200, 'and it still verifies')
  await keyed.close()

  await t.rejects(build(t, { database: file, fixture: null, secretKey: undefined }), /stored secrets are encrypted: set SECRET_KEY/, 'no key: refuses to start')
  await t.rejects(build(t, { database: file, fixture: null, secretKey: OTHER_KEY }), /neither SECRET_KEY nor SECRET_KEY_PREVIOUS/, 'a new key alone: refuses to start')

  const rotating = await build(t, { database: file, fixture: null, secretKey: OTHER_KEY, previousSecretKey: SECRET_KEY })
  const resealed = stored(file)
  t.not(resealed.connections[0].secret, sealed.connections[0].secret)
  t.notOk(SecretBox.fromStrings(OTHER_KEY).stale(resealed.connections[0].secret), 'sealed with the new key')
  await rotating.close()
  const rotated = await build(t, { database: file, fixture: null, secretKey: OTHER_KEY })
  t.equal(await ping(rotated, 'aaaaaaaaaaaaaaaaaaaaaaaa', 'old-plain-secret-value'), 200, 'the old key is no longer needed')
})

t.test('SECRET_KEY must be the database\'s key: the check value stored at the first start refuses another key, in the server and in the CLI', async (t) => {
  const file = join(t.testdir({}), 'planning.db')
  const first = await build(t, { database: file, fixture: null })
  await first.close()
  t.equal(stored(file).connections.length, 0, 'no secret stored yet: only the check value')
  const { runAdminCommand } = await import('../cli/admin.js')
  const refusal = /SECRET_KEY is not this database's key: its secrets were sealed with a key that is neither SECRET_KEY nor SECRET_KEY_PREVIOUS/
  await t.rejects(build(t, { database: file, fixture: null, secretKey: OTHER_KEY }), refusal, 'the server refuses another key')
  await t.rejects(runAdminCommand(file, ['connect', 'github'], () => {}, { config: { secretKey: OTHER_KEY }, tokens: { env: { HOST_TOKEN: 'ghp_x' }, stdin: process.stdin } }), refusal, 'so does the CLI, before storing anything')
  t.equal(stored(file).connections.length, 0)
  const rotating = await build(t, { database: file, fixture: null, secretKey: OTHER_KEY, previousSecretKey: SECRET_KEY })
  await rotating.close()
  const rotated = await build(t, { database: file, fixture: null, secretKey: OTHER_KEY })
  await rotated.close()
  await t.rejects(build(t, { database: file, fixture: null }), refusal, 'after a rotation the old key alone is refused')
})

t.test('upgrading a database with sealed secrets and no check value: a wrong key is refused and not written down as the key', async (t) => {
  const file = join(t.testdir({}), 'planning.db')
  const app = await build(t, { database: file })
  t.equal((await app.admin({ method: 'POST', url: '/admin/connections', payload: { kind: 'github', token: 'ghp_x', secret: 'a-webhook-secret-of-20' } })).statusCode, 201)
  await app.close()
  write(file, 'DELETE FROM key_check')
  await t.rejects(build(t, { database: file, fixture: null, secretKey: OTHER_KEY }), 'a key that does not open the stored secrets is refused')
  const right = await build(t, { database: file, fixture: null })
  t.equal((await right.admin({ url: '/admin/connections' })).statusCode, 200, 'the right key still starts')
  await right.close()
})

t.test('a stored secret that does not open answers 503 saying so, not 500', async (t) => {
  const file = join(t.testdir({}), 'planning.db')
  const app = await build(t, { database: file })
  const made = (await app.admin({ method: 'POST', url: '/admin/connections', payload: { kind: 'github', token: 'ghp_x', secret: 'a-webhook-secret-of-20' } })).json()
  // As a CLI with another key stored it before the key check existed.
  write(file, 'UPDATE connections SET secret = ? WHERE id = ?', SecretBox.fromStrings(OTHER_KEY).seal('a-webhook-secret-of-20', `connections.secret:${String(made.id)}`), made.id)
  const body = JSON.stringify({ zen: 'z', hook_id: 1 })
  const res = await app.inject({
    method: 'POST',
    url: `/integrations/${String(made.id)}/webhook`,
    headers: { 'content-type': 'application/json', 'x-github-event': 'ping', 'x-github-delivery': 'd-unreadable', 'x-hub-signature-256': sign(body, 'a-webhook-secret-of-20') },
    payload: body
  })
  t.equal(res.statusCode, 503)
  t.match(res.json(), { statusCode: 503, message: 'a stored secret is encrypted with a key that is neither SECRET_KEY nor SECRET_KEY_PREVIOUS' })
  const listed = await app.admin({ url: `/admin/connections/${String(made.id)}` })
  t.not(listed.statusCode, 500, `reading the connection: ${listed.statusCode}`)
})

t.test('the CLI connect takes the token from HOST_TOKEN or standard input and validates like the API', async (t) => {
  const { runAdminCommand } = await import('../cli/admin.js')
  const database = join(t.testdir({}), 'planning.db')
  const config = { secretKey: SECRET_KEY }
  const bad: Array<[string[], RegExp]> = [
    [['--secret', 'a-secret-typed-on-the-command-line'], /--secret is not taken \(it would show in the process list\): set HOST_WEBHOOK_SECRET/],
    [['--web-url', 'file:///etc'], /--web-url must be an http:\/\/ or https:\/\/ address, got 'file:\/\/\/etc'/],
    [['--api-url', 'ftp://x'], /--api-url must be an http:\/\/ or https:\/\/ address, got 'ftp:\/\/x'/],
    [['--token', 'ghp_visible'], /--token is not taken \(it would show in the process list\): set HOST_TOKEN or pipe the token in with --token-stdin/]
  ]
  for (const [args, message] of bad) await t.rejects(runAdminCommand(database, ['connect', 'github', ...args], () => {}, { config }), message, args.join(' '))
  await t.rejects(runAdminCommand(database, ['connect', 'github'], () => {}, { config, webhookSecret: 'short' }), /HOST_WEBHOOK_SECRET must be 16 to 200 characters/)
  await t.rejects(runAdminCommand(database, ['connect', 'github'], () => {}, {}), /needs SECRET_KEY on the server \(make one with `openssl rand -base64 32`\)/)
  t.same(await runAdminCommand(database, ['connections'], () => {}, { config }), [], 'nothing stored by the refused ones')

  const fromEnv = await runAdminCommand(database, ['connect', 'github'], () => {}, { config, hostToken: 'ghp_from_env' }) as { id: string }
  const fromStdin = await runAdminCommand(database, ['connect', 'gitea', '--web-url', 'https://gitea.example.com', '--token-stdin'], () => {}, { config, readStdin: async () => 'gitea_token\n' }) as { id: string }
  t.match(await runAdminCommand(database, ['connections'], () => {}, { config }), [{ id: fromEnv.id, has_token: true }, { id: fromStdin.id, has_token: true }])
  const rows = stored(database)
  const box = SecretBox.fromStrings(SECRET_KEY)
  t.equal(box.open(rows.connections.find((c) => c.id === fromEnv.id)!.token!, `connections.token:${fromEnv.id}`), 'ghp_from_env')
  t.equal(box.open(rows.connections.find((c) => c.id === fromStdin.id)!.token!, `connections.token:${fromStdin.id}`), 'gitea_token', 'read from standard input, trimmed')
  await t.rejects(runAdminCommand(database, ['import-repo', fromEnv.id, '../admin'], () => {}, { config }), /'..\/admin' is not owner\/name/)
})
