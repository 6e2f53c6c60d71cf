import t from 'tap'
import { execFileSync, spawn } from 'node:child_process'
import { once } from 'node:events'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { buildOnce } from './build.js'
import { ranOnce } from './once.js'

const root = fileURLToPath(new URL('..', import.meta.url))
const ADMIN_TOKEN = 'my-long-admin-token'

/** The shell blocks of a section (a `## heading`) of a page of the documentation, in order. */
function blocks (page: string, heading: string): string[] {
  const text = readFileSync(join(root, page), 'utf8')
  const start = text.indexOf(`\n## ${heading}\n`)
  if (start < 0) throw new Error(`${page} has no section "${heading}"`)
  const next = text.indexOf('\n## ', start + 4)
  const section = text.slice(start, next < 0 ? text.length : next)
  return [...section.matchAll(/```sh\n([\s\S]*?)```/g)].map((m) => m[1])
}

// What it checks is the documentation's text, on SQLite; the server code it starts runs in-process
// in every other test on each engine and runtime: once per CI run (test/once.ts).
t.test('the README\'s walk-through and the admin examples of docs/operations.md run top to bottom on the demo, as a reader would', { timeout: 180_000, skip: ranOnce }, async (t) => {
  const dir = t.testdir({})
  const database = join(dir, 'planning.db')
  await buildOnce()
  const env = { ...process.env, PORT: '0', DATABASE_PATH: database, ADMIN_TOKEN, LOG_LEVEL: 'info' }
  const server = spawn(process.execPath, [join(root, 'dist', 'server.js')], { cwd: root, env, stdio: ['ignore', 'pipe', 'pipe'] })
  t.teardown(() => { server.kill('SIGKILL') })
  let log = ''
  server.stdout.on('data', (d) => { log += String(d) })
  const base = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no start: ${log}`)), 60_000)
    server.stdout.on('data', () => {
      const m = /API documentation: (http:\/\/127\.0\.0\.1:\d+)/.exec(log)
      if (m !== null) { clearTimeout(timer); resolve(m[1]) }
    })
  })
  const token = /API token for alice: ([A-Za-z0-9_-]+)/.exec(log)![1]
  // The demo has no administrator: the start prints the first-run setup link too (README, docs/sign-in.md "First start").
  const setup = /Set up the first administrator: (http:\/\/127\.0\.0\.1:\d+\/setup\/[\w-]+)/.exec(log)
  t.ok(setup !== null, 'the setup link is printed')
  t.equal((await fetch(setup![1])).status, 200, 'and opens its page')

  const walk = blocks('README.md', 'A walk through the demo data')
  const admin = blocks('docs/operations.md', 'Admin API and CLI')
  t.ok(walk.length >= 1 && admin.length >= 2, `${walk.length} + ${admin.length} shell blocks`)
  const sections = [...walk, ...admin]
  let events = ''
  for (const block of sections) {
    // Every command as written, except the two lines that say where the token and server are;
    // curl fails on an HTTP error, the shell on any failed command.
    const script = ['set -euo pipefail', ...block.split('\n').filter((line) => !/^export (TOKEN|BASE)=/.test(line))]
      .join('\n').replaceAll(/^curl /gm, 'curl -sSf ')
    const out = execFileSync('bash', ['-c', script], { cwd: root, env: { ...env, TOKEN: token, BASE: base }, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] })
    events += out
  }
  t.match(events, /"type":"estimateIssue"/, 'the estimate change in the walk-through records an event')
  t.match(events, /"login": "frank"/, 'the CLI made its user')
  server.kill('SIGTERM')
  await once(server, 'exit')
})
